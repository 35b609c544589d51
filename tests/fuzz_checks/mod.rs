//! The invariants the fuzz targets check, one function per target, on
//! concrete inputs. The fuzz targets (`fuzz/fuzz_targets/*.rs`) build these
//! inputs (from raw bytes, or from `arbitrary` descriptions) and call the
//! functions here; `tests/it/fuzz_regressions.rs` replays every input that
//! once failed (`tests/regressions/<target>/`) through the same functions,
//! so a plain `cargo test` keeps each fixed bug fixed.
//!
//! Inputs of the structure-aware targets are stored as manifests: JSON
//! objects with every byte string hex-encoded ([`Manifest`]).
#![allow(dead_code)]

pub mod same;

pub mod asf;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use agentlog::json::{FieldValue, JsonType, List, Map, OwnedValue, Parser, Str, Style, Value};
use agentlog::occhat::{
    self, ChatSession, ManualClock, RecoveryChoice, SessionStore, TailKind, TimeZone,
    apply_tail_recovery, detect_incomplete_tail, fs_safe_name, recovery_indexes,
};
use agentlog::openhands::view::{
    EventInput, Head, PathFault, SdkVersion, Sidecars, View, ViewEntry, ViewInput, ViewIssue,
    ViewOptions,
};
use agentlog::openhands::{
    self, Action, ActionEvent, AgentErrorEvent, Condensation, Contents, Conversation, Cost,
    FileError, FileStatus, Latency, MessageEvent, Meta, Metrics, MetricsMap, NamePattern,
    Observation, ObservationEvent, ReadError, Reader, State, Stats, StoredContent, StoredMessage,
    StoredReasoningItem, StoredThinkingBlock, StoredToolCall, SystemPromptEvent, TokenUsage,
    UserRejectObservation,
};

// ---------------------------------------------------------------- helpers

/// Decodes `v` as `T` and, when it decodes, checks that encoding gives back
/// the same JSON value as the input.
pub fn round_trip<'a, T: FieldValue<'a>>(v: Value<'a>, what: &str) -> Option<T> {
    let x = T::decode_field(v)?;
    let mut out = Vec::new();
    x.encode_field(&mut out);
    let again = OwnedValue::parse(&out)
        .unwrap_or_else(|e| panic!("{what}: encoded bytes do not parse: {e}: {out:?}"));
    let want = OwnedValue::from(v);
    assert!(
        again == want,
        "{what}: decode then encode changed the value\n in: {:?}\nout: {:?}",
        String::from_utf8_lossy(v.raw()),
        String::from_utf8_lossy(&out)
    );
    Some(x)
}

/// Every value of a document, depth first (an explicit stack: no recursion
/// over input).
pub fn all_values<'a>(root: Value<'a>) -> Vec<Value<'a>> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(v) = stack.pop() {
        out.push(v);
        if let Some(o) = v.as_object() {
            stack.extend(o.iter().map(|m| m.value));
        } else if let Some(a) = v.as_array() {
            stack.extend(a.iter());
        }
    }
    out
}

