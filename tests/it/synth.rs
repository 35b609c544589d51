//! The synthetic store generator: determinism, validity of every file,
//! and the shapes the readers rely on.

use agentlog::json::{Parser, Value};
use agentlog::synth::{GenConfig, GenError, Generator, SdkStyle, write_store};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Every file under `root`: relative `/`-separated path → bytes.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("list dir")
            .map(|e| e.expect("dir entry").path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .expect("under root")
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                out.insert(rel, std::fs::read(&p).expect("read file"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn config() -> GenConfig {
    GenConfig {
        conversations: 14,
        events_per_conversation: 120,
        seed: 7,
        style: SdkStyle::Mixed,
        subagent_ratio: 0.5,
        condenser_ratio: 0.5,
        confirm_ratio: 0.4,
        branch_ratio: 0.6,
        meta_ratio: 0.5,
        content_scale: 1.0,
        length_spread: 0.0,
        threads: 2,
    }
}

fn generated(cfg: &GenConfig) -> (tempfile::TempDir, BTreeMap<String, Vec<u8>>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let summary = write_store(dir.path(), cfg).expect("write store");
    let files = tree(dir.path());
    assert_eq!(summary.files as usize, files.len());
    assert_eq!(
        summary.bytes,
        files.values().map(|b| b.len() as u64).sum::<u64>()
    );
    assert_eq!(summary.conversations as usize, cfg.conversations);
    assert_eq!(
        summary.events as usize,
        cfg.conversations * cfg.events_per_conversation
    );
    (dir, files)
}

#[test]
fn same_seed_same_bytes_whatever_the_threads() {
    let mut cfg = config();
    let (_a, first) = generated(&cfg);
    cfg.threads = 1;
    let (_b, second) = generated(&cfg);
    assert_eq!(first.len(), second.len());
    for (path, bytes) in &first {
        assert!(second.get(path) == Some(bytes), "{path} differs");
    }
    // The in-memory generator writes the same files.
    let generator = Generator::new(cfg.clone()).expect("generator");
    let mut mem = BTreeMap::new();
    for i in 0..cfg.conversations {
        for f in generator.conversation_files(i).expect("in memory") {
            mem.insert(f.path, f.bytes);
        }
    }
    assert_eq!(mem, first);
    // Another seed, other bytes.
    cfg.seed = 8;
    let (_c, third) = generated(&cfg);
    let common = first
        .iter()
        .filter(|(p, b)| third.get(*p) == Some(*b))
        .count();
    assert_eq!(common, 0, "a different seed must change every file");
}

/// `content_scale` changes the text, never the structure: the same seed
/// gives the same files (names, ids) and the same kinds in each.
#[test]
fn content_scale_keeps_the_structure() {
    let small = GenConfig {
        conversations: 4,
        events_per_conversation: 80,
        content_scale: 0.5,
        ..config()
    };
    let large = GenConfig {
        content_scale: 8.0,
        ..small.clone()
    };
    let (_a, a) = generated(&small);
    let (_b, b) = generated(&large);
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    let kind = |bytes: &[u8]| {
        let mut p = Parser::new();
        let doc = p.parse(bytes).expect("parses");
        s(doc.root().get("kind")).to_string()
    };
    let (mut sa, mut sb) = (0, 0);
    for (path, x) in &a {
        let y = &b[path];
        if path.contains("/events/event-") {
            assert_eq!(kind(x), kind(y), "{path}");
            if !path.contains("/events/event-00000-") {
                sa += x.len();
                sb += y.len();
            }
        }
    }
    // Envelopes (ids, paths, metadata) do not grow; the text in them does.
    assert!(
        sb * 2 > sa * 3,
        "scale 8 should write much more than scale 0.5: {sa} vs {sb}"
    );
}

#[test]
fn refuses_a_non_empty_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("keep.txt"), b"precious").expect("write");
    let cfg = GenConfig {
        conversations: 1,
        events_per_conversation: 5,
        ..GenConfig::default()
    };
    match write_store(dir.path(), &cfg) {
        Err(GenError::NotEmpty { path }) => assert_eq!(path, dir.path()),
        other => panic!("expected NotEmpty, got {other:?}"),
    }
    assert_eq!(
        std::fs::read(dir.path().join("keep.txt")).expect("read"),
        b"precious"
    );
    let bad = GenConfig {
        subagent_ratio: 1.5,
        ..cfg
    };
    assert!(matches!(Generator::new(bad), Err(GenError::Config(_))));
}

fn is_hex32(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.bytes().enumerate().all(|(i, b)| {
            if [8, 13, 18, 23].contains(&i) {
                b == b'-'
            } else {
                b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
            }
        })
}

fn s<'a>(v: Option<Value<'a>>) -> &'a str {
    v.and_then(|v| v.as_str()).unwrap_or("")
}

