//! A context rendered as chat-completions messages, the wire form harnesses
//! built on chat-completions APIs (the OpenHands SDK through LiteLLM, OC
//! Chat) send.
//!
//! - The instructions become one `system` message whose content holds one
//!   text part per instruction part (one part for a plain string).
//! - `message` items of the `user`, `system` and `developer` roles become
//!   messages of that role; `input_text`/`output_text` parts become `text`
//!   parts, `input_image` parts `image_url` parts.
//! - An assistant turn, the run of `reasoning`, assistant `message` and
//!   `function_call` items of one model output, becomes one `assistant`
//!   message: the message's parts as `content` (absent when the turn has no
//!   message), reasoning as `thinking_blocks` (a `reasoning_text` with its
//!   `encrypted_content` as a `thinking` block and its signature; an
//!   `encrypted_content` alone as a `redacted_thinking` block; a summary
//!   alone has no place in the wire form and is left out), calls as
//!   `tool_calls`. A new turn starts at a `reasoning` or assistant `message`
//!   that follows a message or a call of the current one.
//! - A `function_call_output` becomes a `tool` message naming its call and
//!   the call's function; a string output stays a string, parts become parts.
//! - A content part of an extension type `<ns>:part` that holds its chat
//!   form in `part` is rendered as that form; other parts with no chat form
//!   are left out.
//! - Items of other types (`compaction`, extensions) have no chat form and
//!   are left out.

use std::collections::HashMap;

use crate::json::{Map, OwnedValue};

use super::context::Context;

fn s(v: &str) -> OwnedValue {
    OwnedValue::string(v)
}

fn obj(pairs: Vec<(&str, OwnedValue)>) -> OwnedValue {
    let mut m = Map::new();
    for (k, v) in pairs {
        m.insert(k, v);
    }
    OwnedValue::Object(m)
}

fn text_part(t: &str) -> OwnedValue {
    obj(vec![("type", s("text")), ("text", s(t))])
}

/// A Responses content part as a chat-completions part (`None` for a part
/// with no chat form).
fn chat_part(p: &OwnedValue) -> Option<OwnedValue> {
    let ty = p.get("type").and_then(OwnedValue::as_str)?;
    match ty {
        "input_text" | "output_text" => {
            Some(text_part(p.get("text").and_then(OwnedValue::as_str)?))
        }
        "refusal" => Some(text_part(p.get("refusal").and_then(OwnedValue::as_str)?)),
        "input_image" => {
            let url = p.get("image_url").and_then(OwnedValue::as_str)?;
            let mut image = vec![("url", s(url))];
            if let Some(d) = p.get("detail").and_then(OwnedValue::as_str)
                && d != "auto"
            {
                image.push(("detail", s(d)));
            }
            Some(obj(vec![
                ("type", s("image_url")),
                ("image_url", obj(image)),
            ]))
        }
        // An extension part that carries its chat form (`{"type":
        // "<ns>:part", "part": {…}}`, as the OpenHands conversion writes a
        // part Responses has no type for) renders as that form.
        t if t.ends_with(":part") => p.get("part").cloned(),
        _ => None,
    }
}

fn chat_parts(content: Option<&OwnedValue>) -> OwnedValue {
    match content {
        Some(OwnedValue::String(t)) => OwnedValue::String(t.clone()),
        Some(OwnedValue::Array(a)) => OwnedValue::Array(a.iter().filter_map(chat_part).collect()),
        _ => OwnedValue::Array(Vec::new()),
    }
}

#[derive(Default)]
struct Turn {
    content: Option<OwnedValue>,
    thinking: Vec<OwnedValue>,
    calls: Vec<OwnedValue>,
}

impl Turn {
    fn is_empty(&self) -> bool {
        self.content.is_none() && self.thinking.is_empty() && self.calls.is_empty()
    }

    fn into_message(self) -> OwnedValue {
        let mut m = Map::new();
        if let Some(c) = self.content {
            m.insert("content", c);
        }
        m.insert("role", s("assistant"));
        if !self.thinking.is_empty() {
            m.insert("thinking_blocks", OwnedValue::Array(self.thinking));
        }
        if !self.calls.is_empty() {
            m.insert("tool_calls", OwnedValue::Array(self.calls));
        }
        OwnedValue::Object(m)
    }
}

