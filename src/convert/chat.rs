//! Chat-completions messages as Open Responses items: the inverse of
//! [`Context::chat_messages`](crate::asf::Context::chat_messages) for the
//! shapes both stores write, so a converted conversation renders back to
//! the messages it came from.
//!
//! - `user`/`system`/`developer` messages: a `message` item; `text` parts
//!   as `input_text`, `image_url` parts as `input_image`, a string content
//!   kept a string.
//! - `assistant` messages: a `reasoning` item per thinking block, a
//!   `message` item for the content (when the message has a `content`
//!   member that is not null), a `function_call` per tool call.
//! - `tool` messages: a `function_call_output`.
//! - A part with no Responses type is kept as `{"type":"openhands:part",
//!   "part": <the part>}`, which renders back as itself.

use std::rc::Rc;

use crate::asf::canon::{CanonError, canonical_owned};
use crate::json::write::write_str;
use crate::json::{Map, OwnedValue};

fn s(v: &str) -> OwnedValue {
    OwnedValue::string(v)
}

fn obj(pairs: Vec<(&str, OwnedValue)>) -> Map {
    let mut m = Map::new();
    for (k, v) in pairs {
        m.insert(k, v);
    }
    m
}

/// The member `k` of `v`, taken out of it (`null` left in its place, so
/// the value reads as before for every other member).
fn take(v: &mut OwnedValue, k: &str) -> Option<OwnedValue> {
    v.as_object_mut()?.get_mut(k).map(std::mem::take)
}

/// The string member `k` of `v`, taken out of it; empty when `v` has no
/// such member or it is not a string (left in place then).
fn take_str(v: Option<&mut OwnedValue>, k: &str) -> String {
    match v.and_then(|v| v.as_object_mut()?.get_mut(k)) {
        Some(OwnedValue::String(t)) => std::mem::take(t),
        _ => String::new(),
    }
}

/// A chat-completions content part as an Open Responses input part, its
/// strings moved out of it.
fn input_part(mut p: OwnedValue) -> OwnedValue {
    match p.get("type").and_then(OwnedValue::as_str) {
        Some("text") => OwnedValue::Object(obj(vec![
            ("type", s("input_text")),
            ("text", OwnedValue::String(take_str(Some(&mut p), "text"))),
        ])),
        Some("image_url") => {
            let image = p.get("image_url");
            let url = image
                .and_then(|i| i.get("url").or(Some(i)))
                .and_then(OwnedValue::as_str)
                .unwrap_or("");
            let mut m = obj(vec![("type", s("input_image")), ("image_url", s(url))]);
            if let Some(d) = image
                .and_then(|i| i.get("detail"))
                .and_then(OwnedValue::as_str)
            {
                m.insert("detail", s(d));
            }
            OwnedValue::Object(m)
        }
        _ => {
            // No Responses form: kept as an extension part.
            OwnedValue::Object(obj(vec![("type", s("openhands:part")), ("part", p)]))
        }
    }
}

fn input_content(c: Option<OwnedValue>) -> OwnedValue {
    match c {
        Some(OwnedValue::Array(a)) => OwnedValue::Array(a.into_iter().map(input_part).collect()),
        Some(OwnedValue::String(t)) => OwnedValue::String(t),
        _ => OwnedValue::Array(Vec::new()),
    }
}

/// The Open Responses items of one chat-completions message.
pub(crate) fn items_of(m: &OwnedValue) -> Vec<OwnedValue> {
    items_taken(&mut m.clone())
}