/// What one event file holds that the checks need.
#[derive(Debug, Clone)]
struct Ev {
    id: String,
    kind: String,
    parent: Option<String>,
    tool_call_id: String,
    action_id: String,
    llm_response_id: String,
    has_action: bool,
    thought_len: usize,
    forgotten: Vec<String>,
    raw_start: Vec<u8>,
    raw_end: Vec<u8>,
    size: usize,
}

#[test]
fn every_file_parses_and_shapes_hold() {
    let cfg = config();
    let (_dir, files) = generated(&cfg);
    let mut parser = Parser::new();

    // Group files by conversation directory.
    let mut convs: BTreeMap<String, Vec<(&str, &[u8])>> = BTreeMap::new();
    for (path, bytes) in &files {
        let (conv, rest) = match path.find("/events/") {
            Some(i) => (&path[..i], &path[i + 1..]),
            None => match path.rfind('/') {
                Some(i) => (&path[..i], &path[i + 1..]),
                None => panic!("file at the store root: {path}"),
            },
        };
        convs
            .entry(conv.to_string())
            .or_default()
            .push((rest, bytes.as_slice()));
    }

    let mut kinds: HashMap<String, usize> = HashMap::new();
    let mut obs_kinds: HashSet<String> = HashSet::new();
    let mut styles = HashSet::new();
    let mut top_level = 0;
    let mut subagent_dirs = 0;
    let mut parallel_responses = 0;
    let mut branched = 0;
    let mut summary_refs = 0;
    let mut metas = 0;

    for (conv, conv_files) in &convs {
        let name = conv.rsplit('/').next().unwrap_or("");
        assert!(
            is_hex32(name),
            "{conv}: directory not named by 32 hex digits"
        );
        let is_sub = conv.contains("/subagents/");
        if is_sub {
            subagent_dirs += 1;
        } else {
            top_level += 1;
        }

        // Every file parses; sidecars are empty.
        let mut events: Vec<(usize, String, Ev)> = Vec::new();
        let mut base_state = None;
        let mut sidecars = Vec::new();
        for &(rel, bytes) in conv_files {
            if let Some(side) = rel.strip_prefix("events/.") {
                assert!(bytes.is_empty(), "{conv}/{rel}: sidecar not empty");
                sidecars.push(side.to_string());
                continue;
            }
            let doc = parser
                .parse(bytes)
                .unwrap_or_else(|e| panic!("{conv}/{rel}: {e}"));
            let root = doc.root();
            if rel == "base_state.json" {
                base_state = Some(bytes);
                continue;
            }
            if rel == "meta.json" {
                metas += 1;
                assert_eq!(s(root.get("id")), name);
                continue;
            }
            if rel == "TASKS.json" {
                let tasks = root.as_array().expect("TASKS.json is a list");
                assert!(!tasks.is_empty());
                continue;
            }
            let fname = rel.strip_prefix("events/").expect("an event file");
            let stem = fname
                .strip_prefix("event-")
                .and_then(|f| f.strip_suffix(".json"))
                .unwrap_or_else(|| panic!("{conv}/{rel}: unexpected file"));
            let (idx, fid) = stem.split_at(5);
            let idx: usize = idx.parse().expect("five-digit index");
            let fid = fid.strip_prefix('-').expect("dash").to_string();
            assert!(is_uuid(&fid), "{rel}: file id is not a uuid");
            let thought_len = root
                .get("thought")
                .and_then(|t| t.as_array())
                .map(|a| a.len())
                .unwrap_or(0);
            let forgotten = root
                .get("forgotten_event_ids")
                .and_then(|f| f.as_array())
                .map(|a| a.iter().map(|v| s(Some(v)).to_string()).collect())
                .unwrap_or_default();
            if let Some(tc) = root.get("tool_call") {
                let args = s(tc.get("arguments"));
                if root.get("action").is_some() {
                    let mut p2 = Parser::new();
                    let a = p2
                        .parse(args.as_bytes())
                        .unwrap_or_else(|e| panic!("{rel}: arguments: {e}"));
                    assert!(a.root().as_object().is_some());
                }
            }
            if let Some(o) = root.get("observation") {
                obs_kinds.insert(s(o.get("kind")).to_string());
            }
            let ev = Ev {
                id: s(root.get("id")).to_string(),
                kind: s(root.get("kind")).to_string(),
                parent: root.get("parent_id").map(|p| s(Some(p)).to_string()),
                tool_call_id: s(root.get("tool_call_id")).to_string(),
                action_id: s(root.get("action_id")).to_string(),
                llm_response_id: s(root.get("llm_response_id")).to_string(),
                has_action: root.get("action").is_some(),
                thought_len,
                forgotten,
                raw_start: bytes[..bytes.len().min(12)].to_vec(),
                raw_end: bytes[bytes.len().saturating_sub(40)..].to_vec(),
                size: bytes.len(),
            };
            assert_eq!(ev.id, fid, "{rel}: file id differs from the JSON id");
            events.push((idx, fid, ev));
        }
        events.sort_by_key(|e| e.0);

        // Index sequence 0..n, unique ids.
        for (i, (idx, _, _)) in events.iter().enumerate() {
            assert_eq!(*idx, i, "{conv}: index gap");
        }
        let ids: HashSet<&str> = events.iter().map(|e| e.1.as_str()).collect();
        assert_eq!(ids.len(), events.len(), "{conv}: duplicate event ids");
        if !is_sub {
            assert_eq!(events.len(), cfg.events_per_conversation, "{conv}");
        } else {
            assert!((6..=16).contains(&events.len()), "{conv}: {}", events.len());
        }

        let evs: Vec<&Ev> = events.iter().map(|e| &e.2).collect();
        let first = evs.first().expect("at least one event");
        assert_eq!(first.kind, "SystemPromptEvent");
        assert!(
            (18_000..40_000).contains(&first.size),
            "system prompt of {} bytes",
            first.size
        );

        // SdkStyle: 1.58 (kind last, parent chain) or 1.0 (kind first).
        let legacy = first.raw_start.starts_with(b"{\"kind\": ");
        styles.insert(legacy);
        for e in &evs {
            *kinds.entry(e.kind.clone()).or_default() += 1;
            if legacy {
                assert!(
                    e.raw_start.starts_with(b"{\"kind\": \""),
                    "{conv}: {}",
                    e.id
                );
                assert!(e.parent.is_none());
            } else {
                let tail = format!("\"kind\":\"{}\"}}", e.kind);
                assert!(e.raw_end.ends_with(tail.as_bytes()), "{conv}: {}", e.id);
            }
        }

        // Parents: absent on the root, else an earlier event. A parent
        // other than the previous event is a navigate_to branch.
        let pos: HashMap<&str, usize> = evs
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id.as_str(), i))
            .collect();
        if !legacy {
            assert!(first.parent.is_none());
            for (i, e) in evs.iter().enumerate().skip(1) {
                let p = e.parent.as_deref().expect("parent_id after the root");
                let at = *pos.get(p).expect("parent exists");
                assert!(at < i);
                if at + 1 != i {
                    branched += 1;
                }
            }
        }

        // Observations answer an earlier action with the same call id.
        for (i, e) in evs.iter().enumerate() {
            if e.kind == "ObservationEvent" || e.kind == "UserRejectObservation" {
                let at = *pos.get(e.action_id.as_str()).expect("action exists");
                assert!(at < i);
                assert_eq!(evs[at].kind, "ActionEvent");
                assert_eq!(evs[at].tool_call_id, e.tool_call_id);
            }
            if e.kind == "AgentErrorEvent" {
                assert!(i > 0 && !evs[i - 1].has_action);
                assert_eq!(evs[i - 1].tool_call_id, e.tool_call_id);
            }
            if e.kind == "Condensation" {
                assert!(!e.forgotten.is_empty());
                for f in &e.forgotten {
                    let base = f.strip_suffix("-summary");
                    if let Some(b) = base {
                        summary_refs += 1;
                        let at = *pos.get(b).expect("summarised condensation exists");
                        assert_eq!(evs[at].kind, "Condensation");
                        assert!(at < i);
                    } else {
                        assert!(*pos.get(f.as_str()).expect("forgotten event exists") < i);
                    }
                }
            }
        }

        // Parallel calls share a response id; only the first has a thought.
        let mut by_rid: HashMap<&str, Vec<&Ev>> = HashMap::new();
        for e in evs.iter().filter(|e| e.kind == "ActionEvent") {
            by_rid.entry(&e.llm_response_id).or_default().push(e);
        }
        for group in by_rid.values().filter(|g| g.len() > 1) {
            parallel_responses += 1;
            for e in &group[1..] {
                assert_eq!(
                    e.thought_len, 0,
                    "{conv}: a later parallel call has a thought"
                );
            }
        }

        // base_state.json: id, leaf, metrics naming every response.
        let bs = base_state.unwrap_or_else(|| panic!("{conv}: no base_state.json"));
        let doc = parser.parse(bs).expect("base_state parses");
        let root = doc.root();
        assert_eq!(s(root.get("id")).replace('-', ""), name);
        let metrics = root
            .get("stats")
            .and_then(|s| s.get("usage_to_metrics"))
            .and_then(|m| m.get("agent"))
            .expect("agent metrics");
        let usage_ids: HashSet<&str> = metrics
            .get("token_usages")
            .and_then(|t| t.as_array())
            .expect("token_usages")
            .iter()
            .map(|u| s(u.get("response_id")))
            .collect();
        for rid in by_rid.keys() {
            assert!(
                usage_ids.contains(rid),
                "{conv}: response {rid} has no usage"
            );
        }
        assert!(
            metrics
                .get("accumulated_cost")
                .and_then(|c| c.as_f64())
                .unwrap_or(0.0)
                > 0.0
        );
        if !legacy {
            let leaf = s(root.get("leaf_event_id"));
            assert_eq!(leaf, evs.last().map(|e| e.id.as_str()).unwrap_or(""));
            let marker = format!("eventlog-len-{}.marker", evs.len());
            assert!(sidecars.contains(&marker), "{conv}: {sidecars:?}");
            assert!(sidecars.contains(&"eventlog.lock".to_string()), "{conv}");
        } else {
            assert!(sidecars.is_empty());
        }
        if is_sub {
            let parent = conv.split("/subagents/").next().unwrap_or("");
            let pbs = files
                .get(&format!("{parent}/base_state.json"))
                .expect("parent base_state");
            let text = std::str::from_utf8(pbs).expect("utf-8");
            assert!(text.contains("\"task:task_00000001\""));
        }
    }

    assert_eq!(top_level, cfg.conversations);
    assert!(subagent_dirs > 0, "no sub-agent directory");
    assert!(parallel_responses > 0, "no parallel tool calls");
    assert!(branched > 0, "no navigate_to branch");
    assert!(
        summary_refs > 0,
        "no condensation forgets an earlier summary"
    );
    assert!(metas > 0, "no meta.json");
    assert_eq!(styles.len(), 2, "mixed style gives both spellings");
    for k in [
        "SystemPromptEvent",
        "MessageEvent",
        "ActionEvent",
        "ObservationEvent",
        "AgentErrorEvent",
        "UserRejectObservation",
        "Condensation",
        "PauseEvent",
    ] {
        assert!(kinds.contains_key(k), "no {k} in {kinds:?}");
    }
    for k in [
        "TerminalObservation",
        "ExecuteBashObservation",
        "FileEditorObservation",
        "TaskTrackerObservation",
        "ThinkObservation",
        "FinishObservation",
        "TaskObservation",
    ] {
        assert!(obs_kinds.contains(k), "no {k} in {obs_kinds:?}");
    }
    // Actions and observations dominate, as in real conversations.
    let total: usize = kinds.values().sum();
    let acts = kinds.get("ActionEvent").copied().unwrap_or(0);
    let obs = kinds.get("ObservationEvent").copied().unwrap_or(0);
    assert!(
        acts * 100 / total >= 30 && obs * 100 / total >= 30,
        "{kinds:?}"
    );
}

