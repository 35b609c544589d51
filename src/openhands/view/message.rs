//! The model's messages: typed, borrowing the event files' strings where
//! no rendering changed them, and written out as the SDK's
//! `Message.model_dump(mode="json")` objects or as the chat-completions
//! dicts `LLM.format_messages_for_llm` sends.

use std::borrow::Cow;

use crate::json::{Map, OwnedValue};

use super::text::{maybe_truncate, py_is_blank, py_len};
use super::version::SdkVersion;

/// Text parts longer than this many characters are middle-truncated when
/// sent (`DEFAULT_TEXT_CONTENT_LIMIT`).
pub const TEXT_CONTENT_LIMIT: usize = 50_000;

/// A message role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// `system`.
    System,
    /// `user`.
    User,
    /// `assistant`.
    Assistant,
    /// `tool`.
    Tool,
}

impl Role {
    /// The role's JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// The role named `s`.
    pub fn parse(s: &str) -> Option<Role> {
        Some(match s {
            "system" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            _ => return None,
        })
    }
}

/// A `TextContent`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextContent<'a> {
    /// The text.
    pub text: Cow<'a, str>,
    /// `cache_prompt`.
    pub cache_prompt: bool,
    /// `enable_truncation` as stored (1.6.0 – 1.11.0 writers); `None` means
    /// the default, `true`.
    pub enable_truncation: Option<bool>,
}

impl<'a> TextContent<'a> {
    /// A text part with default flags.
    pub fn new(text: impl Into<Cow<'a, str>>) -> Self {
        TextContent {
            text: text.into(),
            cache_prompt: false,
            enable_truncation: None,
        }
    }
}

/// An `ImageContent`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageContent<'a> {
    /// The image URLs (http(s) or `data:` URLs).
    pub image_urls: Vec<Cow<'a, str>>,
    /// `cache_prompt`.
    pub cache_prompt: bool,
}

/// One content part of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content<'a> {
    /// Text.
    Text(TextContent<'a>),
    /// Images.
    Image(ImageContent<'a>),
}

impl<'a> Content<'a> {
    /// A text part with default flags.
    pub fn text(text: impl Into<Cow<'a, str>>) -> Self {
        Content::Text(TextContent::new(text))
    }

    /// The text of a text part.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text(t) => Some(&t.text),
            Content::Image(_) => None,
        }
    }

    fn cache_prompt(&self) -> bool {
        match self {
            Content::Text(t) => t.cache_prompt,
            Content::Image(i) => i.cache_prompt,
        }
    }
}

/// A `MessageToolCall`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall<'a> {
    /// The call id.
    pub id: Cow<'a, str>,
    /// The tool name.
    pub name: Cow<'a, str>,
    /// The arguments, a JSON text.
    pub arguments: Cow<'a, str>,
    /// `"completion"` or `"responses"`.
    pub origin: Cow<'a, str>,
    /// The Responses item id (1.18.1+).
    pub responses_item_id: Option<Cow<'a, str>>,
}

/// A thinking block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThinkingBlock<'a> {
    /// `{"type": "thinking", ...}`.
    Thinking {
        /// The thinking text.
        thinking: Cow<'a, str>,
        /// The signature (optional from 1.7.0).
        signature: Option<Cow<'a, str>>,
    },
    /// `{"type": "redacted_thinking", ...}`.
    Redacted {
        /// The opaque data.
        data: Cow<'a, str>,
    },
}

/// An OpenAI Responses reasoning item (`ReasoningItemModel`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReasoningItem<'a> {
    /// `id`.
    pub id: Option<Cow<'a, str>>,
    /// `summary` texts.
    pub summary: Vec<Cow<'a, str>>,
    /// `content` texts.
    pub content: Option<Vec<Cow<'a, str>>>,
    /// `encrypted_content`.
    pub encrypted_content: Option<Cow<'a, str>>,
    /// `status`.
    pub status: Option<Cow<'a, str>>,
}

/// The serialization flags `Message` carried up to 1.9.x (stored in
/// `MessageEvent.llm_message`, dumped by those versions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LegacyFlags {
    /// `cache_enabled`.
    pub cache_enabled: bool,
    /// `vision_enabled`.
    pub vision_enabled: bool,
    /// `function_calling_enabled`.
    pub function_calling_enabled: bool,
    /// `force_string_serializer`.
    pub force_string_serializer: bool,
    /// `send_reasoning_content` (1.1.0+).
    pub send_reasoning_content: bool,
}

