//! `agentlog stats`: totals over a store, a sub-agent counted once.

use super::*;

#[test]
fn stats_json_over_the_corpus() {
    let root = openhands_corpus();
    let s = json(&ok(&["stats", "--json", p(&root)]));
    assert_eq!(
        keys(&s),
        [
            "conversations",
            "subagents",
            "sessions",
            "unreadable",
            "events",
            "events_by_kind",
            "messages",
            "messages_by_role",
            "tool_calls",
            "errors",
            "usage",
            "files"
        ]
    );
    assert_eq!(
        keys(&s["errors"]),
        ["agent_error", "conversation_error", "tool_error"]
    );
    assert_eq!(
        keys(&s["files"]),
        ["malformed", "gap", "duplicate", "bad_name", "bad_state"]
    );
    let oracles = oracles();
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    let mut events = 0u64;
    let (mut prompt, mut completion, mut cost) = (0u64, 0u64, 0f64);
    for o in &oracles {
        for e in o.conv["events"].as_array().unwrap() {
            *kinds.entry(e[2].as_str().unwrap().to_owned()).or_default() += 1;
            events += 1;
        }
        let has_subs = oracles
            .iter()
            .any(|s| s.subagent && s.dir.starts_with(&o.dir) && s.dir != o.dir);
        for (k, m) in o.conv["base_state"]["stats"].as_object().unwrap() {
            if has_subs && (k.starts_with("task:") || k.starts_with("delegate:")) {
                continue;
            }
            prompt += m["prompt_tokens"].as_u64().unwrap();
            completion += m["completion_tokens"].as_u64().unwrap();
            cost += m["accumulated_cost"].as_f64().unwrap();
        }
    }
    assert_eq!(
        s["conversations"],
        oracles.iter().filter(|o| !o.subagent).count() as u64
    );
    assert_eq!(
        s["subagents"],
        oracles.iter().filter(|o| o.subagent).count() as u64
    );
    assert_eq!(s["sessions"], 0);
    assert_eq!(s["unreadable"], 0);
    assert_eq!(s["events"], events);
    let got_kinds: BTreeMap<String, u64> =
        serde_json::from_value(s["events_by_kind"].clone()).unwrap();
    assert_eq!(got_kinds, kinds);
    let tools: u64 = s["tool_calls"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(tools, kinds["ActionEvent"]);
    assert!(s["tool_calls"]["terminal"].as_u64().unwrap() > 0);
    assert_eq!(s["errors"]["agent_error"], kinds["AgentErrorEvent"]);
    assert!(
        s["errors"]["tool_error"].as_u64().unwrap() > 0,
        "the errors scenario"
    );
    let usage = s["usage"].as_object().unwrap();
    assert!(usage.contains_key("openai/fake-model") && usage.contains_key("openai/gpt-4o"));
    let sum = |k: &str| -> u64 { usage.values().map(|u| u[k].as_u64().unwrap()).sum() };
    assert_eq!(sum("prompt_tokens"), prompt);
    assert_eq!(sum("completion_tokens"), completion);
    let got_cost: f64 = usage.values().map(|u| u["cost"].as_f64().unwrap()).sum();
    assert!(
        (got_cost - cost).abs() < 1e-6 * cost,
        "{got_cost} vs {cost}"
    );
    for u in usage.values() {
        assert_eq!(
            keys(u),
            [
                "calls",
                "prompt_tokens",
                "completion_tokens",
                "cache_read_tokens",
                "cache_write_tokens",
                "reasoning_tokens",
                "cost"
            ]
        );
    }
    for v in s["files"].as_object().unwrap().values() {
        assert_eq!(v, 0);
    }
}

#[test]
fn stats_count_a_subagent_once() {
    let dir = scenario_dir("1.58.2", "subagent");
    let s = json(&ok(&["stats", "--json", p(&dir)]));
    assert_eq!(s["conversations"], 1);
    assert_eq!(s["subagents"], 1);
    assert_eq!(s["events"], 22);
    // What the SDK recorded: each conversation's own metrics under
    // `agent`, and in the parent a `task:` copy of the sub-agent's.
    let oracle =
        json(&fs::read_to_string(openhands_corpus().join("1.58.2/subagent.oracle.json")).unwrap());
    let convs = oracle["conversations"].as_array().unwrap();
    assert_eq!(convs.len(), 2, "the parent and its sub-agent");
    let own = |k: &str| -> u64 {
        convs
            .iter()
            .map(|c| c["base_state"]["stats"]["agent"][k].as_u64().unwrap())
            .sum()
    };
    let parent = convs
        .iter()
        .find(|c| !c["path"].as_str().unwrap().contains("/subagents/"))
        .unwrap();
    let sub = convs
        .iter()
        .find(|c| c["path"].as_str().unwrap().contains("/subagents/"))
        .unwrap();
    let copies: Vec<&Value> = parent["base_state"]["stats"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.starts_with("task:"))
        .map(|(_, v)| v)
        .collect();
    assert_eq!(
        copies.len(),
        1,
        "the parent holds a copy of the sub-agent's metrics"
    );
    for k in ["prompt_tokens", "completion_tokens"] {
        assert_eq!(copies[0][k], sub["base_state"]["stats"]["agent"][k]);
    }
    // The parent's own and the sub-agent's own; the parent's `task:` copy
    // is not counted again.
    let u = &s["usage"]["openai/fake-model"];
    assert_eq!(u["prompt_tokens"], own("prompt_tokens"));
    assert_eq!(u["completion_tokens"], own("completion_tokens"));
    assert_eq!(
        s["usage"].as_object().unwrap().len(),
        1,
        "no \"default\" model"
    );
}

#[test]
fn stats_of_a_damaged_store_and_text() {
    let d = damaged();
    let out = run(&["stats", "--json", p(&d.root)]);
    assert_eq!(code(&out), 0);
    let s = json(&stdout(&out));
    assert_eq!(s["conversations"], 3);
    assert_eq!(s["files"]["malformed"], 1);
    assert_eq!(s["files"]["gap"], 1);
    assert_eq!(s["files"]["duplicate"], 1);
    assert_eq!(s["files"]["bad_name"], 1);
    assert_eq!(s["files"]["bad_state"], 2);
    assert!(!stderr(&out).is_empty(), "the bad files are reported");
    let text = ok(&["stats", p(&d.root)]);
    let first: Vec<&str> = text.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        first,
        ["OpenHands", "conversations", "3", "(1", "sub-agent)"],
        "{text}"
    );
    assert!(
        text.contains(
            "1 malformed, 1 after a gap, 1 duplicate, 1 badly named, 2 bad state or meta"
        )
    );
}
