//! Writing byte for byte as the reference: the corpus stores were made by
//! the reference's own save, export, artifact and marker functions under a
//! controlled clock (`build_log`). Replaying that log with this crate, at
//! the same times, into an empty store must give the same files with the
//! same bytes: every live record, every archived snapshot, the export and
//! the marker.

use crate::common::occhat as occhat_support;

use std::collections::BTreeMap;
use std::path::Path;

use agentlog::json::OwnedValue;
use agentlog::occhat::{ChatSession, TokenStats};
use occhat_support::{arr, at, iso_ns, read_json, s, store_at, tree};

/// Finds a corpus file by its file name anywhere in the case's store.
fn corpus_file(sessions: &Path, files: &[(String, Vec<u8>)], name: &str) -> OwnedValue {
    let (rel, _) = files
        .iter()
        .find(|(p, _)| Path::new(p).file_name().unwrap().to_str() == Some(name))
        .unwrap_or_else(|| panic!("no {name}"));
    read_json(&sessions.join(rel))
}

fn replay(case: &str) {
    let src = occhat_support::corpus().join(case);
    let sessions = src.join("sessions");
    let oracle = read_json(&src.join("oracle.json"));
    let want = tree(&sessions);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sessions");
    let (store, clock) = store_at(&root, 0);
    let mut live: BTreeMap<String, ChatSession> = BTreeMap::new();
    let mut ops = 0;
    for op in arr(at(&oracle, "build_log")) {
        let t = iso_ns(s(at(op, "at")));
        clock.set(occhat_support::from_ns(t));
        let kind = s(at(op, "op"));
        let wrote = op.get("wrote").map(s).unwrap_or("");
        let fname = Path::new(wrote)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        match kind {
            "save_chat_log" => {
                let name = s(at(op, "name"));
                // The session as it was then: the chat log it wrote and the
                // meta written with it (same stamp).
                let log = corpus_file(&sessions, &want, &fname);
                let meta_name = fname.replace("_chat_log.json", "_meta.json");
                let meta = corpus_file(&sessions, &want, &meta_name);
                let mut session = ChatSession::from_records(&meta, Some(&log));
                assert_eq!(session.name, name);
                let path = store.save_chat_log(&mut session).unwrap();
                assert_eq!(path, root.join(wrote));
                live.insert(name.to_owned(), session);
            }
            "save_session_metadata" => {
                let name = s(at(op, "name"));
                let session = live.get_mut(name).unwrap();
                let path = store.save_session_metadata(session).unwrap();
                assert_eq!(path, root.join(wrote));
                assert_eq!(session.filepath.as_deref(), Some(path.as_path()));
            }
            "export_markdown" => {
                let st = at(op, "session");
                let mut session = ChatSession::new(s(at(st, "name")), s(at(st, "model")));
                session.reasoning_effort = s(at(st, "reasoning_effort")).to_owned();
                session.stats = TokenStats::from_value(at(st, "stats"));
                session.messages = arr(at(st, "messages")).to_vec();
                let path = store.export_markdown(&session, None).unwrap();
                assert_eq!(path, root.join(wrote));
            }
            "save_tool_artifact" => {
                let text = std::fs::read_to_string(sessions.join(wrote)).unwrap();
                let path = store
                    .save_tool_artifact(s(at(op, "name")), s(at(op, "tool")), &text)
                    .unwrap();
                // The name carries 6 random hex digits: all but those match.
                let got = path
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                assert_eq!(got.len(), wrote.len());
                assert_eq!(got[..got.len() - 10], wrote[..wrote.len() - 10]);
                assert!(
                    got[got.len() - 10..got.len() - 4]
                        .bytes()
                        .all(|b| b.is_ascii_hexdigit())
                );
                std::fs::rename(&path, root.join(wrote)).unwrap();
            }
            "write_clean_exit_marker" => {
                store.write_clean_exit_marker().unwrap();
            }
            other => panic!("unknown op {other}"),
        }
        ops += 1;
    }
    assert!(ops >= 13);
    let got = tree(&root);
    let names = |t: &[(String, Vec<u8>)]| t.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&got), names(&want), "{case}: same files");
    for ((p, a), (_, b)) in got.iter().zip(&want) {
        assert!(
            a == b,
            "{case}: {p} differs:\n{}\n---\n{}",
            String::from_utf8_lossy(a),
            String::from_utf8_lossy(b)
        );
    }
}

#[test]
fn replaying_sample_basic_writes_the_same_bytes() {
    replay("sample_basic");
}

#[test]
fn replaying_sample_recovery_writes_the_same_bytes() {
    replay("sample_recovery");
}
