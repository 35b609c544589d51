//! Shared by the structure-aware targets: `arbitrary` descriptions of
//! OpenHands events and state files, written out as JSON. The checks
//! themselves are in `tests/fuzz_checks` (shared with `cargo test`, which
//! replays the regression inputs through them).
#![allow(dead_code)]

use agentlog::json::{Map, OwnedValue, Style};
use arbitrary::Arbitrary;

/// Words the generators pick strings from: kinds, roles, sources, member
/// names, and awkward text.
pub const WORDS: &[&str] = &[
    "",
    "SystemPromptEvent",
    "MessageEvent",
    "ActionEvent",
    "ObservationEvent",
    "UserRejectObservation",
    "AgentErrorEvent",
    "Condensation",
    "CondensationRequest",
    "CondensationSummaryEvent",
    "PauseEvent",
    "InterruptEvent",
    "ConversationStateUpdateEvent",
    "ConversationErrorEvent",
    "TokenEvent",
    "user",
    "assistant",
    "system",
    "tool",
    "agent",
    "environment",
    "hook",
    "text",
    "image",
    "thinking",
    "redacted_thinking",
    "__root__",
    "ExecuteBashObservation",
    "TerminalObservation",
    "BrowserObservation",
    "TaskObservation",
    "ConsultTomObservation",
    "SleeptimeComputeObservation",
    "ExecuteBashAction",
    "TaskAction",
    "DelegateAction",
    "Tool call interrupted before completion.",
    "2025-01-02T03:04:05.678901",
    "2025-01-02T03:04:05+01:00",
    "claude-sonnet-4-5",
    "gpt-5",
    "deepseek/deepseek-reasoner",
    "\u{0}",
    "\u{fffd}",
    "é\u{301}",
    "\u{1F600}",
    "a\"b\\c\n",
    "\u{7f}",
];

/// A string: one of [`WORDS`] or any text.
#[derive(Arbitrary, Debug, Clone)]
pub enum Text {
    Word(u8),
    Any(String),
}

impl Text {
    pub fn get(&self) -> String {
        match self {
            Text::Word(i) => WORDS[*i as usize % WORDS.len()].to_owned(),
            Text::Any(s) => s.clone(),
        }
    }
}

/// An event ID: one of a small pool (so that parents, forgotten IDs and
/// heads name real events), or any text.
#[derive(Arbitrary, Debug, Clone)]
pub enum Id {
    Pool(u8),
    Any(Text),
}

/// The pool's IDs are file-name-safe (hex and dashes, 8 or more).
pub fn pool_id(i: u8) -> String {
    format!("0000aaaa-{:04x}", i % 12)
}

impl Id {
    pub fn get(&self) -> String {
        match self {
            Id::Pool(i) => pool_id(*i),
            Id::Any(t) => t.get(),
        }
    }
}

/// A leaf value, or a small container of leaves.
#[derive(Arbitrary, Debug, Clone)]
pub enum Leaf {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// An integer of this many digits (beyond 64 bits).
    Big(u8),
    Text(Text),
    List(Vec<Text>),
    Object(Vec<(Text, Text)>),
}

impl Leaf {
    pub fn get(&self) -> OwnedValue {
        match self {
            Leaf::Null => OwnedValue::Null,
            Leaf::Bool(b) => OwnedValue::Bool(*b),
            Leaf::Int(i) => OwnedValue::int(*i),
            Leaf::Float(f) => OwnedValue::float(*f),
            Leaf::Big(n) => {
                let digits = "9".repeat(1 + *n as usize);
                OwnedValue::parse(digits.as_bytes()).unwrap_or(OwnedValue::Null)
            }
            Leaf::Text(t) => t.get().into(),
            Leaf::List(l) => OwnedValue::Array(l.iter().map(|t| t.get().into()).collect()),
            Leaf::Object(m) => {
                let mut map = Map::new();
                for (k, v) in m {
                    map.entries_mut().push((k.get(), v.get().into()));
                }
                OwnedValue::Object(map)
            }
        }
    }
}

/// A member's value: the shape it should have, or anything.
#[derive(Arbitrary, Debug, Clone)]
pub enum Slot<T> {
    Absent,
    Good(T),
    Wrong(Leaf),
}