/// A scratch directory for one check, removed when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    /// A fresh, empty directory under `/dev/shm` when there is one (the
    /// targets write many small files), else the temporary directory.
    pub fn new(what: &str) -> Scratch {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!(
            "agentlog-check-{what}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch directory");
        Scratch(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------- manifests

/// A concrete input of a structure-aware target, stored as JSON.
pub trait Manifest: Sized {
    /// The input as a JSON value.
    fn to_manifest(&self) -> OwnedValue;
    /// The input back from its JSON value.
    fn from_manifest(v: &OwnedValue) -> Option<Self>;

    /// Writes the manifest to the file the environment variable
    /// `AGENTLOG_FUZZ_DUMP` names, if set (to turn a crashing fuzz input into
    /// a regression test: run the target on it with the variable set).
    fn dump_if_asked(&self) {
        if let Some(path) = std::env::var_os("AGENTLOG_FUZZ_DUMP") {
            let text = self.to_manifest().to_string_styled(Style::INDENT2_UNICODE);
            std::fs::write(path, text).expect("writing the manifest");
        }
    }
}

pub fn hex(b: &[u8]) -> OwnedValue {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s.into()
}

pub fn unhex(v: &OwnedValue) -> Option<Vec<u8>> {
    let s = v.as_str()?;
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn text_of(v: &OwnedValue) -> Option<String> {
    v.as_str().map(str::to_owned)
}

fn obj(members: Vec<(&str, OwnedValue)>) -> OwnedValue {
    let mut m = Map::new();
    for (k, v) in members {
        m.entries_mut().push((k.to_owned(), v));
    }
    OwnedValue::Object(m)
}

fn opt<T>(x: &Option<T>, f: impl FnOnce(&T) -> OwnedValue) -> OwnedValue {
    x.as_ref().map_or(OwnedValue::Null, f)
}

fn arr(v: &OwnedValue) -> &[OwnedValue] {
    v.as_array().map_or(&[], Vec::as_slice)
}

// ---------------------------------------------------------------- json

agentlog::json_object! {
    /// A few declared members of the common kinds.
    pub struct Probe<'a> {
        /// A string member.
        kind: Str<'a> = "kind",
        /// Another.
        id: Str<'a> = "id",
        /// A flag.
        flag: bool = "flag",
        /// Anything.
        any: Value<'a> = "any",
        /// Nested objects of the same shape.
        children: List<'a, Probe<'a>> = "children",
    }
}

/// The JSON layer: whatever parses writes back to the same value (from the
/// owned value and from the raw span), a lossless decode re-encodes to the
/// same value, and no getter panics.
pub fn json(data: &[u8]) {
    let mut parser = Parser::new();
    let Ok(doc) = parser.parse(data) else { return };
    let root = doc.root();
    let owned = OwnedValue::from(root);
    for style in [
        Style::COMPACT,
        Style::PYTHON_DEFAULT,
        Style::INDENT2_UNICODE,
    ] {
        let written = owned.to_string_styled(style);
        let again = OwnedValue::parse(written.as_bytes()).expect("our own output parses");
        assert!(owned == again, "write-back changed the value: {written}");
    }
    let raw_again = OwnedValue::parse(root.raw()).expect("the root's raw span parses");
    assert!(owned == raw_again);
    // The canonical form (RFC 8785) of strict JSON (serde_json reads it
    // too: no lone surrogate, which the owned value holds as U+FFFD, no
    // `NaN`), written from the parse (in one walk of the tape), is the owned
    // value's: the same bytes, or refused by both.
    let mut from_parse = Vec::new();
    let walked = agentlog::asf::canon::canonical_value(root, &mut from_parse).map(|()| from_parse);
    match (walked, agentlog::asf::canon::to_canonical(&owned)) {
        _ if serde_json::from_slice::<serde_json::Value>(data).is_err() => {}
        (Ok(a), Ok(b)) => assert!(
            a == b,
            "canonical forms differ: {} / {}",
            String::from_utf8_lossy(&a),
            String::from_utf8_lossy(&b)
        ),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("canonical form from the parse {a:?}, from the owned value {b:?}"),
    }
    // A second opinion: where serde_json accepts the input too (strict
    // JSON: no `NaN`/`Infinity`, no lone surrogate, nesting up to 128), it
    // reads the same value.
    if let Ok(theirs) = serde_json::from_slice::<serde_json::Value>(data)
        && let Err(at) = same_as_serde(&owned, &theirs)
    {
        panic!(
            "serde_json reads another value ({at}): ours {}, serde_json's {theirs}",
            owned
        );
    }
    let _ = round_trip::<Probe>(root, "Probe");
    for v in all_values(root) {
        let _ = (v.as_str(), v.as_bool(), v.as_f64(), v.as_int(), v.as_i64());
        let span = v.span();
        assert_eq!(
            data.get(span.start as usize..span.end as usize),
            Some(v.raw())
        );
        let again = OwnedValue::parse(v.raw()).expect("a value's raw span parses");
        assert!(again == OwnedValue::from(v), "a span holds another value");
        if let Some(o) = v.as_object() {
            for m in o.iter() {
                let _ = m.raw_key();
            }
        }
    }
}

/// Whether our value is the one serde_json read (built with
/// `arbitrary_precision`, so numbers keep their digits, and
/// `preserve_order`): the same numbers (as written, or the same double),
/// strings, arrays, and objects as a Python
/// dict holds them (a repeated name once, at its first place, with its last
/// value, as serde_json's map keeps it). `Err` says where they differ.
pub fn same_as_serde(ours: &OwnedValue, theirs: &serde_json::Value) -> Result<(), String> {
    use serde_json::Value as J;
    match (ours, theirs) {
        (OwnedValue::Null, J::Null) => Ok(()),
        (OwnedValue::Bool(a), J::Bool(b)) if a == b => Ok(()),
        // serde_json writes an exponent its own way (`0e1` as `0e+1`):
        // the same text, or the same double.
        (OwnedValue::Number(a), J::Number(b))
            if a.as_str() == b.as_str() || b.as_str().parse::<f64>().ok() == Some(a.as_f64()) =>
        {
            Ok(())
        }
        (OwnedValue::String(a), J::String(b)) if a == b => Ok(()),
        (OwnedValue::Array(a), J::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                same_as_serde(x, y).map_err(|e| format!("[{i}]{e}"))?;
            }
            Ok(())
        }
        (OwnedValue::Object(a), J::Object(b)) => {
            let mut dict: Vec<(&str, &OwnedValue)> = Vec::new();
            for (k, v) in a.iter() {
                match dict.iter_mut().find(|(dk, _)| *dk == k) {
                    Some(slot) => slot.1 = v,
                    None => dict.push((k, v)),
                }
            }
            if dict.len() != b.len() {
                return Err(format!(": {} members, serde_json {}", dict.len(), b.len()));
            }
            for ((k, v), (bk, bv)) in dict.into_iter().zip(b) {
                if k != bk {
                    return Err(format!(": member {k:?}, serde_json {bk:?}"));
                }
                same_as_serde(v, bv).map_err(|e| format!(".{k}{e}"))?;
            }
            Ok(())
        }
        _ => Err(String::new()),
    }
}

// ---------------------------------------------------------------- event

/// The file name the event check gives its input.
pub const EVENT_NAME: &str = "event-00000-0123abcd.json";

/// One event file: the reader's envelope agrees with a direct parse, and
/// every decoder of the OpenHands kinds (and of their parts, tried on every
/// value of the document) decodes and re-encodes to the same JSON value.
pub fn event(data: &[u8]) {
    let conv = openhands::parse(
        "c",
        [
            (format!("events/{EVENT_NAME}"), data),
            ("base_state.json".into(), b"{}".as_slice()),
        ],
    );
    assert_eq!(conv.len(), 1);
    let ev = conv.event(0).expect("one event");
    assert_eq!(ev.index(), 0);
    assert_eq!(ev.file_id(), "0123abcd");
    let file = ev.file().expect("its file");
    assert_eq!(file.name(), EVENT_NAME);

    {
        let mut parser = Parser::new();
        let parsed = parser.parse(data);
        match &parsed {
            Ok(doc) if doc.root().json_type() == JsonType::Object => {
                assert!(ev.is_ok(), "an object is an event: {:?}", ev.error());
                assert_eq!(ev.raw(), data);
                assert_eq!(file.status(), FileStatus::Event);
                let root = doc.root();
                let s = |k: &str| root.get(k).and_then(|v| v.as_str());
                assert_eq!(ev.kind_name(), s("kind"));
                assert_eq!(ev.id(), s("id"));
                assert_eq!(ev.timestamp(), s("timestamp"));
                assert_eq!(ev.source(), s("source"));
                assert_eq!(ev.parent_id(), s("parent_id"));
                assert_eq!(
                    ev.has_parent(),
                    root.get("parent_id").is_some_and(|v| !v.is_null())
                );
            }
            other => {
                assert!(!ev.is_ok());
                assert_eq!(file.status(), FileStatus::Malformed);
                let err = ev.error().expect("a malformed event has an error");
                assert!(err.path().ends_with(EVENT_NAME), "{err}");
                match (other, err) {
                    (Ok(doc), FileError::NotAnObject { found, .. }) => {
                        assert_eq!(*found, doc.root().json_type())
                    }
                    (Err(e), FileError::Json { source, .. }) => {
                        assert_eq!(source, e);
                        if let Some(o) = err.offset() {
                            assert!(o <= data.len(), "offset {o} past the end");
                        }
                    }
                    (Err(_), FileError::Source(_)) => assert!(data.is_empty()),
                    (a, b) => panic!("parse said {a:?}, the reader said {b:?}"),
                }
                assert!(ev.open(&mut Parser::new()).is_err());
                return;
            }
        }
    }

    let mut parser = Parser::new();
    let doc = ev.open(&mut parser).expect("an event opens");
    let root = doc.root();
    if let Some(m) = round_trip::<MessageEvent>(root, "MessageEvent")
        && let Some(msg) = &m.llm_message
    {
        let _ = msg.content.as_ref().map(|c| c.texts().count());
        let _ = msg.tool_calls.as_ref().map(|c| c.len());
    }
    if let Some(a) = round_trip::<ActionEvent>(root, "ActionEvent") {
        if let Some(act) = a.action_object() {
            let _ = (act.is_task(), act.is_delegate());
            if let Some(t) = &act.tasks {
                let _ = (t.len(), t.get("x"));
            }
        }
        let _ = a.thought.as_ref().map(|c| c.texts().count());
    }
    if let Some(o) = round_trip::<ObservationEvent>(root, "ObservationEvent")
        && let Some(obs) = &o.observation
    {
        let _ = obs.terminal();
    }
    if let Some(r) = round_trip::<UserRejectObservation>(root, "UserRejectObservation") {
        let _ = r.reason();
    }
    if let Some(e) = round_trip::<AgentErrorEvent>(root, "AgentErrorEvent") {
        let _ = e.is_interrupted();
    }
    if let Some(c) = round_trip::<Condensation>(root, "Condensation") {
        let (ids, bad) = c.forgotten();
        let n = c.forgotten_event_ids.as_ref().map_or(0, |l| l.len());
        assert_eq!(ids.len() + bad, n);
        let _ = (c.offset(), c.summary_id());
    }
    let _ = round_trip::<SystemPromptEvent>(root, "SystemPromptEvent");
    let _ = (
        doc.message(),
        doc.action(),
        doc.observation(),
        doc.agent_error(),
        doc.condensation(),
        doc.system_prompt(),
        doc.user_reject(),
    );
    for v in all_values(root) {
        let _ = round_trip::<StoredMessage>(v, "Message");
        let _ = round_trip::<StoredToolCall>(v, "ToolCall");
        let _ = round_trip::<StoredContent>(v, "Content");
        let _ = round_trip::<Contents>(v, "Contents");
        let _ = round_trip::<StoredThinkingBlock>(v, "ThinkingBlock");
        let _ = round_trip::<StoredReasoningItem>(v, "ReasoningItem");
        if let Some(o) = round_trip::<Observation>(v, "Observation") {
            let _ = o.terminal();
        }
        let _ = round_trip::<Action>(v, "Action");
        let _ = Action::parse(Some(v));
    }
}

// ---------------------------------------------------------------- state

/// `base_state.json` and `meta.json`: the reader records them as it
/// should, and `State`, `Meta` and the stats' parts decode and re-encode to
/// the same JSON value.
pub fn state(data: &[u8]) {
    let conv = openhands::parse("c", [("base_state.json", data), ("meta.json", data)]);
    assert!(conv.state().is_some() && conv.meta().is_some());
    assert_eq!(conv.len(), 0);
    let object = Parser::new()
        .parse(data)
        .is_ok_and(|d| d.root().json_type() == JsonType::Object);
    assert_eq!(conv.state().and_then(|f| f.error()).is_none(), object);
    assert_eq!(conv.meta().and_then(|f| f.error()).is_none(), object);
    if let Some(e) = conv.state().and_then(|f| f.error()) {
        assert!(e.path().ends_with("base_state.json"));
        if let Some(o) = e.offset() {
            assert!(o <= data.len());
        }
    }
    if !object {
        return;
    }
    assert_eq!(conv.state().map(|f| f.raw()), Some(data));
    let mut parser = Parser::new();
    let doc = conv
        .state()
        .map(|f| f.open(&mut parser))
        .expect("present")
        .expect("an object opens");
    let root = doc.root();
    let state = round_trip::<State>(root, "State").expect("an object is a State");
    let _ = (state.agent_info().is_acp(), state.working_dir());
    if let Some(stats) = &state.stats
        && let Some(m) = &stats.usage_to_metrics
    {
        let keys = m.keys();
        for k in &keys {
            assert!(m.get(k).is_some());
        }
        assert!(keys.len() <= m.len());
    }
    let _ = round_trip::<Meta>(root, "Meta").expect("an object is a Meta");
    let _ = (doc.state(), doc.meta());
    for v in all_values(root) {
        let _ = round_trip::<Stats>(v, "Stats");
        let _ = round_trip::<MetricsMap>(v, "MetricsMap");
        let _ = round_trip::<Metrics>(v, "Metrics");
        let _ = round_trip::<Cost>(v, "Cost");
        let _ = round_trip::<Latency>(v, "Latency");
        if let Some(t) = round_trip::<TokenUsage>(v, "TokenUsage") {
            let _ = openhands::count(t.prompt_tokens);
            let _ = openhands::int(t.reasoning_tokens);
            let _ = openhands::float(t.context_window);
        }
        if let Some(s) = round_trip::<State>(v, "State") {
            let _ = s.agent_info();
        }
    }
    // The view reads the state too.
    let input = ViewInput {
        events: Vec::new(),
        base_state: Some(data),
        sidecars: None,
    };
    let _ = View::build(&input, &ViewOptions::default()).wire_options();
}

// ---------------------------------------------------------------- parse

/// A set of files given to `openhands::parse`.
#[derive(Debug, Clone)]
pub struct ParseCase {
    /// The directory's name.
    pub name: String,
    /// Whether to match names with the SDK 1.0-1.29 pattern.
    pub five_digits: bool,
    /// The files, in the order given (a path given twice: the last wins).
    pub files: Vec<(String, Vec<u8>)>,
}

impl Manifest for ParseCase {
    fn to_manifest(&self) -> OwnedValue {
        obj(vec![
            ("name", self.name.as_str().into()),
            ("five_digits", self.five_digits.into()),
            (
                "files",
                OwnedValue::Array(
                    self.files
                        .iter()
                        .map(|(p, b)| OwnedValue::Array(vec![p.as_str().into(), hex(b)]))
                        .collect(),
                ),
            ),
        ])
    }
    fn from_manifest(v: &OwnedValue) -> Option<Self> {
        Some(ParseCase {
            name: text_of(v.get("name")?)?,
            five_digits: v.get("five_digits")?.as_bool()?,
            files: arr(v.get("files")?)
                .iter()
                .map(|f| {
                    Some((
                        text_of(f.as_array()?.first()?)?,
                        unhex(f.as_array()?.get(1)?)?,
                    ))
                })
                .collect::<Option<_>>()?,
        })
    }
}

/// Whether the paths can be files of one directory: sane components, and
/// no path both a file and a directory of another.
fn representable(paths: &BTreeMap<String, Vec<u8>>) -> bool {
    for p in paths.keys() {
        if p.is_empty() {
            return false;
        }
        for c in p.split('/') {
            if c.is_empty() || c == "." || c == ".." || c.contains('\0') || c.len() > 200 {
                return false;
            }
        }
        let dir = format!("{p}/");
        if paths
            .range(dir.clone()..)
            .next()
            .is_some_and(|(q, _)| q.starts_with(&dir))
        {
            return false;
        }
    }
    true
}

fn check_alone(conv: &Conversation, given: &BTreeMap<String, Vec<u8>>) {
    let mut parser = Parser::new();
    for (i, ev) in conv.events().enumerate() {
        assert_eq!(ev.index(), i as u64);
        let file = ev.file().expect("an event has a file");
        assert_eq!(file.index(), Some(i as u64));
        assert_eq!(file.id(), Some(ev.file_id()));
        assert_eq!(ev.is_ok(), ev.error().is_none());
        let status = file.status();
        assert!(
            matches!(status, FileStatus::Event | FileStatus::Malformed),
            "{status:?}"
        );
        assert_eq!(status == FileStatus::Event, ev.is_ok());
        let key = format!("events/{}", ev.file_name());
        match given.get(&key) {
            Some(bytes) if !bytes.is_empty() => assert_eq!(ev.raw(), &bytes[..]),
            _ => assert!(ev.raw().is_empty() && !ev.is_ok()),
        }
        if ev.is_ok() {
            let doc = parser.parse(ev.raw()).expect("an event parses");
            let root = doc.root();
            assert_eq!(root.json_type(), JsonType::Object);
            let s = |k: &str| root.get(k).and_then(|v| v.as_str());
            assert_eq!(ev.kind_name(), s("kind"));
            assert_eq!(ev.id(), s("id"));
            assert_eq!(ev.parent_id(), s("parent_id"));
        }
    }
    assert_eq!(
        conv.parsed_event_count(),
        conv.events().filter(|e| e.is_ok()).count()
    );
    let listed: BTreeSet<&str> = given
        .keys()
        .filter_map(|p| p.strip_prefix("events/"))
        .map(|r| r.split('/').next().unwrap_or(r))
        .filter(|n| !n.starts_with('.'))
        .collect();
    assert_eq!(conv.files().len(), listed.len());
    assert_eq!(
        conv.units(),
        usize::from(conv.state().is_some())
            + usize::from(conv.meta().is_some())
            + conv.files().len()
            + conv.others().len()
    );
    let gaps = conv
        .files()
        .filter(|f| f.status() == FileStatus::Gap)
        .count();
    assert_eq!(gaps > 0, conv.event_files().gap().is_some());
}

/// The view's input for a conversation as read.
pub fn view_input(conv: &Conversation) -> ViewInput<'_> {
    ViewInput {
        events: conv
            .events()
            .map(|e| EventInput {
                index: e.index() as usize,
                file_id: e.file_id(),
                raw: e.raw(),
            })
            .collect(),
        base_state: conv.state().map(|f| f.raw()),
        sidecars: Some(Sidecars {
            eventlog_lock: conv.sidecars().iter().any(|s| s == ".eventlog.lock"),
            length_marker: conv
                .sidecars()
                .iter()
                .any(|s| s.starts_with(".eventlog-len-")),
        }),
    }
}

