//! Hand-made conversations, one per rule of the view and version range:
//! condensations and summaries, batch atomicity, tool-call matching,
//! observation uniqueness, tool-loop atomicity, message merging, the event
//! tree (navigation, cycles, dangling parents, head fallbacks) and version
//! detection.

use agentlog::json::OwnedValue;
use agentlog::openhands::view::{
    EventInput, EventProblem, Evidence, Head, Role, SdkVersion, Sidecars, View, ViewEntry,
    ViewInput, ViewIssue, ViewOptions,
};

/// One synthetic event: its id and JSON text.
struct Ev {
    id: String,
    json: String,
}

fn obj(id: &str, parent: Option<&str>, body: &str, kind: &str) -> Ev {
    let parent = parent.map_or(String::new(), |p| format!(r#","parent_id":"{p}""#));
    Ev {
        id: id.to_owned(),
        json: format!(
            r#"{{"id":"{id}","timestamp":"2026-01-01T00:00:00","source":"agent"{parent}{body},"kind":"{kind}"}}"#
        ),
    }
}

fn text(t: &str) -> String {
    format!(r#"{{"cache_prompt":false,"type":"text","text":"{t}"}}"#)
}

fn sys(id: &str) -> Ev {
    obj(
        id,
        None,
        &format!(r#","system_prompt":{},"tools":[]"#, text("sys")),
        "SystemPromptEvent",
    )
}

fn user_p(id: &str, t: &str, parent: Option<&str>) -> Ev {
    obj(
        id,
        parent,
        &format!(
            r#","llm_message":{{"role":"user","content":[{}],"thinking_blocks":[]}},"activated_skills":[],"extended_content":[]"#,
            text(t)
        ),
        "MessageEvent",
    )
}

fn user(id: &str, t: &str) -> Ev {
    user_p(id, t, None)
}

fn action_full(id: &str, tcid: &str, rid: &str, thought: &str, thinking: bool, rri: bool) -> Ev {
    let thought = if thought.is_empty() {
        "[]".to_owned()
    } else {
        format!("[{}]", text(thought))
    };
    let blocks = if thinking {
        r#"[{"type":"thinking","thinking":"hmm","signature":"sig"}]"#
    } else {
        "[]"
    };
    let rri = if rri {
        r#","responses_reasoning_item":{"id":"rs_1","summary":["s"]}"#
    } else {
        ""
    };
    obj(
        id,
        None,
        &format!(
            r#","thought":{thought},"thinking_blocks":{blocks}{rri},"action":{{"command":"ls","kind":"TerminalAction"}},"tool_name":"terminal","tool_call_id":"{tcid}","tool_call":{{"id":"{tcid}","name":"terminal","arguments":"{{}}","origin":"completion"}},"llm_response_id":"{rid}","security_risk":"UNKNOWN""#
        ),
        "ActionEvent",
    )
}

fn action(id: &str, tcid: &str, rid: &str) -> Ev {
    action_full(id, tcid, rid, "", false, false)
}

fn obs(id: &str, tcid: &str, t: &str) -> Ev {
    obj(
        id,
        None,
        &format!(
            r#","tool_name":"terminal","tool_call_id":"{tcid}","observation":{{"content":[{}],"is_error":false,"command":"ls","exit_code":0,"timeout":false,"metadata":{{"exit_code":0,"pid":-1,"working_dir":"/w","prefix":"","suffix":""}},"kind":"TerminalObservation"}},"action_id":"x""#,
            text(t)
        ),
        "ObservationEvent",
    )
}

fn agent_error(id: &str, tcid: &str, t: &str) -> Ev {
    obj(
        id,
        None,
        &format!(r#","tool_name":"terminal","tool_call_id":"{tcid}","error":"{t}""#),
        "AgentErrorEvent",
    )
}

fn cond(id: &str, forgotten: &[&str], summary: Option<&str>, offset: Option<usize>) -> Ev {
    let f: Vec<String> = forgotten.iter().map(|x| format!(r#""{x}""#)).collect();
    let s = summary.map_or(String::new(), |s| format!(r#","summary":"{s}""#));
    let o = offset.map_or(String::new(), |o| format!(r#","summary_offset":{o}"#));
    obj(
        id,
        None,
        &format!(
            r#","forgotten_event_ids":[{}]{s}{o},"llm_response_id":"cond""#,
            f.join(",")
        ),
        "Condensation",
    )
}

fn plain(id: &str, kind: &str, parent: Option<&str>) -> Ev {
    obj(id, parent, "", kind)
}

fn with_parent(mut e: Ev, parent: &str) -> Ev {
    e.json = e.json.replacen(
        r#","source":"agent""#,
        &format!(r#","source":"agent","parent_id":"{parent}""#),
        1,
    );
    e
}

fn input<'a>(events: &'a [Ev], state: Option<&'a str>) -> ViewInput<'a> {
    ViewInput {
        events: events
            .iter()
            .enumerate()
            .map(|(i, e)| EventInput {
                index: i,
                file_id: &e.id,
                raw: e.json.as_bytes(),
            })
            .collect(),
        base_state: state.map(str::as_bytes),
        sidecars: None,
    }
}

fn view_at<'a>(events: &'a [Ev], version: SdkVersion) -> View<'a> {
    View::build(
        &input(events, None),
        &ViewOptions {
            version: Some(version),
            ..Default::default()
        },
    )
}

fn ids(v: &View<'_>) -> Vec<String> {
    v.event_ids().into_iter().map(|s| s.into_owned()).collect()
}

/// The view's event ids of `events` at each version of a row are the row's
/// ids: a table of (versions, ids).
fn assert_ids(events: &[Ev], rows: &[(&[SdkVersion], &[&str])]) {
    for (versions, want) in rows {
        for &v in *versions {
            assert_eq!(ids(&view_at(events, v)), *want, "{v}");
        }
    }
}

const OLD: SdkVersion = SdkVersion::new(1, 9, 1);
const MID: SdkVersion = SdkVersion::new(1, 11, 4);
const NEW: SdkVersion = SdkVersion::LATEST;

#[test]
fn later_condensation_forgets_an_earlier_summary() {
    let events = [
        sys("s"),
        user("u1", "one"),
        cond("c1", &["u1"], Some("sum1"), Some(1)),
        user("u2", "two"),
        cond("c2", &["c1-summary", "u2"], Some("sum2"), Some(1)),
        user("u3", "three"),
    ];
    assert_ids(&events, &[(&[MID, NEW], &["s", "c2-summary", "u3"])]);
    // Without forgetting it, both summaries stay (1.10.0+).
    let events = [
        sys("s"),
        user("u1", "one"),
        cond("c1", &["u1"], Some("sum1"), Some(1)),
        user("u2", "two"),
        cond("c2", &["u2"], Some("sum2"), Some(2)),
        user("u3", "three"),
    ];
    let view = view_at(&events, NEW);
    assert_eq!(ids(&view), ["s", "c1-summary", "c2-summary", "u3"]);
    // Both summaries and the user message merge into one user turn (1.26+).
    let msgs = view.messages();
    assert_eq!(msgs.len(), 2);
    let texts: Vec<&str> = msgs[1].content.iter().filter_map(|c| c.as_text()).collect();
    assert_eq!(texts, ["sum1", "sum2", "three"]);
    // Before 1.26 they stay separate messages.
    assert_eq!(view_at(&events, MID).messages().len(), 4);
    // Before 1.10 every condensation's ids are forgotten at once and only
    // the latest summary is shown, at its offset in the kept events.
    let view = view_at(&events, OLD);
    assert_eq!(
        view.entries(),
        [
            ViewEntry::Event(0),
            ViewEntry::Event(5),
            ViewEntry::Summary(4)
        ]
    );
}

#[test]
fn summary_offset_past_the_end_appends() {
    let events = [
        sys("s"),
        user("u1", "one"),
        cond("c1", &["u1"], Some("sum"), Some(99)),
    ];
    for v in [OLD, MID, NEW] {
        let view = view_at(&events, v);
        assert_eq!(ids(&view), ["s", "c1-summary"], "{v}");
        let last = view.messages().last().expect("a message");
        assert_eq!(last.role, Role::User);
        assert_eq!(last.content[0].as_text(), Some("sum"));
    }
    // A summary without an offset is not inserted.
    let events = [
        sys("s"),
        user("u1", "one"),
        cond("c1", &["u1"], Some("x"), None),
    ];
    assert_eq!(ids(&view_at(&events, NEW)), ["s"]);
}

#[test]
fn half_forgotten_batch_is_dropped_whole() {
    let events = [
        sys("s"),
        user("u", "go"),
        action("a1", "t1", "r"),
        action("a2", "t2", "r"),
        obs("o1", "t1", "x"),
        obs("o2", "t2", "y"),
        cond("c", &["a1"], None, None),
        user("u2", "next"),
    ];
    assert_ids(&events, &[(&[OLD, MID, NEW], &["s", "u", "u2"])]);
    // Intact, the batch is one assistant message with two calls.
    let events = [
        sys("s"),
        user("u", "go"),
        action("a1", "t1", "r"),
        action("a2", "t2", "r"),
        obs("o1", "t1", "x"),
        obs("o2", "t2", "y"),
    ];
    let view = view_at(&events, NEW);
    let m = &view.messages()[2];
    assert_eq!(m.role, Role::Assistant);
    assert_eq!(m.tool_calls.as_ref().map(Vec::len), Some(2));
    assert_eq!(view.messages().len(), 5);
}

#[test]
fn unmatched_calls_and_results_are_dropped() {
    let events = [
        sys("s"),
        user("u", "go"),
        action("a1", "t1", "r1"),
        obs("o9", "t9", "orphan"),
    ];
    // 1.0.0 without a condenser sends every LLM-convertible event: the
    // view drops them, the messages keep them.
    assert_ids(
        &events,
        &[(&[SdkVersion::V1_0_0, OLD, MID, NEW], &["s", "u"])],
    );
    let view = view_at(&events, SdkVersion::V1_0_0);
    assert_eq!(view.context().len(), 4);
    assert_eq!(view.messages().len(), 4);
    // With a condenser in the state, 1.0.0 uses the view.
    let state = r#"{"agent":{"llm":{"model":"m"},"condenser":{"kind":"LLMSummarizingCondenser"}}}"#;
    let view = View::build(
        &input(&events, Some(state)),
        &ViewOptions {
            version: Some(SdkVersion::V1_0_0),
            ..Default::default()
        },
    );
    assert_eq!(view.messages().len(), 2);
}

#[test]
fn pairing_drops_the_rest_of_a_batch_from_1_7() {
    // a2's result is missing: from 1.7.0 the whole batch and o1 go.
    let events = [
        sys("s"),
        user("u", "go"),
        action("a1", "t1", "r"),
        action("a2", "t2", "r"),
        obs("o1", "t1", "x"),
    ];
    assert_ids(
        &events,
        &[
            (&[SdkVersion::new(1, 6, 0)], &["s", "u", "a1", "o1"]),
            (&[SdkVersion::V1_7_0, OLD, MID, NEW], &["s", "u"]),
        ],
    );
}

#[test]
fn duplicate_observation_first_wins_from_1_20_1() {
    let events = [
        sys("s"),
        user("u", "go"),
        action("a1", "t1", "r"),
        agent_error("e1", "t1", "interrupted"),
        obs("o1", "t1", "late"),
    ];
    let view = view_at(&events, NEW);
    assert_eq!(ids(&view), ["s", "u", "a1", "e1"]);
    let tool: Vec<_> = view
        .messages()
        .iter()
        .filter(|m| m.role == Role::Tool)
        .collect();
    assert_eq!(tool.len(), 1);
    assert_eq!(tool[0].content[0].as_text(), Some("interrupted"));
    // Before 1.20.1 both results stay.
    let view = view_at(&events, SdkVersion::new(1, 20, 0));
    assert_eq!(ids(&view), ["s", "u", "a1", "e1", "o1"]);
}

#[test]
fn tool_loop_is_atomic_from_1_11_5() {
    // A loop starts at a1 (thinking blocks) and runs through o2; forgetting
    // a2's batch partially-removes the loop, so the whole loop goes.
    let events = [
        sys("s"),
        user("u", "go"),
        action_full("a1", "t1", "r1", "", true, false),
        obs("o1", "t1", "x"),
        action("a2", "t2", "r2"),
        obs("o2", "t2", "y"),
        cond("c", &["a2", "o2"], None, None),
        user("u2", "next"),
    ];
    // 1.11.4 has no tool-loop rule.
    assert_ids(
        &events,
        &[
            (&[NEW], &["s", "u", "u2"]),
            (&[MID], &["s", "u", "a1", "o1", "u2"]),
        ],
    );
}

#[test]
fn reasoning_item_survives_a_merged_batch_from_1_43() {
    let events = [
        sys("s"),
        user("u", "go"),
        action_full("a1", "t1", "r", "thinking out loud", false, true),
        action("a2", "t2", "r"),
        obs("o1", "t1", "x"),
        obs("o2", "t2", "y"),
    ];
    let m = |v| view_at(&events, v).messages()[2].clone();
    assert!(m(NEW).responses_reasoning_item.is_some());
    assert!(
        m(SdkVersion::new(1, 42, 1))
            .responses_reasoning_item
            .is_none()
    );
    assert_eq!(m(NEW).content[0].as_text(), Some("thinking out loud"));
    // A single call keeps it in every version.
    let single = [
        sys("s"),
        user("u", "go"),
        action_full("a1", "t1", "r", "", false, true),
        obs("o1", "t1", "x"),
    ];
    let v = view_at(&single, SdkVersion::new(1, 30, 0));
    assert!(v.messages()[2].responses_reasoning_item.is_some());
}

#[test]
fn branch_abandoned_by_navigation() {
    let events = [
        sys("s"),
        user_p("u1", "first", Some("s")),
        with_parent(action("a", "t", "r"), "u1"),
        with_parent(obs("o", "t", "x"), "a"),
        user_p("u2", "again", Some("u1")),
    ];
    let state = r#"{"leaf_event_id":"u2","head_is_empty":false}"#;
    let view = View::build(&input(&events, Some(state)), &ViewOptions::default());
    assert!(view.version().version >= SdkVersion::V1_31_0);
    assert_eq!(view.active_branch_ids(), ["s", "u1", "u2"]);
    assert_eq!(ids(&view), ["s", "u1", "u2"]);
    let abandoned = view.tree().abandoned_branches();
    assert_eq!(abandoned.len(), 1);
    assert_eq!(abandoned[0].events, [0, 1, 2, 3]);
    assert_eq!(view.branch_ids(&abandoned[0]), ["s", "u1", "a", "o"]);
    assert_eq!(view.tree().branches().len(), 2);
    // u1 and u2 are consecutive plain user messages: one turn.
    assert_eq!(view.messages().len(), 2);
    // Viewing the other branch.
    let other = View::build(
        &input(&events, Some(state)),
        &ViewOptions {
            head: Some("o".to_owned()),
            ..Default::default()
        },
    );
    assert_eq!(ids(&other), ["s", "u1", "a", "o"]);
}

#[test]
fn cycles_and_dangling_parents_are_reported_not_looped_on() {
    let events = [
        sys("s"),
        user_p("u1", "a", Some("u2")),
        user_p("u2", "b", Some("u1")),
        user_p("u3", "c", Some("nowhere")),
    ];
    let state = r#"{"leaf_event_id":"u2","head_is_empty":false}"#;
    let view = View::build(&input(&events, Some(state)), &ViewOptions::default());
    assert!(view.issues().contains(&ViewIssue::Cycle(vec![1, 2])));
    assert!(view.issues().contains(&ViewIssue::DanglingParent {
        index: 3,
        parent_id: "nowhere".to_owned()
    }));
    assert!(
        view.issues()
            .iter()
            .any(|i| matches!(i, ViewIssue::BrokenBranch(_)))
    );
    assert_eq!(view.tree().active_branch().events, [1, 2]);
    assert_eq!(view.tree().cycles(), [vec![1, 2]]);
    // A head naming no event.
    let state = r#"{"leaf_event_id":"ghost","head_is_empty":false}"#;
    let view = View::build(&input(&events, Some(state)), &ViewOptions::default());
    assert_eq!(view.tree().head(), &Head::Dangling("ghost".to_owned()));
    assert!(view.entries().is_empty());
}

#[test]
fn head_fallback_follows_the_version() {
    // No leaf recorded; the last event is a ConversationErrorEvent with a
    // parent_id.
    let events = [
        sys("s"),
        user_p("u", "hi", Some("s")),
        plain("err", "ConversationErrorEvent", Some("u")),
    ];
    let state = r#"{"head_is_empty":false}"#;
    let at = |v| {
        View::build(
            &input(&events, Some(state)),
            &ViewOptions {
                version: Some(v),
                ..Default::default()
            },
        )
    };
    // 1.35+: the last event that is not an artifact.
    assert_eq!(at(NEW).tree().head(), &Head::Event(1));
    // 1.31–1.34: none, because the last event has a parent_id.
    assert_eq!(at(SdkVersion::new(1, 33, 0)).tree().head(), &Head::Empty);
    // A recorded leaf naming the error event makes it the head (the SDK
    // does; the Go reference says it never is).
    let state = r#"{"leaf_event_id":"err","head_is_empty":false}"#;
    let v = View::build(&input(&events, Some(state)), &ViewOptions::default());
    assert_eq!(v.tree().head(), &Head::Event(2));
    assert_eq!(v.active_branch_ids(), ["s", "u", "err"]);
    // head_is_empty: no branch at all.
    let state = r#"{"head_is_empty":true}"#;
    let v = View::build(&input(&events, Some(state)), &ViewOptions::default());
    assert_eq!(v.tree().head(), &Head::Empty);
    assert!(v.messages().is_empty());
    // A legacy log (no parent_id anywhere) is one chain.
    let legacy = [sys("s"), user("u", "hi"), plain("p", "PauseEvent", None)];
    let v = view_at(&legacy, NEW);
    assert_eq!(v.active_branch_ids(), ["s", "u", "p"]);
}

#[test]
fn malformed_event_is_reported_and_the_rest_read() {
    let mut events = vec![sys("s"), user("u1", "a"), user("u2", "b")];
    events[1].json = r#"{"id":"u1", "#.to_owned();
    let view = view_at(&events, NEW);
    assert!(view.issues().iter().any(|i| matches!(
        i,
        ViewIssue::Event {
            index: 1,
            problem: EventProblem::Malformed { .. }
        }
    )));
    assert_eq!(ids(&view), ["s", "u2"]);
    // An action without its tool call.
    let mut events = vec![sys("s"), action("a", "t", "r")];
    events[1].json = events[1]
        .json
        .replace(r#""tool_call":"#, r#""tool_callx":"#);
    let view = view_at(&events, NEW);
    assert!(view.issues().iter().any(|i| matches!(
        i,
        ViewIssue::Event {
            problem: EventProblem::MissingMember("tool_call"),
            ..
        }
    )));
}

#[test]
fn version_is_detected_from_the_files() {
    // Compact JSON, tree, length marker: the newest release.
    let events = [sys("s"), user_p("u", "hi", Some("s"))];
    let mut inp = input(
        &events,
        Some(
            r#"{"head_is_empty":false,"activated_path_rules":[],"tags":{},"blocked_actions":{},"agent_state":{},"invoked_skills":[]}"#,
        ),
    );
    inp.sidecars = Some(Sidecars {
        eventlog_lock: true,
        length_marker: true,
    });
    let v = View::build(&inp, &ViewOptions::default());
    assert_eq!(v.version().version, SdkVersion::LATEST);
    assert!(v.version().evidence.contains(&Evidence::LengthMarker));
    // 1.0.0 style: kind first, spaced, Message flags without
    // send_reasoning_content.
    let old = [
        Ev {
            id: "s".into(),
            json: r#"{"kind": "SystemPromptEvent", "id": "s", "timestamp": "t", "source": "agent", "system_prompt": {"cache_prompt": false, "type": "text", "text": "sys"}, "tools": [{"type": "function", "function": {"name": "x"}}]}"#.into(),
        },
        Ev {
            id: "u".into(),
            json: r#"{"kind": "MessageEvent", "id": "u", "timestamp": "t", "source": "user", "llm_message": {"role": "user", "content": [{"cache_prompt": false, "type": "text", "text": "hi"}], "cache_enabled": false, "vision_enabled": false, "function_calling_enabled": false, "force_string_serializer": false, "thinking_blocks": []}}"#.into(),
        },
    ];
    let v = View::build(&input(&old, None), &ViewOptions::default());
    assert_eq!(v.version().version, SdkVersion::V1_0_0);
    let dump = &v.sdk_messages()[1];
    assert_eq!(dump.get("cache_enabled"), Some(&OwnedValue::Bool(false)));
    assert!(dump.get("send_reasoning_content").is_none());
    // The same events in a conversation a newer SDK resumed (its state has
    // the 1.34+ members): the newest writer is reproduced, the mix is
    // reported.
    let state = r#"{"head_is_empty":false,"activated_path_rules":[],"tags":{}}"#;
    let v = View::build(&input(&old, Some(state)), &ViewOptions::default());
    assert!(v.version().version >= SdkVersion::new(1, 34, 0));
    assert!(v.version().conflicting);
    assert!(v.issues().contains(&ViewIssue::ConflictingEvidence));
    assert!(v.sdk_messages()[1].get("cache_enabled").is_none());
}

#[test]
fn observation_renderings_reach_the_messages() {
    let events = [
        sys("s"),
        user("u", "go"),
        action("a1", "t1", "r1"),
        obs("o1", "t1", "out"),
    ];
    let view = view_at(&events, NEW);
    let tool = &view.messages()[3];
    assert_eq!(tool.role, Role::Tool);
    assert_eq!(tool.name.as_deref(), Some("terminal"));
    assert_eq!(
        tool.content[0].as_text(),
        Some("out\n[Current working directory: /w]\n[Command finished with exit code 0]")
    );
    let wire = view.wire_messages();
    assert_eq!(
        wire[3].get("tool_call_id").and_then(OwnedValue::as_str),
        Some("t1")
    );
    // An assistant turn with calls and no text has no content key from 1.1.
    assert!(wire[2].get("content").is_none());
}
