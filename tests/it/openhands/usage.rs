//! `StateUsage::of_root`, which reads the usage straight from a parsed
//! `base_state.json`, against `StateUsage::of` over the decoded state: the
//! same entries on every state of the corpus and on states written to
//! catch each member it reads (repeated, `null`, of another type).

use crate::common;

use agentlog::json::Parser;
use agentlog::openhands::{State, StateUsage};

fn both(bytes: &[u8]) -> (StateUsage, StateUsage) {
    let mut parser = Parser::new();
    let doc = parser.parse(bytes).unwrap();
    let decoded = State::decode(doc.root())
        .map(|s| StateUsage::of(&s))
        .unwrap_or_default();
    (decoded, StateUsage::of_root(doc.root()))
}

#[test]
fn the_same_entries_as_the_decoded_state_on_every_corpus_state() {
    let mut states = 0;
    let mut entries = 0;
    let mut stack = vec![common::corpus_dir().join("openhands")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "base_state.json") {
                let bytes = std::fs::read(&p).unwrap();
                let (want, got) = both(&bytes);
                assert_eq!(got, want, "{}", p.display());
                states += 1;
                entries += want.entries().len();
            }
        }
    }
    assert!(states >= 40, "{states} states");
    assert!(entries >= 40, "{entries} usage entries");
}

#[test]
fn repeated_null_and_mistyped_members_read_as_the_decoded_state_reads_them() {
    let m = |body: &str| {
        format!(r#"{{"id":"x","agent":{{}},"stats":{{"usage_to_metrics":{{{body}}}}}}}"#)
    };
    let cases = [
        // Plain.
        m(
            r#""agent":{"model_name":"a","accumulated_cost":0.5,"token_usages":[{},{}],
            "accumulated_token_usage":{"model":"t","prompt_tokens":3,"completion_tokens":4,
            "cache_read_tokens":1,"cache_write_tokens":2,"reasoning_tokens":5}}"#,
        ),
        // Repeated members: the last counts, also when it is null or mistyped.
        m(
            r#""agent":{"model_name":"a","model_name":"b","token_usages":[1,2,3],"token_usages":[1]}"#,
        ),
        m(r#""agent":{"model_name":"a","model_name":null,
            "accumulated_token_usage":{"model":"t"}}"#),
        m(
            r#""agent":{"token_usages":[1,2],"token_usages":"x","accumulated_cost":1,"accumulated_cost":null}"#,
        ),
        m(r#""agent":{"accumulated_token_usage":{"prompt_tokens":3},
            "accumulated_token_usage":{"prompt_tokens":7,"prompt_tokens":"8"}}"#),
        m(
            r#""agent":{"accumulated_token_usage":{"prompt_tokens":3},"accumulated_token_usage":[]}"#,
        ),
        // The merged "default" and empty names, models from the token usage.
        m(r#""agent":{"model_name":"default","accumulated_token_usage":{"model":""}}"#),
        m(r#""agent":{"model_name":"","accumulated_token_usage":{"model":"t"}}"#),
        m(r#""agent":{"model_name":7,"accumulated_token_usage":{"model":"t"}}"#),
        // Costs that do not count, counts that do not read.
        m(
            r#""agent":{"accumulated_cost":-1,"accumulated_token_usage":{"prompt_tokens":-3,
            "completion_tokens":1.5,"reasoning_tokens":2.0}}"#,
        ),
        // Entries that are not objects, repeated keys, sub-agents' copies.
        m(r#""agent":3,"agent":{"model_name":"a"},"task:1":{"model_name":"s"},"x\u0041":null"#),
        // The map and the stats repeated, null, mistyped.
        r#"{"stats":{"usage_to_metrics":{"a":{}}},"stats":{"usage_to_metrics":{"b":{}}}}"#.into(),
        r#"{"stats":{"usage_to_metrics":{"a":{}}},"stats":null}"#.into(),
        r#"{"stats":{"usage_to_metrics":{"a":{}},"usage_to_metrics":[]}}"#.into(),
        r#"{"stats":[]}"#.into(),
        r#"[{"stats":{"usage_to_metrics":{"a":{}}}}]"#.into(),
    ];
    for c in &cases {
        let (want, got) = both(c.as_bytes());
        assert_eq!(got, want, "{c}");
    }
    // The cases reach the entries (not every one an empty usage).
    let (want, _) = both(cases[0].as_bytes());
    assert_eq!(want.entries().len(), 1);
    assert_eq!(want.entries()[0].usage.calls, 2);
}