/// `openhands::parse` over a set of files: the conversation is consistent
/// with itself (sequence, statuses, envelope against a direct parse, unit
/// count); the view builds over it and it converts ([`converts`]); and,
/// whenever the paths can exist on a file system, reading the same files
/// from a directory gives the same conversation (what `parse` promises).
pub fn parse(case: &ParseCase) {
    let pattern = if case.five_digits {
        NamePattern::FiveDigits
    } else {
        NamePattern::FiveOrMoreDigits
    };
    let conv = Reader::with_pattern(pattern).parse(
        &case.name,
        case.files.iter().map(|(p, b)| (p.as_str(), b.as_slice())),
    );
    let given: BTreeMap<String, Vec<u8>> = case.files.iter().cloned().collect();
    check_alone(&conv, &given);
    let view = View::build(&view_input(&conv), &ViewOptions::default());
    let _ = (view.sdk_messages(), view.wire_messages());
    converts(&conv);

    let name = &case.name;
    if !representable(&given)
        || name.is_empty()
        || name == "."
        || name == ".."
        || name.contains(['/', '\0'])
        || name.len() > 200
    {
        return;
    }
    let scratch = Scratch::new("parse");
    let dir = scratch.path().join(name);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    for (p, b) in &given {
        let path = dir.join(p);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("parent dir");
        }
        std::fs::write(&path, b).expect("write");
    }
    match Reader::with_pattern(pattern).read(&dir) {
        Ok(disk) => same::assert_same(&conv, &disk, "parse vs read"),
        Err(ReadError::NoConversation { .. }) => {
            assert!(conv.state().is_none() && conv.meta().is_none());
            assert!(conv.files().all(|f| f.id().is_none()));
        }
        Err(e) => panic!("reading the directory failed: {e}"),
    }
}

