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