/// [`items_of`], the message's strings and parts moved into the items
/// instead of copied (the message is left with `null`s and empty strings
/// where they were).
pub(crate) fn items_taken(m: &mut OwnedValue) -> Vec<OwnedValue> {
    let role = m
        .get("role")
        .and_then(OwnedValue::as_str)
        .unwrap_or("")
        .to_owned();
    match role.as_str() {
        "assistant" => {
            let mut out = Vec::new();
            let blocks = match take(m, "thinking_blocks") {
                Some(OwnedValue::Array(a)) => a,
                _ => Vec::new(),
            };
            for mut b in blocks {
                let mut r = obj(vec![
                    ("type", s("reasoning")),
                    ("summary", OwnedValue::Array(Vec::new())),
                ]);
                match b.get("type").and_then(OwnedValue::as_str) {
                    Some("redacted_thinking") => {
                        r.insert(
                            "encrypted_content",
                            OwnedValue::String(take_str(Some(&mut b), "data")),
                        );
                    }
                    _ => {
                        let text = take_str(Some(&mut b), "thinking");
                        r.insert(
                            "content",
                            OwnedValue::Array(vec![OwnedValue::Object(obj(vec![
                                ("type", s("reasoning_text")),
                                ("text", OwnedValue::String(text)),
                            ]))]),
                        );
                        if let Some(OwnedValue::String(sig)) = take(&mut b, "signature") {
                            r.insert("encrypted_content", OwnedValue::String(sig));
                        }
                    }
                }
                out.push(OwnedValue::Object(r));
            }
            if let Some(c) = take(m, "content").filter(|c| !c.is_null()) {
                let content = match c {
                    OwnedValue::Array(a) => OwnedValue::Array(
                        a.into_iter()
                            .map(|mut p| match p.get("type").and_then(OwnedValue::as_str) {
                                Some("text") => OwnedValue::Object(obj(vec![
                                    ("type", s("output_text")),
                                    ("text", OwnedValue::String(take_str(Some(&mut p), "text"))),
                                    ("annotations", OwnedValue::Array(Vec::new())),
                                ])),
                                _ => input_part(p),
                            })
                            .collect(),
                    ),
                    other => other,
                };
                out.push(OwnedValue::Object(obj(vec![
                    ("type", s("message")),
                    ("role", s("assistant")),
                    ("content", content),
                ])));
            }
            let calls = match take(m, "tool_calls") {
                Some(OwnedValue::Array(a)) => a,
                _ => Vec::new(),
            };
            for mut c in calls {
                let id = take_str(Some(&mut c), "id");
                let mut f = take(&mut c, "function");
                out.push(OwnedValue::Object(obj(vec![
                    ("type", s("function_call")),
                    ("call_id", OwnedValue::String(id)),
                    ("name", OwnedValue::String(take_str(f.as_mut(), "name"))),
                    (
                        "arguments",
                        OwnedValue::String(take_str(f.as_mut(), "arguments")),
                    ),
                ])));
            }
            out
        }
        "tool" => vec![OwnedValue::Object(obj(vec![
            ("type", s("function_call_output")),
            (
                "call_id",
                OwnedValue::String(take_str(Some(m), "tool_call_id")),
            ),
            ("output", input_content(take(m, "content"))),
        ]))],
        r => vec![OwnedValue::Object(obj(vec![
            ("type", s("message")),
            ("role", s(r)),
            ("content", input_content(take(m, "content"))),
        ]))],
    }
}

/// One item of a message in canonical form (RFC 8785), with the `call_id`
/// of a `function_call`.
pub(crate) struct CanonicalItem {
    /// The item's canonical bytes.
    pub(crate) canonical: Rc<[u8]>,
    /// The `call_id` of a `function_call` item.
    pub(crate) call: Option<String>,
}

