//! The chat-completions dicts of [`to_wire_values`](super::to_wire_values)
//! written straight as compact JSON, without building the values: the
//! Parquet export's messages table.

use super::sdk::thinking_dump;
use super::wire::{CacheMarks, string_content, truncate_for_wire};
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

/// One part of a wire message's content list, borrowed from the message
/// where the dict's values are its strings.
enum WirePart<'m> {
    Text {
        text: Cow<'m, str>,
        cache: bool,
    },
    Image {
        url: &'m str,
        cache: bool,
    },
    /// A thinking block in the content (before 1.2.0), as the SDK dumps it.
    Dumped(OwnedValue),
}

impl WirePart<'_> {
    /// `_remove_content_if_empty` drops it: a text part that is blank.
    fn is_blank_text(&self) -> bool {
        matches!(self, WirePart::Text { text, .. } if py_is_blank(text))
    }
}

/// The content a wire message is given before its tool calls are looked at.
enum WireContent<'m> {
    Parts(Vec<WirePart<'m>>),
    Text(Cow<'m, str>),
    None,
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
        let facts = write_wire_message(m, options, version, &cache, &mut out);
        each(i, &out, facts)?;
    }
    Ok(())
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

/// [`wire_message`] written as compact JSON into `out`.
fn write_wire_message<'m>(
    msg: &'m Message<'_>,
    o: &WireOptions,
    version: SdkVersion,
    cache: &dyn Fn(usize, &Content<'_>) -> bool,
    out: &mut Vec<u8>,
) -> WireFacts<'m> {
    let list = !o.force_string_serializer && (o.prompt_caching || o.vision || o.function_calling);
    let mut tool_cache = false;
    let mut thinking: Vec<OwnedValue> = Vec::new();
    let separate_thinking = version >= SdkVersion::V1_2_0;
    let mut content = if list {
        let mut parts: Vec<WirePart<'m>> = Vec::with_capacity(msg.content.len());
        if msg.role == Role::Assistant {
            thinking = msg.thinking_blocks.iter().map(thinking_dump).collect();
        }
        if !separate_thinking {
            parts.extend(thinking.iter().cloned().map(WirePart::Dumped));
        }
        for (j, item) in msg.content.iter().enumerate() {
            let cp = cache(j, item);
            // The Tool role moves a part's mark to the message.
            let moved = msg.role == Role::Tool && cp;
            tool_cache |= moved;
            match item {
                Content::Text(t) => parts.push(WirePart::Text {
                    text: truncate_for_wire(&t.text, msg.role, t.enable_truncation, version),
                    cache: cp && !moved,
                }),
                Content::Image(img) => {
                    if o.vision {
                        let n = img.image_urls.len();
                        for (k, u) in img.image_urls.iter().enumerate() {
                            parts.push(WirePart::Image {
                                url: u,
                                cache: cp && !moved && k + 1 == n,
                            });
                        }
                    }
                }
            }
        }
        WireContent::Parts(parts)
    } else {
        let text = Cow::Owned(string_content(msg, version));
        WireContent::Text(text)
    };
    let calls = match &msg.tool_calls {
        Some(calls) if msg.role == Role::Assistant && !calls.is_empty() => Some(calls),
        _ => None,
    };
    if calls.is_some() {
        if version >= SdkVersion::V1_1_0 {
            // `_remove_content_if_empty`.
            let drop = match &mut content {
                WireContent::Text(t) => py_is_blank(t),
                WireContent::Parts(parts) => {
                    parts.retain(|p| !p.is_blank_text());
                    parts.is_empty()
                }
                WireContent::None => false,
            };
            if drop {
                content = WireContent::None;
            }
        }
    } else if version >= SdkVersion::V1_29_0
        && msg.role == Role::Assistant
        && matches!(&content, WireContent::Parts(p) if p.is_empty())
    {
        content = WireContent::Text(Cow::Borrowed(""));
    }

    out.push(b'{');
    let mut first = true;
    let text = match &content {
        WireContent::None => None,
        WireContent::Text(t) => {
            w_key(out, &mut first, "content");
            w_str(out, t);
            Some(t.clone())
        }
        WireContent::Parts(parts) => {
            w_key(out, &mut first, "content");
            out.push(b'[');
            let mut joined: Option<Cow<'m, str>> = None;
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
                    WirePart::Dumped(v) => v.write_to(out, crate::json::Style::COMPACT),
                }
            }
            out.push(b']');
            Some(joined.unwrap_or(Cow::Borrowed("")))
        }
    };
    w_key(out, &mut first, "role");
    w_str(out, msg.role.as_str());
    if tool_cache && list {
        w_key(out, &mut first, "cache_control");
        out.extend_from_slice(EPHEMERAL);
    }
    if list && separate_thinking && !thinking.is_empty() {
        w_key(out, &mut first, "thinking_blocks");
        OwnedValue::Array(thinking).write_to(out, crate::json::Style::COMPACT);
    }
    let mut tool_calls = None;
    if let Some(calls) = calls {
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
    let (mut tool_call_id, mut name) = (None, None);
    if msg.role == Role::Tool
        && let Some(id) = &msg.tool_call_id
    {
        w_key(out, &mut first, "tool_call_id");
        w_str(out, id);
        w_key(out, &mut first, "name");
        match &msg.name {
            Some(n) => w_str(out, n),
            None => out.extend_from_slice(b"null"),
        }
        tool_call_id = Some(&**id);
        name = msg.name.as_deref();
    }
    if version >= SdkVersion::V1_1_0
        && o.send_reasoning_content
        && let Some(rc) = &msg.reasoning_content
        && !rc.is_empty()
    {
        w_key(out, &mut first, "reasoning_content");
        w_str(out, rc);
    }
    out.push(b'}');
    WireFacts {
        role: msg.role,
        tool_calls,
        text,
        tool_call_id,
        name,
    }
}