/// The bundled sample store is this generator's output for the command in
/// `examples/README.md`: regenerating it gives the same bytes.
#[test]
fn bundled_sample_is_reproducible() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/store");
    let cfg = sample_config();
    let dir = tempfile::tempdir().expect("tempdir");
    write_store(dir.path(), &cfg).expect("write");
    let want = tree(dir.path());
    let have = tree(&sample);
    let regenerate = "regenerate examples/store with the command in examples/README.md";
    for p in want.keys() {
        assert!(
            have.contains_key(p),
            "examples/store lacks {p}: {regenerate}"
        );
    }
    for (p, b) in &have {
        assert!(
            want.get(p) == Some(b),
            "examples/store/{p} is not what the generator writes: {regenerate}"
        );
    }
    let total: usize = have.values().map(Vec::len).sum();
    assert!(total < 300_000, "sample is {total} bytes");
}

/// Keep in sync with `examples/README.md`.
fn sample_config() -> GenConfig {
    GenConfig {
        conversations: 3,
        events_per_conversation: 30,
        seed: SAMPLE_SEED,
        style: SdkStyle::Mixed,
        subagent_ratio: 0.34,
        content_scale: 0.5,
        ..GenConfig::default()
    }
}

const SAMPLE_SEED: u64 = 41;

