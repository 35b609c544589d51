//! What the view takes from `base_state.json`: the leaf and the event tree's
//! marks, whether a condenser runs, the version evidence, and the wire
//! options of the agent's LLM.

use std::borrow::Cow;

use crate::json::{Parser, Value};

use super::ViewIssue;
use super::event;
use super::message::WireOptions;
use super::version::{Detector, Evidence};

/// What the view takes from `base_state.json`.
#[derive(Debug, Default, Clone)]
pub(super) struct StateInfo<'a> {
    /// The state's `leaf_event_id`.
    pub(super) leaf: Option<Cow<'a, str>>,
    /// The state's `head_is_empty`.
    pub(super) head_is_empty: bool,
    /// Whether the agent has a condenser.
    pub(super) condenser: bool,
    /// The wire options of the agent's LLM, when it has one.
    pub(super) wire: Option<WireOptions>,
}

/// What the view takes from the state file's bytes `raw`, parsed with
/// `parser`; a state that does not parse or is not an object is reported in
/// `issues` and gives nothing.
pub(super) fn read_state<'a>(
    raw: &'a [u8],
    parser: &mut Parser,
    det: &mut Detector,
    issues: &mut Vec<ViewIssue>,
) -> StateInfo<'a> {
    let doc = match parser.parse(raw) {
        Ok(d) => d,
        Err(e) => {
            issues.push(ViewIssue::BaseState(e.to_string()));
            return StateInfo::default();
        }
    };
    let root = doc.root();
    let Some(obj) = root.as_object() else {
        issues.push(ViewIssue::BaseState("not a JSON object".to_owned()));
        return StateInfo::default();
    };
    state_info(raw, obj, det)
}

/// [`read_state`] past the parse: what the view takes from the state's
/// root object `obj`, its strings borrowed from `raw` where they can be.
pub(super) fn state_info<'a>(
    raw: &'a [u8],
    obj: crate::json::Object<'_>,
    det: &mut Detector,
) -> StateInfo<'a> {
    let [
        leaf,
        empty,
        agent,
        path_rules,
        tags,
        blocked,
        agent_state,
        invoked,
    ] = obj.get_many([
        "leaf_event_id",
        "head_is_empty",
        "agent",
        "activated_path_rules",
        "tags",
        "blocked_actions",
        "agent_state",
        "invoked_skills",
    ]);
    det.add(if empty.is_some() {
        Evidence::EventTree
    } else {
        Evidence::NoHeadIsEmpty
    });
    det.add(Evidence::StatePathRules(path_rules.is_some()));
    det.add(Evidence::StateTags(tags.is_some()));
    det.add(Evidence::StateBlockedActions(blocked.is_some()));
    det.add(Evidence::StateAgentState(agent_state.is_some()));
    det.add(Evidence::StateInvokedSkills(invoked.is_some()));
    StateInfo {
        leaf: leaf.and_then(|l| event::cow(raw, l)),
        head_is_empty: empty.and_then(|e| e.as_bool()).unwrap_or(false),
        condenser: agent
            .and_then(|a| a.get("condenser"))
            .is_some_and(|c| !c.is_null()),
        wire: agent.and_then(|a| a.get("llm")).map(wire_options_for_llm),
    }
}

/// Case-insensitive substring match, as the SDK's `model_matches`.
fn model_matches(model: &str, patterns: &[&str]) -> bool {
    let m = model.trim().to_ascii_lowercase();
    patterns.iter().any(|p| m.contains(p))
}