// ---------------------------------------------------------------- view

/// The view's input, concretely.
#[derive(Debug, Clone, Default)]
pub struct ViewCase {
    /// Each event: its file ID and its bytes.
    pub events: Vec<(String, Vec<u8>)>,
    /// `base_state.json`.
    pub state: Option<Vec<u8>>,
    /// The sidecars (lock file, length marker).
    pub sidecars: Option<(bool, bool)>,
    /// A forced version.
    pub version: Option<SdkVersion>,
    /// A forced head.
    pub head: Option<String>,
}

impl Manifest for ViewCase {
    fn to_manifest(&self) -> OwnedValue {
        obj(vec![
            (
                "events",
                OwnedValue::Array(
                    self.events
                        .iter()
                        .map(|(id, b)| OwnedValue::Array(vec![id.as_str().into(), hex(b)]))
                        .collect(),
                ),
            ),
            ("state", opt(&self.state, |s| hex(s))),
            (
                "sidecars",
                opt(&self.sidecars, |&(a, b)| {
                    OwnedValue::Array(vec![a.into(), b.into()])
                }),
            ),
            (
                "version",
                opt(&self.version, |v| {
                    OwnedValue::Array(vec![
                        i64::from(v.major).into(),
                        i64::from(v.minor).into(),
                        i64::from(v.patch).into(),
                    ])
                }),
            ),
            ("head", opt(&self.head, |h| h.as_str().into())),
        ])
    }
    fn from_manifest(v: &OwnedValue) -> Option<Self> {
        let num = |x: &OwnedValue| x.as_number()?.as_i64().and_then(|n| u16::try_from(n).ok());
        Some(ViewCase {
            events: arr(v.get("events")?)
                .iter()
                .map(|e| {
                    Some((
                        text_of(e.as_array()?.first()?)?,
                        unhex(e.as_array()?.get(1)?)?,
                    ))
                })
                .collect::<Option<_>>()?,
            state: match v.get("state")? {
                OwnedValue::Null => None,
                s => Some(unhex(s)?),
            },
            sidecars: match v.get("sidecars")? {
                OwnedValue::Null => None,
                s => Some((arr(s).first()?.as_bool()?, arr(s).get(1)?.as_bool()?)),
            },
            version: match v.get("version")? {
                OwnedValue::Null => None,
                s => Some(SdkVersion::new(
                    num(arr(s).first()?)?,
                    num(arr(s).get(1)?)?,
                    num(arr(s).get(2)?)?,
                )),
            },
            head: match v.get("head")? {
                OwnedValue::Null => None,
                s => Some(text_of(s)?),
            },
        })
    }
}

