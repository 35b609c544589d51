//! The rows of one OpenHands conversation: its `conversations` row, its
//! event files, the view's messages, its tool calls and its model calls.
//! The numbers come from the crate's own readers — the file statuses of
//! `files --json`, the view of `view --json`, the usage of `stats --json`
//! ([`StateUsage`], [`Usage::of`]) — so they agree by construction.

use foldhash::HashMap;

use crate::json::{Item, Parser, Value};
use crate::openhands::model_of;
use crate::openhands::view::{EarlyState, View, ViewEntry, ViewInput, ViewOptions};
use crate::openhands::{
    Conversation, FileStatus, Metrics, State, UtcOffset, count, float, is_subagent_copy, parse_time,
};
use crate::openhands::{DIR_EVENTS, Usage};

use super::DatasetError;
use super::dataset::Dataset;
use super::details::{EventCols, EventDetails};
use super::schema::Table;
use crate::chars::char_count;

/// Which of a conversation's events to write.
#[derive(Debug, Clone, Copy)]
pub enum EventSelection<'a> {
    /// Every event file, those outside the sequence (gap, duplicate, bad
    /// name) included.
    All,
    /// The events an incremental run hands out ([`crate::openhands::Change`]):
    /// indexes `from..to` and the repaired ones; the files outside the
    /// sequence too when `outside`.
    Since {
        /// Whether the files outside the sequence are written (a new or
        /// rewritten conversation).
        outside: bool,
        /// The first new index.
        from: u64,
        /// One past the last new index.
        to: u64,
        /// Indexes below `from` handed out again.
        repaired: &'a [u64],
    },
}

impl EventSelection<'_> {
    fn wants(&self, index: u64) -> bool {
        match self {
            EventSelection::All => true,
            EventSelection::Since {
                from, to, repaired, ..
            } => (*from..*to).contains(&index) || repaired.contains(&index),
        }
    }
}

/// One OpenHands conversation to add to a dataset.
#[derive(Debug, Clone, Copy)]
pub struct OpenHandsInput<'a> {
    /// The conversation, read whole.
    pub conversation: &'a Conversation,
    /// Its ID (32 hex digits, as `export` prints it).
    pub id: &'a str,
    /// The ID of the conversation it is a sub-agent of.
    pub parent: Option<&'a str>,
    /// 0 for a top-level conversation, 1 for its sub-agents…
    pub depth: usize,
    /// The `change` column: `full` for a whole export, else the
    /// incremental change (`new`, `updated`, `rewrite`).
    pub change: &'a str,
    /// Which events go to the `events` table.
    pub events: EventSelection<'a>,
}

/// A time read from a timestamp text: microseconds (a naive text's wall
/// clock as if UTC; a zoned text's UTC time) and whether it was naive.
fn micros(text: Option<&str>) -> Option<(i64, bool)> {
    let p = parse_time(text?, UtcOffset::UTC)?;
    let us = i64::try_from(p.time.unix_nanos().div_euclid(1000)).ok()?;
    Some((us, p.naive))
}

/// The times of a conversation's events ([`micros`] of their timestamps),
/// each read once: an event's time is asked for by its `events` row, and
/// again by the conversation's first and last event and the tool calls it
/// starts or finishes.
struct Times<'c> {
    conv: &'c Conversation,
    /// By position: `None` until read.
    at: Vec<Option<Option<(i64, bool)>>>,
}

