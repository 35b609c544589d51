//! An OpenHands SDK conversation as an ASF session, built from the
//! conversation's view ([`crate::openhands::view`]).
//!
//! - The header: the session id is the conversation's own id (its directory
//!   name, a UUID) written as a UUID (a UUIDv5 under the nil namespace over
//!   `openhands/<name>` when the name is not one), `created_at` the first
//!   event's time, `openhands:conversation` the directory name; `records`
//!   promises nothing (an OpenHands store does not record every dispatch,
//!   decision or run boundary).
//! - A `config` first: the system message the SDK sends, one instruction
//!   part per text part (`instructions` their join), the tools of the
//!   `SystemPromptEvent` as function tools (the SDK's own definition kept in
//!   `openhands:tool`), the model of the state's `agent.llm`. A tool with
//!   no canonical form (an integer no binary64 holds, a NaN) can be in no
//!   request a `request_hash` names: it is left out, and the event's report
//!   row says which and why (the event itself is kept whole, below).
//! - The messages of the active branch ([`View::wire_messages`]) as Open
//!   Responses items, in order, segment by segment: the branch is cut at
//!   each condensation, and a segment's messages are those of the view the
//!   SDK holds at its end (so each model call's request is a prefix of
//!   them). User messages as `message` items
//!   (`input_text`, `input_image`), each assistant message as its thinking
//!   blocks (`reasoning` items: the thinking as `reasoning_text` and its
//!   signature as `encrypted_content`, a redacted block as
//!   `encrypted_content` alone), its text (`message`, `output_text`) and its
//!   tool calls (`function_call`), each tool message as a
//!   `function_call_output`. Assistant items carry the model call's
//!   `llm_response_id` as `response`, and a `response` entry follows each
//!   assistant turn with the usage, cost and latency the state's metrics
//!   hold for that response id (`usage` in the Responses shape, the SDK's
//!   own record in `openhands:metrics`; a record I-JSON cannot carry even
//!   normalised, such as one holding a NaN, is kept as its text in
//!   `openhands:metrics_text` and the call has no `usage`) and the
//!   `request_hash` of the context its path rebuilds, which is the request
//!   the SDK sent.
//! - A condensation is a `compaction` whose context is the SDK's condensed
//!   view (see `fold` for how its summary, which the SDK places after the
//!   kept head, is expressed).
//! - A user's rejection of a call (`UserRejectObservation`) is a `decision`
//!   (`reject`, by `human`, its reason) before the call's output.
//! - Every event of the conversation is also kept whole, in file order
//!   among the entries above, as an `openhands:event` record entry (`event`:
//!   the event's JSON; `raw`: its text, when the JSON is not I-JSON), so
//!   nothing the store holds is lost: events with no core form (state
//!   updates, pauses, events a condensation forgot, events
//!   off the active branch, files that are not JSON) are kept that way
//!   only, and the report says so.
//!
//! - Sub-agents ([`Options::subsessions`]) get `link` entries; a
//!   sub-agent's own session names its parent in `parent_session`.
//!
//! The context at the leaf, rendered as chat-completions messages
//! ([`crate::asf::Context::chat_messages`]), is the SDK's next request.

use std::rc::Rc;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use crate::asf::canon::{canonical_value, to_canonical};
use crate::asf::{Appender, ts::is_canonical_ts};
use crate::json::{Map, OwnedValue};
use crate::openhands::Conversation;
use crate::openhands::Kind;
use crate::openhands::view::{
    EarlyState, Role, View, ViewInput, ViewOptions, WireContent, WirePart, WireShape,
};

mod ahead;
mod attribute;
mod facts;
mod fold;
mod items;
mod parsed;
mod response;
mod tools;

use ahead::Ahead;
use attribute::{attribute, raw_of};
use facts::EventFacts;
use fold::{CanonicalItem, PathState};
use items::shape_items;
pub use parsed::ParsedEvents;
use response::{ResponseMetrics, metrics, response_body, response_members};
use tools::{SystemTool, SystemTools, system_tools, tool_of};

use super::{ConvertError, Converted, Outcome, ReportRow, not_ijson};

