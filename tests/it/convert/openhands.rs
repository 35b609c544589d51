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

/// A tool I-JSON cannot carry (here an integer no binary64 holds exactly)
/// is left out of the config, not the conversation: the file still
/// converts and verifies, the config holds the other tools, the
/// `SystemPromptEvent`'s report row says which tool was left out and why,
/// and the event is kept whole in its record.
#[test]
fn a_tool_without_a_canonical_form_is_left_out_of_the_config_only() {
    let dir =
        common::shared_dir().join("corpus/openhands/1.0.0/chat/34624de77210456e9b948ac4f2bd80d1");
    let huge = "123456789012345678901234567890";
    let bad_tool = format!(
        r#"{{"type": "function", "function": {{"name": "huge", "parameters": {{"maximum": {huge}}}}}}}, "#
    );
    let mut files: Vec<(String, Vec<u8>)> = vec![(
        "base_state.json".to_owned(),
        std::fs::read(dir.join("base_state.json")).unwrap(),
    )];
    let mut names: Vec<_> = std::fs::read_dir(dir.join("events"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut tools_before = 0;
    for (i, name) in names.iter().enumerate() {
        let mut raw = std::fs::read_to_string(dir.join("events").join(name)).unwrap();
        if i == 0 {
            let v = OwnedValue::parse(raw.as_bytes()).unwrap();
            tools_before = v.get("tools").unwrap().as_array().unwrap().len();
            assert!(tools_before > 0);
            raw = raw.replacen(r#""tools": ["#, &format!(r#""tools": [{bad_tool}"#), 1);
            assert!(raw.contains(huge));
        }
        files.push((format!("events/{name}"), raw.into_bytes()));
    }
    let conv = agentlog::openhands::Reader::new().parse(
        "34624de77210456e9b948ac4f2bd80d1",
        files.iter().map(|(p, b)| (p.as_str(), b.as_slice())),
    );

    let out = convert(&conv).expect("converts");
    let s = Session::read(&out.bytes).unwrap();
    assert!(s.verify().is_empty(), "{:?}", s.verify());
    let request = s.context(None).unwrap().request();
    let tools = request.get("tools").unwrap().as_array().unwrap();
    assert_eq!(tools.len(), tools_before, "the other tools stay");
    assert!(
        tools
            .iter()
            .all(|t| t.get("name").unwrap().as_str() != Some("huge"))
    );

    let row = &out.report[0];
    assert_eq!(row.kind, "SystemPromptEvent");
    assert_eq!(row.outcome.code(), "kept-extension");
    let detail = row.outcome.to_string();
    assert!(
        detail.contains("tool 0 (") && detail.contains("not I-JSON"),
        "{detail}"
    );
    // Its record keeps the event whole: the number rounded to its nearest
    // double there, and its text recorded beside it.
    let text = String::from_utf8(out.bytes.clone()).unwrap();
    let record = text
        .lines()
        .find(|l| l.contains(r#""type":"openhands:event""#) && l.contains("SystemPromptEvent"))
        .expect("the event's record");
    assert!(
        record.contains(&format!(
            r#""normalised":[{{"at":"/event/tools/0/function/parameters/maximum","was":"{huge}"}}]"#
        )),
        "{record}"
    );
}
