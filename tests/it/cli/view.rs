//! `agentlog view`: what the model saw, against the SDK's oracles.

use super::*;

#[test]
fn view_equals_the_sdk_oracles() {
    for o in oracles() {
        let d = p(&o.dir);
        let wire = json(&ok(&["view", d, "--json"]));
        assert_eq!(wire, o.conv["next_messages"]["wire_messages"], "{d}");
        let sdk = json(&ok(&["view", d, "--sdk-messages"]));
        assert_eq!(sdk, o.conv["next_messages"]["messages"], "{d}");
        let ids = json(&ok(&["view", d, "--event-ids", "--json"]));
        let ids = ids.as_array().unwrap();
        let want = o.conv["view_event_ids"].as_array().unwrap();
        assert_eq!(ids.len(), want.len(), "{d}");
        // Before 1.10.0 the SDK gives a condensation summary a random ID.
        let random_summary_ids = o.version.starts_with("1.0.") || o.version.starts_with("1.7.");
        for (a, b) in ids.iter().zip(want) {
            if random_summary_ids && a.as_str().unwrap().ends_with("-summary") {
                continue;
            }
            assert_eq!(a, b, "{d}");
        }
        let plain = ok(&["view", d, "--event-ids"]);
        assert_eq!(plain.lines().count(), ids.len());
    }
}

#[test]
fn view_text_and_branches() {
    let dir = scenario_dir("1.58.2", "chat");
    let text = ok(&["view", p(&dir)]);
    assert!(text.starts_with("# "), "{text}");
    assert!(text.contains("SDK 1.58.2 (inferred)"));
    assert!(text.contains("── [0] system"));
    let ids: Vec<String> = json_lines(&ok(&["events", "--json", p(&dir)]))
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    // The branch whose head is event 3: events 0 to 3.
    let got = json(&ok(&[
        "view",
        p(&dir),
        "--event-ids",
        "--json",
        "--branch",
        &ids[3],
    ]));
    assert_eq!(got, serde_json::json!(ids[..4]));
    let out = run(&["view", p(&dir), "--json", "--branch", "nope"]);
    assert_eq!(code(&out), 1);
    assert_eq!(stderr(&out).lines().count(), 1);
    // A forced version.
    let text = ok(&["view", p(&dir), "--sdk-version", "1.31.2"]);
    assert!(text.contains("SDK 1.31.2 (forced)"));
}
