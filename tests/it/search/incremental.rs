//! An index kept up to date through changes — events added, a head moved
//! to another branch, a history rewritten, conversations and sessions
//! removed, a checkpoint damaged — holds the documents a fresh index of
//! the store holds, and a pass with nothing changed reads nothing.

use std::fs;
use std::path::Path;

use agentlog::search::{DocEntry, SearchIndex, StoreKind};
use serde_json::Value;

use super::corpus_store;
use crate::common;

const CHAT: &str = "chat/30fde2bf19b240ed98ce033cf244dbbd";
const FORK: &str = "fork/4274eb05d7bd4da595fa14dd90c7ab22";
const CODING: &str = "coding/3e806943a81f4015bf2f5d5b5e0120de";
const SUBAGENT: &str = "subagent/efc6c7902f414ddc83ba8f7ce07d057a";

fn event_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = fs::read_dir(dir.join("events"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("event-")
        })
        .collect();
    v.sort();
    v
}

fn set_leaf(dir: &Path, leaf: &str) {
    let p = dir.join("base_state.json");
    let mut v: Value = serde_json::from_slice(&fs::read(&p).unwrap()).unwrap();
    v["leaf_event_id"] = Value::String(leaf.to_owned());
    fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
}

/// Appends a user message (a copy of the conversation's first one with a
/// new id and text) after the last event, and moves the head to it.
fn add_message(dir: &Path, text: &str) {
    let files = event_files(dir);
    let last: Value = serde_json::from_slice(&fs::read(files.last().unwrap()).unwrap()).unwrap();
    let first_user = files
        .iter()
        .map(|f| serde_json::from_slice::<Value>(&fs::read(f).unwrap()).unwrap())
        .find(|v| v["kind"] == "MessageEvent" && v["source"] == "user")
        .unwrap();
    let mut v = first_user;
    let id = "0000aaaa-1111-4222-8333-444455556666";
    v["id"] = Value::String(id.into());
    v["parent_id"] = last["id"].clone();
    v["llm_message"]["content"][0]["text"] = Value::String(text.into());
    let name = format!("event-{:05}-{id}.json", files.len());
    fs::write(
        dir.join("events").join(name),
        serde_json::to_vec(&v).unwrap(),
    )
    .unwrap();
    set_leaf(dir, id);
}

/// Fails naming the first document that differs (the lists are long).
pub(crate) fn assert_same(ours: &[DocEntry], want: &[DocEntry]) {
    let first = ours.iter().zip(want).position(|(a, b)| a != b);
    assert!(
        ours.len() == want.len() && first.is_none(),
        "{} documents, {} wanted; first difference at {first:?}: {:?} / {:?}",
        ours.len(),
        want.len(),
        first.and_then(|i| ours.get(i)),
        first.and_then(|i| want.get(i)),
    );
}

fn fresh(store: &Path, sessions: &Path, at: &Path) -> Vec<DocEntry> {
    let mut ix = SearchIndex::open_or_create(at).unwrap();
    ix.update(&[
        (StoreKind::OpenHands, store.to_path_buf()),
        (StoreKind::OcChat, sessions.to_path_buf()),
    ])
    .unwrap();
    ix.documents().unwrap()
}

#[test]
fn an_updated_index_equals_a_fresh_one() {
    let tmp = tempfile::tempdir().unwrap();
    let store = corpus_store(tmp.path());
    let sessions = tmp.path().join("sessions");
    common::copy_tree(
        &common::corpus_dir().join("occhat/sample_basic/sessions"),
        &sessions,
    );
    common::openhands::backdate(&store);
    let stores = [
        (StoreKind::OpenHands, store.clone()),
        (StoreKind::OcChat, sessions.clone()),
    ];
    let ix_dir = tmp.path().join("ix");
    let mut ix = SearchIndex::open_or_create(&ix_dir).unwrap();
    let first = ix.update(&stores).unwrap();
    assert!(first.indexed > 10 && first.documents > 100, "{first:?}");
    let before = ix.documents().unwrap();
    assert!(before.iter().any(|d| d.conversation == "weekly-report"));

    // Nothing changed: nothing read, nothing replaced.
    let same = ix.update(&stores).unwrap();
    assert_eq!((same.indexed, same.removed, same.documents), (0, 0, 0));
    assert_same(&ix.documents().unwrap(), &before);

    // Events added, a head moved back to the abandoned branch (the state
    // alone changes: every flag of the conversation does), a history
    // rewritten (an event file of the middle removed), a conversation
    // with sub-agents and a session removed.
    add_message(&store.join(CHAT), "zqx added message");
    set_leaf(&store.join(FORK), "9d7d7a47-a9ee-440b-88ea-26f14de6520b");
    fs::remove_file(&event_files(&store.join(CODING))[3]).unwrap();
    fs::remove_dir_all(store.join(SUBAGENT)).unwrap();
    fs::remove_dir_all(sessions.join("sql-tuning")).unwrap();

    let next = ix.update(&stores).unwrap();
    assert_eq!(next.indexed, 3, "{next:?}");
    assert!(next.removed >= 2, "{next:?}");
    let after = ix.documents().unwrap();
    let want = fresh(&store, &sessions, &tmp.path().join("fresh"));
    assert_same(&after, &want);
    assert_ne!(after, before);
    assert!(
        after
            .iter()
            .any(|d| d.conversation == "30fde2bf19b240ed98ce033cf244dbbd"
                && d.event == 5
                && d.active)
    );
    // The fork's old active branch is now off it.
    let fork_id = "4274eb05d7bd4da595fa14dd90c7ab22";
    let was = |docs: &[DocEntry], e: u64| {
        docs.iter()
            .find(|d| d.conversation == fork_id && d.event == e)
            .map(|d| d.active)
    };
    assert_eq!((was(&before, 6), was(&after, 6)), (Some(true), Some(false)));
    assert_eq!((was(&before, 3), was(&after, 3)), (Some(false), Some(true)));
    assert!(!after.iter().any(|d| d.conversation == "sql-tuning"));
    assert!(
        !after
            .iter()
            .any(|d| d.path.contains("efc6c7902f414ddc83ba8f7ce07d057a"))
    );

    // A damaged checkpoint: that store is indexed again from nothing.
    let cp = fs::read_dir(&ix_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("store-")
        })
        .collect::<Vec<_>>();
    assert_eq!(cp.len(), 2, "one checkpoint per store, old ones removed");
    for p in &cp {
        fs::write(p, b"damaged").unwrap();
    }
    let again = ix.update(&stores).unwrap();
    assert_eq!(again.rebuilt_stores, 2);
    assert_same(&ix.documents().unwrap(), &want);
}
