//! `agentlog::search`: needles placed in SDK-written conversations are
//! found exactly where they are, with the flags the corpus oracles give
//! (active branch, view); an index kept up to date through changes equals
//! one made fresh; the index directory's rules (links, foreign
//! directories, damaged checkpoints).

pub(crate) mod incremental;

use std::fs;
use std::path::{Path, PathBuf};

use agentlog::search::{Branch, DocKind, Hit, Query, SearchIndex, StoreKind};
use serde_json::Value;

use crate::common;

/// The SDK 1.58.2 corpus (conversations with condensations, forks,
/// sub-agents) copied under `to`.
pub(super) fn corpus_store(to: &Path) -> PathBuf {
    let store = to.join("store");
    common::copy_tree(&common::corpus_dir().join("openhands/1.58.2"), &store);
    store
}

/// What an oracle says of one conversation: active branch ids, view ids,
/// events as (index, id, kind).
type Oracle = (Vec<String>, Vec<String>, Vec<(u64, String, String)>);

/// The oracle of scenario `scenario`'s conversation `id`.
fn oracle(scenario: &str, id: &str) -> Oracle {
    let o: Value = serde_json::from_slice(
        &fs::read(common::corpus_dir().join(format!("openhands/1.58.2/{scenario}.oracle.json")))
            .unwrap(),
    )
    .unwrap();
    let c = o["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["path"] == id)
        .unwrap_or_else(|| panic!("{scenario}/{id} not in the oracle"));
    let strs = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_owned())
            .collect()
    };
    let events = c["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e[0].as_u64().unwrap(),
                e[1].as_str().unwrap().to_owned(),
                e[2].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (
        strs(&c["active_branch"]),
        strs(&c["view_event_ids"]),
        events,
    )
}

