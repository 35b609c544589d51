//! What an export reads of an OpenHands conversation's events beyond their
//! envelopes: the `events` table's filter columns, the `tool_calls` rows
//! (each action with its answer) and the view's decoded events, taken from
//! each event's parsed document — the reader's own parse when it hands its
//! visitor each event, so that no event is parsed again for them. The view
//! built from those events is the one built from the files.

use foldhash::HashMap;
use std::sync::Mutex;

use crate::json::{Document, Parser, Value};
use crate::openhands::view::EarlyEvents;

use super::openhands::StateRows;
use crate::chars::char_count;
use crate::openhands::{Conversation, Kind};

/// One tool call being assembled from its action and its answer.
/// The action's and the answer's IDs and times are those of their events'
/// envelopes, looked up by index when the row is written.
#[derive(Default)]
pub(super) struct Call {
    pub(super) action_index: u64,
    /// Where the action's columns are in [`EventDetails::cols`]: the
    /// call's tool name, tool call ID, response ID and action kind are
    /// theirs (not copied).
    pub(super) action_col: usize,
    pub(super) arguments: Option<Span>,
    pub(super) outcome: Option<&'static str>,
    pub(super) result_index: Option<u64>,
    pub(super) is_error: Option<bool>,
    pub(super) exit_code: Option<i64>,
    pub(super) result_text: Option<Span>,
    pub(super) error: Option<Span>,
    pub(super) rejection: Option<Span>,
}

/// Where one text of the details is in [`EventDetails`]' text buffer
/// ([`EventDetails::text`] gives it back): the texts of a conversation's
/// events are copied into one buffer rather than each into a `String` of
/// its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Span {
    start: usize,
    end: usize,
}

/// The texts of the details, one after another (see [`Span`]).
#[derive(Default)]
struct Texts(String);

impl Texts {
    /// Appends `t`, telling where it is.
    fn push(&mut self, t: &str) -> Span {
        let start = self.0.len();
        self.0.push_str(t);
        Span {
            start,
            end: self.0.len(),
        }
    }

    /// The string member `v` (`None` when it is not a string), appended.
    fn str(&mut self, v: Option<Value<'_>>) -> Option<Span> {
        v.and_then(|v| v.as_str()).map(|t| self.push(t))
    }

    /// The text at `span` (empty when it is not one of this buffer's).
    fn get(&self, span: Span) -> &str {
        self.0.get(span.start..span.end).unwrap_or_default()
    }
}

/// What an export reads of a conversation's events beyond their envelopes
/// (the `events` table's filter columns and the `tool_calls` rows), taken
/// from each event's parsed document. Filled while the reader has each
/// event parsed ([`Reader::read_into_with`](crate::openhands::Reader::read_into_with))
/// and handed to [`add_openhands_with`](super::add_openhands_with), no event is parsed a second time
/// for them.
#[derive(Default)]
pub struct EventDetails {
    /// Each event's index and a hash of its `id` member: what tells the
    /// details of one conversation from another's.
    indexes: Vec<(u64, u64)>,
    pub(super) cols: Vec<EventCols>,
    pub(super) calls: Vec<Call>,
    /// The texts of `cols` and `calls`.
    texts: Texts,
    by_call_id: HashMap<String, usize>,
    /// What is read from the same parses for the view and the state's
    /// rows, taken when the rows are written (behind a lock only because
    /// the rows get the details by shared reference).
    early: Mutex<Early>,
}

/// What [`EventDetails`] keeps to be taken by the rows.
#[derive(Default)]
struct Early {
    /// The events decoded for the view.
    view: EarlyEvents,
    /// The state's rows.
    state: Option<StateRows<'static>>,
    /// A copy of the bytes they were read from (compared whole with the
    /// conversation's: a copy and a comparison cost less than a hash), its
    /// buffer kept from one conversation to the next.
    state_bytes: Vec<u8>,
}

impl EventDetails {
    /// Nothing read yet.
    pub fn new() -> EventDetails {
        EventDetails::default()
    }

    /// Forgets what was read (for the next conversation).
    pub fn clear(&mut self) {
        self.indexes.clear();
        self.cols.clear();
        self.calls.clear();
        self.texts.0.clear();
        self.by_call_id.clear();
        let early = self.early_mut();
        early.view.clear();
        early.state = None;
    }

    fn early_mut(&mut self) -> &mut Early {
        self.early.get_mut().unwrap_or_else(|e| e.into_inner())
    }

    fn view_mut(&mut self) -> &mut EarlyEvents {
        &mut self.early_mut().view
    }

    /// Reads the conversation's `base_state.json` from its parsed document
    /// (what [`Reader::read_into_with`](crate::openhands::Reader::read_into_with)
    /// hands its visitor as [`Parsed::State`](crate::openhands::Parsed::State)):
    /// the rows it gives and what the view takes from it. They are used for
    /// a conversation whose state holds the same bytes, so that the export
    /// does not parse it again.
    pub fn add_state(&mut self, doc: &Document<'_>) {
        let rows = StateRows::read(&[], doc.root());
        let early = self.early_mut();
        early.state = Some(rows);
        early.state_bytes.clear();
        early.state_bytes.extend_from_slice(doc.input());
    }