/// The view over any events: it terminates without a panic, and what it
/// reports is consistent (branches repeat no event, walks that meet a cycle
/// are reported, entries name real events).
pub fn view(case: &ViewCase) {
    let input = ViewInput {
        events: case
            .events
            .iter()
            .enumerate()
            .map(|(index, (id, raw))| EventInput {
                index,
                file_id: id,
                raw,
            })
            .collect(),
        base_state: case.state.as_deref(),
        sidecars: case
            .sidecars
            .map(|(eventlog_lock, length_marker)| Sidecars {
                eventlog_lock,
                length_marker,
            }),
    };
    let options = ViewOptions {
        version: case.version,
        head: case.head.clone(),
    };
    let view = View::build(&input, &options);
    let n = view.events().len();
    assert_eq!(n, case.events.len());

    let tree = view.tree();
    let active = tree.active_branch();
    let distinct: HashSet<usize> = active.events.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        active.events.len(),
        "a branch repeats an event"
    );
    assert!(active.events.iter().all(|&p| p < n));
    if let Head::Event(h) = tree.head() {
        assert!(*h < n);
        assert_eq!(active.events.last(), Some(h));
    }
    let cycles = tree.cycles();
    for c in &cycles {
        assert!(!c.is_empty() && c.iter().all(|&p| p < n));
    }
    if let Some(PathFault::Cycle(_)) = active.fault {
        assert!(
            !cycles.is_empty(),
            "a walk met a cycle the tree does not report"
        );
    }
    assert_eq!(
        cycles.len(),
        view.issues()
            .iter()
            .filter(|i| matches!(i, ViewIssue::Cycle(_)))
            .count()
    );
    for b in tree.branches() {
        assert!(b.events.iter().all(|&p| p < n));
        let distinct: HashSet<usize> = b.events.iter().copied().collect();
        assert_eq!(distinct.len(), b.events.len(), "a branch repeats an event");
        if let Some(PathFault::Cycle(_)) = b.fault {
            assert!(
                !cycles.is_empty(),
                "a branch met a cycle the tree does not report"
            );
        }
    }
    let _ = tree.abandoned_branches();
    for p in 0..n.min(64) {
        assert!(tree.path_to_root(p).events.len() <= n);
    }
    for &p in view.conversation() {
        assert!(p < n);
    }
    for e in view.entries() {
        match *e {
            ViewEntry::Event(p) | ViewEntry::Summary(p) => assert!(p < n),
        }
        let _ = view.entry_id(*e);
    }
    assert_eq!(view.event_ids().len(), view.entries().len());
    let _ = (view.active_branch_ids(), view.context(), view.version());
    assert_eq!(view.sdk_messages().len(), view.messages().len());
    let _ = view.wire_messages();
    let mut o = view.wire_options();
    o.prompt_caching = !o.prompt_caching;
    o.vision = !o.vision;
    o.function_calling = !o.function_calling;
    o.force_string_serializer = !o.force_string_serializer;
    o.send_reasoning_content = !o.send_reasoning_content;
    let _ = view.wire_messages_with(&o);
    convert(case);
}