fn s(v: &str) -> OwnedValue {
    OwnedValue::string(v)
}

fn obj(pairs: Vec<(&str, OwnedValue)>) -> Map {
    let mut m = Map::new();
    for (k, v) in pairs {
        m.insert(k, v);
    }
    m
}

/// The session id of a conversation directory named `name`.
pub fn session_id(name: &str) -> String {
    match uuid::Uuid::try_parse(name) {
        Ok(u) => u.hyphenated().to_string(),
        Err(_) => uuid::Uuid::new_v5(&uuid::Uuid::nil(), format!("openhands/{name}").as_bytes())
            .hyphenated()
            .to_string(),
    }
}

/// The id a subsession spawned by `call_id` in session `parent` gets: a
/// UUIDv5 under the nil namespace over `<parent>/<call_id>` (RFC 0001).
pub fn subsession_id(parent: &str, call_id: &str) -> String {
    uuid::Uuid::new_v5(&uuid::Uuid::nil(), format!("{parent}/{call_id}").as_bytes())
        .hyphenated()
        .to_string()
}

/// An event's naive timestamp (`2026-12-01T03:20:29.155705`, the SDK
/// writes its local clock without a zone) as a canonical `ts`, read as UTC.
fn ts_of(timestamp: &str) -> Option<String> {
    let (main, frac) = match timestamp.split_once('.') {
        Some((m, f)) => (m, f),
        None => (timestamp, ""),
    };
    let main = main.trim_end_matches('Z');
    let frac = frac.trim_end_matches('Z');
    // At most nine characters of the fraction, its trailing zeros dropped.
    let nine = frac.char_indices().nth(9).map_or(frac.len(), |(i, _)| i);
    let frac = frac[..nine].trim_end_matches('0');
    let mut ts = String::with_capacity(main.len() + frac.len() + 2);
    ts.push_str(main);
    if !frac.is_empty() {
        ts.push('.');
        ts.push_str(frac);
    }
    ts.push('Z');
    is_canonical_ts(&ts).then_some(ts)
}

/// Converts one conversation (its sub-agents are conversations of their
/// own, converted separately).
pub fn convert(conv: &Conversation) -> Result<Converted, ConvertError> {
    convert_with(conv, &Options::default())
}

/// What a conversion needs to know beyond the conversation itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// For a sub-agent's conversation: the session id of the conversation
    /// it is a sub-agent of (written as the header's `parent_session`).
    pub parent_session: Option<String>,
    /// The session ids of its sub-agents' conversations: each gets a `link`
    /// entry (`rel: "subsession"`) at the end of the file (the store does
    /// not record which call spawned which, so the links name no call).
    pub subsessions: Vec<String>,
}

/// Why a condensation whose view is already the context on the path is
/// kept as an `openhands:event` record alone (no `compaction` is written
/// for it).
pub const CONDENSATION_UNCHANGED: &str = "condensation: the view it gives is the context already on the path; kept as an openhands:event record";

/// Writes a wire message's items (and a `decision` before a rejected call's
/// output, a `response` after an assistant turn) in order.
struct Emitter<'w, 'm> {
    /// The segment's wire messages.
    wire: &'w [WireShape<'m>],
    response_of: &'w HashMap<usize, String>,
    rejected: &'w HashMap<String, String>,
    next: usize,
    /// A canonical member being written.
    scratch: Vec<u8>,
    /// A `response`'s other members being written.
    members: Vec<u8>,
    /// An item being written in canonical form.
    item: Vec<u8>,
    /// The segment's `request_hash`es, some taken ahead.
    ahead: Ahead,
}

/// The items of the wire message `shape`, each in canonical form in its
/// own allocation.
fn canonical_items(shape: &WireShape<'_>, buf: &mut Vec<u8>) -> Vec<CanonicalItem> {
    let mut items = Vec::new();
    let Ok(()) = shape_items(shape, buf, |c, call| {
        items.push(CanonicalItem {
            canonical: Rc::from(c),
            call: call.map(str::to_owned),
        });
        Ok::<(), std::convert::Infallible>(())
    });
    items
}

