//! The chat-completions dict `LLM.format_messages_for_llm` sends for a
//! message, as its members borrowed from the message rather than built as
//! a value: what the Parquet export writes as JSON and the ASF converter
//! writes as items, each straight from it. The rules are
//! [`to_wire_values`](super::to_wire_values)'s, which builds the values
//! and is the reference both are checked against.

use super::wire::{CacheMarks, string_content, truncate_for_wire};
use super::*;

/// One part of a wire message's content list.
#[derive(Debug)]
pub(crate) enum WirePart<'m> {
    /// `{"type": "text", "text": …}`, with a cache mark or not.
    Text {
        /// The text as sent (truncated where the SDK truncates it).
        text: Cow<'m, str>,
        /// `cache_control` on the part.
        // Read by the JSON writer alone (an item carries no cache mark).
        #[cfg_attr(not(feature = "parquet"), allow(dead_code))]
        cache: bool,
    },
    /// `{"type": "image_url", "image_url": {"url": …}}`.
    Image {
        /// The URL.
        url: &'m str,
        /// `cache_control` on the part.
        // Read by the JSON writer alone (an item carries no cache mark).
        #[cfg_attr(not(feature = "parquet"), allow(dead_code))]
        cache: bool,
    },
    /// A thinking block among the content parts (before 1.2.0), sent as
    /// the SDK dumps it.
    Thinking(&'m ThinkingBlock<'m>),
}

impl WirePart<'_> {
    /// `_remove_content_if_empty` drops it: a text part that is blank.
    fn is_blank_text(&self) -> bool {
        matches!(self, WirePart::Text { text, .. } if py_is_blank(text))
    }
}

/// A wire message's `content` member.
#[derive(Debug)]
pub(crate) enum WireContent<'m> {
    /// A list of parts.
    Parts(Vec<WirePart<'m>>),
    /// One string.
    Text(Cow<'m, str>),
    /// No `content` member.
    None,
}

/// The members of one wire message, in the order the SDK's dict has them.
#[derive(Debug)]
pub(crate) struct WireShape<'m> {
    /// `role`.
    pub(crate) role: Role,
    /// `content`.
    pub(crate) content: WireContent<'m>,
    /// `cache_control` on the message (a tool turn's mark, moved there from
    /// its part).
    #[cfg_attr(not(feature = "parquet"), allow(dead_code))]
    pub(crate) cache: bool,
    /// `thinking_blocks` (1.2.0+, list content; absent when empty).
    pub(crate) thinking: &'m [ThinkingBlock<'m>],
    /// `tool_calls` (an assistant turn with calls).
    pub(crate) tool_calls: Option<&'m [ToolCall<'m>]>,
    /// `tool_call_id` and `name` (a tool result with a call id; `name` is
    /// `null` when `None`).
    pub(crate) tool: Option<(&'m str, Option<&'m str>)>,
    /// `reasoning_content` (no Open Responses item carries it).
    #[cfg_attr(not(feature = "parquet"), allow(dead_code))]
    pub(crate) reasoning_content: Option<&'m str>,
}

impl<'m> WireShape<'m> {
    /// The `text` parts' texts (none when the content is a string).
    pub(crate) fn part_texts(&self) -> impl Iterator<Item = &Cow<'m, str>> {
        let parts = match &self.content {
            WireContent::Parts(p) => p.as_slice(),
            _ => &[],
        };
        parts.iter().filter_map(|p| match p {
            WirePart::Text { text, .. } => Some(text),
            _ => None,
        })
    }
}

/// The wire message of `msg` as `LLM.format_messages_for_llm` of SDK
/// `version` sends it with options `o`; `cache` says which parts carry a
/// cache mark.
pub(crate) fn wire_shape<'m>(
    msg: &'m Message<'_>,
    o: &WireOptions,
    version: SdkVersion,
    cache: &dyn Fn(usize, &Content<'_>) -> bool,
) -> WireShape<'m> {
    let list = !o.force_string_serializer && (o.prompt_caching || o.vision || o.function_calling);
    let mut tool_cache = false;
    let separate_thinking = version >= SdkVersion::V1_2_0;
    let thinking: &'m [ThinkingBlock<'m>] = if list && msg.role == Role::Assistant {
        &msg.thinking_blocks
    } else {
        &[]
    };
    let mut content = if list {
        let mut parts: Vec<WirePart<'m>> = Vec::with_capacity(msg.content.len());
        if !separate_thinking {
            parts.extend(thinking.iter().map(WirePart::Thinking));
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
        WireContent::Text(Cow::Owned(string_content(msg, version)))
    };
    let tool_calls = match &msg.tool_calls {
        Some(calls) if msg.role == Role::Assistant && !calls.is_empty() => Some(calls.as_slice()),
        _ => None,
    };
    if tool_calls.is_some() {
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
    let tool = match &msg.tool_call_id {
        Some(id) if msg.role == Role::Tool => Some((&**id, msg.name.as_deref())),
        _ => None,
    };
    let reasoning_content = match &msg.reasoning_content {
        Some(rc) if version >= SdkVersion::V1_1_0 && o.send_reasoning_content && !rc.is_empty() => {
            Some(&**rc)
        }
        _ => None,
    };
    WireShape {
        role: msg.role,
        content,
        cache: tool_cache && list,
        thinking: if separate_thinking { thinking } else { &[] },
        tool_calls,
        tool,
        reasoning_content,
    }
}

/// The wire messages of `messages`, as [`to_wire_values`](super::to_wire_values)
/// gives them, each as its [`WireShape`].
pub(crate) fn wire_shapes<'m>(
    messages: &'m [Message<'_>],
    options: &WireOptions,
    version: SdkVersion,
) -> Vec<WireShape<'m>> {
    let marks = CacheMarks::new(messages, options, version);
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| wire_shape(m, options, version, &|j, c| marks.cache(i, j, c)))
        .collect()
}