    /// The state's rows read by [`add_state`](Self::add_state), taken out,
    /// when they are those of `conv`'s state (the same bytes, which read as
    /// a JSON object).
    pub(super) fn take_state(&self, conv: &Conversation) -> Option<StateRows<'static>> {
        let mut early = self.early.lock().unwrap_or_else(|e| e.into_inner());
        let rows = early.state.take()?;
        let f = conv.state()?;
        (f.is_ok() && f.raw() == early.state_bytes.as_slice()).then_some(rows)
    }

    /// A text of the details' columns or calls (`None` stays `None`).
    pub(super) fn text(&self, span: Option<Span>) -> Option<&str> {
        span.map(|s| self.texts.get(s))
    }

    /// The events decoded for the view, taken out (what is left holds none
    /// and is marked unusable, so a second taking leaves the view to parse
    /// them).
    pub(super) fn take_view(&self) -> EarlyEvents {
        let mut left = EarlyEvents::default();
        left.spoil();
        let mut v = self.early.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::replace(&mut v.view, left)
    }

    /// Reads the event of `index` from its parsed document. Events are
    /// given in index order, each event that parsed as a JSON object
    /// once: what [`Reader::read_into_with`](crate::openhands::Reader::read_into_with)
    /// hands its visitor.
    pub fn add(&mut self, index: u64, doc: &Document<'_>) {
        let m = Members::of(doc.root());
        let id = m.id.and_then(|v| v.as_str());
        let col = self.cols.len();
        let cols = event_columns(
            index,
            col,
            &m,
            &mut self.calls,
            &mut self.texts,
            &mut self.by_call_id,
        );
        self.indexes.push((index, id_hash(id)));
        self.cols.push(cols);
        self.view_mut().add(index, doc.input(), doc.root());
    }

    /// Whether these are the details of `conv`'s events: one for each
    /// event that parsed, in order, of the same index and `id`.
    pub(super) fn fits(&self, conv: &Conversation) -> bool {
        let mut ok = conv
            .events()
            .filter(|e| e.is_ok())
            .map(|e| (e.index(), id_hash(e.id())));
        self.indexes.iter().all(|i| ok.next() == Some(*i)) && ok.next().is_none()
    }

    /// Reads `conv`'s events, parsing each with `parser`.
    pub(super) fn read(&mut self, conv: &Conversation, parser: &mut Parser) {
        self.clear();
        for e in conv.events().filter(|e| e.is_ok()) {
            match e.parse(parser) {
                Ok(doc) => self.add(e.index(), &doc),
                Err(_) => {
                    self.indexes.push((e.index(), id_hash(e.id())));
                    self.cols.push(EventCols::default());
                    self.view_mut().spoil();
                }
            }
        }
    }
}

/// The text parts of a `content` value (a string, or a list of parts with
/// `text`), joined by line breaks, appended to `out`.
fn texts(out: &mut Texts, v: Option<Value<'_>>) -> Option<Span> {
    let v = v?;
    if let Some(s) = v.as_str() {
        return Some(out.push(s));
    }
    let arr = v.as_array()?;
    let start = out.0.len();
    let mut first = true;
    for t in arr
        .iter()
        .filter_map(|p| p.get("text").and_then(|t| t.as_str()))
    {
        if !first {
            out.0.push('\n');
        }
        first = false;
        out.0.push_str(t);
    }
    Some(Span {
        start,
        end: out.0.len(),
    })
}

/// The length in characters of the text parts of a `content` value (a
/// string, or a list of parts with `text`, joined by line breaks as
/// [`texts`] joins them), counted without copying them.
fn text_length(v: Option<Value<'_>>) -> Option<u64> {
    let v = v?;
    if let Some(s) = v.as_str() {
        return Some(char_count(s) as u64);
    }
    let mut n = 0u64;
    let mut parts = 0u64;
    for p in v.as_array()?.iter() {
        if let Some(t) = p.get("text").and_then(|t| t.as_str()) {
            n += char_count(t) as u64;
            parts += 1;
        }
    }
    Some(n + parts.saturating_sub(1))
}

/// A hash of an event's `id` member (the same in every process: foldhash
/// with its fixed seed, a few times cheaper than SipHash on IDs).
fn id_hash(id: Option<&str>) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one(id)
}

/// The columns of an event an analyst filters on.
#[derive(Default)]
pub(super) struct EventCols {
    pub(super) tool_name: Option<Span>,
    pub(super) tool_call_id: Option<Span>,
    pub(super) llm_response_id: Option<Span>,
    /// An action's `action.kind`.
    pub(super) action_kind: Option<Span>,
    pub(super) is_error: Option<bool>,
    /// An observation's exit code (`observation.metadata.exit_code`, else
    /// `observation.exit_code`).
    pub(super) exit_code: Option<i64>,
    /// A message event's text length in characters (the text parts of
    /// `llm_message.content`).
    pub(super) text_length: Option<u64>,
}

