//! OpenHands → ASF over every conversation of the shared corpus (every SDK
//! version, forks and sub-agents included): the conversion verifies under
//! our reader, is deterministic, reports every event, and the context at
//! the leaf, rendered as chat-completions messages, equals the SDK's own
//! next request (`next_messages.wire_messages` of the corpus oracles).

use agentlog::asf::Session;
use agentlog::convert::openhands::convert;
use agentlog::json::OwnedValue;
use agentlog::openhands::read_conversation;

use crate::common;
use crate::common::openhands::{first_difference, oracle_cases};

#[test]
fn every_corpus_conversation_converts_verifies_and_rebuilds_the_next_request() {
    let mut failures = Vec::new();
    let cases = oracle_cases();
    for case in &cases {
        let name = case.name();
        let conv = read_conversation(&case.dir).unwrap();
        let out = match convert(&conv) {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        assert_eq!(
            convert(&conv).unwrap().bytes,
            out.bytes,
            "{name}: deterministic"
        );
        assert_eq!(
            out.report.len(),
            conv.len(),
            "{name}: every event is reported"
        );
        let s = Session::read(&out.bytes).unwrap();
        let problems = s.verify();
        if !problems.is_empty() {
            failures.push(format!("{name}: {:?}", &problems[..problems.len().min(3)]));
            continue;
        }
        let ours = s.context(None).unwrap().chat_messages();
        let theirs = case
            .oracle
            .get("next_messages")
            .and_then(|n| n.get("wire_messages"))
            .and_then(OwnedValue::as_array)
            .unwrap();
        if let Some(d) = first_difference(&ours, theirs) {
            failures.push(format!("{name}: {d}"));
        }
    }
    let total = cases.len();
    assert!(total > 40, "{total}");
    assert!(
        failures.is_empty(),
        "{} of {total} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_occhat_sample_session_converts_and_verifies() {
    use agentlog::convert::occhat;
    use agentlog::occhat::SessionStore;
    let mut converted = 0;
    for sample in ["sample_basic", "sample_legacy", "sample_recovery"] {
        let store = SessionStore::new(
            common::corpus_dir()
                .join("occhat")
                .join(sample)
                .join("sessions"),
        );
        for entry in store.list_sessions().sessions {
            let path = entry.filepath.display().to_string();
            let session = store.load_session(&path).unwrap();
            let out = occhat::convert(&session).unwrap();
            assert_eq!(
                occhat::convert(&session).unwrap().bytes,
                out.bytes,
                "{path}: deterministic"
            );
            let s = Session::read(&out.bytes).unwrap();
            assert!(s.verify().is_empty(), "{path}: {:?}", s.verify());
            assert_eq!(out.report.len(), session.messages.len());
            // Every message but a leading system prompt is in the context.
            let ctx = s.context(None).unwrap();
            let system = usize::from(
                session
                    .messages
                    .first()
                    .and_then(|m| m.get("role"))
                    .and_then(OwnedValue::as_str)
                    == Some("system"),
            );
            let with_items = session.messages[system..]
                .iter()
                .filter(|m| {
                    m.get("role").and_then(OwnedValue::as_str) != Some("assistant")
                        || m.get("content").is_some_and(|c| !c.is_null())
                        || m.get("tool_calls").is_some()
                })
                .count();
            assert!(ctx.items.len() >= with_items, "{path}");
            assert_eq!(
                ctx.settings.model.as_deref(),
                Some(session.model.as_str()).filter(|m| !m.is_empty())
            );
            converted += 1;
        }
    }
    assert!(converted >= 3, "{converted}");
}