/// One message the model is sent (the SDK's `Message`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message<'a> {
    /// The role.
    pub role: Role,
    /// The content parts.
    pub content: Vec<Content<'a>>,
    /// Tool calls (assistant turns); `None` when absent.
    pub tool_calls: Option<Vec<ToolCall<'a>>>,
    /// The answered call (tool results).
    pub tool_call_id: Option<Cow<'a, str>>,
    /// The tool's name (tool results).
    pub name: Option<Cow<'a, str>>,
    /// Reasoning text.
    pub reasoning_content: Option<Cow<'a, str>>,
    /// Anthropic thinking blocks.
    pub thinking_blocks: Vec<ThinkingBlock<'a>>,
    /// Responses reasoning item.
    pub responses_reasoning_item: Option<ReasoningItem<'a>>,
    /// The deprecated flags (dumped only by versions before 1.10.0).
    pub flags: LegacyFlags,
}

impl<'a> Message<'a> {
    /// An empty message of `role`.
    pub fn new(role: Role) -> Self {
        Message {
            role,
            content: Vec::new(),
            tool_calls: None,
            tool_call_id: None,
            name: None,
            reasoning_content: None,
            thinking_blocks: Vec::new(),
            responses_reasoning_item: None,
            flags: LegacyFlags::default(),
        }
    }

    /// A "plain user" message (1.26.0+ merges consecutive ones).
    pub fn is_plain_user(&self) -> bool {
        self.role == Role::User
            && self.tool_calls.is_none()
            && self.tool_call_id.is_none()
            && self.name.is_none()
    }

    /// The message as `Message.model_dump(mode="json")` of SDK `version`
    /// writes it: every field, `null` for unset ones, in the model's order.
    pub fn to_sdk_value(&self, version: SdkVersion) -> OwnedValue {
        let legacy = version < SdkVersion::V1_10_0;
        let mut m = Map::new();
        m.insert("role", s(self.role.as_str()));
        m.insert(
            "content",
            OwnedValue::Array(
                self.content
                    .iter()
                    .map(|c| content_dump(c, version))
                    .collect(),
            ),
        );
        if legacy {
            m.insert("cache_enabled", OwnedValue::Bool(self.flags.cache_enabled));
            m.insert(
                "vision_enabled",
                OwnedValue::Bool(self.flags.vision_enabled),
            );
            m.insert(
                "function_calling_enabled",
                OwnedValue::Bool(self.flags.function_calling_enabled),
            );
        }
        m.insert(
            "tool_calls",
            match &self.tool_calls {
                None => OwnedValue::Null,
                Some(calls) => {
                    OwnedValue::Array(calls.iter().map(|c| tool_call_dump(c, version)).collect())
                }
            },
        );
        m.insert("tool_call_id", opt(&self.tool_call_id));
        m.insert("name", opt(&self.name));
        if legacy {
            m.insert(
                "force_string_serializer",
                OwnedValue::Bool(self.flags.force_string_serializer),
            );
            if version >= SdkVersion::V1_1_0 {
                m.insert(
                    "send_reasoning_content",
                    OwnedValue::Bool(self.flags.send_reasoning_content),
                );
            }
        }
        m.insert("reasoning_content", opt(&self.reasoning_content));
        m.insert(
            "thinking_blocks",
            OwnedValue::Array(self.thinking_blocks.iter().map(thinking_dump).collect()),
        );
        m.insert(
            "responses_reasoning_item",
            match &self.responses_reasoning_item {
                None => OwnedValue::Null,
                Some(r) => reasoning_dump(r),
            },
        );
        OwnedValue::Object(m)
    }
}

fn s(text: &str) -> OwnedValue {
    OwnedValue::String(text.to_owned())
}

fn opt(v: &Option<Cow<'_, str>>) -> OwnedValue {
    match v {
        Some(t) => s(t),
        None => OwnedValue::Null,
    }
}

fn content_dump(c: &Content<'_>, version: SdkVersion) -> OwnedValue {
    let mut m = Map::new();
    match c {
        Content::Text(t) => {
            m.insert("cache_prompt", OwnedValue::Bool(t.cache_prompt));
            m.insert("type", s("text"));
            m.insert("text", s(&t.text));
            if version >= SdkVersion::V1_6_0 && version < SdkVersion::V1_11_1 {
                m.insert(
                    "enable_truncation",
                    OwnedValue::Bool(t.enable_truncation.unwrap_or(true)),
                );
            }
        }
        Content::Image(i) => {
            m.insert("cache_prompt", OwnedValue::Bool(i.cache_prompt));
            m.insert("type", s("image"));
            m.insert(
                "image_urls",
                OwnedValue::Array(i.image_urls.iter().map(|u| s(u)).collect()),
            );
        }
    }
    OwnedValue::Object(m)
}