/// The members of an event's root object the columns are read from,
/// found in one pass over its members (the last of a repeated name, as
/// [`Value::get`] finds it); all `None` when the root is not an object.
struct Members<'a> {
    id: Option<Value<'a>>,
    tool_name: Option<Value<'a>>,
    tool_call_id: Option<Value<'a>>,
    llm_response_id: Option<Value<'a>>,
    kind: Option<Value<'a>>,
    action: Option<Value<'a>>,
    tool_call: Option<Value<'a>>,
    observation: Option<Value<'a>>,
    rejection_reason: Option<Value<'a>>,
    error: Option<Value<'a>>,
    llm_message: Option<Value<'a>>,
}

impl<'a> Members<'a> {
    fn of(root: Value<'a>) -> Members<'a> {
        let [
            id,
            tool_name,
            tool_call_id,
            llm_response_id,
            kind,
            action,
            tool_call,
            observation,
            rejection_reason,
            error,
            llm_message,
        ] = match root.as_object() {
            Some(o) => o.get_many([
                "id",
                "tool_name",
                "tool_call_id",
                "llm_response_id",
                "kind",
                "action",
                "tool_call",
                "observation",
                "rejection_reason",
                "error",
                "llm_message",
            ]),
            None => [None; 11],
        };
        Members {
            id,
            tool_name,
            tool_call_id,
            llm_response_id,
            kind,
            action,
            tool_call,
            observation,
            rejection_reason,
            error,
            llm_message,
        }
    }
}

/// Reads the filter columns of the event of `index` from its members, and
/// records the tool call it makes or answers in `calls`; the columns will
/// be at `col` in [`EventDetails::cols`].
fn event_columns(
    index: u64,
    col: usize,
    m: &Members<'_>,
    calls: &mut Vec<Call>,
    texts_of: &mut Texts,
    by_call_id: &mut HashMap<String, usize>,
) -> EventCols {
    let call_id = m.tool_call_id.and_then(|v| v.as_str());
    let mut cols = EventCols {
        tool_name: texts_of.str(m.tool_name),
        tool_call_id: call_id.map(|t| texts_of.push(t)),
        llm_response_id: texts_of.str(m.llm_response_id),
        ..EventCols::default()
    };
    let kind = m.kind.and_then(|v| v.as_str()).map(Kind::parse);
    let answer = |calls: &mut Vec<Call>| -> Option<usize> {
        let &n = by_call_id.get(call_id?)?;
        (calls.get(n)?.outcome.is_none()).then_some(n)
    };
    match kind {
        Some(Kind::Action) => {
            let action = m.action;
            let args = match m
                .tool_call
                .and_then(|t| t.get("arguments"))
                .and_then(|a| a.as_str())
            {
                Some(t) => Some(texts_of.push(t)),
                None => action.map(|a| texts_of.push(&String::from_utf8_lossy(a.raw()))),
            };
            if let Some(cid) = call_id {
                by_call_id.insert(cid.to_owned(), calls.len());
            }
            cols.action_kind = texts_of.str(action.and_then(|a| a.get("kind")));
            calls.push(Call {
                action_index: index,
                action_col: col,
                arguments: args,
                ..Call::default()
            });
        }
        Some(Kind::Observation) => {
            // The observation's members in one pass (the last of a repeated
            // name, as `get` finds it).
            let [is_error, metadata, exit_code, content] =
                match m.observation.and_then(|o| o.as_object()) {
                    Some(o) => o.get_many(["is_error", "metadata", "exit_code", "content"]),
                    None => [None; 4],
                };
            cols.is_error = is_error.and_then(|v| v.as_bool());
            cols.exit_code = metadata
                .and_then(|m| m.get("exit_code"))
                .and_then(|v| v.as_i64())
                .or_else(|| exit_code.and_then(|v| v.as_i64()));
            if let Some(n) = answer(calls) {
                let c = &mut calls[n];
                c.outcome = Some("observation");
                c.is_error = Some(cols.is_error.unwrap_or(false));
                c.exit_code = cols.exit_code;
                c.result_text = texts(texts_of, content);
            }
        }
        Some(Kind::UserReject) => {
            if let Some(n) = answer(calls) {
                let c = &mut calls[n];
                c.outcome = Some("rejected");
                c.rejection = texts_of.str(m.rejection_reason);
            }
        }
        Some(Kind::AgentError) => {
            if let Some(n) = answer(calls) {
                let c = &mut calls[n];
                c.outcome = Some("error");
                c.is_error = Some(true);
                c.error = texts_of.str(m.error);
            }
        }
        Some(Kind::Message) => {
            cols.text_length = text_length(m.llm_message.and_then(|l| l.get("content")));
            return cols;
        }
        _ => return cols,
    }
    if !matches!(kind, Some(Kind::Action))
        && let Some(n) = call_id.and_then(|id| by_call_id.get(id))
        && let Some(c) = calls.get_mut(*n)
        && c.result_index.is_none()
    {
        c.result_index = Some(index);
    }
    cols
}
