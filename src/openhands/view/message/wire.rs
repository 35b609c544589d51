//! The chat-completions dicts `LLM.format_messages_for_llm` sends: string or
//! list content by the model's features, prompt-caching marks, thinking
//! blocks and reasoning content where the SDK version puts them, tool
//! output truncated where it truncates it.

use super::sdk::{opt, s, thinking_dump};
use super::*;

/// What `LLM.format_messages_for_llm` takes from the LLM's configuration
/// to serialize messages for chat completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WireOptions {
    /// Prompt caching active (`caching_prompt` and an Anthropic model):
    /// cache breakpoints on the system prompt and the last user/tool turn.
    pub prompt_caching: bool,
    /// Vision active: image parts are sent.
    pub vision: bool,
    /// Native function calling (`native_tool_calling`, default true).
    pub function_calling: bool,
    /// Content as one string instead of a list of parts.
    pub force_string_serializer: bool,
    /// Send `reasoning_content` back (1.1.0+; kimi, some DeepSeek models).
    pub send_reasoning_content: bool,
}

/// The cache breakpoints `_apply_prompt_caching` sets when the options ask
/// for prompt caching: (message, part, value) overrides of `cache_prompt`.
pub(super) struct CacheMarks(Vec<(usize, usize, bool)>);

impl CacheMarks {
    /// The marks of `messages` (none without `options.prompt_caching`).
    pub(super) fn new(
        messages: &[Message<'_>],
        options: &WireOptions,
        version: SdkVersion,
    ) -> CacheMarks {
        if options.prompt_caching {
            CacheMarks(cache_marks(messages, version))
        } else {
            CacheMarks(Vec::new())
        }
    }

    /// Whether part `j` (`c`) of message `i` is sent with a cache mark.
    pub(super) fn cache(&self, i: usize, j: usize, c: &Content<'_>) -> bool {
        self.0
            .iter()
            .rev()
            .find(|(mi, ci, _)| *mi == i && *ci == j)
            .map_or(c.cache_prompt(), |(_, _, v)| *v)
    }
}

/// The breakpoints of [`CacheMarks`], whatever the options.
fn cache_marks(messages: &[Message<'_>], version: SdkVersion) -> Vec<(usize, usize, bool)> {
    let mut marks = Vec::new();
    if let Some(first) = messages.first()
        && first.role == Role::System
    {
        let n = first.content.len();
        if version >= SdkVersion::V1_11_3 {
            if n >= 2 {
                marks.push((0, 0, true));
                marks.push((0, 1, false));
            } else if n == 1 {
                marks.push((0, 0, true));
            }
        } else if n >= 1 {
            marks.push((0, n - 1, true));
        }
    }
    if let Some((i, m)) = messages
        .iter()
        .enumerate()
        .rev()
        .find(|(_, m)| matches!(m.role, Role::User | Role::Tool))
        && !m.content.is_empty()
    {
        marks.push((i, m.content.len() - 1, true));
    }
    marks
}

/// The chat-completions dicts `LLM.format_messages_for_llm` of SDK
/// `version` sends for `messages`.
pub fn to_wire_values(
    messages: &[Message<'_>],
    options: &WireOptions,
    version: SdkVersion,
) -> Vec<OwnedValue> {
    let marks = CacheMarks::new(messages, options, version);
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let cache = |j: usize, c: &Content<'_>| marks.cache(i, j, c);
            wire_message(m, options, version, &cache)
        })
        .collect()
}

/// A message's content as one string, the wire form of a message whose
/// content is not a list of parts: its text parts joined by newlines, a tool
/// result truncated as the SDK does from 1.11.1.
pub(super) fn string_content(msg: &Message<'_>, version: SdkVersion) -> String {
    let mut text = String::new();
    let mut first = true;
    for c in &msg.content {
        if let Content::Text(t) = c {
            if !first {
                text.push('\n');
            }
            first = false;
            text.push_str(&t.text);
        }
    }
    if version >= SdkVersion::V1_11_1 && msg.role == Role::Tool {
        truncate_for_wire(&text, Role::Tool, None, version).into_owned()
    } else {
        text
    }
}

pub(super) fn truncate_for_wire<'t>(
    text: &'t str,
    role: Role,
    enable_truncation: Option<bool>,
    version: SdkVersion,
) -> Cow<'t, str> {
    let applies = if version >= SdkVersion::V1_11_1 {
        role == Role::Tool
    } else if version >= SdkVersion::V1_6_0 {
        enable_truncation.unwrap_or(true)
    } else {
        true
    };
    if applies && char_count(text) > TEXT_CONTENT_LIMIT {
        Cow::Owned(maybe_truncate(text, TEXT_CONTENT_LIMIT, None))
    } else {
        Cow::Borrowed(text)
    }
}