const PROMPT_CACHE_MODELS: &[&str] = &[
    "claude-3-7-sonnet",
    "claude-sonnet-3-7-latest",
    "claude-3-5-sonnet",
    "claude-3-5-haiku",
    "claude-3-haiku-20240307",
    "claude-3-opus-20240229",
    "claude-sonnet-4",
    "claude-opus-4",
    "claude-haiku-4-5",
    "claude-opus-5",
    "claude-fable-5",
];
const FORCE_STRING_SERIALIZER_MODELS: &[&str] = &[
    "deepseek",
    "glm",
    "groq/kimi-k2-instruct",
    "openrouter/minimax",
];
const SEND_REASONING_CONTENT_MODELS: &[&str] = &[
    "kimi-k3",
    "kimi-k2-thinking",
    "kimi-k2.5",
    "kimi-k2.6",
    "openrouter/minimax-m2",
    "deepseek/deepseek-reasoner",
    "deepseek/deepseek-v4-pro",
    "deepseek/deepseek-v4-flash",
];
/// Model-name prefixes (after the last `/`) litellm marks as vision capable:
/// an approximation of its model table.
const VISION_MODEL_PREFIXES: &[&str] = &[
    "gpt-4o",
    "chatgpt-4o",
    "gpt-4.1",
    "gpt-4-turbo",
    "gpt-4-vision",
    "gpt-4.5",
    "gpt-5",
    "o1",
    "o3",
    "o4",
    "claude-3",
    "claude-sonnet-4",
    "claude-opus-4",
    "claude-haiku-4",
    "claude-4",
    "claude-opus-5",
    "claude-fable-5",
    "gemini",
    "pixtral",
    "llava",
    "qwen-vl",
    "qwen2-vl",
    "qwen2.5-vl",
    "qwen3-vl",
    "grok-2-vision",
    "grok-4",
    "llama-4",
    "llama-3.2-11b-vision",
    "llama-3.2-90b-vision",
    "kimi-k2.5",
    "kimi-k2.6",
    "kimi-k3",
];

/// The wire options `LLM.format_messages_for_llm` would use for the
/// `agent.llm` object of a state file (see the module docs for what is
/// approximated).
pub fn wire_options_for_llm(llm: Value<'_>) -> WireOptions {
    let model = llm.get("model").and_then(|m| m.as_str()).unwrap_or("");
    let flag = |k: &str| llm.get(k).and_then(|b| b.as_bool());
    let overrides = llm.get("capability_overrides");
    let over = |k: &str| overrides.and_then(|o| o.get(k)).and_then(|b| b.as_bool());
    let base = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let vision_model = over("supports_vision")
        .unwrap_or_else(|| VISION_MODEL_PREFIXES.iter().any(|p| base.starts_with(p)));
    let caching_model =
        over("supports_prompt_cache").unwrap_or_else(|| model_matches(model, PROMPT_CACHE_MODELS));
    WireOptions {
        prompt_caching: flag("caching_prompt").unwrap_or(true) && caching_model,
        vision: !flag("disable_vision").unwrap_or(false) && vision_model,
        function_calling: flag("native_tool_calling").unwrap_or(true),
        force_string_serializer: flag("force_string_serializer")
            .unwrap_or_else(|| model_matches(model, FORCE_STRING_SERIALIZER_MODELS)),
        send_reasoning_content: model_matches(model, SEND_REASONING_CONTENT_MODELS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(llm: &str) -> WireOptions {
        let mut p = Parser::new();
        let doc = p.parse(llm.as_bytes()).expect("json");
        wire_options_for_llm(doc.root())
    }

    #[test]
    fn wire_options_from_the_llm_config() {
        let o = opts(r#"{"model":"openai/fake-model"}"#);
        assert!(o.function_calling && !o.vision && !o.prompt_caching);
        let o = opts(r#"{"model":"openai/gpt-4o","caching_prompt":true}"#);
        assert!(o.vision && !o.prompt_caching);
        let o = opts(r#"{"model":"anthropic/claude-sonnet-4-5-20250929"}"#);
        assert!(o.vision && o.prompt_caching);
        let o = opts(
            r#"{"model":"anthropic/claude-sonnet-4-5","caching_prompt":false,"disable_vision":true}"#,
        );
        assert!(!o.vision && !o.prompt_caching);
        let o = opts(r#"{"model":"deepseek/deepseek-reasoner","native_tool_calling":false}"#);
        assert!(o.force_string_serializer && o.send_reasoning_content && !o.function_calling);
        let o = opts(r#"{"model":"x/glm-4.6","force_string_serializer":false}"#);
        assert!(!o.force_string_serializer);
        let o = opts(r#"{"model":"m","capability_overrides":{"supports_vision":true}}"#);
        assert!(o.vision);
    }
}