fn put<T>(m: &mut Map, key: &str, slot: &Slot<T>, good: impl FnOnce(&T) -> OwnedValue) {
    match slot {
        Slot::Absent => {}
        Slot::Good(x) => m.entries_mut().push((key.to_owned(), good(x))),
        Slot::Wrong(l) => m.entries_mut().push((key.to_owned(), l.get())),
    }
}

/// Message content: a string, or a list of text and image parts.
#[derive(Arbitrary, Debug, Clone)]
pub enum ContentSpec {
    Bare(Text),
    Parts(Vec<Part>),
}

#[derive(Arbitrary, Debug, Clone)]
pub enum Part {
    Text(Text, bool),
    Image(Vec<Text>),
    Odd(Leaf),
}

impl ContentSpec {
    pub fn get(&self) -> OwnedValue {
        match self {
            ContentSpec::Bare(t) => t.get().into(),
            ContentSpec::Parts(ps) => OwnedValue::Array(
                ps.iter()
                    .map(|p| match p {
                        Part::Text(t, cache) => obj(&[
                            ("type", "text".into()),
                            ("text", t.get().into()),
                            ("cache_prompt", OwnedValue::Bool(*cache)),
                        ]),
                        Part::Image(urls) => obj(&[
                            ("type", "image".into()),
                            (
                                "image_urls",
                                OwnedValue::Array(urls.iter().map(|u| u.get().into()).collect()),
                            ),
                        ]),
                        Part::Odd(l) => l.get(),
                    })
                    .collect(),
            ),
        }
    }
}

pub fn obj(members: &[(&str, OwnedValue)]) -> OwnedValue {
    let mut m = Map::new();
    for (k, v) in members {
        m.entries_mut().push(((*k).to_owned(), v.clone()));
    }
    OwnedValue::Object(m)
}

/// A tool call of a message or an action.
#[derive(Arbitrary, Debug, Clone)]
pub struct CallSpec {
    pub id: Slot<Id>,
    pub name: Slot<Text>,
    pub arguments: Slot<Text>,
}

impl CallSpec {
    fn get(&self) -> OwnedValue {
        let mut m = Map::new();
        put(&mut m, "id", &self.id, |i| i.get().into());
        put(&mut m, "name", &self.name, |t| t.get().into());
        put(&mut m, "arguments", &self.arguments, |t| t.get().into());
        m.entries_mut().push(("origin".into(), "completion".into()));
        OwnedValue::Object(m)
    }
}

/// The observation object of an `ObservationEvent`.
#[derive(Arbitrary, Debug, Clone)]
pub struct ObsSpec {
    pub kind: Text,
    pub content: Slot<ContentSpec>,
    pub is_error: Slot<bool>,
    pub metadata: Slot<Vec<(Text, Leaf)>>,
    pub extra: Vec<(Text, Leaf)>,
}

impl ObsSpec {
    fn get(&self) -> OwnedValue {
        let mut m = Map::new();
        m.entries_mut()
            .push(("kind".into(), self.kind.get().into()));
        put(&mut m, "content", &self.content, ContentSpec::get);
        put(&mut m, "is_error", &self.is_error, |b| OwnedValue::Bool(*b));
        put(&mut m, "metadata", &self.metadata, |ms| {
            let mut mm = Map::new();
            for (k, v) in ms {
                mm.entries_mut().push((k.get(), v.get()));
            }
            OwnedValue::Object(mm)
        });
        for (k, v) in &self.extra {
            m.entries_mut().push((k.get(), v.get()));
        }
        OwnedValue::Object(m)
    }
}

/// The `parent_id` member.
#[derive(Arbitrary, Debug, Clone)]
pub enum ParentSpec {
    Absent,
    Null,
    Root,
    Id(Id),
    Odd(Leaf),
}