/// The same events as a conversation (files read from memory), converted
/// ([`converts`]).
fn convert(case: &ViewCase) {
    let mut files: Vec<(String, &[u8])> = case
        .events
        .iter()
        .enumerate()
        .map(|(i, (id, raw))| (format!("events/event-{i:05}-{id}.json"), raw.as_slice()))
        .collect();
    if let Some(s) = &case.state {
        files.push(("base_state.json".to_owned(), s.as_slice()));
    }
    let conv = Reader::new().parse(
        "00000000000000000000000000000001",
        files.iter().map(|(p, b)| (p.as_str(), *b)),
    );
    converts(&conv);
}

/// A conversation converted to ASF: no panic; a failure is the appender
/// refusing an entry, never a source the converter cannot hold; the file
/// converted verifies under the reader with no problem at all, its report
/// has a row for every event, and converting again gives the same bytes.
fn converts(conv: &Conversation) {
    use agentlog::convert::ConvertError;
    match agentlog::convert::openhands::convert(conv) {
        Ok(done) => {
            let session =
                agentlog::asf::Session::read(&done.bytes).expect("a converted file reads");
            let problems = session.verify();
            assert!(problems.is_empty(), "the converted file: {problems:?}");
            assert_eq!(done.report.len(), conv.len(), "every event reported");
            let again = agentlog::convert::openhands::convert(conv).expect("converts again");
            assert!(again.bytes == done.bytes, "converting twice differs");
        }
        Err(ConvertError::Source(_)) => {}
        Err(e) => panic!("the conversion failed: {e}"),
    }
}

// ---------------------------------------------------------------- tail

fn role(m: &OwnedValue) -> Option<&str> {
    m.get("role").and_then(OwnedValue::as_str)
}

/// Crash recovery on any message list: the report is well formed, and
/// every recovery choice keeps exactly what it says.
pub fn tail(messages: &[OwnedValue]) {
    let n = messages.len();
    let report = detect_incomplete_tail(messages);
    if let Some(r) = &report {
        assert!(!r.tail_indexes.is_empty());
        assert!(r.tail_indexes.windows(2).all(|w| w[0] < w[1]), "{r:?}");
        assert!(r.tail_indexes.iter().all(|&i| i < n), "{r:?}");
        assert!(!r.summary.is_empty());
        let at = |i: usize| messages.get(i).and_then(role);
        let last = r.tail_indexes.last().copied().unwrap_or(0);
        match r.kind {
            TailKind::OrphanedUser => assert_eq!(at(last), Some("user")),
            TailKind::TruncatedAssistant => {
                assert_eq!(r.tail_indexes.len(), 1);
                assert_eq!(at(last), Some("assistant"));
            }
            TailKind::OrphanedToolCalls => {
                assert_eq!(at(r.tail_indexes[0]), Some("assistant"));
            }
        }
        assert_eq!(r.to_value().as_object().map(Map::len), Some(3));
    }
    assert_eq!(
        detect_incomplete_tail(messages),
        report,
        "not deterministic"
    );
    assert!(apply_tail_recovery(messages, RecoveryChoice::Keep) == messages);
    let fresh = recovery_indexes(messages, RecoveryChoice::Fresh);
    assert!(fresh.len() <= 1);
    if let Some(&i) = fresh.first() {
        assert_eq!(i, 0);
        assert_eq!(messages.first().and_then(role), Some("system"));
    }
    let kept = recovery_indexes(messages, RecoveryChoice::Drop);
    let tail_len = report.as_ref().map_or(0, |r| r.tail_indexes.len());
    assert_eq!(kept.len() + tail_len, n);
    assert!(kept.windows(2).all(|w| w[0] < w[1]));
    let applied = apply_tail_recovery(messages, RecoveryChoice::Drop);
    assert_eq!(applied.len(), kept.len());
    for (a, &i) in applied.iter().zip(&kept) {
        assert!(Some(a) == messages.get(i));
    }
    for c in [
        RecoveryChoice::Drop,
        RecoveryChoice::Keep,
        RecoveryChoice::Fresh,
    ] {
        assert_eq!(c.as_str().parse::<RecoveryChoice>(), Ok(c));
    }
}

/// The tail case's manifest: the messages themselves.
pub struct TailCase(pub Vec<OwnedValue>);

impl Manifest for TailCase {
    fn to_manifest(&self) -> OwnedValue {
        OwnedValue::Array(self.0.clone())
    }
    fn from_manifest(v: &OwnedValue) -> Option<Self> {
        Some(TailCase(v.as_array()?.clone()))
    }
}

// ---------------------------------------------------------------- fs_safe_name