impl<'c> Times<'c> {
    fn new(conv: &'c Conversation) -> Times<'c> {
        Times {
            conv,
            at: vec![None; conv.len()],
        }
    }

    /// The time of the event at position `pos`.
    fn of(&mut self, pos: usize) -> Option<(i64, bool)> {
        let read = |conv: &Conversation| conv.event(pos).and_then(|e| micros(e.timestamp()));
        match self.at.get_mut(pos) {
            Some(Some(t)) => *t,
            Some(slot) => *slot.insert(read(self.conv)),
            None => read(self.conv),
        }
    }
}

/// What the conversation's state and meta say, owned.
#[derive(Default)]
struct Header {
    title: Option<String>,
    forked_from: Option<String>,
    forked_event: Option<String>,
    created: Option<String>,
    updated: Option<String>,
    agent_kind: Option<String>,
    model: Option<String>,
    working_dir: Option<String>,
    status: Option<String>,
}

/// The header's fields from `meta.json` (`base_state.json`'s are read
/// from its parse in [`add_rows`], which also gives the model calls).
fn header(conv: &Conversation, parser: &mut Parser) -> Header {
    let mut h = Header::default();
    let own = |s: Option<&str>| s.map(str::to_owned);
    if let Some(Ok(doc)) = conv.meta().map(|f| f.open(parser)) {
        let m = doc.meta();
        h.title = own(m.title.as_ref().map(|s| s.as_str()));
        h.forked_from = own(m.forked_from_conversation_id.as_ref().map(|s| s.as_str()));
        h.forked_event = own(m.forked_from_event_id.as_ref().map(|s| s.as_str()));
        h.created = own(m.created_at.as_ref().map(|s| s.as_str()));
        h.updated = own(m.updated_at.as_ref().map(|s| s.as_str()));
    }
    h
}

/// Adds the rows of one conversation, parsing its events for what their
/// envelopes do not hold ([`add_openhands_with`] takes it from the
/// reader's parse).
pub fn add_openhands(
    ds: &mut Dataset,
    input: &OpenHandsInput<'_>,
    parser: &mut Parser,
) -> Result<(), DatasetError> {
    let mut details = EventDetails::new();
    details.read(input.conversation, parser);
    add_rows(ds, input, &details, parser)
}

/// Adds the rows of one conversation with its events' `details`, read
/// while the reader parsed them (and its state's, when the details hold
/// them: [`EventDetails::add_state`]). Details that are not those of the
/// conversation's events (another conversation's, or missing some) are
/// not used: the events are parsed again, as [`add_openhands`] does; a
/// state read from other bytes than the conversation's is not used either
/// (the state is parsed again). The rows are the same either way.
pub fn add_openhands_with(
    ds: &mut Dataset,
    input: &OpenHandsInput<'_>,
    details: &EventDetails,
    parser: &mut Parser,
) -> Result<(), DatasetError> {
    if details.fits(input.conversation) {
        add_rows(ds, input, details, parser)
    } else {
        add_openhands(ds, input, parser)
    }
}

fn add_rows(
    ds: &mut Dataset,
    input: &OpenHandsInput<'_>,
    details: &EventDetails,
    parser: &mut Parser,
) -> Result<(), DatasetError> {
    let conv = input.conversation;
    let id = input.id;
    let snapshot = Some(ds.snapshot());
    let mut h = header(conv, parser);
    // Created and updated: meta.json's (UTC), else the first and last
    // events' (naive local times).
    let mut times = Times::new(conv);
    let first = conv
        .events()
        .position(|e| e.is_ok())
        .and_then(|p| times.of(p));
    let last = conv
        .events()
        .rposition(|e| e.is_ok())
        .and_then(|p| times.of(p));
    let created = micros(h.created.as_deref()).or(first);
    let updated = micros(h.updated.as_deref()).or(last);
    let partition = ds.partition_of(created.map(|t| t.0));

    // The state (parsed once): the header's agent, directory and status,
    // the model calls, and the conversation's totals from them; and what
    // the view takes from it.
    let mut totals = Usage::default();
    let mut models: Vec<String> = Vec::new();
    // From the reader's parse when the details hold this state's, else
    // parsed here.
    let mut rows = details.take_state(conv);
    if rows.is_none()
        && let Some(f) = conv.state()
        && let Ok(doc) = f.open(parser)
    {
        rows = Some(StateRows::read(f.raw(), doc.root()));
    }
    let mut view_state = None;
    if let Some(st) = rows {
        h.agent_kind = st.agent_kind;
        h.model = st.model;
        h.working_dir = st.working_dir;
        h.status = st.status;
        view_state = st.view;
        let has_dirs = !conv.subagents().is_empty();
        for e in &st.entries {
            // As `StateUsage::counted`: a parent's copies of its sub-agents'
            // metrics only when their own directories are not there.
            if has_dirs && is_subagent_copy(&e.usage_id) {
                continue;
            }
            totals.add(&e.usage);
            if !models.contains(&e.model) {
                models.push(e.model.clone());
            }
            llm_rows(ds, &partition, id, e, snapshot)?;
        }
    }

    // The view: which events are in the model's context, and its messages.
    // Its events decoded from the reader's parse (`details` are the
    // conversation's: checked by the callers), the others parsed here.
    let view = View::build_early(
        &ViewInput::from_conversation(conv),
        &ViewOptions::default(),
        parser,
        details.take_view(),
        view_state,
    );
    let mut in_context: Vec<bool> = vec![false; conv.len()];
    // The sequence's events have the indexes 0, 1, 2…: an event's
    // position is its index (checked, rather than looked up in a map).
    let position_of = |index: u64| {
        usize::try_from(index)
            .ok()
            .filter(|&p| conv.event(p).is_some_and(|e| e.index() == index))
    };
    for entry in view.entries() {
        if let ViewEntry::Event(p) = entry
            && let Some(ev) = view.events().get(*p)
            && let Some(pos) = position_of(ev.index as u64)
            && let Some(slot) = in_context.get_mut(pos)
        {
            *slot = true;
        }
    }

    // Events, and the tool calls they hold.
    let json = ds.options().json;
    let none = EventCols::default();
    let mut details_of_ok = details.cols.iter();
    let (mut ok_events, mut malformed) = (0u64, 0u64);
    for (pos, e) in conv.events().enumerate() {
        let cols = if e.is_ok() {
            ok_events += 1;
            details_of_ok.next().unwrap_or(&none)
        } else {
            malformed += 1;
            &none
        };
        if !input.events.wants(e.index()) {
            continue;
        }
        let status = match e.file().map(|f| f.status()) {
            Some(st) => st.as_str(),
            None if e.is_ok() => FileStatus::Event.as_str(),
            None => FileStatus::Malformed.as_str(),
        };
        let error = e.error().map(|err| err.to_string());
        let raw = e.raw();
        let text = json.then(|| utf8(raw));
        let ts = times.of(pos);
        let ctx = in_context.get(pos).copied().unwrap_or(false);
        ds.push(Table::Events, &partition, |r| {
            r.str(Some(id))
                .count(Some(e.index()))
                .str(Some(e.file_name()))
                .str(e.id())
                .str(e.kind_name())
                .str(e.source())
                .str(e.parent_id())
                .time(ts.map(|t| t.0))
                .str(e.timestamp())
                .bool(ts.map(|t| t.1))
                .str(details.text(cols.tool_name))
                .str(details.text(cols.tool_call_id))
                .str(details.text(cols.llm_response_id))
                .str(details.text(cols.action_kind))
                .bool(cols.is_error)
                .i64(cols.exit_code)
                .count(cols.text_length)
                .bool(Some(ctx))
                .str(Some(status))
                .str(error.as_deref())
                .count(Some(raw.len() as u64))
                .str(text.as_deref())
                .utc(snapshot)
                .end()
        })?;
    }
    // Files outside the sequence: with a whole conversation only.
    let mut problem_files = 0u64;
    for f in conv.files() {
        match f.status() {
            FileStatus::Event => continue,
            FileStatus::Malformed | FileStatus::Unreadable => {
                problem_files += 1;
                continue;
            }
            FileStatus::Gap | FileStatus::Duplicate | FileStatus::BadName => problem_files += 1,
        }
        if matches!(input.events, EventSelection::Since { outside: false, .. }) {
            continue;
        }
        let path = conv.dir().join(DIR_EVENTS).join(f.name());
        let (bytes, read_error) = match read_capped(&path) {
            Ok(b) => (Some(b), None),
            Err(e) => (None, Some(format!("{}: {e}", path.display()))),
        };
        let reason = f
            .reason()
            .map(|r| r.to_string())
            .or(read_error.clone())
            .or_else(|| f.error().map(|e| e.to_string()));
        let text = if json {
            bytes.as_deref().map(utf8)
        } else {
            None
        };
        ds.push(Table::Events, &partition, |r| {
            r.str(Some(id))
                .count(f.index())
                .str(Some(f.name()))
                .str(f.id())
                .str(None)
                .str(None)
                .str(None)
                .time(None)
                .str(None)
                .bool(None)
                .str(None)
                .str(None)
                .str(None)
                .str(None)
                .bool(None)
                .i64(None)
                .i64(None)
                .bool(Some(false))
                .str(Some(f.status().as_str()))
                .str(reason.as_deref())
                .count(bytes.as_ref().map(|b| b.len() as u64))
                .str(text.as_deref())
                .utc(snapshot)
                .end()
        })?;
    }

    for (n, c) in details.calls.iter().enumerate() {
        // The action's own columns (a call is recorded with its action's).
        let a = details.cols.get(c.action_col).unwrap_or(&none);
        let action_pos = position_of(c.action_index);
        let result_pos = c.result_index.and_then(position_of);
        let action = action_pos.and_then(|p| conv.event(p));
        let result = result_pos.and_then(|p| conv.event(p));
        let started = action_pos.and_then(|p| times.of(p));
        let finished = result_pos.and_then(|p| times.of(p));
        let duration = match (started, finished) {
            (Some(a), Some(b)) if a.1 == b.1 => Some((b.0 - a.0) as f64 / 1e6),
            _ => None,
        };
        ds.push(Table::ToolCalls, &partition, |r| {
            r.str(Some(id))
                .str(Some("openhands"))
                .count(Some(n as u64))
                .count(Some(c.action_index))
                .str(action.as_ref().and_then(|e| e.id()))
                .str(details.text(a.tool_name))
                .str(details.text(a.tool_call_id))
                .str(details.text(a.llm_response_id))
                .str(details.text(a.action_kind))
                .str(details.text(c.arguments))
                .time(started.map(|t| t.0))
                .str(c.outcome)
                .count(c.result_index)
                .str(result.as_ref().and_then(|e| e.id()))
                .bool(c.is_error)
                .i64(c.exit_code)
                .str(details.text(c.result_text))
                .str(details.text(c.error))
                .str(details.text(c.rejection))
                .time(finished.map(|t| t.0))
                .f64(duration)
                .utc(snapshot)
                .end()
        })?;
    }

    // The view's messages, as `view --json` prints them.
    // Written straight from the view's messages: the bytes and members of
    // `wire_messages()`'s values, without building them.
    view.write_wire_messages(|position, line, m| {
        let text = m.text;
        let length = text.as_deref().map(|t| char_count(t) as u64);
        let whole = utf8(line);
        let calls = m.tool_calls.and_then(|r| line.get(r)).map(utf8);
        ds.push(Table::Messages, &partition, |r| {
            r.str(Some(id))
                .str(Some("openhands"))
                .count(Some(position as u64))
                .str(Some(m.role.as_str()))
                .str(text.as_deref())
                .count(length)
                .str(m.tool_call_id)
                .str(m.name)
                .str(calls.as_deref())
                .str(Some(&whole))
                .utc(snapshot)
                .end()
        })
    })?;
    drop(view);

    ds.push(Table::Conversations, &partition, |r| {
        r.str(Some(id))
            .str(Some("openhands"))
            .str(input.parent)
            .str(Some(&conv.dir().to_string_lossy()))
            .count(Some(input.depth as u64))
            .str(h.forked_from.as_deref())
            .str(h.forked_event.as_deref())
            .str(h.title.as_deref())
            .str(h.agent_kind.as_deref())
            .str(h.model.as_deref())
            .str((!models.is_empty()).then(|| models.join(",")).as_deref())
            .str(h.working_dir.as_deref())
            .str(h.status.as_deref())
            .time(created.map(|t| t.0))
            .time(updated.map(|t| t.0))
            .bool(created.or(updated).map(|t| t.1))
            .count(Some(ok_events))
            .count(Some(conv.event_file_count() as u64))
            .count(Some(malformed))
            .count(Some(problem_files))
            .count(Some(conv.subagents().len() as u64))
            .count(Some(totals.calls))
            .count(Some(totals.prompt_tokens))
            .count(Some(totals.completion_tokens))
            .count(Some(totals.cache_read_tokens))
            .count(Some(totals.cache_write_tokens))
            .count(Some(totals.reasoning_tokens))
            .f64(Some(totals.cost))
            .str(Some(input.change))
            .utc(snapshot)
            .end()
    })?;
    Ok(())
}

/// A removed conversation: one `conversations` row with `change` =
/// `removed`.
pub fn add_removed(
    ds: &mut Dataset,
    id: &str,
    parent: Option<&str>,
    depth: usize,
) -> Result<(), DatasetError> {
    let snapshot = Some(ds.snapshot());
    let partition = ds.partition_of(None);
    ds.push(Table::Conversations, &partition, |mut r| {
        r = r
            .str(Some(id))
            .str(Some("openhands"))
            .str(parent)
            .str(None)
            .count(Some(depth as u64));
        for _ in 0..8 {
            r = r.str(None);
        }
        r = r.time(None).time(None).bool(None);
        for _ in 0..11 {
            r = r.count(None);
        }
        r.f64(None).str(Some("removed")).utc(snapshot).end()
    })
}

/// What the rows take from `base_state.json`, owned or borrowing its
/// bytes: the header's agent, model, directory and status, the model-call
/// rows of each metrics entry, and what the view takes from it. Read from
/// the state's parse, the reader's ([`EventDetails::add_state`]) or the
/// export's own.
pub(super) struct StateRows<'a> {
    agent_kind: Option<String>,
    model: Option<String>,
    working_dir: Option<String>,
    status: Option<String>,
    entries: Vec<LlmEntry>,
    pub(super) view: Option<EarlyState<'a>>,
}