/// The crate's own OpenHands reader and view read every generated
/// conversation without a file error or a view issue, decoding every event
/// and encoding it back to the same JSON value.
#[test]
fn the_openhands_reader_reads_it() {
    use agentlog::json::OwnedValue;
    use agentlog::openhands::view::{EventInput, Sidecars, View, ViewInput, ViewOptions};
    use agentlog::openhands::{find_sessions, read_conversation};

    let cfg = config();
    let (dir, files) = generated(&cfg);
    let sessions = find_sessions(dir.path()).expect("find sessions");
    assert_eq!(sessions.len(), cfg.conversations);

    let mut dirs: Vec<PathBuf> = Vec::new();
    for s in &sessions {
        let conv = read_conversation(s).expect("read");
        dirs.extend(conv.subagent_dirs());
        dirs.push(s.clone());
    }
    let subagents = dirs.len() - sessions.len();
    assert!(subagents > 0);

    let mut parser = Parser::new();
    let mut branched = 0;
    let mut legacy_seen = 0;
    for d in &dirs {
        let conv = read_conversation(d).expect("read");
        assert!(
            conv.state().and_then(|f| f.error()).is_none(),
            "{}",
            d.display()
        );
        assert!(
            conv.meta().and_then(|f| f.error()).is_none(),
            "{}",
            d.display()
        );
        assert!(conv.events_error().is_none(), "{}", d.display());
        assert_eq!(conv.len(), conv.event_file_count(), "{}", d.display());
        let on_disk = files
            .keys()
            .filter(|p| {
                p.strip_prefix(&format!("{}/events/event-", rel(dir.path(), d)))
                    .is_some()
            })
            .count();
        assert_eq!(conv.len(), on_disk, "{}", d.display());

        let mut inputs = Vec::new();
        for ev in conv.events() {
            assert!(ev.is_ok(), "{:?}", ev);
            let original = OwnedValue::parse(ev.raw()).expect("owned parse");
            let doc = ev.open(&mut parser).expect("open");
            let encoded = match ev.kind_name().unwrap_or("") {
                "ActionEvent" => doc.action().to_json(),
                "ObservationEvent" => doc.observation().to_json(),
                "MessageEvent" => doc.message().to_json(),
                "AgentErrorEvent" => doc.agent_error().to_json(),
                "Condensation" => doc.condensation().to_json(),
                "SystemPromptEvent" => doc.system_prompt().to_json(),
                "UserRejectObservation" => doc.user_reject().to_json(),
                _ => ev.raw().to_vec(),
            };
            let again = OwnedValue::parse(&encoded).expect("re-encoded parses");
            assert!(again == original, "{:?} does not round-trip", ev);
            inputs.push((ev.index() as usize, ev.file_id().to_string(), ev.raw()));
        }
        let sidecars = Sidecars {
            eventlog_lock: conv.sidecars().iter().any(|s| s == ".eventlog.lock"),
            length_marker: conv
                .sidecars()
                .iter()
                .any(|s| s.starts_with(".eventlog-len-")),
        };
        let input = ViewInput {
            events: inputs
                .iter()
                .map(|(index, id, raw)| EventInput {
                    index: *index,
                    file_id: id,
                    raw,
                })
                .collect(),
            base_state: conv.state().map(|f| f.raw()),
            sidecars: Some(sidecars),
        };
        let view = View::build(&input, &ViewOptions::default());
        assert!(
            view.issues().is_empty(),
            "{}: {:?}",
            d.display(),
            view.issues()
        );
        assert!(!view.messages().is_empty());
        let detected = view.version();
        let legacy = inputs
            .first()
            .is_some_and(|(_, _, raw)| raw.starts_with(b"{\"kind\": "));
        if legacy {
            legacy_seen += 1;
            assert!(
                detected.min.minor < 7,
                "{}: 1.0 spelling read as {:?}",
                d.display(),
                detected
            );
        } else {
            assert!(
                detected.min.minor >= 45,
                "{}: 1.58 spelling read as {:?}",
                d.display(),
                detected
            );
            if view.active_branch_ids().len() < conv.len() {
                branched += 1;
            }
        }
    }
    assert!(legacy_seen > 0);
    assert!(branched > 0, "no conversation with an abandoned branch");
}

/// `d` relative to `root`, `/`-separated.
fn rel(root: &Path, d: &Path) -> String {
    d.strip_prefix(root)
        .expect("under root")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}
