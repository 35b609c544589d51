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
    let huge = "123456789012345678901234567890";
    let bad_tool = format!(
        r#"{{"type": "function", "function": {{"name": "huge", "parameters": {{"maximum": {huge}}}}}}}, "#
    );
    let mut tools_before = 0;
    let conv = corpus_conversation_edited(|name, raw| {
        if !name.starts_with("events/event-00000-") {
            return raw;
        }
        let v = OwnedValue::parse(raw.as_bytes()).unwrap();
        tools_before = v.get("tools").unwrap().as_array().unwrap().len();
        assert!(tools_before > 0);
        let raw = raw.replacen(r#""tools": ["#, &format!(r#""tools": [{bad_tool}"#), 1);
        assert!(raw.contains(huge));
        raw
    });

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

/// A `SystemPromptEvent` whose tools repeat a name: the config adds every
/// tool, and the settings in force keep the last tool of each name (a
/// repeated name replaces the earlier tool), which is what each
/// `response`'s `request_hash` covers: the file verifies, and the request
/// holds one tool fewer than the event.
#[test]
fn tools_that_repeat_a_name_convert_and_verify() {
    let mut tools_before = 0;
    let conv = corpus_conversation_edited(|name, raw| {
        if !name.starts_with("events/event-00000-") {
            return raw;
        }
        let v = OwnedValue::parse(raw.as_bytes()).unwrap();
        let tools = v.get("tools").unwrap().as_array().unwrap();
        tools_before = tools.len();
        assert!(tools_before > 1);
        // The first tool again, its description changed, at the end.
        let mut again = tools[0].clone();
        let t = again.as_object_mut().unwrap();
        let f = if t.contains_key("function") {
            t.get_mut("function").unwrap().as_object_mut().unwrap()
        } else {
            t
        };
        f.insert("description", OwnedValue::string("the same name again"));
        let mut v = v;
        v.as_object_mut()
            .unwrap()
            .get_mut("tools")
            .unwrap()
            .as_array_mut()
            .unwrap()
            .push(again);
        v.to_string()
    });

    let out = convert(&conv).expect("converts");
    let s = Session::read(&out.bytes).unwrap();
    assert!(s.verify().is_empty(), "{:?}", s.verify());
    let request = s.context(None).unwrap().request();
    let tools = request.get("tools").unwrap().as_array().unwrap();
    assert_eq!(tools.len(), tools_before, "the repeated name replaces");
    let last = tools.last().unwrap();
    assert_eq!(
        last.get("description").and_then(OwnedValue::as_str),
        Some("the same name again")
    );
    let text = String::from_utf8(out.bytes.clone()).unwrap();
    assert!(text.contains(r#""request_hash":"sha256:"#));
}

/// The 1.0.0 chat conversation of the corpus read from memory, each file
/// (`base_state.json`, `events/…`) first given to `edit` with its path.
fn corpus_conversation_edited(
    mut edit: impl FnMut(&str, String) -> String,
) -> agentlog::openhands::Conversation {
    let dir =
        common::data_dir().join("corpus/openhands/1.0.0/chat/34624de77210456e9b948ac4f2bd80d1");
    let mut names: Vec<String> = std::fs::read_dir(dir.join("events"))
        .unwrap()
        .map(|e| format!("events/{}", e.unwrap().file_name().into_string().unwrap()))
        .collect();
    names.sort();
    names.insert(0, "base_state.json".to_owned());
    let files: Vec<(String, Vec<u8>)> = names
        .into_iter()
        .map(|n| {
            let raw = std::fs::read_to_string(dir.join(&n)).unwrap();
            let raw = edit(&n, raw).into_bytes();
            (n, raw)
        })
        .collect();
    agentlog::openhands::Reader::new().parse(
        "34624de77210456e9b948ac4f2bd80d1",
        files.iter().map(|(p, b)| (p.as_str(), b.as_slice())),
    )
}

/// Metrics I-JSON cannot carry even normalised (the SDK writes a NaN as
/// Python's `json` does): each call's `response` is written without
/// `usage`, its metrics record kept as its text; the file verifies.
#[test]
fn metrics_without_an_i_json_form_are_kept_as_text() {
    let conv = corpus_conversation_edited(|name, raw| {
        if name != "base_state.json" {
            return raw;
        }
        let key = r#""prompt_tokens": "#;
        let mut out = String::new();
        let mut rest = raw.as_str();
        while let Some(i) = rest.find(key) {
            let start = i + key.len();
            out.push_str(&rest[..start]);
            out.push_str("NaN");
            let digits = rest[start..].find(|c: char| !c.is_ascii_digit()).unwrap();
            rest = &rest[start + digits..];
        }
        out.push_str(rest);
        assert!(out.contains("NaN"));
        out
    });
    let out = convert(&conv).expect("converts");
    let s = Session::read(&out.bytes).unwrap();
    assert!(s.verify().is_empty(), "{:?}", s.verify());
    let text = String::from_utf8(out.bytes.clone()).unwrap();
    let responses: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(r#""type":"response""#))
        .collect();
    assert!(!responses.is_empty());
    for r in responses {
        assert!(r.contains(r#""openhands:metrics_text":"#), "{r}");
        assert!(r.contains(r#"\"prompt_tokens\": NaN"#), "{r}");
        assert!(!r.contains(r#""usage":"#), "{r}");
    }
}

/// An OC Chat message and metadata holding a NaN (OC Chat's `json` writes
/// one as `NaN`): the session still converts and verifies; the message is
/// kept as its JSON text in an `occhat:message` record, outside the
/// context, and its report row says why; the metadata record holds its
/// text too.
#[test]
fn an_occhat_message_without_an_i_json_form_is_kept_as_text() {
    use agentlog::convert::occhat;
    use agentlog::occhat::SessionStore;
    let case = crate::common::occhat::restore("sample_basic");
    let dir = case.sessions().join("weekly-report");
    let edit = |suffix: &str, from: &str, to: &str| {
        let path = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_str().unwrap().ends_with(suffix))
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{}", path.display());
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    };
    let question = r#""content": "Summarise my commits from last week.""#;
    edit(
        "_chat_log.json",
        question,
        &format!(r#"{question}, "temperature": NaN"#),
    );
    edit(
        "_meta.json",
        r#""session_name": "weekly-report","#,
        r#""session_name": "weekly-report", "weight": NaN,"#,
    );
    let store = SessionStore::new(case.sessions());
    let session = store.load_session("weekly-report").unwrap();
    let out = occhat::convert(&session).expect("converts");
    let s = Session::read(&out.bytes).unwrap();
    assert!(s.verify().is_empty(), "{:?}", s.verify());
    assert_eq!(out.report.len(), session.messages.len());
    let row = &out.report[2];
    assert_eq!(row.outcome.code(), "kept-extension");
    assert!(row.outcome.to_string().contains("not I-JSON"), "{row:?}");
    let text = String::from_utf8(out.bytes.clone()).unwrap();
    let kept = |kind: &str, needle: &str| {
        text.lines().any(|l| {
            l.contains(&format!(r#""type":"{kind}""#))
                && l.contains(r#""raw":"#)
                && l.contains(needle)
        })
    };
    assert!(kept("occhat:message", r#"\"temperature\":NaN"#), "{text}");
    assert!(kept("occhat:session", r#"\"weight\":NaN"#), "{text}");
    // Not in the context: the rest of the conversation is.
    let ctx = s.context(None).unwrap().chat_messages();
    let has_question = ctx.iter().any(|m| {
        m.get("content").and_then(OwnedValue::as_str)
            == Some("Summarise my commits from last week.")
    });
    assert!(!has_question);
    assert!(ctx.len() >= session.messages.len() - 2);
}