/// One OpenHands event, any kind, members present, absent or mistyped.
#[derive(Arbitrary, Debug, Clone)]
pub struct EventSpec {
    pub kind: Slot<Text>,
    pub id: Slot<Id>,
    pub timestamp: Slot<Text>,
    pub source: Slot<Text>,
    pub parent: ParentSpec,
    pub role: Slot<Text>,
    pub content: Slot<ContentSpec>,
    pub tool_calls: Slot<Vec<CallSpec>>,
    pub tool_call_id: Slot<Id>,
    pub tool_name: Slot<Text>,
    pub llm_response_id: Slot<Id>,
    pub thinking: Slot<Vec<(Text, Text)>>,
    pub thought: Slot<ContentSpec>,
    pub action: Slot<Vec<(Text, Leaf)>>,
    pub tool_call: Slot<CallSpec>,
    pub observation: Slot<ObsSpec>,
    pub forgotten: Slot<Vec<Id>>,
    pub summary: Slot<Text>,
    pub summary_offset: Slot<i64>,
    pub error: Slot<Text>,
    pub rejection_reason: Slot<Text>,
    pub system_prompt: Slot<ContentSpec>,
    pub tools: Slot<Vec<Leaf>>,
    pub extra: Vec<(Text, Leaf)>,
    /// A second `kind` member after everything else (the last one wins).
    pub kind_again: Option<Text>,
    /// 0: compact, 1: Python's default separators, 2: indented.
    pub style: u8,
}

impl EventSpec {
    pub fn value(&self) -> OwnedValue {
        let mut m = Map::new();
        put(&mut m, "kind", &self.kind, |t| t.get().into());
        put(&mut m, "id", &self.id, |i| i.get().into());
        put(&mut m, "timestamp", &self.timestamp, |t| t.get().into());
        put(&mut m, "source", &self.source, |t| t.get().into());
        match &self.parent {
            ParentSpec::Absent => {}
            ParentSpec::Null => m.entries_mut().push(("parent_id".into(), OwnedValue::Null)),
            ParentSpec::Root => m
                .entries_mut()
                .push(("parent_id".into(), "__root__".into())),
            ParentSpec::Id(i) => m.entries_mut().push(("parent_id".into(), i.get().into())),
            ParentSpec::Odd(l) => m.entries_mut().push(("parent_id".into(), l.get())),
        }
        // A message (MessageEvent.llm_message), when any of its parts is set.
        let mut msg = Map::new();
        put(&mut msg, "role", &self.role, |t| t.get().into());
        put(&mut msg, "content", &self.content, ContentSpec::get);
        put(&mut msg, "tool_calls", &self.tool_calls, |cs| {
            OwnedValue::Array(cs.iter().map(CallSpec::get).collect())
        });
        put(&mut msg, "thinking_blocks", &self.thinking, |b| {
            thinking_blocks(b)
        });
        if !msg.is_empty() {
            m.entries_mut()
                .push(("llm_message".into(), OwnedValue::Object(msg)));
        }
        put(&mut m, "tool_call_id", &self.tool_call_id, |i| {
            i.get().into()
        });
        put(&mut m, "tool_name", &self.tool_name, |t| t.get().into());
        put(&mut m, "llm_response_id", &self.llm_response_id, |i| {
            i.get().into()
        });
        put(&mut m, "thinking_blocks", &self.thinking, |b| {
            thinking_blocks(b)
        });
        put(&mut m, "thought", &self.thought, ContentSpec::get);
        put(&mut m, "action", &self.action, |ms| {
            let mut a = Map::new();
            for (k, v) in ms {
                a.entries_mut().push((k.get(), v.get()));
            }
            OwnedValue::Object(a)
        });
        put(&mut m, "tool_call", &self.tool_call, CallSpec::get);
        put(&mut m, "observation", &self.observation, ObsSpec::get);
        put(&mut m, "forgotten_event_ids", &self.forgotten, |ids| {
            OwnedValue::Array(ids.iter().map(|i| i.get().into()).collect())
        });
        put(&mut m, "summary", &self.summary, |t| t.get().into());
        put(&mut m, "summary_offset", &self.summary_offset, |i| {
            OwnedValue::int(*i)
        });
        put(&mut m, "error", &self.error, |t| t.get().into());
        put(&mut m, "rejection_reason", &self.rejection_reason, |t| {
            t.get().into()
        });
        put(&mut m, "system_prompt", &self.system_prompt, |c| match c {
            ContentSpec::Bare(t) => obj(&[("type", "text".into()), ("text", t.get().into())]),
            other => other.get(),
        });
        put(&mut m, "tools", &self.tools, |ts| {
            OwnedValue::Array(ts.iter().map(Leaf::get).collect())
        });
        for (k, v) in &self.extra {
            m.entries_mut().push((k.get(), v.get()));
        }
        if let Some(k) = &self.kind_again {
            m.entries_mut().push(("kind".into(), k.get().into()));
        }
        OwnedValue::Object(m)
    }