fn tool_call_dump(c: &ToolCall<'_>, version: SdkVersion) -> OwnedValue {
    let mut m = Map::new();
    m.insert("id", s(&c.id));
    if version >= SdkVersion::V1_18_1 {
        m.insert("responses_item_id", opt(&c.responses_item_id));
    }
    m.insert("name", s(&c.name));
    m.insert("arguments", s(&c.arguments));
    m.insert("origin", s(&c.origin));
    OwnedValue::Object(m)
}

fn thinking_dump(b: &ThinkingBlock<'_>) -> OwnedValue {
    let mut m = Map::new();
    match b {
        ThinkingBlock::Thinking {
            thinking,
            signature,
        } => {
            m.insert("type", s("thinking"));
            m.insert("thinking", s(thinking));
            m.insert("signature", opt(signature));
        }
        ThinkingBlock::Redacted { data } => {
            m.insert("type", s("redacted_thinking"));
            m.insert("data", s(data));
        }
    }
    OwnedValue::Object(m)
}

fn reasoning_dump(r: &ReasoningItem<'_>) -> OwnedValue {
    let mut m = Map::new();
    m.insert("id", opt(&r.id));
    m.insert(
        "summary",
        OwnedValue::Array(r.summary.iter().map(|t| s(t)).collect()),
    );
    m.insert(
        "content",
        match &r.content {
            None => OwnedValue::Null,
            Some(c) => OwnedValue::Array(c.iter().map(|t| s(t)).collect()),
        },
    );
    m.insert("encrypted_content", opt(&r.encrypted_content));
    m.insert("status", opt(&r.status));
    OwnedValue::Object(m)
}

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

/// The cache breakpoints `_apply_prompt_caching` sets: (message, part,
/// value) overrides of `cache_prompt`.
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
    let marks = if options.prompt_caching {
        cache_marks(messages, version)
    } else {
        Vec::new()
    };
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let cache = |j: usize, c: &Content<'_>| {
                marks
                    .iter()
                    .rev()
                    .find(|(mi, ci, _)| *mi == i && *ci == j)
                    .map_or(c.cache_prompt(), |(_, _, v)| *v)
            };
            wire_message(m, options, version, &cache)
        })
        .collect()
}

