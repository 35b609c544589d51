//! The messages as the SDK's `Message.model_dump(mode="json")` writes them,
//! field by field for each SDK version.

use super::*;

impl Message<'_> {
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

pub(super) fn s(text: &str) -> OwnedValue {
    OwnedValue::String(text.to_owned())
}

pub(super) fn opt(v: &Option<Cow<'_, str>>) -> OwnedValue {
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

pub(super) fn thinking_dump(b: &ThinkingBlock<'_>) -> OwnedValue {
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