    pub fn bytes(&self) -> Vec<u8> {
        write(&self.value(), self.style)
    }
}

fn thinking_blocks(bs: &[(Text, Text)]) -> OwnedValue {
    OwnedValue::Array(
        bs.iter()
            .map(|(t, s)| {
                obj(&[
                    ("type", "thinking".into()),
                    ("thinking", t.get().into()),
                    ("signature", s.get().into()),
                ])
            })
            .collect(),
    )
}

pub fn write(v: &OwnedValue, style: u8) -> Vec<u8> {
    let style = match style % 3 {
        0 => Style::COMPACT,
        1 => Style::PYTHON_DEFAULT,
        _ => Style::INDENT2_UNICODE,
    };
    v.to_string_styled(style).into_bytes()
}

/// A file's contents: made from a description, or raw bytes, or a prefix
/// of a description (a torn write).
#[derive(Arbitrary, Debug, Clone)]
pub enum Body<T> {
    Made(T),
    Raw(Vec<u8>),
    Torn(T, u16),
}

/// Something that can be written as a JSON file.
pub trait Make {
    fn make(&self) -> Vec<u8>;
}

impl Make for EventSpec {
    fn make(&self) -> Vec<u8> {
        self.bytes()
    }
}

impl<T: Make> Body<T> {
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Body::Made(x) => x.make(),
            Body::Raw(b) => b.clone(),
            Body::Torn(x, n) => {
                let mut b = x.make();
                b.truncate(*n as usize);
                b
            }
        }
    }
}

/// An object's members.
pub type Members = Vec<(Text, Leaf)>;

/// `base_state.json`.
#[derive(Arbitrary, Debug, Clone)]
pub struct StateSpec {
    pub id: Slot<Text>,
    pub model: Slot<Text>,
    pub condenser: Slot<Leaf>,
    pub caching: Slot<bool>,
    pub vision: Slot<bool>,
    pub leaf: Slot<Id>,
    pub head_is_empty: Slot<bool>,
    pub execution_status: Slot<Text>,
    pub usage: Vec<(Text, Slot<Members>)>,
    pub extra: Vec<(Text, Leaf)>,
    pub style: u8,
}

impl StateSpec {
    pub fn value(&self) -> OwnedValue {
        let mut m = Map::new();
        put(&mut m, "id", &self.id, |t| t.get().into());
        let mut llm = Map::new();
        put(&mut llm, "model", &self.model, |t| t.get().into());
        put(&mut llm, "caching_prompt", &self.caching, |b| {
            OwnedValue::Bool(*b)
        });
        put(&mut llm, "disable_vision", &self.vision, |b| {
            OwnedValue::Bool(*b)
        });
        let mut agent = Map::new();
        agent.entries_mut().push(("kind".into(), "Agent".into()));
        agent
            .entries_mut()
            .push(("llm".into(), OwnedValue::Object(llm)));
        put(&mut agent, "condenser", &self.condenser, Leaf::get);
        m.entries_mut()
            .push(("agent".into(), OwnedValue::Object(agent)));
        put(&mut m, "leaf_event_id", &self.leaf, |i| i.get().into());
        put(&mut m, "head_is_empty", &self.head_is_empty, |b| {
            OwnedValue::Bool(*b)
        });
        put(&mut m, "execution_status", &self.execution_status, |t| {
            t.get().into()
        });
        if !self.usage.is_empty() {
            let mut u = Map::new();
            for (k, v) in &self.usage {
                match v {
                    Slot::Absent => {}
                    Slot::Good(ms) => {
                        let mut mm = Map::new();
                        for (kk, vv) in ms {
                            mm.entries_mut().push((kk.get(), vv.get()));
                        }
                        u.entries_mut().push((k.get(), OwnedValue::Object(mm)));
                    }
                    Slot::Wrong(l) => u.entries_mut().push((k.get(), l.get())),
                }
            }
            m.entries_mut().push((
                "stats".into(),
                obj(&[("usage_to_metrics", OwnedValue::Object(u))]),
            ));
        }
        for (k, v) in &self.extra {
            m.entries_mut().push((k.get(), v.get()));
        }
        OwnedValue::Object(m)
    }
}

impl Make for StateSpec {
    fn make(&self) -> Vec<u8> {
        write(&self.value(), self.style)
    }
}