/// What the emitter needs of the conversation beyond one view.
struct Shared<'m> {
    metrics: &'m ResponseMetrics<'m>,
    model: Option<&'m str>,
    call_items: HashMap<String, String>,
}

impl Emitter<'_, '_> {
    fn emit(
        &mut self,
        a: &mut Appender,
        st: &mut PathState,
        sh: &mut Shared<'_>,
        upto: usize,
        ts: &str,
    ) -> Result<(), ConvertError> {
        while self.next <= upto && self.next < self.wire.len() {
            let k = self.next;
            self.next += 1;
            let m = &self.wire[k];
            if let Some((call, _)) = m.tool
                && let Some(reason) = self.rejected.get(call)
                && let Some(target) = sh.call_items.get(call)
            {
                a.append(
                    "decision",
                    ts,
                    obj(vec![
                        ("call_id", s(call)),
                        ("target", s(target)),
                        ("verdict", s("reject")),
                        ("by", s("human")),
                        ("reason", s(reason)),
                    ]),
                )?;
            }
            let response = self.response_of.get(&k);
            let request_hash = response.map(|_| self.ahead.request_hash(k, st, self.wire));
            let response_id = response.map(String::as_str);
            match self.ahead.items_of(k) {
                // Written, and hashed, ahead.
                Some(items) => {
                    for (c, call) in items {
                        let id = st.append_canonical_item(
                            a,
                            ts,
                            c,
                            call.as_deref(),
                            response_id,
                            false,
                        )?;
                        if let Some(c) = call {
                            sh.call_items.insert(c, id);
                        }
                    }
                }
                None => shape_items(m, &mut self.item, |c, call| {
                    let id =
                        st.append_canonical_item(a, ts, Rc::from(c), call, response_id, true)?;
                    if let Some(c) = call {
                        sh.call_items.insert(c.to_owned(), id);
                    }
                    Ok::<(), ConvertError>(())
                })?,
            }
            if let (Some(r), Some(h)) = (response, request_hash) {
                let usage = sh.metrics.usage.get(r.as_str()).copied();
                let latency = sh.metrics.latency.get(r.as_str()).copied();
                // The SDK's own record, canonical from its parse when it
                // has a canonical form; the other members written straight
                // when they need no normalisation.
                self.scratch.clear();
                let record = usage.map(|u| canonical_value(u, &mut self.scratch).is_ok());
                if record != Some(false) {
                    self.members.clear();
                    if let Some(members) =
                        response_members(r, sh.model, usage, latency, &h, &mut self.members)
                    {
                        let mut list: Vec<(&str, &[u8])> = members
                            .iter()
                            .map(|(k, at)| (*k, &self.members[at.clone()]))
                            .collect();
                        if record.is_some() {
                            list.push(("openhands:metrics", &self.scratch));
                        }
                        a.append_canonical("response", ts, Map::new(), &list, None)?;
                        continue;
                    }
                }
                let mut body = response_body(r, sh.model, usage, latency, &h);
                self.scratch.clear();
                match usage {
                    Some(u) if canonical_value(u, &mut self.scratch).is_ok() => {
                        a.append_canonical(
                            "response",
                            ts,
                            body,
                            &[("openhands:metrics", &self.scratch)],
                            None,
                        )?;
                    }
                    None => {
                        a.append("response", ts, body)?;
                    }
                    Some(u) => {
                        // No canonical form: through the appender's
                        // normalisation; when even that cannot make it
                        // I-JSON (a NaN, an infinity), the record is kept
                        // as its text and the call has no `usage`.
                        let mut plain = body.clone();
                        body.insert("openhands:metrics", OwnedValue::from(u));
                        match a.append("response", ts, body) {
                            Ok(_) => {}
                            Err(e) if not_ijson(&e) => {
                                plain.remove("usage");
                                let text = String::from_utf8_lossy(u.raw());
                                plain.insert("openhands:metrics_text", s(&text));
                                a.append("response", ts, plain)?;
                            }
                            Err(e) => return Err(e.into()),
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Appends an event kept whole as an `openhands:event` record (`event`: its
/// JSON, or `raw`: its text when it is not I-JSON), with `key`/`key_value`
/// saying which event it is; returns the record's id. `facts` is the event
/// parsed (`None`: not JSON); a canonical event is written from its
/// canonical form as it stands, anything else through the appender's
/// normalisation.
fn append_record(
    a: &mut Appender,
    ts: &str,
    raw: &[u8],
    facts: Option<&EventFacts>,
    canonicals: &[u8],
    key: (&str, OwnedValue),
) -> Result<String, ConvertError> {
    if let Some(c) = facts.and_then(|f| f.canonical_in(canonicals)) {
        // The key's value canonical too (a string, a small index: nothing
        // the appender's normalisation rewrites) when it has that form.
        return Ok(match to_canonical(&key.1) {
            Ok(k) => a.append_canonical(
                "openhands:event",
                ts,
                Map::new(),
                &[("event", c), (key.0, &k)],
                None,
            )?,
            Err(_) => a.append_canonical(
                "openhands:event",
                ts,
                obj(vec![key.clone()]),
                &[("event", c)],
                None,
            )?,
        });
    }
    let value = facts.and_then(|_| OwnedValue::parse(raw).ok());
    let text = || s(&String::from_utf8_lossy(raw));
    let mut body = match value {
        Some(v) => obj(vec![("event", v)]),
        None => obj(vec![("raw", text())]),
    };
    body.insert(key.0, key.1.clone());
    match a.append("openhands:event", ts, body) {
        Ok(id) => Ok(id),
        Err(e) if not_ijson(&e) => Ok(a.append(
            "openhands:event",
            ts,
            obj(vec![("raw", text()), (key.0, key.1)]),
        )?),
        Err(e) => Err(e.into()),
    }
}

/// Converts one conversation with [`Options`].
///
/// The events of the active branch are cut at each condensation into
/// segments; each segment's items are the wire messages of the view the SDK
/// holds at its end (before the next condensation), so each model call's
/// request is a prefix of them, and a `compaction` at each condensation
/// turns the context into that view. Every `response` carries
/// the `request_hash` of the context its path rebuilds.
pub fn convert_with(conv: &Conversation, options: &Options) -> Result<Converted, ConvertError> {
    convert_from(conv, options, None, Vec::new(), &mut Vec::new())
}

/// [`convert_with`] taking each event from the reader's parse of it
/// (`parsed`, filled while the reader read `conv`: [`ParsedEvents::add`])
/// instead of parsing it again; the conversion is the same. `parsed` is
/// taken (left empty): when it is not that of `conv`'s events (another
/// conversation's, or missing some), it is not used, and the events are
/// parsed. The file is written into the allocation of a file given back
/// with [`ParsedEvents::recycle`], if there is one.
pub fn convert_parsed(
    conv: &Conversation,
    options: &Options,
    parsed: &mut ParsedEvents,
) -> Result<Converted, ConvertError> {
    let out = std::mem::take(&mut parsed.spare);
    // The canonical forms the reader's parse wrote, kept apart so that
    // their buffer serves the next conversation too.
    let mut canonicals = std::mem::take(&mut parsed.canonicals);
    let taken = parsed.fits(conv).then(|| std::mem::take(parsed));
    if taken.is_none() {
        canonicals.clear();
    }
    parsed.clear();
    let done = convert_from(conv, options, taken, out, &mut canonicals);
    canonicals.clear();
    parsed.canonicals = canonicals;
    done
}

/// The conversion, from the reader's parse when there is one, writing the
/// file into `out` (emptied first). `canonicals` holds the canonical forms
/// of the events in `parsed` (their facts say where); those of the events
/// parsed here are appended.
fn convert_from(
    conv: &Conversation,
    options: &Options,
    parsed: Option<ParsedEvents>,
    out: Vec<u8>,
    canonicals: &mut Vec<u8>,
) -> Result<Converted, ConvertError> {
    // The view at the state's head, and at the last event before each
    // condensation of its branch (the segments' ends).
    let segment_ends = |view: &View<'_>| -> Vec<String> {
        let (events, order) = (view.events(), view.conversation());
        (1..order.len())
            .filter(|&k| events[order[k]].kind == Some(Kind::Condensation))
            .map(|k| events[order[k - 1]].id.to_string())
            .collect()
    };
    // Each event parsed once, for the view and for the conversion: the
    // attribution, its timestamp and its record (by position in the view's
    // events; `None`: not JSON).
    let mut facts: Vec<Option<EventFacts>> = Vec::new();
    // Each `SystemPromptEvent`'s tools, by position, from the same parse.
    let mut prepared_tools: Vec<(usize, SystemTools)> = Vec::new();
    let input = ViewInput::from_conversation(conv);
    // The events the reader parsed: their facts placed by position as the
    // view places them (each event of the input whose index is the next
    // one's), and their decoded events handed to the view.
    let early = parsed.map(|parsed| {
        let mut taken = parsed.facts.into_iter().peekable();
        for (p, e) in input.events.iter().enumerate() {
            let Some((_, _, f, tools)) = taken.next_if(|t| t.0 == e.index) else {
                continue;
            };
            facts.resize_with(p, || None);
            facts.push(Some(f));
            if let Some(t) = tools {
                prepared_tools.push((p, t));
            }
        }
        parsed.view
    });
    // The state parsed once: the view reads what it needs of it from this
    // parse too.
    let mut state_parser = crate::json::PooledParser::take();
    let state_raw = conv.state().map(|f| f.raw());
    let state_doc = state_raw.and_then(|raw| state_parser.parse(raw).ok());
    let state = state_doc.as_ref().map(|d| d.root());
    let early_state = state_raw
        .zip(state)
        .and_then(|(raw, root)| EarlyState::read(raw, root));
    let (view, seg_list) = View::build_at_heads(
        &input,
        &ViewOptions::default(),
        early,
        early_state,
        segment_ends,
        &mut |p, ev, root| {
            if facts.len() <= p {
                facts.resize_with(p + 1, || None);
            }
            let condensation = ev.kind == Some(Kind::Condensation);
            facts[p] = Some(EventFacts::from_root(root, condensation, canonicals));
            if ev.kind == Some(Kind::SystemPrompt) {
                prepared_tools.push((p, system_tools(root)));
            }
        },
    );
    let sid = session_id(conv.name());
    let model = state
        .and_then(|s| s.get("agent")?.get("llm")?.get("model")?.as_str())
        .map(str::to_owned);
    let metrics = metrics(state);

    let events = view.events();
    let order: Vec<usize> = view.conversation().to_vec();
    let raw = |p: usize| raw_of(conv, &view, p);

    // Segments of the active branch, cut at condensations; each but the
    // last gets the view at its last event.
    let mut starts: Vec<usize> = vec![0];
    starts.extend((1..order.len()).filter(|&k| events[order[k]].kind == Some(Kind::Condensation)));
    let bounds: Vec<(usize, usize)> = starts
        .iter()
        .enumerate()
        .map(|(s, &b)| (b, starts.get(s + 1).copied().unwrap_or(order.len())))
        .collect();
    let mut seg_list = seg_list.into_iter();
    let seg_views: Vec<Option<View<'_>>> = (0..bounds.len())
        .map(|s| {
            if s + 1 < bounds.len() {
                seg_list.next()
            } else {
                None
            }
        })
        .collect();

    facts.resize_with(events.len(), || None);
    let fact = |p: usize| facts.get(p).and_then(Option::as_ref);

    let forgotten: HashSet<&str> = order
        .iter()
        .filter(|&&p| events[p].kind == Some(Kind::Condensation))
        .filter_map(|&p| fact(p))
        .flat_map(|f| f.forgotten.iter().map(String::as_str))
        .collect();

    // The header.
    let first_ts = order
        .iter()
        .find_map(|&p| fact(p)?.ts.clone())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned());
    let mut header = obj(vec![
        ("id", s(&sid)),
        ("created_at", s(&first_ts)),
        (
            "harness",
            OwnedValue::Object(obj(vec![
                ("name", s("agentlog")),
                ("version", s(env!("CARGO_PKG_VERSION"))),
            ])),
        ),
        ("openhands:conversation", s(conv.name())),
    ]);
    if let Some(p) = &options.parent_session {
        header.insert("parent_session", s(p));
    }
    let mut a = Appender::trusted(header, out)?;
    // The file holds each event once in its record (its JSON as a string
    // inside the record's canonical form), the messages once more as items,
    // a compaction's context again, and an envelope per line: about three
    // times the events (2.3 to 9.9 times on the test corpus, half of the
    // files under 3), reserved at once rather than grown by doubling (each
    // regrowth a copy of the file so far).
    let events_len: usize = conv.events().map(|e| e.raw().len()).sum();
    // Entries: an event's record, and for most events an item or two
    // and a response (2.6 an event on generated conversations).
    a.reserve(events_len * 3 + 4096, conv.len() * 3 + 16);
    let mut report = Vec::new();
    let mut record_parser = crate::json::PooledParser::take();
    let mut last_ts = first_ts.clone();

    // The config: instructions (as parts) and tools, with the first event.
    let final_wire = view.wire_shapes();
    let system_pos = order
        .iter()
        .copied()
        .find(|&p| events[p].kind == Some(Kind::SystemPrompt));
    let mut config = Map::new();
    let mut tools_left_out: Vec<String> = Vec::new();
    if let Some(m) = &model {
        config.insert("model", s(m));
    }
    let is_system = |w: &[WireShape<'_>]| w.first().is_some_and(|m| m.role == Role::System);
    if is_system(&final_wire) {
        // Each part of the system message's content list (none when it is
        // a string), by its text (empty for a part that is not text).
        let content = match &final_wire[0].content {
            WireContent::Parts(p) => p.as_slice(),
            _ => &[],
        };
        let texts: Vec<&str> = content
            .iter()
            .map(|p| match p {
                WirePart::Text { text, .. } => &**text,
                _ => "",
            })
            .collect();
        let parts: Vec<OwnedValue> = texts
            .iter()
            .enumerate()
            .map(|(i, text)| {
                OwnedValue::Object(obj(vec![
                    ("id", s(&format!("system-{i}"))),
                    ("text", s(text)),
                ]))
            })
            .collect();
        config.insert("instructions", s(&texts.join("\n\n")));
        config.insert("instructions_parts", OwnedValue::Array(parts));
    }
    // The system prompt event's tools, from the view's parse of it (or
    // parsed here when the view did not read it).
    let system = system_pos.and_then(|p| match prepared_tools.iter().position(|(q, _)| *q == p) {
        Some(i) => Some((
            std::mem::take(&mut prepared_tools[i].1),
            fact(p).and_then(|f| f.ts.clone()),
        )),
        None => {
            let v = OwnedValue::parse(raw(p)).ok()?;
            let tools = v.get("tools").and_then(OwnedValue::as_array).map(|a| {
                a.iter()
                    .map(|t| SystemTool::Owned(tool_of(t)))
                    .collect::<Vec<_>>()
            });
            let ts = v
                .get("timestamp")
                .and_then(OwnedValue::as_str)
                .and_then(ts_of);
            Some((tools, ts))
        }
    });
    // The kept tools: each one's name and canonical form.
    let mut kept_tools: Option<Vec<(String, Vec<u8>)>> = None;
    if let Some((tools, ts)) = system {
        if let Some(tools) = tools {
            // A tool with no canonical form (a number or a string I-JSON
            // cannot carry) can be in no request a `request_hash` names: it
            // is left out of the config, and said so in the event's report
            // row (the event is kept whole in its record all the same).
            let mut kept = Vec::with_capacity(tools.len());
            for (i, tool) in tools.into_iter().enumerate() {
                let named = match tool {
                    SystemTool::Canonical { name, bytes } => Ok((name, bytes)),
                    SystemTool::Owned(t) => to_canonical(&t).map(|c| {
                        let name = t.get("name").and_then(OwnedValue::as_str);
                        (name.unwrap_or("").to_owned(), c)
                    }),
                };
                match named {
                    Ok(n) => kept.push(n),
                    Err(e) => tools_left_out.push(format!("tool {i} ({e})")),
                }
            }
            kept_tools = Some(kept);
        }
        if let Some(t) = ts {
            last_ts = t;
        }
    }
    // The kept tools' canonical forms, joined, are `tools_added`'s.
    let tools_canonical = kept_tools.as_ref().map(|kept| {
        let mut joined =
            Vec::with_capacity(kept.iter().map(|(_, c)| c.len() + 1).sum::<usize>() + 2);
        joined.push(b'[');
        for (i, (_, c)) in kept.iter().enumerate() {
            if i > 0 {
                joined.push(b',');
            }
            joined.extend_from_slice(c);
        }
        joined.push(b']');
        joined
    });
    // Each member canonicalised once, for the entry and the running
    // request hash (through the appender's normalisation when one has no
    // canonical form: the tools then as owned values again, read from
    // their canonical forms, which canonicalise to the same bytes).
    let config = OwnedValue::Object(config);
    let canonical: Option<Vec<(&str, Vec<u8>)>> = config
        .as_object()
        .into_iter()
        .flat_map(Map::iter)
        .map(|(k, v)| to_canonical(v).map(|c| (k, c)))
        .collect::<Result<_, _>>()
        .ok();
    let with_owned_tools = || {
        let mut m = config.as_object().cloned().unwrap_or_default();
        if let Some(kept) = &kept_tools {
            let tools = kept
                .iter()
                .map(|(_, c)| OwnedValue::parse(c).unwrap_or(OwnedValue::Null))
                .collect();
            m.insert("tools_added", OwnedValue::Array(tools));
        }
        m
    };
    let tools = tools_canonical.as_deref().zip(kept_tools.as_deref());
    let mut st = match &canonical {
        Some(_) => PathState::new(&config, tools)?,
        None => PathState::new_owned(&OwnedValue::Object(with_owned_tools()))?,
    };
    match &canonical {
        Some(members) => {
            let mut members: Vec<(&str, &[u8])> =
                members.iter().map(|(k, c)| (*k, c.as_slice())).collect();
            if let Some(t) = &tools_canonical {
                members.push(("tools_added", t));
            }
            a.append_canonical("config", &last_ts, Map::new(), &members, None)?;
        }
        None => {
            a.append("config", &last_ts, with_owned_tools())?;
        }
    }
    let mut sh = Shared {
        metrics: &metrics,
        model: model.as_deref(),
        call_items: HashMap::new(),
    };

    let mut written: HashSet<usize> = HashSet::new();
    for (seg, &(start, end)) in bounds.iter().enumerate() {
        let sv = seg_views[seg].as_ref().unwrap_or(&view);
        let seg_wire;
        let wire: &[WireShape<'_>] = if seg_views[seg].is_some() {
            seg_wire = sv.wire_shapes();
            &seg_wire
        } else {
            &final_wire
        };
        let att = attribute(sv, wire, &facts);
        let sys = usize::from(is_system(wire));
        // The first wire message of the segment's own events: what comes
        // before it is the context the condensation that opens the
        // segment leaves.
        let own = order[start..end]
            .iter()
            .filter(|&&p| events[p].kind != Some(Kind::Condensation))
            .filter_map(|p| att.attributed.get(p).copied())
            .filter(|&k| k >= sys)
            .min()
            .unwrap_or(wire.len());
        let mut em = Emitter {
            wire,
            response_of: &att.response_of,
            rejected: &att.rejected,
            next: if seg == 0 { sys } else { own.max(sys) },
            scratch: Vec::new(),
            members: Vec::new(),
            item: Vec::new(),
            ahead: Ahead::new(att.response_of.keys().copied()),
        };
        for (k, &p) in order.iter().enumerate().take(end).skip(start) {
            let ev = &events[p];
            written.insert(ev.index);
            let raw = raw(p);
            let f = fact(p);
            if let Some(t) = f.and_then(|f| f.ts.as_ref()) {
                last_ts.clone_from(t);
            }
            let mut mapped: Vec<&'static str> = Vec::new();
            if ev.kind == Some(Kind::SystemPrompt) {
                mapped.push("config");
            }
            let mut plan = None;
            if seg > 0 && k == start {
                let items: Vec<CanonicalItem> = em.wire[sys..own.max(sys)]
                    .iter()
                    .flat_map(|m| canonical_items(m, &mut em.item))
                    .collect();
                plan = st.prepare(&mut a, &last_ts, items)?;
            } else if let Some(t) = att
                .attributed
                .get(&p)
                .copied()
                .filter(|&t| t > 0 || ev.kind != Some(Kind::SystemPrompt))
            {
                em.emit(&mut a, &mut st, &mut sh, t, &last_ts)?;
                mapped.push("item");
                if att.response_of.contains_key(&t) {
                    mapped.push("response");
                }
                if ev.kind == Some(Kind::UserReject) {
                    mapped.push("decision");
                }
            }
            // The event itself, whole.
            let rec = append_record(
                &mut a,
                &last_ts,
                raw,
                f,
                canonicals,
                ("file", s(ev.file_id)),
            )?;
            if let Some(plan) = plan {
                let extra = obj(vec![("openhands:condensation", s(&ev.id))]);
                st.compact(&mut a, &last_ts, plan, &rec, &extra)?;
                mapped.push("compaction");
            }
            let outcome = if mapped.is_empty() {
                let why = if ev.kind == Some(Kind::Condensation) {
                    CONDENSATION_UNCHANGED.to_owned()
                } else if forgotten.contains(&ev.id.as_ref()) {
                    "forgotten by a condensation: not in the model's next request; kept as an openhands:event record".to_owned()
                } else {
                    format!(
                        "{} has no core entry; kept as an openhands:event record",
                        ev.kind.as_ref().map_or("", Kind::as_str)
                    )
                };
                Outcome::Extension(why)
            } else if Some(p) == system_pos && !tools_left_out.is_empty() {
                Outcome::Extension(format!(
                    "mapped to {}, but {} left out of the config's tools: not I-JSON; \
                     kept whole as an openhands:event record",
                    mapped.join(", "),
                    tools_left_out.join(", ")
                ))
            } else {
                mapped.push("openhands:event");
                Outcome::Mapped(mapped)
            };
            report.push(ReportRow {
                event: ev.id.to_string(),
                kind: ev.kind.as_ref().map_or("", Kind::as_str).to_owned(),
                outcome,
            });
        }
        em.emit(&mut a, &mut st, &mut sh, usize::MAX, &last_ts)?;
    }
    // Events the conversation holds off its active branch (or that the
    // view could not read), kept whole as well. The view's events are the
    // conversation's in index order from 0, so a position is an index.
    debug_assert!(events.iter().enumerate().all(|(p, e)| e.index == p));
    for i in (0..conv.len()).filter(|i| !written.contains(i)) {
        let raw = conv.event(i).map(|e| e.raw()).unwrap_or_default();
        let (id, kind) = match record_parser.parse(raw) {
            Ok(doc) => {
                let field = |k: &str| Some(doc.root().get(k)?.as_str()?.to_owned());
                (field("id"), field("kind"))
            }
            Err(_) => (None, None),
        };
        // The facts the view's parse gave, where the view read the event.
        let f = match facts.get_mut(i).and_then(Option::take) {
            Some(f) => Some(f),
            None => EventFacts::of(raw, false, &mut record_parser, canonicals),
        };
        let why = if f.is_some() {
            "not on the conversation's active branch; kept as an openhands:event record"
        } else {
            "not JSON; its text kept as an openhands:event record"
        };
        append_record(
            &mut a,
            &last_ts,
            raw,
            f.as_ref(),
            canonicals,
            ("index", OwnedValue::int(i as i64)),
        )?;
        report.push(ReportRow {
            event: id.unwrap_or_else(|| format!("index {i}")),
            kind: kind.unwrap_or_else(|| "?".to_owned()),
            outcome: Outcome::Extension(why.to_owned()),
        });
    }
    for child in &options.subsessions {
        a.append(
            "link",
            &last_ts,
            obj(vec![("rel", s("subsession")), ("session", s(child))]),
        )?;
    }
    Ok(Converted {
        session_id: sid,
        bytes: a.into_bytes(),
        report,
    })
}