/// The items of [`items_taken`], each written straight in canonical form
/// (the same bytes as canonicalising that item: its members in UTF-16
/// order, its strings moved out of `m` and written as the canonical form
/// writes them), with no owned item built. Fails where that item has no
/// canonical form (a part kept whole that is not I-JSON). Each item is
/// written into `buf` (cleared first; kept by the caller from one message
/// to the next, so it grows once) and copied from there into its own
/// allocation of its exact size.
pub(crate) fn items_canonical_taken(
    m: &mut OwnedValue,
    buf: &mut Vec<u8>,
) -> Result<Vec<CanonicalItem>, CanonError> {
    let role = m
        .get("role")
        .and_then(OwnedValue::as_str)
        .unwrap_or("")
        .to_owned();
    let item = |canonical: &[u8]| CanonicalItem {
        canonical: Rc::from(canonical),
        call: None,
    };
    match role.as_str() {
        "assistant" => {
            let mut out = Vec::new();
            let blocks = match take(m, "thinking_blocks") {
                Some(OwnedValue::Array(a)) => a,
                _ => Vec::new(),
            };
            // `content`, `encrypted_content`, `summary`, `type`.
            for mut b in blocks {
                let c = &mut *buf;
                c.clear();
                c.push(b'{');
                match b.get("type").and_then(OwnedValue::as_str) {
                    Some("redacted_thinking") => {
                        c.extend_from_slice(b"\"encrypted_content\":");
                        write_str(c, &take_str(Some(&mut b), "data"), false);
                    }
                    _ => {
                        let text = take_str(Some(&mut b), "thinking");
                        c.extend_from_slice(b"\"content\":[{\"text\":");
                        write_str(c, &text, false);
                        c.extend_from_slice(b",\"type\":\"reasoning_text\"}]");
                        if let Some(OwnedValue::String(sig)) = take(&mut b, "signature") {
                            c.extend_from_slice(b",\"encrypted_content\":");
                            write_str(c, &sig, false);
                        }
                    }
                }
                c.extend_from_slice(b",\"summary\":[],\"type\":\"reasoning\"}");
                out.push(item(c));
            }
            // `content`, `role`, `type`.
            if let Some(content) = take(m, "content").filter(|c| !c.is_null()) {
                let c = &mut *buf;
                c.clear();
                c.extend_from_slice(b"{\"content\":");
                match content {
                    OwnedValue::Array(a) => {
                        c.push(b'[');
                        for (i, mut p) in a.into_iter().enumerate() {
                            if i > 0 {
                                c.push(b',');
                            }
                            if p.get("type").and_then(OwnedValue::as_str) == Some("text") {
                                // `annotations`, `text`, `type`.
                                c.extend_from_slice(b"{\"annotations\":[],\"text\":");
                                write_str(c, &take_str(Some(&mut p), "text"), false);
                                c.extend_from_slice(b",\"type\":\"output_text\"}");
                            } else {
                                input_part_canonical(p, c)?;
                            }
                        }
                        c.push(b']');
                    }
                    other => canonical_owned(&other, c)?,
                }
                c.extend_from_slice(b",\"role\":\"assistant\",\"type\":\"message\"}");
                out.push(item(c));
            }
            // `arguments`, `call_id`, `name`, `type`.
            let calls = match take(m, "tool_calls") {
                Some(OwnedValue::Array(a)) => a,
                _ => Vec::new(),
            };
            for mut call in calls {
                let id = take_str(Some(&mut call), "id");
                let mut f = take(&mut call, "function");
                let c = &mut *buf;
                c.clear();
                c.extend_from_slice(b"{\"arguments\":");
                write_str(c, &take_str(f.as_mut(), "arguments"), false);
                c.extend_from_slice(b",\"call_id\":");
                write_str(c, &id, false);
                c.extend_from_slice(b",\"name\":");
                write_str(c, &take_str(f.as_mut(), "name"), false);
                c.extend_from_slice(b",\"type\":\"function_call\"}");
                out.push(CanonicalItem {
                    canonical: Rc::from(c.as_slice()),
                    call: Some(id),
                });
            }
            Ok(out)
        }
        "tool" => {
            // `call_id`, `output`, `type`.
            let c = &mut *buf;
            c.clear();
            c.extend_from_slice(b"{\"call_id\":");
            write_str(c, &take_str(Some(m), "tool_call_id"), false);
            c.extend_from_slice(b",\"output\":");
            input_content_canonical(take(m, "content"), c)?;
            c.extend_from_slice(b",\"type\":\"function_call_output\"}");
            Ok(vec![item(c)])
        }
        r => {
            // `content`, `role`, `type`.
            let c = &mut *buf;
            c.clear();
            c.extend_from_slice(b"{\"content\":");
            input_content_canonical(take(m, "content"), c)?;
            c.extend_from_slice(b",\"role\":");
            write_str(c, r, false);
            c.extend_from_slice(b",\"type\":\"message\"}");
            Ok(vec![item(c)])
        }
    }
}

/// [`input_content`] written in canonical form.
fn input_content_canonical(c: Option<OwnedValue>, out: &mut Vec<u8>) -> Result<(), CanonError> {
    match c {
        Some(OwnedValue::Array(a)) => {
            out.push(b'[');
            for (i, p) in a.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                input_part_canonical(p, out)?;
            }
            out.push(b']');
        }
        Some(OwnedValue::String(t)) => write_str(out, &t, false),
        _ => out.extend_from_slice(b"[]"),
    }
    Ok(())
}

