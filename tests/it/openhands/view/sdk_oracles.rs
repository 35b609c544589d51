//! The view against the SDK's own oracles, for every conversation of the
//! shared corpus: the detected version range, view event ids, active
//! branch, SDK messages and wire messages — compared as JSON values, and
//! then their member order too (the compact serializations are equal).

use agentlog::json::OwnedValue;
use agentlog::openhands::read_conversation;
use agentlog::openhands::view::{SdkVersion, View, ViewEntry, ViewOptions};

use crate::common;
use crate::common::openhands::{OracleCase, compact, first_difference, oracle_cases};

/// Checks one conversation; returns the failures.
fn check(case: &OracleCase, sdk: SdkVersion) -> (Vec<String>, String) {
    let mut fails = Vec::new();
    let conv = &case.oracle;
    let read = read_conversation(&case.dir).expect("conversation");
    let view = View::from_conversation(&read, &ViewOptions::default());
    let d = view.version();
    let detected = format!(
        "detected {} in [{}, {})",
        d.version,
        d.min,
        d.max_exclusive.map_or("-".to_owned(), |m| m.to_string())
    );
    let in_range = d.min <= sdk && d.max_exclusive.is_none_or(|m| sdk < m);
    if !in_range || d.conflicting || view.version().version.algorithm() != sdk.algorithm() {
        fails.push(format!(
            "detected {} (range {}..{:?}, conflicting {}) for an SDK {sdk} directory",
            view.version().version,
            view.version().min,
            view.version().max_exclusive.map(|v| v.to_string()),
            d.conflicting
        ));
    }
    // View event ids.
    let oracle_ids: Vec<&str> = conv
        .get("view_event_ids")
        .and_then(OwnedValue::as_array)
        .expect("view_event_ids")
        .iter()
        .filter_map(OwnedValue::as_str)
        .collect();
    let event_ids: std::collections::HashSet<&str> =
        view.events().iter().map(|e| e.id.as_ref()).collect();
    let ours = view.event_ids();
    let ids_ok = ours.len() == oracle_ids.len()
        && view
            .entries()
            .iter()
            .zip(&ours)
            .zip(&oracle_ids)
            .all(|((e, o), t)| {
                match e {
                    // Before 1.10.0 the SDK gives the summary a random id.
                    ViewEntry::Summary(_) if sdk < SdkVersion::V1_10_0 => !event_ids.contains(t),
                    _ => o == t,
                }
            });
    if !ids_ok {
        fails.push(format!(
            "view ids\n  ours   {ours:?}\n  oracle {oracle_ids:?}"
        ));
    }
    // Active branch.
    if let Some(OwnedValue::Array(branch)) = conv.get("active_branch") {
        let theirs: Vec<&str> = branch.iter().filter_map(OwnedValue::as_str).collect();
        let ours = view.active_branch_ids();
        if ours != theirs {
            fails.push(format!(
                "active branch\n  ours   {ours:?}\n  oracle {theirs:?}"
            ));
        }
    }
    let next = conv.get("next_messages").expect("next_messages");
    let theirs = next
        .get("messages")
        .and_then(OwnedValue::as_array)
        .expect("messages");
    let ours = view.sdk_messages();
    if let Some(d) = first_difference(&ours, theirs) {
        fails.push(format!("sdk messages: {d}"));
    } else if ours.iter().map(compact).ne(theirs.iter().map(compact)) {
        fails.push("sdk messages: same values, other member order".to_owned());
    }
    let theirs = next
        .get("wire_messages")
        .and_then(OwnedValue::as_array)
        .expect("wire_messages");
    let ours = view.wire_messages();
    if let Some(d) = first_difference(&ours, theirs) {
        fails.push(format!("wire messages: {d}"));
    } else if ours.iter().map(compact).ne(theirs.iter().map(compact)) {
        fails.push("wire messages: same values, other member order".to_owned());
    }
    (fails, detected)
}

#[test]
fn every_corpus_conversation_matches_its_oracle() {
    let mut report = Vec::new();
    let mut failed = 0;
    let cases = oracle_cases();
    for case in &cases {
        let sdk = SdkVersion::parse(&case.sdk).expect("sdk_version");
        let (fails, detected) = check(case, sdk);
        let status = if fails.is_empty() { "pass" } else { "FAIL" };
        report.push(format!(
            "{status} {sdk} {} {} ({detected})",
            case.scenario, case.rel
        ));
        if !fails.is_empty() {
            failed += 1;
            for x in fails {
                report.push(format!("    {x}"));
            }
        }
    }
    let total = cases.len();
    println!("{}", report.join("\n"));
    println!("{} passed, {} failed", total - failed, failed);
    assert_eq!(failed, 0, "{}", report.join("\n"));
}

/// The comparison above can fail: the same directories viewed as another
/// SDK version differ from their oracles.
#[test]
fn a_forced_wrong_version_differs_from_the_oracle() {
    let root = common::corpus_dir().join("openhands");
    for (version, scenario, forced) in [
        ("1.58.2", "reasoning", SdkVersion::V1_0_0),
        ("1.0.0", "parallel", SdkVersion::LATEST),
        ("1.7.4", "chat", SdkVersion::LATEST),
    ] {
        let bytes = std::fs::read(root.join(version).join(format!("{scenario}.oracle.json")))
            .expect("oracle");
        let oracle = OwnedValue::parse(&bytes).expect("json");
        let conv = &oracle
            .get("conversations")
            .and_then(OwnedValue::as_array)
            .expect("conversations")[0];
        let rel = conv.get("path").and_then(OwnedValue::as_str).expect("path");
        let read =
            read_conversation(root.join(version).join(scenario).join(rel)).expect("conversation");
        let options = ViewOptions {
            version: Some(forced),
            ..Default::default()
        };
        let view = View::from_conversation(&read, &options);
        assert!(view.version().forced);
        let next = conv.get("next_messages").expect("next");
        let sdk = next
            .get("messages")
            .and_then(OwnedValue::as_array)
            .expect("m");
        let wire = next
            .get("wire_messages")
            .and_then(OwnedValue::as_array)
            .expect("w");
        assert!(
            first_difference(&view.sdk_messages(), sdk).is_some()
                || first_difference(&view.wire_messages(), wire).is_some(),
            "{version}/{scenario} forced to {forced} still matched"
        );
    }
}