/// Whether `name` is already a legal component by the rules of
/// `fs_safe_name` (and not a Windows device name).
fn legal_name(name: &str) -> bool {
    const DEVICES: &[&str] = &[
        "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
        "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
    ];
    let stem = name.split('.').next().unwrap_or(name).to_lowercase();
    !name.is_empty()
        && !name.contains(['/', '\\', ':', '*', '?', '"', '<', '>', '|'])
        && !name.chars().any(|c| (c as u32) < 32)
        && !name.ends_with(['.', ' '])
        && !name.starts_with(char::is_whitespace)
        && !name.ends_with(char::is_whitespace)
        && !DEVICES.contains(&stem.as_str())
}

/// `fs_safe_name`: idempotent, its output one usable path component, and
/// the identity on names that already are one.
pub fn fs_safe(data: &[u8]) {
    let name = String::from_utf8_lossy(data);
    let safe = fs_safe_name(&name);
    assert_eq!(fs_safe_name(&safe), safe, "not idempotent on {name:?}");
    assert!(!safe.is_empty());
    assert!(!safe.contains(['/', '\\']), "{safe:?}");
    assert!(safe != "." && safe != "..");
    assert!(!safe.ends_with(['.', ' ']), "{safe:?}");
    // No leading or trailing white space (Python's `str.isspace` adds
    // U+001C..U+001F to Unicode's White_Space; those are controls, mapped
    // to `_` anyway).
    assert!(!safe.starts_with(char::is_whitespace), "{safe:?}");
    assert!(!safe.ends_with(char::is_whitespace), "{safe:?}");
    // ASCII control characters (below 32, as the reference maps them; DEL is
    // kept, as the reference keeps it) and Windows' reserved characters are
    // gone.
    assert!(!safe.chars().any(|c| (c as u32) < 32), "{safe:?}");
    assert!(
        !safe.contains([':', '*', '?', '"', '<', '>', '|']),
        "{safe:?}"
    );
    let mut comps = Path::new(&safe).components();
    assert!(
        matches!(comps.next(), Some(Component::Normal(_))),
        "{safe:?}"
    );
    assert!(comps.next().is_none(), "{safe:?}");
    if legal_name(&name) {
        assert_eq!(safe, name, "a legal name changed");
    }
    let store = SessionStore::new("/root-of-store");
    let dir = store.session_dir(&name);
    assert_eq!(dir.parent(), Some(Path::new("/root-of-store")), "{dir:?}");
}

// ---------------------------------------------------------------- occhat

/// An OC Chat session directory's two records, as bytes.
#[derive(Debug, Clone)]
pub struct OcChatCase {
    /// The meta file.
    pub meta: Vec<u8>,
    /// The chat log, if any.
    pub log: Option<Vec<u8>>,
}

impl Manifest for OcChatCase {
    fn to_manifest(&self) -> OwnedValue {
        obj(vec![
            ("meta", hex(&self.meta)),
            ("log", opt(&self.log, |l| hex(l))),
        ])
    }
    fn from_manifest(v: &OwnedValue) -> Option<Self> {
        Some(OcChatCase {
            meta: unhex(v.get("meta")?)?,
            log: match v.get("log")? {
                OwnedValue::Null => None,
                l => Some(unhex(l)?),
            },
        })
    }
}

/// Whether a record's bytes parse as JSON (a leading byte-order mark
/// stripped, as OC Chat strips it), and whether that is an object.
fn record_parses(bytes: &[u8]) -> Option<bool> {
    let body = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    Parser::new()
        .parse(body)
        .ok()
        .map(|d| d.root().as_object().is_some())
}

/// The clock's time in the check: 2025-06-15 15:06:40 UTC.
const NOW_NS: u64 = 1_750_000_000_000_000_000;
const NOW_COMPACT: &str = "20250615_150640";

/// OC Chat's records: a session directory holding them lists, loads and
/// validates without a panic, consistently; a session that loads saves and
/// loads back to the same session (every member kept).
pub fn occhat(case: &OcChatCase) {
    let scratch = Scratch::new("occhat");
    let root = scratch.path();
    let sdir = root.join("s");
    std::fs::create_dir_all(&sdir).expect("session dir");
    std::fs::write(sdir.join("s_2024-01-01--00-00-00_meta.json"), &case.meta).expect("meta");
    if let Some(l) = &case.log {
        std::fs::write(sdir.join("s_2024-01-01--00-00-00_chat_log.json"), l).expect("log");
    }
    let store = SessionStore::new(root)
        .with_clock(Arc::new(ManualClock::at_unix_nanos(NOW_NS)))
        .with_time_zone(TimeZone::utc());

    let list = store.list_sessions();
    assert_eq!(list.sessions.len() + list.skipped.len(), 1);
    let meta_ok = record_parses(&case.meta);
    assert_eq!(list.sessions.len() == 1, meta_ok == Some(true), "{list:?}");
    let _ = list.to_value();
    let _ = store.read_crash_signal();
    assert!(store.session_exists("s"));
    let loaded = store.load_session_metadata("s");
    assert_eq!(loaded.is_ok(), meta_ok.is_some(), "{loaded:?}");
    if let Some(l) = &case.log {
        let chat = store.load_chat_log("s");
        assert_eq!(chat.is_ok(), record_parses(l).is_some());
        if let Ok(c) = &chat {
            tail(c.messages());
        }
    }
    let Ok(session) = store.load_session("s") else {
        assert!(meta_ok.is_none());
        return;
    };
    assert_eq!(
        session.load_failed,
        case.log
            .as_deref()
            .is_some_and(|l| record_parses(l).is_none())
    );
    let _ = occhat::export_markdown_text(&session, "2025-06-15 15:06");
    // Converted to ASF: the same property as a conversation's
    // ([`converts`]), its report a row per message.
    match agentlog::convert::occhat::convert(&session) {
        Ok(done) => {
            let read = agentlog::asf::Session::read(&done.bytes).expect("a converted file reads");
            let problems = read.verify();
            assert!(problems.is_empty(), "the converted session: {problems:?}");
            assert_eq!(
                done.report.len(),
                session.messages.len(),
                "every message reported"
            );
            let again = agentlog::convert::occhat::convert(&session).expect("converts again");
            assert!(again.bytes == done.bytes, "converting twice differs");
        }
        Err(agentlog::convert::ConvertError::Source(_)) => {}
        Err(e) => panic!("the conversion failed: {e}"),
    }
    // The HTML export exists with agentlog's `html` feature (the fuzz
    // crate has a feature of the same name, on by default, enabling it).
    #[cfg(feature = "html")]
    let _ = occhat::render_html(&session);

    let mut saved: ChatSession = session.clone();
    if fs_safe_name(&saved.name).len() > 120 {
        // Too long for a file name with its stamp: an I/O error, not ours.
        return;
    }
    let report = store.save_all(&mut saved).expect("the save succeeds");
    assert_eq!(report.refused.is_some(), report.chat_log.is_none());
    let path = report.meta.to_str().expect("a UTF-8 path").to_owned();
    let mut back = store.load_session(&path).expect("what was saved loads");
    let mut want = saved.clone();
    if want.created.is_none() {
        want.created = Some(NOW_COMPACT.to_owned());
    }
    let n = want.cache_turn_snapshots.len();
    want.cache_turn_snapshots.drain(..n.saturating_sub(30));
    if report.refused.is_some() {
        // The chat log on disk was kept, not rewritten.
        back.messages = want.messages.clone();
        back.chat_log_extra = want.chat_log_extra.clone();
        back.load_failed = want.load_failed;
    }
    want.filepath = back.filepath.clone();
    want.dirty = back.dirty;
    assert_eq!(back, want, "load, save, load changed the session");
}

