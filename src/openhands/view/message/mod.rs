//! The model's messages: typed, borrowing the event files' strings where
//! no rendering changed them, and written out as the SDK's
//! `Message.model_dump(mode="json")` objects or as the chat-completions
//! dicts `LLM.format_messages_for_llm` sends.

mod sdk;
mod wire;
mod wire_shape;
#[cfg(feature = "parquet")]
mod wire_write;

pub use wire::{WireOptions, to_wire_values};
pub(crate) use wire_shape::{WireContent, WirePart, WireShape, wire_shapes};
#[cfg(feature = "parquet")]
pub(crate) use wire_write::{WireFacts, write_wire_messages};

use std::borrow::Cow;

use crate::json::{Map, OwnedValue};

use super::text::{maybe_truncate, py_is_blank};
use super::version::SdkVersion;
use crate::chars::char_count;

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
}

#[cfg(test)]
pub(crate) mod tests;
