//! The chat-completions dicts of [`to_wire_values`](super::to_wire_values)
//! written straight as compact JSON, without building the values: the
//! Parquet export's messages table.

use super::sdk::thinking_dump;
use super::wire::CacheMarks;
use super::wire_shape::{WireContent, WirePart, WireShape, wire_shape};
use super::*;

/// What [`write_wire_messages`] tells of each message besides its JSON.
pub(crate) struct WireFacts<'m> {
    /// The role.
    pub(crate) role: Role,
    /// Where the value of the `tool_calls` member is in the JSON.
    pub(crate) tool_calls: Option<std::ops::Range<usize>>,
    /// The `content` member's text: the string, or the `text` of its parts
    /// joined by line breaks; `None` when the message has no `content`.
    pub(crate) text: Option<Cow<'m, str>>,
    /// The `tool_call_id` member.
    pub(crate) tool_call_id: Option<&'m str>,
    /// The `name` member, when a string.
    pub(crate) name: Option<&'m str>,
}

/// The messages of [`to_wire_values`], each written as compact JSON (as
/// [`OwnedValue::write_to`] with [`Style::COMPACT`](crate::json::Style::COMPACT)
/// writes that value, byte for byte) straight from the messages, without
/// building the values: `each` is given each message's position, its JSON
/// and [`WireFacts`] (the members the value would answer to `get`).
pub(crate) fn write_wire_messages<E>(
    messages: &[Message<'_>],
    options: &WireOptions,
    version: SdkVersion,
    mut each: impl FnMut(usize, &[u8], WireFacts<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let marks = CacheMarks::new(messages, options, version);
    // Room for the longest message's texts at once (their escapes aside),
    // rather than growing through its copies.
    let room = messages
        .iter()
        .map(|m| {
            let texts: usize = m
                .content
                .iter()
                .map(|c| match c {
                    Content::Text(t) => t.text.len(),
                    Content::Image(i) => i.image_urls.iter().map(|u| u.len()).sum(),
                })
                .sum();
            let calls: usize = m
                .tool_calls
                .iter()
                .flatten()
                .map(|c| c.arguments.len() + c.name.len() + c.id.len())
                .sum();
            texts + calls
        })
        .max()
        .unwrap_or(0);
    let mut out = Vec::with_capacity(room + 1024);
    for (i, m) in messages.iter().enumerate() {
        let cache = |j: usize, c: &Content<'_>| marks.cache(i, j, c);
        out.clear();
        let shape = wire_shape(m, options, version, &cache);
        let facts = write_wire_message(&shape, &mut out);
        each(i, &out, facts)?;
    }
    Ok(())
}

impl<'m> WireShape<'m> {
    /// The text of the `text` parts (or the string content), joined by
    /// line breaks; `None` when there is no `content` member.
    pub(crate) fn text(&self) -> Option<Cow<'m, str>> {
        match &self.content {
            WireContent::None => None,
            WireContent::Text(t) => Some(t.clone()),
            WireContent::Parts(_) => {
                let mut joined: Option<Cow<'m, str>> = None;
                for text in self.part_texts() {
                    joined = Some(match joined {
                        None => text.clone(),
                        Some(j) => {
                            let mut s = j.into_owned();
                            s.push('\n');
                            s.push_str(text);
                            Cow::Owned(s)
                        }
                    });
                }
                Some(joined.unwrap_or(Cow::Borrowed("")))
            }
        }
    }
}

/// A JSON string, as the compact style writes it.
fn w_str(out: &mut Vec<u8>, s: &str) {
    crate::json::write::write_str(out, s, false);
}

/// A member's name and colon, after a comma unless it is the first.
fn w_key(out: &mut Vec<u8>, first: &mut bool, key: &str) {
    if !std::mem::replace(first, false) {
        out.push(b',');
    }
    w_str(out, key);
    out.push(b':');
}

const EPHEMERAL: &[u8] = br#"{"type":"ephemeral"}"#;

/// The wire message `shape` written as compact JSON into `out`.
fn write_wire_message<'m>(shape: &WireShape<'m>, out: &mut Vec<u8>) -> WireFacts<'m> {
    out.push(b'{');
    let mut first = true;
    match &shape.content {
        WireContent::None => {}
        WireContent::Text(t) => {
            w_key(out, &mut first, "content");
            w_str(out, t);
        }
        WireContent::Parts(parts) => {
            w_key(out, &mut first, "content");
            out.push(b'[');
            for (k, p) in parts.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                match p {
                    WirePart::Text { text, cache } => {
                        out.extend_from_slice(br#"{"type":"text","text":"#);
                        w_str(out, text);
                        if *cache {
                            out.extend_from_slice(br#","cache_control":"#);
                            out.extend_from_slice(EPHEMERAL);
                        }
                        out.push(b'}');
                    }
                    WirePart::Image { url, cache } => {
                        out.extend_from_slice(br#"{"type":"image_url","image_url":{"url":"#);
                        w_str(out, url);
                        out.push(b'}');
                        if *cache {
                            out.extend_from_slice(br#","cache_control":"#);
                            out.extend_from_slice(EPHEMERAL);
                        }
                        out.push(b'}');
                    }
                    WirePart::Thinking(b) => {
                        thinking_dump(b).write_to(out, crate::json::Style::COMPACT)
                    }
                }
            }
            out.push(b']');
        }
    }
    w_key(out, &mut first, "role");
    w_str(out, shape.role.as_str());
    if shape.cache {
        w_key(out, &mut first, "cache_control");
        out.extend_from_slice(EPHEMERAL);
    }
    if !shape.thinking.is_empty() {
        w_key(out, &mut first, "thinking_blocks");
        out.push(b'[');
        for (k, b) in shape.thinking.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            thinking_dump(b).write_to(out, crate::json::Style::COMPACT);
        }
        out.push(b']');
    }
    let mut tool_calls = None;
    if let Some(calls) = shape.tool_calls {
        w_key(out, &mut first, "tool_calls");
        let start = out.len();
        out.push(b'[');
        for (k, c) in calls.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            out.extend_from_slice(br#"{"id":"#);
            w_str(out, &c.id);
            out.extend_from_slice(br#","type":"function","function":{"name":"#);
            w_str(out, &c.name);
            out.extend_from_slice(br#","arguments":"#);
            w_str(out, &c.arguments);
            out.extend_from_slice(b"}}");
        }
        out.push(b']');
        tool_calls = Some(start..out.len());
    }
    if let Some((id, name)) = shape.tool {
        w_key(out, &mut first, "tool_call_id");
        w_str(out, id);
        w_key(out, &mut first, "name");
        match name {
            Some(n) => w_str(out, n),
            None => out.extend_from_slice(b"null"),
        }
    }
    if let Some(rc) = shape.reasoning_content {
        w_key(out, &mut first, "reasoning_content");
        w_str(out, rc);
    }
    out.push(b'}');
    WireFacts {
        role: shape.role,
        tool_calls,
        text: shape.text(),
        tool_call_id: shape.tool.map(|(id, _)| id),
        name: shape.tool.and_then(|(_, n)| n),
    }
}
