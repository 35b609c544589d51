//! Incomplete-tail detection and recovery, rule by rule.

use agentlog::json::OwnedValue;
use agentlog::occhat::{
    RecoveryChoice, TailKind, VARIABLE_CONTEXT_SENTINEL, apply_tail_recovery,
    detect_incomplete_tail, recovery_indexes,
};

fn msgs(text: &str) -> Vec<OwnedValue> {
    OwnedValue::parse(text.as_bytes())
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn kind(text: &str) -> Option<(TailKind, Vec<usize>, String)> {
    detect_incomplete_tail(&msgs(text)).map(|r| (r.kind, r.tail_indexes, r.summary))
}

#[test]
fn clean_endings() {
    assert_eq!(kind("[]"), None);
    assert_eq!(kind(r#"[{"role": "system", "content": "s"}]"#), None);
    assert_eq!(
        kind(r#"[{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]"#),
        None
    );
    // Only variable-context messages: nothing to report.
    let only_ctx = format!(r#"[{{"role": "user", "content": "{VARIABLE_CONTEXT_SENTINEL} x"}}]"#);
    assert_eq!(kind(&only_ctx), None);
    // A variable-context message after a complete exchange is ignored.
    let ctx_last = format!(
        r#"[{{"role": "user", "content": "q"}}, {{"role": "assistant", "content": "a"}}, {{"role": "user", "content": "{VARIABLE_CONTEXT_SENTINEL}"}}]"#
    );
    assert_eq!(kind(&ctx_last), None);
    // Unknown roles and non-object messages end nothing (the seed would
    // raise on the latter).
    assert_eq!(
        kind(r#"[{"role": "user", "content": "q"}, {"role": "narrator"}]"#),
        None
    );
    assert_eq!(kind(r#"[{"role": "user", "content": "q"}, 5]"#), None);
}

#[test]
fn orphaned_user() {
    let ctx = format!(
        r#"[{{"role": "system", "content": "s"}}, {{"role": "user", "content": "q"}}, {{"role": "user", "content": "{VARIABLE_CONTEXT_SENTINEL}\nx"}}]"#
    );
    let (k, idx, summary) = kind(&ctx).unwrap();
    assert_eq!(k, TailKind::OrphanedUser);
    assert_eq!(
        idx,
        [1],
        "the sentinel message is skipped, the real one reported"
    );
    assert_eq!(
        summary,
        "Session ends with a user message that has no assistant response."
    );
    // The sentinel must be a prefix of a string content.
    let (_, idx, _) = kind(&format!(
        r#"[{{"role": "user", "content": "x {VARIABLE_CONTEXT_SENTINEL}"}}]"#
    ))
    .unwrap();
    assert_eq!(idx, [0]);
    let list_content =
        kind(r#"[{"role": "user", "content": ["[OC_CHAT_VARIABLE_CONTEXT]"]}]"#).unwrap();
    assert_eq!(list_content.1, [0]);
}

#[test]
fn orphaned_tool_calls() {
    // Assistant with calls and no answers at all: ids sorted, duplicates kept.
    let (k, idx, summary) = kind(
        r#"[{"role": "user", "content": "q"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "b"}, {"id": "a"}, {"id": "b"}, {"no": 1}, "x"]}]"#,
    )
    .unwrap();
    assert_eq!(k, TailKind::OrphanedToolCalls);
    assert_eq!(idx, [1]);
    assert_eq!(
        summary,
        "Assistant tool call(s) missing tool response(s): a, b, b."
    );
    // Partially answered: the assistant and its tool messages, in order.
    let (_, idx, summary) = kind(
        r#"[{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [{"id": "c2"}, {"id": "c1"}, {"id": "c3"}]}, {"role": "tool", "tool_call_id": "c1"}, {"role": "tool", "tool_call_id": "c9"}]"#,
    )
    .unwrap();
    assert_eq!(idx, [1, 2, 3]);
    assert_eq!(
        summary,
        "Assistant tool call(s) missing tool response(s): c2, c3."
    );
    // Fully answered: clean.
    assert_eq!(
        kind(
            r#"[{"role": "assistant", "tool_calls": [{"id": "c1"}]}, {"role": "tool", "tool_call_id": "c1"}]"#
        ),
        None
    );
    // Tool messages not after an assistant, or after one without calls.
    assert_eq!(kind(r#"[{"role": "tool", "tool_call_id": "c1"}]"#), None);
    assert_eq!(
        kind(r#"[{"role": "user"}, {"role": "tool", "tool_call_id": "c1"}]"#),
        None
    );
    assert_eq!(
        kind(r#"[{"role": "assistant", "content": "a"}, {"role": "tool"}]"#),
        None
    );
    // tool_calls that is not a list names no call.
    assert_eq!(
        kind(r#"[{"role": "assistant", "content": "a", "tool_calls": {"id": "x"}}]"#),
        None
    );
    assert_eq!(
        kind(r#"[{"role": "assistant", "content": "a", "tool_calls": 5}]"#),
        None
    );
}

#[test]
fn truncated_assistant() {
    for content in [r#"null"#, r#""""#, r#"" \n\u3000""#, r#"["parts"]"#, "0"] {
        let (k, idx, summary) = kind(&format!(
            r#"[{{"role": "user", "content": "q"}}, {{"role": "assistant", "content": {content}}}]"#
        ))
        .unwrap();
        assert_eq!(k, TailKind::TruncatedAssistant, "{content}");
        assert_eq!(idx, [1]);
        assert_eq!(summary, "Session ends with an empty assistant message.");
    }
    assert_eq!(
        kind(r#"[{"role": "assistant"}]"#).unwrap().0,
        TailKind::TruncatedAssistant
    );
}

#[test]
fn recovery_choices() {
    let m = msgs(
        r#"[{"role": "system", "content": "s"}, {"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [{"id": "c"}]}]"#,
    );
    assert_eq!(recovery_indexes(&m, RecoveryChoice::Drop), [0, 1]);
    assert_eq!(recovery_indexes(&m, RecoveryChoice::Keep), [0, 1, 2]);
    assert_eq!(recovery_indexes(&m, RecoveryChoice::Fresh), [0]);
    assert_eq!(
        apply_tail_recovery(&m, RecoveryChoice::Drop),
        m[..2].to_vec()
    );
    assert_eq!(
        apply_tail_recovery(&m, RecoveryChoice::Fresh),
        m[..1].to_vec()
    );
    // Fresh without a leading system message: nothing.
    let n = msgs(r#"[{"role": "user", "content": "q"}, {"role": "system", "content": "s"}]"#);
    assert!(apply_tail_recovery(&n, RecoveryChoice::Fresh).is_empty());
    assert!(apply_tail_recovery(&[], RecoveryChoice::Fresh).is_empty());
    // Drop on a clean conversation keeps everything.
    let c = msgs(r#"[{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]"#);
    assert_eq!(apply_tail_recovery(&c, RecoveryChoice::Drop), c);
    // Choices by name, with the seed's error for others.
    assert_eq!(
        "drop".parse::<RecoveryChoice>().unwrap(),
        RecoveryChoice::Drop
    );
    assert_eq!("fresh".parse::<RecoveryChoice>().unwrap().as_str(), "fresh");
    assert_eq!(
        "undo".parse::<RecoveryChoice>().unwrap_err().to_string(),
        "Unsupported recovery choice: undo"
    );
}

#[test]
fn report_json_has_the_seed_keys() {
    let r = detect_incomplete_tail(&msgs(r#"[{"role": "user", "content": "q"}]"#)).unwrap();
    assert_eq!(
        r.to_value().to_string(),
        r#"{"kind":"orphaned_user","tail_indexes":[0],"summary":"Session ends with a user message that has no assistant response."}"#
    );
}