impl<'a> StateRows<'a> {
    /// Reads the state's root object `root`, parsed from `raw`; the view's
    /// strings borrow from `raw` where they can (owned when it is empty).
    pub(super) fn read(raw: &'a [u8], root: Value<'_>) -> StateRows<'a> {
        // The fields only (the rows never write the state back): no
        // members recorded, no raw literals, so no spans computed.
        let state = State::decode_lean(root).unwrap_or_default();
        let a = state.agent_info();
        let map = state
            .stats
            .as_ref()
            .and_then(|s| s.usage_to_metrics.as_ref());
        let mut entries = Vec::new();
        for (key, item) in map.into_iter().flat_map(|m| m.entries()) {
            let Item::Ok(m) = item else { continue };
            entries.push(llm_entry(key.as_str(), m));
        }
        StateRows {
            agent_kind: a.kind.map(str::to_owned),
            model: a.model.map(str::to_owned),
            working_dir: state.working_dir().map(str::to_owned),
            status: state
                .execution_status
                .as_ref()
                .map(|s| s.as_str().to_owned()),
            entries,
            view: EarlyState::read(raw, root),
        }
    }
}

/// One metrics entry of the state: its usage, and its `llm_calls` rows.
struct LlmEntry {
    usage_id: String,
    model: String,
    usage: Usage,
    calls: Vec<LlmCall>,
    /// The `rest` row: tokens and cost beyond the calls' sum, when any.
    rest: Option<([i64; 5], f64)>,
}

