//! What is searched of an event: its [`DocKind`], role, tool and text
//! (see the [module docs](super) for which members of which kind).

use crate::json::{OwnedValue, Value};
use crate::openhands::{
    ActionEvent, AgentErrorEvent, Condensation, Kind, MessageEvent, ObservationEvent,
    UserRejectObservation, UtcOffset, parse_time,
};

/// What a document holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DocKind {
    /// A message's text.
    Message,
    /// A tool call: the tool's name, its arguments, the thought with it.
    Action,
    /// A tool's output (or why the call was rejected).
    Observation,
    /// An error.
    Error,
    /// A condensation's summary.
    Summary,
}

impl DocKind {
    /// Every kind, in order.
    pub const ALL: [DocKind; 5] = [
        DocKind::Message,
        DocKind::Action,
        DocKind::Observation,
        DocKind::Error,
        DocKind::Summary,
    ];

    /// The kind as a word: `message`, `action`, `observation`, `error`,
    /// `summary`.
    pub fn as_str(self) -> &'static str {
        match self {
            DocKind::Message => "message",
            DocKind::Action => "action",
            DocKind::Observation => "observation",
            DocKind::Error => "error",
            DocKind::Summary => "summary",
        }
    }

    /// The kind named `s` (as [`as_str`](Self::as_str) spells it).
    pub fn parse(s: &str) -> Option<DocKind> {
        DocKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// One document before its flags are known.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    /// The event's position in the view's events (OC Chat: the message's
    /// index).
    pub pos: usize,
    /// The event index.
    pub index: u64,
    pub kind: DocKind,
    /// The event's class (OC Chat: the message's role).
    pub event_kind: String,
    pub role: Option<String>,
    pub tool: Option<String>,
    pub timestamp: Option<String>,
    pub body: String,
}

fn push(body: &mut String, s: &str) {
    if s.is_empty() {
        return;
    }
    if !body.is_empty() {
        body.push('\n');
    }
    body.push_str(s);
}

/// The envelope's members, left out of an error's text.
const ENVELOPE: [&str; 5] = ["kind", "id", "timestamp", "source", "parent_id"];

/// The documents of one OpenHands event (none for the kinds not searched:
/// the system prompt, state updates, pauses, tokens…).
pub(crate) fn openhands_docs(
    pos: usize,
    index: u64,
    kind: &Kind<'_>,
    root: Value<'_>,
    out: &mut Vec<Pending>,
) {
    let s = |k: &str| root.get(k).and_then(|v| v.as_str());
    let mut body = String::new();
    let mut role = s("source").map(str::to_owned);
    let mut tool = None;
    let doc_kind = match kind {
        Kind::Message => {
            let m = MessageEvent::decode(root).unwrap_or_default();
            if let Some(lm) = &m.llm_message {
                if let Some(r) = &lm.role {
                    role = Some(r.as_str().to_owned());
                }
                for t in lm.content.iter().flat_map(|c| c.texts()) {
                    push(&mut body, t);
                }
                if let Some(r) = &lm.reasoning_content {
                    push(&mut body, r.as_str());
                }
            }
            for t in m.extended_content.iter().flat_map(|c| c.texts()) {
                push(&mut body, t);
            }
            DocKind::Message
        }
        Kind::Action => {
            let a = ActionEvent::decode(root).unwrap_or_default();
            role = Some("assistant".into());
            let name = a.tool_name.as_ref().map(|t| t.as_str()).or_else(|| {
                a.tool_call
                    .as_ref()
                    .and_then(|c| c.name.as_ref())
                    .map(|n| n.as_str())
            });
            if let Some(n) = name {
                tool = Some(n.to_owned());
                push(&mut body, n);
            }
            match a.tool_call.as_ref().and_then(|c| c.arguments.as_ref()) {
                Some(args) => push(&mut body, args.as_str()),
                None => {
                    if let Some(v) = a.action {
                        push(&mut body, v.raw_str());
                    }
                }
            }
            if let Some(sm) = &a.summary {
                push(&mut body, sm.as_str());
            }
            for t in a.thought.iter().flat_map(|c| c.texts()) {
                push(&mut body, t);
            }
            if let Some(r) = &a.reasoning_content {
                push(&mut body, r.as_str());
            }
            DocKind::Action
        }
        Kind::Observation => {
            let o = ObservationEvent::decode(root).unwrap_or_default();
            role = Some("tool".into());
            tool = o.tool_name.as_ref().map(|t| t.as_str().to_owned());
            if let Some(obs) = &o.observation {
                for t in obs.content.iter().flat_map(|c| c.texts()) {
                    push(&mut body, t);
                }
                for t in [&obs.message, &obs.suggestions, &obs.reasoning]
                    .into_iter()
                    .flatten()
                {
                    push(&mut body, t.as_str());
                }
            }
            DocKind::Observation
        }
        Kind::UserReject => {
            let r = UserRejectObservation::decode(root).unwrap_or_default();
            role = Some("tool".into());
            tool = r.tool_name.as_ref().map(|t| t.as_str().to_owned());
            push(&mut body, r.reason());
            DocKind::Observation
        }
        Kind::AgentError => {
            let e = AgentErrorEvent::decode(root).unwrap_or_default();
            role = Some("tool".into());
            tool = e.tool_name.as_ref().map(|t| t.as_str().to_owned());
            if let Some(t) = &e.error {
                push(&mut body, t.as_str());
            }
            DocKind::Error
        }
        Kind::ConversationError | Kind::ServerError => {
            if let Some(o) = root.as_object() {
                for m in o.iter() {
                    if ENVELOPE.contains(&m.key) {
                        continue;
                    }
                    if let Some(t) = m.value.as_str() {
                        push(&mut body, t);
                    }
                }
            }
            DocKind::Error
        }
        Kind::Condensation => {
            let c = Condensation::decode(root).unwrap_or_default();
            match &c.summary {
                Some(t) => push(&mut body, t.as_str()),
                None => return,
            }
            DocKind::Summary
        }
        Kind::CondensationSummary => {
            match s("summary") {
                Some(t) => push(&mut body, t),
                None => return,
            }
            DocKind::Summary
        }
        _ => return,
    };
    if body.is_empty() {
        return;
    }
    out.push(Pending {
        pos,
        index,
        kind: doc_kind,
        event_kind: kind.as_str().to_owned(),
        role,
        tool,
        timestamp: s("timestamp").map(str::to_owned),
        body,
    });
}

