//! The tools of a `SystemPromptEvent` as the session's `config` takes them:
//! each an Open Responses function tool, written in canonical form from the
//! event's parse where it can be, else built as an owned value.

use crate::asf::canon::canonical_value;
use crate::json::{OwnedValue, Value};

use super::{obj, s};

fn text_of(v: &OwnedValue, k: &str) -> Option<String> {
    v.get(k).and_then(OwnedValue::as_str).map(str::to_owned)
}

/// The canonical form of [`tool_of`]'s function tool for the SDK tool
/// definition `t`, written from the event's parse (its strings copied as
/// they stand where they are spelled canonically); `None` when some part
/// has no canonical form this way (the caller then canonicalises the owned
/// tool, which gives the same bytes whenever this succeeds).
pub(super) fn tool_canonical(t: Value<'_>) -> Option<Vec<u8>> {
    fn text<'a>(v: Value<'a>, k: &str) -> Option<Value<'a>> {
        v.get(k).filter(|x| x.as_str().is_some())
    }
    let f = t.get("function").unwrap_or(t);
    // The members in UTF-16 order: description, name, openhands:tool,
    // parameters, type.
    let mut out = Vec::with_capacity(2 * t.raw().len() + 64);
    out.push(b'{');
    if let Some(d) = text(f, "description") {
        out.extend_from_slice(b"\"description\":");
        canonical_value(d, &mut out).ok()?;
        out.push(b',');
    }
    out.extend_from_slice(b"\"name\":");
    match text(f, "name").or_else(|| text(t, "title")) {
        Some(n) => canonical_value(n, &mut out).ok()?,
        None => out.extend_from_slice(b"\"\""),
    }
    out.extend_from_slice(b",\"openhands:tool\":");
    canonical_value(t, &mut out).ok()?;
    if let Some(p) = f.get("parameters") {
        out.extend_from_slice(b",\"parameters\":");
        canonical_value(p, &mut out).ok()?;
    }
    out.extend_from_slice(b",\"type\":\"function\"}");
    Some(out)
}

/// One tool of a `SystemPromptEvent` as the config takes it.
#[derive(Debug)]
pub(super) enum SystemTool {
    /// Its function tool's `name` and canonical form, written from the
    /// view's parse of the event ([`tool_canonical`]); no owned tree is
    /// built for it.
    Canonical { name: String, bytes: Vec<u8> },
    /// Its function tool ([`tool_of`]) as an owned value, when no
    /// canonical form could be written from the parse (it may have none).
    Owned(OwnedValue),
}

/// What the config takes from a `SystemPromptEvent`, prepared from the
/// view's parse of it: each of its tools as a [`SystemTool`]; `None` when
/// the event has no `tools` array.
pub(super) type SystemTools = Option<Vec<SystemTool>>;

/// The [`SystemTools`] of a system prompt event's parse, `root`.
pub(super) fn system_tools(root: Value<'_>) -> SystemTools {
    let tools = root.get("tools")?.as_array()?;
    Some(
        tools
            .iter()
            .map(|t| match tool_canonical(t) {
                Some(bytes) => {
                    let f = t.get("function").unwrap_or(t);
                    let name = [f.get("name"), t.get("title")]
                        .into_iter()
                        .flatten()
                        .find_map(|v| v.as_str())
                        .unwrap_or("")
                        .to_owned();
                    SystemTool::Canonical { name, bytes }
                }
                None => SystemTool::Owned(tool_of(&OwnedValue::from(t))),
            })
            .collect(),
    )
}

/// An SDK tool definition as an Open Responses function tool.
pub(super) fn tool_of(t: &OwnedValue) -> OwnedValue {
    let f = t.get("function").unwrap_or(t);
    let name = text_of(f, "name")
        .or_else(|| text_of(t, "title"))
        .unwrap_or_default();
    let mut m = obj(vec![("type", s("function")), ("name", s(&name))]);
    if let Some(d) = text_of(f, "description") {
        m.insert("description", s(&d));
    }
    if let Some(p) = f.get("parameters") {
        m.insert("parameters", p.clone());
    }
    m.insert("openhands:tool", t.clone());
    OwnedValue::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asf::canon::to_canonical;
    use crate::json::Parser;

    /// The canonical form written from a tool's parse is the owned
    /// function tool's, whenever it is given; when a part has none this
    /// way (a lone surrogate, a repeated name) it is not given.
    #[test]
    fn a_tool_canonical_from_its_parse_equals_the_owned_tools() {
        let tools = [
            r#"{"type":"function","function":{"name":"bash","description":"Run \"it\"\n\u00e9","parameters":{"type":"object","properties":{"b":{"type":"string"},"a":1.50}}}}"#,
            r#"{"title":"think","description":"ignored: not under function"}"#,
            r#"{"function":{"name":7,"parameters":[1e3,-0.0,"\u001f"]},"title":"t"}"#,
            r#"{"function":{"description":"\ud800 lone"}}"#,
            r#"{"function":{"name":"a","name":"b"}}"#,
            r#""not an object""#,
        ];
        let mut parser = Parser::new();
        for raw in tools {
            let doc = parser.parse(raw.as_bytes()).expect("json");
            let owned = to_canonical(&tool_of(&OwnedValue::from(doc.root())));
            match tool_canonical(doc.root()) {
                Some(c) => assert_eq!(Ok(c), owned, "{raw}"),
                None => assert!(
                    raw.contains("\\ud800") || raw.contains(r#""name":"a","name""#),
                    "{raw}"
                ),
            }
        }
    }
}