fn ephemeral() -> OwnedValue {
    let mut m = Map::new();
    m.insert("type", s("ephemeral"));
    OwnedValue::Object(m)
}

fn wire_message(
    msg: &Message<'_>,
    o: &WireOptions,
    version: SdkVersion,
    cache: &dyn Fn(usize, &Content<'_>) -> bool,
) -> OwnedValue {
    let mut out = Map::new();
    let list = !o.force_string_serializer && (o.prompt_caching || o.vision || o.function_calling);
    if list {
        let mut parts: Vec<OwnedValue> = Vec::new();
        let mut tool_cache = false;
        let thinking: Vec<OwnedValue> = if msg.role == Role::Assistant {
            msg.thinking_blocks.iter().map(thinking_dump).collect()
        } else {
            Vec::new()
        };
        let separate_thinking = version >= SdkVersion::V1_2_0;
        if !separate_thinking {
            parts.extend(thinking.iter().cloned());
        }
        for (j, item) in msg.content.iter().enumerate() {
            let cp = cache(j, item);
            let mut dicts: Vec<Map> = Vec::new();
            match item {
                Content::Text(t) => {
                    let mut d = Map::new();
                    d.insert("type", s("text"));
                    d.insert(
                        "text",
                        s(&truncate_for_wire(
                            &t.text,
                            msg.role,
                            t.enable_truncation,
                            version,
                        )),
                    );
                    if cp {
                        d.insert("cache_control", ephemeral());
                    }
                    dicts.push(d);
                }
                Content::Image(img) => {
                    for u in &img.image_urls {
                        let mut inner = Map::new();
                        inner.insert("url", s(u));
                        let mut d = Map::new();
                        d.insert("type", s("image_url"));
                        d.insert("image_url", OwnedValue::Object(inner));
                        dicts.push(d);
                    }
                    if cp && let Some(last) = dicts.last_mut() {
                        last.insert("cache_control", ephemeral());
                    }
                }
            }
            if msg.role == Role::Tool && cp {
                tool_cache = true;
                for d in &mut dicts {
                    d.remove("cache_control");
                }
            }
            let is_image = matches!(item, Content::Image(_));
            if !is_image || o.vision {
                parts.extend(dicts.into_iter().map(OwnedValue::Object));
            }
        }
        out.insert("content", OwnedValue::Array(parts));
        out.insert("role", s(msg.role.as_str()));
        if tool_cache {
            out.insert("cache_control", ephemeral());
        }
        if separate_thinking && !thinking.is_empty() {
            out.insert("thinking_blocks", OwnedValue::Array(thinking));
        }
    } else {
        let text = string_content(msg, version);
        out.insert("content", OwnedValue::String(text));
        out.insert("role", s(msg.role.as_str()));
    }
    match &msg.tool_calls {
        Some(calls) if msg.role == Role::Assistant && !calls.is_empty() => {
            let calls = calls
                .iter()
                .map(|c| {
                    let mut f = Map::new();
                    f.insert("name", s(&c.name));
                    f.insert("arguments", s(&c.arguments));
                    let mut d = Map::new();
                    d.insert("id", s(&c.id));
                    d.insert("type", s("function"));
                    d.insert("function", OwnedValue::Object(f));
                    OwnedValue::Object(d)
                })
                .collect();
            out.insert("tool_calls", OwnedValue::Array(calls));
            if version >= SdkVersion::V1_1_0 {
                remove_content_if_empty(&mut out);
            }
        }
        _ => {
            if version >= SdkVersion::V1_29_0
                && msg.role == Role::Assistant
                && matches!(out.get("content"), Some(OwnedValue::Array(a)) if a.is_empty())
            {
                out.insert("content", s(""));
            }
        }
    }
    if msg.role == Role::Tool
        && let Some(id) = &msg.tool_call_id
    {
        out.insert("tool_call_id", s(id));
        out.insert("name", opt(&msg.name));
    }
    if version >= SdkVersion::V1_1_0
        && o.send_reasoning_content
        && let Some(rc) = &msg.reasoning_content
        && !rc.is_empty()
    {
        out.insert("reasoning_content", s(rc));
    }
    OwnedValue::Object(out)
}

/// `_remove_content_if_empty`: drop blank text parts from a tool-call turn,
/// and the content key when nothing is left.
fn remove_content_if_empty(out: &mut Map) {
    let drop = match out.get_mut("content") {
        None => return,
        Some(OwnedValue::String(t)) => py_is_blank(t),
        Some(OwnedValue::Array(items)) => {
            items.retain(|item| {
                !(item.get("type").and_then(OwnedValue::as_str) == Some("text")
                    && item
                        .get("text")
                        .and_then(OwnedValue::as_str)
                        .is_some_and(py_is_blank))
            });
            items.is_empty()
        }
        Some(_) => false,
    };
    if drop {
        out.remove("content");
    }
}