/// The texts of an OC Chat message's `content`: a string, or a list of
/// parts (strings, or objects with a `text`).
fn occhat_texts(v: Option<&OwnedValue>, body: &mut String) {
    match v {
        Some(OwnedValue::String(s)) => push(body, s),
        Some(OwnedValue::Array(parts)) => {
            for p in parts {
                match p {
                    OwnedValue::String(s) => push(body, s),
                    other => {
                        if let Some(t) = other.get("text").and_then(OwnedValue::as_str) {
                            push(body, t);
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

/// The documents of OC Chat message `index` (system messages are not
/// searched, as OpenHands' system prompt is not): its text (`message`, or
/// `observation` for a tool's answer) and its tool calls (`action`: each
/// call's name and arguments).
pub(crate) fn occhat_docs(
    index: usize,
    msg: &OwnedValue,
    timestamp: Option<&str>,
    out: &mut Vec<Pending>,
) {
    let role = msg.get("role").and_then(OwnedValue::as_str).unwrap_or("");
    if role == "system" {
        return;
    }
    let mut body = String::new();
    occhat_texts(msg.get("content"), &mut body);
    if let Some(r) = msg.get("reasoning_content").and_then(OwnedValue::as_str) {
        push(&mut body, r);
    }
    let name = msg.get("name").and_then(OwnedValue::as_str);
    let doc = |kind: DocKind, tool: Option<&str>, body: String| Pending {
        pos: index,
        index: index as u64,
        kind,
        event_kind: role.to_owned(),
        role: (!role.is_empty()).then(|| role.to_owned()),
        tool: tool.map(str::to_owned),
        timestamp: timestamp.map(str::to_owned),
        body,
    };
    if !body.is_empty() {
        let kind = if role == "tool" {
            DocKind::Observation
        } else {
            DocKind::Message
        };
        out.push(doc(kind, name.filter(|_| role == "tool"), body));
    }
    let mut calls = String::new();
    let mut first_tool = None;
    for c in msg
        .get("tool_calls")
        .and_then(OwnedValue::as_array)
        .into_iter()
        .flatten()
    {
        let f = c.get("function");
        let name = f.and_then(|f| f.get("name")).and_then(OwnedValue::as_str);
        if let Some(n) = name {
            first_tool.get_or_insert(n);
            push(&mut calls, n);
        }
        match f.and_then(|f| f.get("arguments")) {
            Some(OwnedValue::String(a)) => push(&mut calls, a),
            Some(other) => {
                let mut b = Vec::new();
                other.write_to(&mut b, crate::json::Style::COMPACT);
                push(&mut calls, &String::from_utf8_lossy(&b));
            }
            None => {}
        }
    }
    if !calls.is_empty() {
        out.push(doc(DocKind::Action, first_tool, calls));
    }
}

/// A timestamp as seconds of its recorded wall clock (a naive time taken
/// as UTC; one with a zone, converted): OpenHands' ISO 8601 and OC Chat's
/// `YYYYMMDD_HHMMSS`.
pub fn wall_seconds(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(t) = parse_time(s, UtcOffset::UTC) {
        return Some(t.time.unix_seconds());
    }
    let b = s.as_bytes();
    if b.len() == 15
        && b[8] == b'_'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 8 || c.is_ascii_digit())
    {
        let iso = format!(
            "{}-{}-{}T{}:{}:{}",
            &s[..4],
            &s[4..6],
            &s[6..8],
            &s[9..11],
            &s[11..13],
            &s[13..15]
        );
        return parse_time(&iso, UtcOffset::UTC).map(|t| t.time.unix_seconds());
    }
    None
}