fn truncate_for_wire<'t>(
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
    if applies && py_len(text) > TEXT_CONTENT_LIMIT {
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
        let text = if version >= SdkVersion::V1_11_1 && msg.role == Role::Tool {
            truncate_for_wire(&text, Role::Tool, None, version).into_owned()
        } else {
            text
        };
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

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Message<'_> {
        let mut m = Message::new(Role::User);
        m.content.push(Content::text(text));
        m
    }

    #[test]
    fn dump_fields_follow_the_version() {
        let m = user("hi");
        let old = m.to_sdk_value(SdkVersion::V1_0_0);
        assert!(old.get("cache_enabled").is_some());
        assert!(old.get("send_reasoning_content").is_none());
        let mid = m.to_sdk_value(SdkVersion::new(1, 7, 4));
        assert!(mid.get("send_reasoning_content").is_some());
        let part = &mid.get("content").and_then(|c| c.as_array()).unwrap()[0];
        assert_eq!(part.get("enable_truncation"), Some(&OwnedValue::Bool(true)));
        let new = m.to_sdk_value(SdkVersion::LATEST);
        assert!(new.get("cache_enabled").is_none());
        assert_eq!(new.get("tool_calls"), Some(&OwnedValue::Null));
    }

    #[test]
    fn wire_string_and_list_forms() {
        let mut m = user("a");
        m.content.push(Content::text("b"));
        let msgs = [m];
        let list = to_wire_values(
            &msgs,
            &WireOptions {
                function_calling: true,
                ..Default::default()
            },
            SdkVersion::LATEST,
        );
        assert_eq!(
            list[0]
                .get("content")
                .and_then(|c| c.as_array())
                .map(Vec::len),
            Some(2)
        );
        let string = to_wire_values(&msgs, &WireOptions::default(), SdkVersion::LATEST);
        assert_eq!(
            string[0].get("content").and_then(OwnedValue::as_str),
            Some("a\nb")
        );
    }

    #[test]
    fn prompt_caching_marks_system_and_last_user_turn() {
        let mut sys = Message::new(Role::System);
        sys.content.push(Content::text("static"));
        sys.content.push(Content::text("dynamic"));
        let msgs = [sys, user("q1"), user("q2")];
        let o = WireOptions {
            prompt_caching: true,
            function_calling: true,
            ..Default::default()
        };
        let w = to_wire_values(&msgs, &o, SdkVersion::LATEST);
        let parts = |i: usize| w[i].get("content").and_then(|c| c.as_array()).unwrap();
        assert!(parts(0)[0].get("cache_control").is_some());
        assert!(parts(0)[1].get("cache_control").is_none());
        assert!(parts(1)[0].get("cache_control").is_none());
        assert!(parts(2)[0].get("cache_control").is_some());
        // Before 1.11.3 the last system block was marked.
        let w = to_wire_values(&msgs, &o, SdkVersion::V1_10_0);
        let parts = w[0].get("content").and_then(|c| c.as_array()).unwrap();
        assert!(parts[0].get("cache_control").is_none());
        assert!(parts[1].get("cache_control").is_some());
    }

    #[test]
    fn tool_call_turn_drops_blank_text_from_1_1() {
        let mut m = Message::new(Role::Assistant);
        m.content.push(Content::text("  "));
        m.tool_calls = Some(vec![ToolCall {
            id: "c1".into(),
            name: "t".into(),
            arguments: "{}".into(),
            origin: "completion".into(),
            responses_item_id: None,
        }]);
        let o = WireOptions {
            function_calling: true,
            ..Default::default()
        };
        let msgs = [m];
        let w = to_wire_values(&msgs, &o, SdkVersion::LATEST);
        assert!(w[0].get("content").is_none());
        let w = to_wire_values(&msgs, &o, SdkVersion::V1_0_0);
        assert!(w[0].get("content").is_some());
    }

    fn fc() -> WireOptions {
        WireOptions {
            function_calling: true,
            ..Default::default()
        }
    }

    #[test]
    fn thinking_blocks_placement_by_version() {
        let mut m = Message::new(Role::Assistant);
        m.content.push(Content::text("answer"));
        m.thinking_blocks.push(ThinkingBlock::Thinking {
            thinking: "t".into(),
            signature: None,
        });
        m.thinking_blocks
            .push(ThinkingBlock::Redacted { data: "d".into() });
        let msgs = [m];
        // 1.0.x–1.1.x: inside the content list, before the text.
        let w = to_wire_values(&msgs, &fc(), SdkVersion::V1_1_0);
        let parts = w[0].get("content").and_then(|c| c.as_array()).unwrap();
        assert_eq!(parts.len(), 3);
        assert_eq!(
            parts[0].get("type").and_then(OwnedValue::as_str),
            Some("thinking")
        );
        assert_eq!(parts[0].get("signature"), Some(&OwnedValue::Null));
        assert!(w[0].get("thinking_blocks").is_none());
        // 1.2.0+: their own key.
        let w = to_wire_values(&msgs, &fc(), SdkVersion::V1_2_0);
        assert_eq!(
            w[0].get("content").and_then(|c| c.as_array()).map(Vec::len),
            Some(1)
        );
        assert_eq!(
            w[0].get("thinking_blocks")
                .and_then(|c| c.as_array())
                .map(Vec::len),
            Some(2)
        );
        // Not for the string serializer.
        let w = to_wire_values(&msgs, &WireOptions::default(), SdkVersion::LATEST);
        assert!(w[0].get("thinking_blocks").is_none());
    }

    #[test]
    fn images_need_vision_and_tool_cache_moves_to_the_message() {
        let mut t = Message::new(Role::Tool);
        t.tool_call_id = Some("c".into());
        t.name = Some("file_editor".into());
        t.content.push(Content::text("img"));
        t.content.push(Content::Image(ImageContent {
            image_urls: vec!["data:image/png;base64,AAAA".into(), "http://x/y.png".into()],
            cache_prompt: false,
        }));
        let msgs = [t];
        let w = to_wire_values(&msgs, &fc(), SdkVersion::LATEST);
        assert_eq!(
            w[0].get("content").and_then(|c| c.as_array()).map(Vec::len),
            Some(1)
        );
        let o = WireOptions {
            vision: true,
            prompt_caching: true,
            ..fc()
        };
        let w = to_wire_values(&msgs, &o, SdkVersion::LATEST);
        let parts = w[0].get("content").and_then(|c| c.as_array()).unwrap();
        assert_eq!(parts.len(), 3);
        assert_eq!(
            parts[2]
                .get("image_url")
                .and_then(|u| u.get("url"))
                .and_then(OwnedValue::as_str),
            Some("http://x/y.png")
        );
        // The last tool turn's breakpoint is on the message, not the part.
        assert!(parts.iter().all(|p| p.get("cache_control").is_none()));
        assert!(w[0].get("cache_control").is_some());
        assert_eq!(
            w[0].get("name").and_then(OwnedValue::as_str),
            Some("file_editor")
        );
    }

    #[test]
    fn reasoning_content_and_empty_assistant_content() {
        let mut m = Message::new(Role::Assistant);
        m.reasoning_content = Some("why".into());
        let msgs = [m];
        let o = WireOptions {
            send_reasoning_content: true,
            ..fc()
        };
        let w = to_wire_values(&msgs, &o, SdkVersion::LATEST);
        assert_eq!(
            w[0].get("reasoning_content").and_then(OwnedValue::as_str),
            Some("why")
        );
        // 1.29.0+ sends an empty plain assistant content as "".
        assert_eq!(w[0].get("content").and_then(OwnedValue::as_str), Some(""));
        let w = to_wire_values(&msgs, &o, SdkVersion::new(1, 28, 1));
        assert_eq!(
            w[0].get("content").and_then(|c| c.as_array()).map(Vec::len),
            Some(0)
        );
        // 1.0.x never sends reasoning content.
        let w = to_wire_values(&msgs, &o, SdkVersion::V1_0_0);
        assert!(w[0].get("reasoning_content").is_none());
        // Without the model flag, not sent.
        let w = to_wire_values(&msgs, &fc(), SdkVersion::LATEST);
        assert!(w[0].get("reasoning_content").is_none());
    }

    #[test]
    fn dumps_of_calls_blocks_and_reasoning_items() {
        let mut m = Message::new(Role::Assistant);
        m.tool_calls = Some(vec![ToolCall {
            id: "c".into(),
            name: "n".into(),
            arguments: "{}".into(),
            origin: "responses".into(),
            responses_item_id: Some("fc_1".into()),
        }]);
        m.responses_reasoning_item = Some(ReasoningItem {
            id: Some("rs".into()),
            summary: vec!["s".into()],
            ..Default::default()
        });
        let new = m.to_sdk_value(SdkVersion::LATEST);
        let call = &new.get("tool_calls").and_then(|c| c.as_array()).unwrap()[0];
        assert_eq!(
            call.get("responses_item_id").and_then(OwnedValue::as_str),
            Some("fc_1")
        );
        let old = m.to_sdk_value(SdkVersion::new(1, 18, 0));
        let call = &old.get("tool_calls").and_then(|c| c.as_array()).unwrap()[0];
        assert!(call.get("responses_item_id").is_none());
        let item = new.get("responses_reasoning_item").unwrap();
        assert_eq!(item.get("content"), Some(&OwnedValue::Null));
        assert_eq!(item.get("status"), Some(&OwnedValue::Null));
    }

    #[test]
    fn tool_text_truncated_only_for_tool_role_from_1_11_1() {
        let long = "x".repeat(TEXT_CONTENT_LIMIT + 10);
        let mut t = Message::new(Role::Tool);
        t.content.push(Content::text(long.as_str()));
        t.tool_call_id = Some("c".into());
        t.name = Some("n".into());
        let u = user(&long);
        let o = WireOptions {
            function_calling: true,
            ..Default::default()
        };
        let msgs = [t, u];
        let w = to_wire_values(&msgs, &o, SdkVersion::LATEST);
        let text = |i: usize| {
            w[i].get("content").and_then(|c| c.as_array()).unwrap()[0]
                .get("text")
                .and_then(OwnedValue::as_str)
                .unwrap()
                .chars()
                .count()
        };
        assert_eq!(text(0), TEXT_CONTENT_LIMIT);
        assert_eq!(text(1), TEXT_CONTENT_LIMIT + 10);
        let w = to_wire_values(&msgs, &o, SdkVersion::V1_0_0);
        let t1 = w[1].get("content").and_then(|c| c.as_array()).unwrap()[0]
            .get("text")
            .and_then(OwnedValue::as_str)
            .unwrap()
            .chars()
            .count();
        assert_eq!(t1, TEXT_CONTENT_LIMIT);
    }
}