/// One `call` row of [`LlmEntry`].
struct LlmCall {
    model: Option<String>,
    response: Option<String>,
    tokens: Option<[i64; 5]>,
    window: Option<i64>,
    cost: Option<f64>,
    latency: Option<f64>,
}

/// The model-call rows of one metrics entry: one `call` row per
/// `token_usages` element (latency joined by response ID, cost by position
/// when `costs` has one per call), then one `rest` row holding what the
/// accumulated totals hold beyond the calls' sum (absent when nothing),
/// so that the rows of an entry sum to [`Usage::of`] exactly.
fn llm_entry(usage_id: &str, m: &Metrics<'_>) -> LlmEntry {
    let total = Usage::of(m);
    let latencies: HashMap<&str, f64> = m
        .response_latencies
        .iter()
        .flat_map(|l| l.iter())
        .filter_map(|i| match i {
            Item::Ok(l) => Some((
                l.response_id.as_ref()?.as_str(),
                float(l.latency).filter(|f| f.is_finite())?,
            )),
            Item::Bad { .. } => None,
        })
        .collect();
    let calls = m.token_usages.as_ref().map_or(0, |l| l.len());
    let costs: Vec<Option<f64>> = m
        .costs
        .iter()
        .flat_map(|l| l.iter())
        .map(|i| match i {
            Item::Ok(c) => float(c.cost).filter(|c| c.is_finite() && *c >= 0.0),
            Item::Bad { .. } => None,
        })
        .collect();
    let aligned = costs.len() == calls && calls > 0;
    let mut sum = [0i64; 5];
    let mut cost_sum = 0.0f64;
    let mut rows = Vec::with_capacity(calls);
    for (n, item) in m.token_usages.iter().flat_map(|l| l.iter()).enumerate() {
        let cost = if aligned { costs[n] } else { None };
        cost_sum += cost.unwrap_or(0.0);
        let (tokens, call_model, response, window) = match item {
            Item::Ok(t) => (
                Some([
                    count(t.prompt_tokens),
                    count(t.completion_tokens),
                    count(t.cache_read_tokens),
                    count(t.cache_write_tokens),
                    count(t.reasoning_tokens),
                ]),
                t.model.as_ref().map(|s| s.as_str()),
                t.response_id.as_ref().map(|s| s.as_str()),
                t.context_window.map(|_| count(t.context_window)),
            ),
            Item::Bad { .. } => (None, None, None, None),
        };
        let tok = tokens.map(|t| t.map(|v| i64::try_from(v).unwrap_or(i64::MAX)));
        if let Some(t) = tok {
            for (a, b) in sum.iter_mut().zip(t) {
                *a = a.saturating_add(b);
            }
        }
        rows.push(LlmCall {
            model: call_model.map(str::to_owned),
            response: response.map(str::to_owned),
            tokens: tok,
            window: window.map(|w| i64::try_from(w).unwrap_or(i64::MAX)),
            cost,
            latency: response.and_then(|r| latencies.get(r).copied()),
        });
    }
    let want = [
        total.prompt_tokens,
        total.completion_tokens,
        total.cache_read_tokens,
        total.cache_write_tokens,
        total.reasoning_tokens,
    ]
    .map(|v| i64::try_from(v).unwrap_or(i64::MAX));
    let mut rest = [0i64; 5];
    for ((r, w), s) in rest.iter_mut().zip(want).zip(sum) {
        *r = w.saturating_sub(s);
    }
    let cost_rest = total.cost - cost_sum;
    let rest = (!(rest.iter().all(|v| *v == 0) && cost_rest == 0.0)).then_some((rest, cost_rest));
    LlmEntry {
        usage_id: usage_id.to_owned(),
        model: model_of(m),
        usage: total,
        calls: rows,
        rest,
    }
}

