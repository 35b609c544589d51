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

/// A chat-completions content part as an Open Responses input part.
fn input_part(p: &OwnedValue) -> OwnedValue {
    match p.get("type").and_then(OwnedValue::as_str) {
        Some("text") => OwnedValue::Object(obj(vec![
            ("type", s("input_text")),
            (
                "text",
                s(p.get("text").and_then(OwnedValue::as_str).unwrap_or("")),
            ),
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
            OwnedValue::Object(obj(vec![
                ("type", s("openhands:part")),
                ("part", p.clone()),
            ]))
        }
    }
}

fn input_content(c: Option<&OwnedValue>) -> OwnedValue {
    match c {
        Some(OwnedValue::Array(a)) => OwnedValue::Array(a.iter().map(input_part).collect()),
        Some(OwnedValue::String(t)) => OwnedValue::String(t.clone()),
        _ => OwnedValue::Array(Vec::new()),
    }
}

/// The Open Responses items of one chat-completions message.
pub(crate) fn items_of(m: &OwnedValue) -> Vec<OwnedValue> {
    let role = m.get("role").and_then(OwnedValue::as_str).unwrap_or("");
    match role {
        "assistant" => {
            let mut out = Vec::new();
            for b in m
                .get("thinking_blocks")
                .and_then(OwnedValue::as_array)
                .into_iter()
                .flatten()
            {
                let mut r = obj(vec![
                    ("type", s("reasoning")),
                    ("summary", OwnedValue::Array(Vec::new())),
                ]);
                match b.get("type").and_then(OwnedValue::as_str) {
                    Some("redacted_thinking") => {
                        r.insert(
                            "encrypted_content",
                            s(b.get("data").and_then(OwnedValue::as_str).unwrap_or("")),
                        );
                    }
                    _ => {
                        let text = b.get("thinking").and_then(OwnedValue::as_str).unwrap_or("");
                        r.insert(
                            "content",
                            OwnedValue::Array(vec![OwnedValue::Object(obj(vec![
                                ("type", s("reasoning_text")),
                                ("text", s(text)),
                            ]))]),
                        );
                        if let Some(sig) = b.get("signature").and_then(OwnedValue::as_str) {
                            r.insert("encrypted_content", s(sig));
                        }
                    }
                }
                out.push(OwnedValue::Object(r));
            }
            if let Some(c) = m.get("content").filter(|c| !c.is_null()) {
                let content = match c {
                    OwnedValue::Array(a) => OwnedValue::Array(
                        a.iter()
                            .map(|p| match p.get("type").and_then(OwnedValue::as_str) {
                                Some("text") => OwnedValue::Object(obj(vec![
                                    ("type", s("output_text")),
                                    (
                                        "text",
                                        s(p.get("text").and_then(OwnedValue::as_str).unwrap_or("")),
                                    ),
                                    ("annotations", OwnedValue::Array(Vec::new())),
                                ])),
                                _ => input_part(p),
                            })
                            .collect(),
                    ),
                    other => other.clone(),
                };
                out.push(OwnedValue::Object(obj(vec![
                    ("type", s("message")),
                    ("role", s("assistant")),
                    ("content", content),
                ])));
            }
            for c in m
                .get("tool_calls")
                .and_then(OwnedValue::as_array)
                .into_iter()
                .flatten()
            {
                let f = c.get("function");
                let get = |v: Option<&OwnedValue>, k: &str| {
                    v.and_then(|v| v.get(k))
                        .and_then(OwnedValue::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                out.push(OwnedValue::Object(obj(vec![
                    ("type", s("function_call")),
                    ("call_id", s(&get(Some(c), "id"))),
                    ("name", s(&get(f, "name"))),
                    ("arguments", s(&get(f, "arguments"))),
                ])));
            }
            out
        }
        "tool" => vec![OwnedValue::Object(obj(vec![
            ("type", s("function_call_output")),
            (
                "call_id",
                s(m.get("tool_call_id")
                    .and_then(OwnedValue::as_str)
                    .unwrap_or("")),
            ),
            ("output", input_content(m.get("content"))),
        ]))],
        r => vec![OwnedValue::Object(obj(vec![
            ("type", s("message")),
            ("role", s(r)),
            ("content", input_content(m.get("content"))),
        ]))],
    }
}