// ---------------------------------------------------------------- occhat_text

/// The largest offset from UTC a zone may give, in seconds either way:
/// 25:59:59, RFC 8536's bound for a TZif file's `utoff` (and the POSIX `TZ`
/// rule's hours fit inside it).
pub const MAX_OFFSET: i32 = 25 * 3600 + 59 * 60 + 59;

/// Days from 1970-01-01 to a proleptic Gregorian date (test-side, written
/// independently of the crate's own calendar code).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// One zone at one instant: the offset is within [`MAX_OFFSET`], the local
/// date and time is a real one, and (where the local time is representable)
/// the local time minus the offset is the instant.
pub fn zone_at(tz: &TimeZone, t: i64) {
    let offset = tz.offset_at(t);
    assert!(
        offset.abs() <= MAX_OFFSET,
        "offset {offset} s at {t} is beyond ±25:59:59"
    );
    let local = tz.local_time(t);
    assert!((1..=12).contains(&local.month), "{local:?}");
    assert!((1..=31).contains(&local.day), "{local:?}");
    assert!(
        local.hour < 24 && local.minute < 60 && local.second < 60,
        "{local:?}"
    );
    // The civil range the zone code writes (years -9999 to 9999, jiff's):
    // a local time past it is written as its end (Python formats none of
    // them), so the identity holds inside it.
    let civil_min = i128::from(days_from_civil(-9999, 1, 1)) * 86_400;
    let civil_max = i128::from(days_from_civil(9999, 12, 31)) * 86_400 + 86_399;
    let wall = i128::from(t) + i128::from(offset);
    if (civil_min..=civil_max).contains(&wall) {
        // In i128: a day's start can lie before `i64::MIN`.
        let local_secs = i128::from(days_from_civil(local.year, local.month, local.day)) * 86_400
            + i128::from(local.hour * 3600 + local.minute * 60 + local.second);
        assert_eq!(
            local_secs - i128::from(offset),
            i128::from(t),
            "local time {local:?} minus offset {offset} is not the instant"
        );
    }
}

/// The instants every zone is checked at: the ends of time, the epoch, DST
/// changes of recent years, and one read from the input's last eight bytes.
fn instants(data: &[u8]) -> Vec<i64> {
    let mut v = vec![
        i64::MIN,
        -1,
        0,
        1,
        1_700_000_000,
        1_743_296_400, // 2025-03-30 01:00 UTC (EU summer time starts)
        1_761_440_400, // 2025-10-26 01:00 UTC (EU summer time ends)
        4_102_444_800,
        i64::MAX,
    ];
    if let Some(tail) = data.len().checked_sub(8).and_then(|at| data.get(at..)) {
        v.push(i64::from_be_bytes(tail.try_into().expect("eight bytes")));
    }
    v
}

/// OC Chat's text producers and time readers on arbitrary bytes: the bytes
/// as a TZif file, and as a POSIX `TZ` rule, give zones that pass
/// [`zone_at`] at every instant of [`instants`]; the bytes as JSON taken as
/// a session's meta, chat log and messages go through both exports, and the
/// HTML one never carries a script. Returns how many zones were read.
pub fn occhat_text(data: &[u8]) -> usize {
    let mut zones = 0;
    let text = String::from_utf8_lossy(data);
    for tz in [TimeZone::from_tzif(data), TimeZone::from_posix(&text)]
        .into_iter()
        .flatten()
    {
        zones += 1;
        for t in instants(data) {
            zone_at(&tz, t);
        }
    }
    let Ok(value) = OwnedValue::parse(data) else {
        return zones;
    };
    let mut session = ChatSession::from_records(&value, Some(&value));
    if let Some(messages) = value.as_array() {
        session.messages = messages.clone();
    }
    let _ = occhat::export_markdown_text(&session, "20250101_000000");
    #[cfg(feature = "html")]
    assert!(!occhat::render_html(&session).contains("<script"));
    zones
}
