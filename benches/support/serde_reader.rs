//! Baseline (3): the obvious Rust reader of an OpenHands store — serde_json
//! into owned structs declaring the same members as `agentlog`'s views,
//! with a `serde_json::Value` catch-all (`#[serde(flatten)]`) for the
//! members they do not declare, and the event kind chosen by its `kind`
//! member (an internally tagged enum).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

type Rest = Map<String, Value>;

#[derive(Deserialize)]
pub struct Content {
    #[serde(rename = "type")]
    pub type_: Option<String>,
    pub text: Option<String>,
    pub image_urls: Option<Vec<String>>,
    pub cache_prompt: Option<bool>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub enum Contents {
    Text(String),
    List(Vec<Content>),
}

#[derive(Deserialize)]
pub struct ThinkingBlock {
    #[serde(rename = "type")]
    pub type_: Option<String>,
    pub thinking: Option<String>,
    pub signature: Option<String>,
    pub data: Option<String>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct ReasoningItem {
    pub id: Option<String>,
    pub summary: Option<Vec<String>>,
    pub content: Option<Vec<String>>,
    pub encrypted_content: Option<String>,
    pub status: Option<String>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct ToolCall {
    pub id: Option<String>,
    pub responses_item_id: Option<String>,
    pub name: Option<String>,
    pub arguments: Option<String>,
    pub origin: Option<String>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct Message {
    pub role: Option<String>,
    pub content: Option<Contents>,
    pub tool_calls: Option<Vec<ToolCall>>,
    pub tool_call_id: Option<String>,
    pub name: Option<String>,
    pub reasoning_content: Option<String>,
    pub thinking_blocks: Option<Vec<ThinkingBlock>>,
    pub responses_reasoning_item: Option<ReasoningItem>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct Envelope {
    pub id: Option<String>,
    pub timestamp: Option<String>,
    pub source: Option<String>,
    pub parent_id: Option<String>,
}

#[derive(Deserialize)]
pub struct MessageEvent {
    pub id: Option<String>,
    pub timestamp: Option<String>,
    pub source: Option<String>,
    pub parent_id: Option<String>,
    pub llm_message: Option<Message>,
    pub llm_response_id: Option<String>,
    pub activated_skills: Option<Vec<String>>,
    pub extended_content: Option<Contents>,
    pub sender: Option<String>,
    pub critic_result: Option<Value>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct Action {
    pub kind: Option<String>,
    pub description: Option<String>,
    pub prompt: Option<String>,
    pub subagent_type: Option<String>,
    pub resume: Option<String>,
    pub command: Option<String>,
    pub ids: Option<Vec<String>>,
    pub tasks: Option<BTreeMap<String, String>>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct ActionEvent {
    pub id: Option<String>,
    pub timestamp: Option<String>,
    pub source: Option<String>,
    pub parent_id: Option<String>,
    pub thought: Option<Contents>,
    pub reasoning_content: Option<String>,
    pub thinking_blocks: Option<Vec<ThinkingBlock>>,
    pub responses_reasoning_item: Option<ReasoningItem>,
    pub action: Option<Action>,
    pub tool_name: Option<String>,
    pub tool_call_id: Option<String>,
    pub tool_call: Option<ToolCall>,
    pub llm_response_id: Option<String>,
    pub security_risk: Option<String>,
    pub critic_result: Option<Value>,
    pub summary: Option<String>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct Observation {
    pub kind: Option<String>,
    pub content: Option<Contents>,
    pub is_error: Option<bool>,
    pub metadata: Option<Value>,
    pub full_output_save_dir: Option<String>,
    pub screenshot_data: Option<String>,
    pub task_id: Option<String>,
    pub subagent: Option<String>,
    pub status: Option<String>,
    pub suggestions: Option<String>,
    pub confidence: Option<Value>,
    pub reasoning: Option<String>,
    pub message: Option<String>,
    pub sessions_processed: Option<Value>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct ObservationEvent {
    pub id: Option<String>,
    pub timestamp: Option<String>,
    pub source: Option<String>,
    pub parent_id: Option<String>,
    pub tool_name: Option<String>,
    pub tool_call_id: Option<String>,
    pub observation: Option<Observation>,
    pub action_id: Option<String>,
    pub extended_content: Option<Contents>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct UserRejectObservation {
    pub id: Option<String>,
    pub timestamp: Option<String>,
    pub source: Option<String>,
    pub parent_id: Option<String>,
    pub tool_name: Option<String>,
    pub tool_call_id: Option<String>,
    pub rejection_reason: Option<String>,
    pub rejection_source: Option<String>,
    pub action_id: Option<String>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct AgentErrorEvent {
    pub id: Option<String>,
    pub timestamp: Option<String>,
    pub source: Option<String>,
    pub parent_id: Option<String>,
    pub tool_name: Option<String>,
    pub tool_call_id: Option<String>,
    pub error: Option<String>,
    pub classification: Option<Value>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct Condensation {
    pub id: Option<String>,
    pub timestamp: Option<String>,
    pub source: Option<String>,
    pub parent_id: Option<String>,
    pub forgotten_event_ids: Option<Vec<String>>,
    pub summary: Option<String>,
    pub summary_offset: Option<Value>,
    pub llm_response_id: Option<String>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct SystemPromptEvent {
    pub id: Option<String>,
    pub timestamp: Option<String>,
    pub source: Option<String>,
    pub parent_id: Option<String>,
    pub system_prompt: Option<Content>,
    pub tools: Option<Vec<Value>>,
    pub dynamic_context: Option<Content>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct OtherEvent {
    pub id: Option<String>,
    pub timestamp: Option<String>,
    pub source: Option<String>,
    pub parent_id: Option<String>,
    #[serde(flatten)]
    pub rest: Rest,
}

/// An event, by its `kind` (variants named as the kinds, unboxed: the
/// obvious way).
#[allow(clippy::large_enum_variant, clippy::enum_variant_names)]
#[derive(Deserialize)]
#[serde(tag = "kind")]
pub enum Event {
    MessageEvent(MessageEvent),
    ActionEvent(ActionEvent),
    ObservationEvent(ObservationEvent),
    UserRejectObservation(UserRejectObservation),
    AgentErrorEvent(AgentErrorEvent),
    Condensation(Condensation),
    SystemPromptEvent(SystemPromptEvent),
    PauseEvent(OtherEvent),
    InterruptEvent(OtherEvent),
    CondensationRequest(OtherEvent),
    ConversationStateUpdateEvent(OtherEvent),
    ConversationErrorEvent(OtherEvent),
    SecurityAnalysisEvent(OtherEvent),
    HookExecutionEvent(OtherEvent),
    TokenEvent(OtherEvent),
    LLMCompletionLogEvent(OtherEvent),
    ACPToolCallEvent(OtherEvent),
}

#[derive(Deserialize)]
pub struct TokenUsage {
    pub model: Option<String>,
    pub prompt_tokens: Option<Value>,
    pub completion_tokens: Option<Value>,
    pub cache_read_tokens: Option<Value>,
    pub cache_write_tokens: Option<Value>,
    pub reasoning_tokens: Option<Value>,
    pub context_window: Option<Value>,
    pub per_turn_token: Option<Value>,
    pub response_id: Option<String>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct Metrics {
    pub model_name: Option<String>,
    pub accumulated_cost: Option<Value>,
    pub max_budget_per_task: Option<Value>,
    pub accumulated_token_usage: Option<TokenUsage>,
    pub costs: Option<Vec<Value>>,
    pub response_latencies: Option<Vec<Value>>,
    pub token_usages: Option<Vec<TokenUsage>>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct Stats {
    pub usage_to_metrics: Option<BTreeMap<String, Metrics>>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct State {
    pub id: Option<String>,
    pub agent: Option<Value>,
    pub workspace: Option<Value>,
    pub execution_status: Option<String>,
    pub confirmation_policy: Option<Value>,
    pub leaf_event_id: Option<String>,
    pub head_is_empty: Option<bool>,
    pub stats: Option<Stats>,
    #[serde(flatten)]
    pub rest: Rest,
}

#[derive(Deserialize)]
pub struct Meta {
    pub id: Option<String>,
    pub title: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    #[serde(flatten)]
    pub rest: Rest,
}

/// What the serde reader found.
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub conversations: usize,
    pub events: usize,
    pub errors: usize,
}

fn read(path: &Path, buf: &mut Vec<u8>) -> bool {
    buf.clear();
    fs::File::open(path)
        .and_then(|mut f| f.read_to_end(buf))
        .is_ok()
}

/// Reads one conversation directory the obvious way: its state, meta, and
/// every event file of `events/` (names sorted), each into owned structs;
/// then its sub-agents.
pub fn read_conversation(dir: &Path, buf: &mut Vec<u8>, counts: &mut Counts) {
    counts.conversations += 1;
    if read(&dir.join("base_state.json"), buf) {
        match serde_json::from_slice::<State>(buf) {
            Ok(s) => {
                std::hint::black_box(s);
            }
            Err(_) => counts.errors += 1,
        }
    }
    if read(&dir.join("meta.json"), buf) {
        match serde_json::from_slice::<Meta>(buf) {
            Ok(m) => {
                std::hint::black_box(m);
            }
            Err(_) => counts.errors += 1,
        }
    }
    let mut names: Vec<_> = fs::read_dir(dir.join("events"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("event-") && n.ends_with(".json"))
        })
        .collect();
    names.sort();
    let mut events = Vec::with_capacity(names.len());
    for p in &names {
        if !read(p, buf) {
            counts.errors += 1;
            continue;
        }
        match serde_json::from_slice::<Event>(buf) {
            Ok(e) => events.push(e),
            Err(_) => counts.errors += 1,
        }
    }
    counts.events += events.len();
    std::hint::black_box(events);
    let mut subs: Vec<_> = fs::read_dir(dir.join("subagents"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    subs.sort();
    for s in subs {
        read_conversation(&s, buf, counts);
    }
}

/// Reads every conversation of the store at `root` (its directories named
/// by 32 hex digits).
pub fn read_store(root: &Path) -> Counts {
    let mut dirs: Vec<_> = fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    let mut counts = Counts::default();
    let mut buf = Vec::new();
    for d in dirs {
        read_conversation(&d, &mut buf, &mut counts);
    }
    counts
}