/// Pushes the `llm_calls` rows of one metrics entry.
fn llm_rows(
    ds: &mut Dataset,
    partition: &str,
    id: &str,
    e: &LlmEntry,
    snapshot: Option<i64>,
) -> Result<(), DatasetError> {
    let (usage_id, model) = (e.usage_id.as_str(), e.model.as_str());
    for (n, c) in e.calls.iter().enumerate() {
        let tok = c.tokens;
        ds.push(Table::LlmCalls, partition, |r| {
            r.str(Some(id))
                .str(Some("openhands"))
                .str(Some(usage_id))
                .str(Some("call"))
                .count(Some(n as u64))
                .str(Some(model))
                .str(c.model.as_deref())
                .str(c.response.as_deref())
                .i64(tok.map(|t| t[0]))
                .i64(tok.map(|t| t[1]))
                .i64(tok.map(|t| t[2]))
                .i64(tok.map(|t| t[3]))
                .i64(tok.map(|t| t[4]))
                .i64(tok.map(|t| t[0].saturating_add(t[1])))
                .i64(c.window)
                .f64(c.cost)
                .f64(c.latency)
                .utc(snapshot)
                .end()
        })?;
    }
    let Some((rest, cost_rest)) = e.rest else {
        return Ok(());
    };
    ds.push(Table::LlmCalls, partition, |r| {
        r.str(Some(id))
            .str(Some("openhands"))
            .str(Some(usage_id))
            .str(Some("rest"))
            .count(None)
            .str(Some(model))
            .str(None)
            .str(None)
            .i64(Some(rest[0]))
            .i64(Some(rest[1]))
            .i64(Some(rest[2]))
            .i64(Some(rest[3]))
            .i64(Some(rest[4]))
            .i64(Some(rest[0].saturating_add(rest[1])))
            .i64(None)
            .f64(Some(cost_rest))
            .f64(None)
            .utc(snapshot)
            .end()
    })
}

/// Bytes as text: borrowed when they are UTF-8 (checked by `simdutf8`'s
/// vectorised validator), else with U+FFFD for what is not, as
/// `String::from_utf8_lossy`.
fn utf8(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// A file's bytes, at most [`crate::MAX_SIZE`] of them.
fn read_capped(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(path)?;
    let mut buf = Vec::new();
    f.take(crate::MAX_SIZE).read_to_end(&mut buf)?;
    Ok(buf)
}