/// [`input_part`] written in canonical form.
fn input_part_canonical(mut p: OwnedValue, out: &mut Vec<u8>) -> Result<(), CanonError> {
    match p.get("type").and_then(OwnedValue::as_str) {
        Some("text") => {
            // `text`, `type`.
            out.extend_from_slice(b"{\"text\":");
            write_str(out, &take_str(Some(&mut p), "text"), false);
            out.extend_from_slice(b",\"type\":\"input_text\"}");
        }
        Some("image_url") => {
            // `detail`, `image_url`, `type`.
            let image = p.get("image_url");
            let url = image
                .and_then(|i| i.get("url").or(Some(i)))
                .and_then(OwnedValue::as_str)
                .unwrap_or("");
            out.push(b'{');
            if let Some(d) = image
                .and_then(|i| i.get("detail"))
                .and_then(OwnedValue::as_str)
            {
                out.extend_from_slice(b"\"detail\":");
                write_str(out, d, false);
                out.push(b',');
            }
            out.extend_from_slice(b"\"image_url\":");
            write_str(out, url, false);
            out.extend_from_slice(b",\"type\":\"input_image\"}");
        }
        _ => {
            // `part`, `type`.
            out.extend_from_slice(b"{\"part\":");
            canonical_owned(&p, out)?;
            out.extend_from_slice(b",\"type\":\"openhands:part\"}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asf::canon::to_canonical;

    /// Items as their canonical bytes and `call_id`s.
    type Written = Vec<(Vec<u8>, Option<String>)>;

    /// Every shape a message's items take, written straight in canonical
    /// form, gives the bytes of the owned items canonicalised, and the same
    /// `call_id`s; where an owned item has no canonical form, neither has
    /// the direct writing.
    #[test]
    fn items_written_canonically_equal_the_owned_items_canonicalised() {
        let messages = [
            r#"{"role":"assistant","thinking_blocks":[
                {"type":"thinking","thinking":"plan \"a\"\n\u00e9\u0001","signature":"c2ln"},
                {"type":"thinking","thinking":"no signature","signature":7},
                {"type":"redacted_thinking","data":"ZGF0YQ=="},
                "not an object", {"thinking":"untyped"}],
              "content":[{"type":"text","text":"done \ud83d\ude00"},
                {"type":"image_url","image_url":{"url":"data:x","detail":"low"}},
                {"type":"other","z":1,"a":[2.50,-0.0,1e3],"é":{"b":null,"a":true}}],
              "tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"cmd\":\"ls\"}"}},
                {"id":"call_2"}, {"function":{"name":7}}]}"#,
            r#"{"role":"assistant","content":"plain text"}"#,
            r#"{"role":"assistant","content":null,"tool_calls":[]}"#,
            r#"{"role":"assistant","content":1.5e3}"#,
            r#"{"role":"assistant","content":{"b":1,"a":2}}"#,
            r#"{"role":"assistant"}"#,
            r#"{"role":"tool","tool_call_id":"call_1","content":[{"type":"text","text":"out"},{"type":"image_url","image_url":"data:y"}]}"#,
            r#"{"role":"tool","tool_call_id":"call_2","content":"string output"}"#,
            r#"{"role":"tool","content":3}"#,
            r#"{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":5,"detail":"high"}},{"type":"image_url"}]}"#,
            r#"{"role":"system","content":"be brief"}"#,
            r#"{"content":"no role"}"#,
            r#"{"role":"user","content":[{"type":"other","n":123456789012345678901234567890}]}"#,
            r#"{"role":"assistant","content":[{"type":"other","x":1,"x":2}]}"#,
            r#"[]"#,
        ];
        let mut refused = 0;
        for raw in messages {
            let m = OwnedValue::parse(raw.as_bytes()).expect(raw);
            let owned: Result<Written, CanonError> = items_taken(&mut m.clone())
                .iter()
                .map(|i| {
                    let call = (i.get("type").and_then(OwnedValue::as_str)
                        == Some("function_call"))
                    .then(|| i.get("call_id").and_then(OwnedValue::as_str))
                    .flatten()
                    .map(str::to_owned);
                    to_canonical(i).map(|c| (c, call))
                })
                .collect();
            let direct = items_canonical_taken(&mut m.clone(), &mut Vec::new()).map(|items| {
                items
                    .into_iter()
                    .map(|i| (i.canonical.to_vec(), i.call))
                    .collect::<Vec<_>>()
            });
            match (owned, direct) {
                (Ok(o), Ok(d)) => {
                    let text = |v: &Written| {
                        v.iter()
                            .map(|(c, k)| (String::from_utf8_lossy(c).into_owned(), k.clone()))
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(text(&d), text(&o), "{raw}");
                }
                (Err(o), Err(d)) => {
                    assert_eq!(d, o, "{raw}");
                    refused += 1;
                }
                (o, d) => panic!("{raw}: owned {o:?}, direct {:?}", d.map(|v| v.len())),
            }
        }
        // The inexact integer and the repeated name.
        assert_eq!(refused, 2);
    }
}