/// Appends ` token` to the first text of event `index` of the conversation
/// `dir` (a message's or an observation's content).
fn plant(dir: &Path, index: u64, token: &str) {
    let prefix = format!("event-{index:05}-");
    let file = fs::read_dir(dir.join("events"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .unwrap()
        .path();
    let mut v: Value = serde_json::from_slice(&fs::read(&file).unwrap()).unwrap();
    let content = if v.get("llm_message").is_some() {
        &mut v["llm_message"]["content"][0]["text"]
    } else {
        &mut v["observation"]["content"][0]["text"]
    };
    let t = format!("{} {token}", content.as_str().unwrap());
    *content = Value::String(t);
    fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
}

fn search(ix: &SearchIndex, q: &str, branch: Branch) -> Vec<Hit> {
    let mut query = Query::new(q);
    query.branch = branch;
    query.limit = 100;
    ix.search(&query).unwrap()
}

/// One needle per case: (scenario, conversation, event index, token).
const NEEDLES: [(&str, &str, u64, &str); 3] = [
    // An agent message on the active branch, in the context.
    (
        "condense",
        "d3227a9924cb4806b1a80dd16d2c0060",
        51,
        "zqxplainneedle",
    ),
    // An observation a condensation forgot: on the branch, not in the context.
    (
        "condense",
        "d3227a9924cb4806b1a80dd16d2c0060",
        3,
        "zqxcondensedneedle",
    ),
    // An observation on the branch the fork abandoned.
    (
        "fork",
        "4274eb05d7bd4da595fa14dd90c7ab22",
        3,
        "zqxabandonedneedle",
    ),
];

#[test]
fn needles_are_found_exactly_there_with_the_oracles_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let store = corpus_store(tmp.path());
    for (scenario, id, index, token) in NEEDLES {
        plant(&store.join(scenario).join(id), index, token);
    }
    let mut ix = SearchIndex::open_or_create(tmp.path().join("ix")).unwrap();
    let report = ix.update(&[(StoreKind::OpenHands, store.clone())]).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    for (scenario, id, index, token) in NEEDLES {
        let (active, view, events) = oracle(scenario, id);
        let (_, event_id, kind) = events.iter().find(|e| e.0 == index).unwrap();
        let hits = search(&ix, token, Branch::All);
        assert_eq!(hits.len(), 1, "{token}: {hits:?}");
        let h = &hits[0];
        let dir = fs::canonicalize(store.join(scenario).join(id)).unwrap();
        assert_eq!(Path::new(&h.path), dir, "{token}");
        assert_eq!(h.conversation, id);
        assert_eq!(h.event, index, "{token}");
        assert_eq!(h.event_kind, *kind);
        let want_kind = if kind == "MessageEvent" {
            DocKind::Message
        } else {
            DocKind::Observation
        };
        assert_eq!(h.kind, want_kind, "{token}");
        assert_eq!(h.active, active.contains(event_id), "{token}: active");
        assert_eq!(h.in_context, view.contains(event_id), "{token}: in context");
        assert_eq!(h.model.as_deref(), Some("openai/fake-model"));
        assert!(
            h.highlights
                .iter()
                .any(|r| h.snippet.get(r.clone()) == Some(token)),
            "{token}: the snippet marks it: {h:?}"
        );
        // The active-branch search finds it only when it is on the branch.
        let on_branch = search(&ix, token, Branch::Active);
        assert_eq!(on_branch.len(), usize::from(h.active), "{token}");
    }
    // The cases cover the three combinations of flags.
    let flags: Vec<(bool, bool)> = NEEDLES
        .iter()
        .map(|n| {
            let h = &search(&ix, n.3, Branch::All)[0];
            (h.active, h.in_context)
        })
        .collect();
    assert_eq!(flags, [(true, true), (true, false), (false, false)]);
}

#[test]
fn kind_and_since_filter_the_hits() {
    let tmp = tempfile::tempdir().unwrap();
    let store = corpus_store(tmp.path());
    let mut ix = SearchIndex::open_or_create(tmp.path().join("ix")).unwrap();
    ix.update(&[(StoreKind::OpenHands, store)]).unwrap();
    let mut q = Query::new("terminal");
    q.limit = 1000;
    let all = ix.search(&q).unwrap();
    assert!(all.iter().any(|h| h.kind == DocKind::Action));
    assert!(all.iter().any(|h| h.kind != DocKind::Action));
    q.kind = Some(DocKind::Action);
    let actions = ix.search(&q).unwrap();
    assert!(!actions.is_empty());
    assert!(actions.iter().all(|h| h.kind == DocKind::Action));
    assert!(actions.iter().all(|h| h.tool.is_some()));
    // Every event of the corpus was written on 2026-12-01.
    q.since = agentlog::search::wall_seconds("2026-12-02");
    assert!(ix.search(&q).unwrap().is_empty());
    q.since = agentlog::search::wall_seconds("2026-12-01");
    assert_eq!(ix.search(&q).unwrap().len(), actions.len());
}

/// A first run killed while tantivy wrote the index's first `meta.json`
/// leaves only the temporary file it writes it through, its list of
/// managed files and its lock: the next run makes the index there (a
/// directory of other files is still refused).
#[test]
fn a_first_run_killed_before_its_meta_is_completed() {
    let tmp = tempfile::tempdir().unwrap();
    let ix = tmp.path().join("ix");
    fs::create_dir(&ix).unwrap();
    fs::write(ix.join(".tmpAbC123"), b"{\"index_settings\"").unwrap();
    // Killed a moment later, tantivy's list of managed files and its lock
    // may be there too (seen by killing `index` at 0.5 ms steps).
    fs::write(ix.join(".managed.json"), b"[\".tmpAbC123\"]").unwrap();
    fs::write(ix.join(".tantivy-writer.lock"), b"").unwrap();
    let mut opened = SearchIndex::open_or_create(&ix).unwrap();
    opened.update(&[]).unwrap();
    assert!(ix.join("meta.json").is_file());
    SearchIndex::open(&ix).unwrap().documents().unwrap();
    // A `.tmp…` directory is not such a leftover.
    let other = tmp.path().join("other");
    fs::create_dir_all(other.join(".tmpdir")).unwrap();
    assert!(matches!(
        SearchIndex::open_or_create(&other).unwrap_err(),
        agentlog::search::SearchError::NotAnIndex { .. }
    ));
}

#[test]
fn a_directory_with_a_link_or_of_other_files_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let other = tmp.path().join("other");
    fs::create_dir(&other).unwrap();
    fs::write(other.join("notes.txt"), b"mine").unwrap();
    let e = SearchIndex::open_or_create(&other).unwrap_err();
    assert!(
        matches!(e, agentlog::search::SearchError::NotAnIndex { .. }),
        "{e}"
    );
    assert_eq!(fs::read(other.join("notes.txt")).unwrap(), b"mine");
    assert_eq!(fs::read_dir(&other).unwrap().count(), 1);

    let ix = tmp.path().join("ix");
    SearchIndex::open_or_create(&ix)
        .unwrap()
        .update(&[])
        .unwrap();
    std::os::unix::fs::symlink(&other, ix.join("meta.json.tmp")).unwrap();
    let e = SearchIndex::open_or_create(&ix).unwrap_err();
    assert!(
        matches!(e, agentlog::search::SearchError::Link { .. }),
        "{e}"
    );
    fs::remove_file(ix.join("meta.json.tmp")).unwrap();

    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&ix, &link).unwrap();
    let e = SearchIndex::open_or_create(&link).unwrap_err();
    assert!(
        matches!(e, agentlog::search::SearchError::Link { .. }),
        "{e}"
    );
    assert_eq!(fs::read_dir(&other).unwrap().count(), 1);
}