impl Context {
    /// The request as chat-completions messages (see the module docs).
    pub fn chat_messages(&self) -> Vec<OwnedValue> {
        let mut out = Vec::new();
        let st = &self.settings;
        if !st.parts.is_empty() {
            let parts = st
                .parts
                .iter()
                .map(|p| text_part(p.text.as_deref().unwrap_or("")))
                .collect();
            out.push(obj(vec![
                ("content", OwnedValue::Array(parts)),
                ("role", s("system")),
            ]));
        } else if let Some(i) = st.instructions.as_deref().filter(|i| !i.is_empty()) {
            out.push(obj(vec![
                ("content", OwnedValue::Array(vec![text_part(i)])),
                ("role", s("system")),
            ]));
        }
        let names: HashMap<&str, &str> = self
            .items
            .iter()
            .filter(|i| i.get("type").and_then(OwnedValue::as_str) == Some("function_call"))
            .filter_map(|i| {
                Some((
                    i.get("call_id").and_then(OwnedValue::as_str)?,
                    i.get("name").and_then(OwnedValue::as_str)?,
                ))
            })
            .collect();
        let mut turn = Turn::default();
        let flush = |turn: &mut Turn, out: &mut Vec<OwnedValue>| {
            if !turn.is_empty() {
                out.push(std::mem::take(turn).into_message());
            }
        };
        for item in &self.items {
            let ty = item.get("type").and_then(OwnedValue::as_str).unwrap_or("");
            let role = item.get("role").and_then(OwnedValue::as_str).unwrap_or("");
            match (ty, role) {
                ("reasoning", _) => {
                    if turn.content.is_some() || !turn.calls.is_empty() {
                        flush(&mut turn, &mut out);
                    }
                    let enc = item.get("encrypted_content").and_then(OwnedValue::as_str);
                    let texts: Vec<&str> = item
                        .get("content")
                        .and_then(OwnedValue::as_array)
                        .map(|a| {
                            a.iter()
                                .filter(|p| {
                                    p.get("type").and_then(OwnedValue::as_str)
                                        == Some("reasoning_text")
                                })
                                .filter_map(|p| p.get("text").and_then(OwnedValue::as_str))
                                .collect()
                        })
                        .unwrap_or_default();
                    if texts.is_empty() {
                        if let Some(e) = enc {
                            turn.thinking
                                .push(obj(vec![("type", s("redacted_thinking")), ("data", s(e))]));
                        }
                    } else {
                        for t in texts {
                            let mut b = vec![("type", s("thinking")), ("thinking", s(t))];
                            if let Some(e) = enc {
                                b.push(("signature", s(e)));
                            }
                            turn.thinking.push(obj(b));
                        }
                    }
                }
                ("message", "assistant") => {
                    if turn.content.is_some() || !turn.calls.is_empty() {
                        flush(&mut turn, &mut out);
                    }
                    turn.content = Some(chat_parts(item.get("content")));
                }
                ("function_call", _) => {
                    let get = |k: &str| item.get(k).and_then(OwnedValue::as_str).unwrap_or("");
                    turn.calls.push(obj(vec![
                        ("id", s(get("call_id"))),
                        ("type", s("function")),
                        (
                            "function",
                            obj(vec![
                                ("name", s(get("name"))),
                                ("arguments", s(get("arguments"))),
                            ]),
                        ),
                    ]));
                }
                ("message", r) => {
                    flush(&mut turn, &mut out);
                    out.push(obj(vec![
                        ("content", chat_parts(item.get("content"))),
                        ("role", s(r)),
                    ]));
                }
                ("function_call_output", _) => {
                    flush(&mut turn, &mut out);
                    let call = item
                        .get("call_id")
                        .and_then(OwnedValue::as_str)
                        .unwrap_or("");
                    let mut m = vec![
                        ("content", chat_parts(item.get("output"))),
                        ("role", s("tool")),
                        ("tool_call_id", s(call)),
                    ];
                    if let Some(n) = names.get(call) {
                        m.push(("name", s(n)));
                    }
                    out.push(obj(m));
                }
                _ => {}
            }
        }
        flush(&mut turn, &mut out);
        out
    }
}
