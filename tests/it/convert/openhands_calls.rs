//! OpenHands → ASF, per model call: every `response` of every converted
//! corpus conversation carries a `request_hash`, and the request its path
//! rebuilds, rendered as chat-completions messages, is the request the SDK
//! sent for that call (the view of the conversation at the event before the
//! call, as `navigate_to` that event would give it); condensations become
//! `compaction` entries.

use crate::common;

use std::path::PathBuf;

use agentlog::asf::Session;
use agentlog::convert::Outcome;
use agentlog::convert::openhands::{CONDENSATION_UNCHANGED, convert};
use agentlog::json::{OwnedValue, Style};
use agentlog::openhands::view::{View, ViewOptions};
use agentlog::openhands::{Conversation, read_conversation};

/// Every conversation directory of the corpus (sub-agents included).
fn conversations() -> Vec<PathBuf> {
    let root = common::corpus_dir().join("openhands");
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        if d.join("base_state.json").is_file() {
            out.push(d.clone());
        }
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() && p.file_name().is_some_and(|n| n != "events") {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

fn compact(v: &OwnedValue) -> String {
    v.to_string_styled(Style::COMPACT)
        .chars()
        .take(300)
        .collect()
}

/// The id of the event just before the first event of the model call
/// `response_id` on the active branch.
fn event_before_call(conv: &Conversation, view: &View<'_>, response_id: &str) -> Option<String> {
    let order = view.conversation();
    let k = order.iter().position(|&p| {
        let index = view.events()[p].index;
        conv.event(index)
            .and_then(|e| OwnedValue::parse(e.raw()).ok())
            .and_then(|v| {
                v.get("llm_response_id")
                    .and_then(OwnedValue::as_str)
                    .map(str::to_owned)
            })
            .as_deref()
            == Some(response_id)
    })?;
    Some(view.events()[order[k.checked_sub(1)?]].id.to_string())
}

#[test]
fn every_response_carries_the_request_the_sdk_sent() {
    let (mut responses, mut compared, mut failures) = (0, 0, Vec::new());
    let dirs = conversations();
    assert!(dirs.len() > 40, "{}", dirs.len());
    for dir in dirs {
        let conv = read_conversation(&dir).unwrap();
        let out = convert(&conv).unwrap();
        let s = Session::read(&out.bytes).unwrap();
        let view = View::from_conversation(&conv, &ViewOptions::default());
        let all: Vec<_> = s
            .entries()
            .iter()
            .filter(|e| e.entry_type == "response")
            .collect();
        // The 2101-event conversations: every 20th call and the last (each
        // comparison builds a view of the whole conversation).
        let step = if all.len() > 100 { 20 } else { 1 };
        for (n, e) in all.iter().enumerate() {
            responses += 1;
            let name = format!("{} line {}", dir.display(), e.line);
            let Some(recorded) = e.request_hash.as_deref() else {
                failures.push(format!("{name}: no request_hash"));
                continue;
            };
            if n % step != 0 && n + 1 != all.len() {
                continue;
            }
            let ctx = s.request_context(&e.id).unwrap();
            assert_eq!(ctx.request_hash().unwrap(), recorded, "{name}");
            let rid = e.response_id.as_deref().unwrap();
            let Some(head) = event_before_call(&conv, &view, rid) else {
                failures.push(format!("{name}: no event before the call {rid}"));
                continue;
            };
            let sdk = View::from_conversation(
                &conv,
                &ViewOptions {
                    head: Some(head),
                    ..ViewOptions::default()
                },
            )
            .wire_messages();
            let ours = ctx.chat_messages();
            compared += 1;
            if ours.len() != sdk.len() {
                failures.push(format!(
                    "{name}: {} messages, the SDK sent {}",
                    ours.len(),
                    sdk.len()
                ));
                continue;
            }
            if let Some(i) = (0..ours.len()).find(|&i| ours[i] != sdk[i]) {
                failures.push(format!(
                    "{name}: message {i}\n  ours {}\n  sdk  {}",
                    compact(&ours[i]),
                    compact(&sdk[i])
                ));
            }
        }
    }
    assert!(responses > 400, "{responses}");
    assert!(compared > 300, "{compared}");
    assert!(
        failures.is_empty(),
        "{} of {responses} responses:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Each condensation on the active branch is a `compaction` (or, when the
/// view it gives is already the context, a record with that reason), whose
/// pinned items are copies of `item` entries on the path before
/// `first_kept`, as RFC 0001 requires of a writer.
#[test]
fn condensations_are_compactions_with_pinned_items_from_the_path() {
    let mut seen = 0;
    for dir in conversations() {
        let conv = read_conversation(&dir).unwrap();
        let out = convert(&conv).unwrap();
        let s = Session::read(&out.bytes).unwrap();
        for row in &out.report {
            if row.kind != "Condensation" {
                continue;
            }
            match &row.outcome {
                Outcome::Mapped(m) => {
                    seen += 1;
                    assert!(m.contains(&"compaction"), "{}: {m:?}", dir.display())
                }
                Outcome::Extension(why) => assert!(
                    why == CONDENSATION_UNCHANGED || why.contains("active branch"),
                    "{}: {why}",
                    dir.display()
                ),
                Outcome::Dropped(why) => panic!("{}: dropped: {why}", dir.display()),
            }
        }
        let mut parser = agentlog::json::Parser::new();
        for (i, e) in s.entries().iter().enumerate() {
            if e.entry_type != "compaction" {
                continue;
            }
            let v = e.to_owned_value(&mut parser).unwrap();
            let first_kept = v.get("first_kept").and_then(OwnedValue::as_str).unwrap();
            let path = s.path_indexes(i);
            let fk = path
                .iter()
                .position(|&k| s.entries()[k].id == first_kept)
                .unwrap();
            let before: Vec<OwnedValue> = path[..fk]
                .iter()
                .filter(|&&k| s.entries()[k].entry_type == "item")
                .filter_map(|&k| {
                    s.entries()[k]
                        .to_owned_value(&mut parser)?
                        .get("item")
                        .cloned()
                })
                .collect();
            for p in v
                .get("pinned")
                .and_then(OwnedValue::as_array)
                .into_iter()
                .flatten()
            {
                assert!(
                    before.contains(p),
                    "{}: pinned item not on the path before first_kept: {}",
                    dir.display(),
                    compact(p)
                );
            }
        }
    }
    assert!(seen >= 20, "{seen} condensations as compactions");
}

/// A `response` whose `request_hash` names another request is reported by
/// `verify` (with its id recomputed, so only the request hash is wrong), at
/// every position along a converted conversation's path.
#[test]
fn a_wrong_request_hash_is_reported() {
    use agentlog::asf::hash::{envelope_bytes, sha256_ref};
    use agentlog::asf::{ProblemKind, canon::to_canonical};
    use agentlog::json::Map;
    let dir = common::corpus_dir().join("openhands/1.7.4/condense");
    let dir = std::fs::read_dir(dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let conv = read_conversation(&dir).unwrap();
    let bytes = convert(&conv).unwrap().bytes;
    let lines: Vec<&[u8]> = bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let mut tried = 0;
    for (n, line) in lines.iter().enumerate() {
        let v = OwnedValue::parse(line).unwrap();
        if v.get("type").and_then(OwnedValue::as_str) != Some("response") {
            continue;
        }
        // The file up to this response, whose request_hash is replaced.
        let mut body = Map::new();
        for (k, x) in v.as_object().unwrap().iter() {
            if !["id", "type", "parent", "ts"].contains(&k) {
                body.insert(k, x.clone());
            }
        }
        body.insert(
            "request_hash",
            OwnedValue::string(sha256_ref(b"another request")),
        );
        let content = sha256_ref(&to_canonical(&OwnedValue::Object(body.clone())).unwrap());
        let (parent, ts) = (
            v.get("parent").and_then(OwnedValue::as_str),
            v.get("ts").and_then(OwnedValue::as_str).unwrap(),
        );
        let mut env = Vec::new();
        envelope_bytes(&mut env, "response", parent, None, ts, &content);
        let mut line = body;
        line.insert("id", OwnedValue::string(sha256_ref(&env)));
        line.insert("type", OwnedValue::string("response"));
        line.insert(
            "parent",
            parent.map_or(OwnedValue::Null, OwnedValue::string),
        );
        line.insert("ts", OwnedValue::string(ts));
        let mut file: Vec<u8> = lines[..n].join(&b'\n');
        file.push(b'\n');
        file.extend(to_canonical(&OwnedValue::Object(line)).unwrap());
        file.push(b'\n');
        let s = Session::read(&file).unwrap();
        let problems = s.verify();
        assert_eq!(problems.len(), 1, "line {}: {problems:?}", n + 1);
        assert_eq!(problems[0].line, n + 1);
        assert!(matches!(problems[0].kind, ProblemKind::RequestHash { .. }));
        tried += 1;
    }
    assert!(tried > 10, "{tried}");
}
