//! Random event logs (kinds, shared ids, tool-call ids, batches, parents,
//! cycles, condensations, broken files) never make the view panic or loop,
//! and its results stay inside the conversation it was given.

use agentlog::openhands::view::{
    Entry, EventInput, SdkVersion, View, ViewInput, ViewOptions, WireOptions,
};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Kind {
    System,
    User,
    Action {
        tc: u8,
        rid: u8,
        thinking: bool,
    },
    Obs {
        tc: u8,
    },
    Error {
        tc: u8,
    },
    Reject {
        tc: u8,
    },
    Cond {
        forget: Vec<u8>,
        summary: Option<u8>,
    },
    Request,
    Pause,
    Garbage,
}

#[derive(Debug, Clone)]
struct Spec {
    id: u8,
    parent: Option<u8>,
    kind: Kind,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::System),
        Just(Kind::User),
        (0u8..6, 0u8..4, any::<bool>()).prop_map(|(tc, rid, thinking)| Kind::Action {
            tc,
            rid,
            thinking
        }),
        (0u8..6).prop_map(|tc| Kind::Obs { tc }),
        (0u8..6).prop_map(|tc| Kind::Error { tc }),
        (0u8..6).prop_map(|tc| Kind::Reject { tc }),
        (
            proptest::collection::vec(0u8..24, 0..5),
            proptest::option::of(0u8..8)
        )
            .prop_map(|(forget, summary)| Kind::Cond { forget, summary }),
        Just(Kind::Request),
        Just(Kind::Pause),
        Just(Kind::Garbage),
    ]
}

fn spec() -> impl Strategy<Value = Spec> {
    (0u8..24, proptest::option::of(0u8..26), kind()).prop_map(|(id, parent, kind)| Spec {
        id,
        parent,
        kind,
    })
}

fn id(n: u8) -> String {
    if n == 24 {
        "__root__".to_owned()
    } else if n == 25 {
        "nowhere".to_owned()
    } else {
        format!("e{n}")
    }
}

fn json(s: &Spec) -> String {
    let parent = s
        .parent
        .map_or(String::new(), |p| format!(r#","parent_id":"{}""#, id(p)));
    let head = format!(
        r#"{{"id":"{}","timestamp":"t","source":"agent"{parent}"#,
        id(s.id)
    );
    let t = r#"{"cache_prompt":false,"type":"text","text":"x"}"#;
    let body = match &s.kind {
        Kind::System => format!(r#","system_prompt":{t},"tools":[],"kind":"SystemPromptEvent"}}"#),
        Kind::User => {
            format!(r#","llm_message":{{"role":"user","content":[{t}]}},"kind":"MessageEvent"}}"#)
        }
        Kind::Action { tc, rid, thinking } => {
            let blocks = if *thinking {
                r#"[{"type":"thinking","thinking":"h"}]"#
            } else {
                "[]"
            };
            format!(
                r#","thought":[],"thinking_blocks":{blocks},"tool_name":"terminal","tool_call_id":"t{tc}","tool_call":{{"id":"t{tc}","name":"terminal","arguments":"{{}}","origin":"completion"}},"llm_response_id":"r{rid}","kind":"ActionEvent"}}"#
            )
        }
        Kind::Obs { tc } => format!(
            r#","tool_name":"terminal","tool_call_id":"t{tc}","observation":{{"content":[{t}],"metadata":{{"exit_code":0}},"kind":"TerminalObservation"}},"action_id":"a","kind":"ObservationEvent"}}"#
        ),
        Kind::Error { tc } => format!(
            r#","tool_name":"terminal","tool_call_id":"t{tc}","error":"boom","kind":"AgentErrorEvent"}}"#
        ),
        Kind::Reject { tc } => format!(
            r#","tool_name":"terminal","tool_call_id":"t{tc}","action_id":"a","kind":"UserRejectObservation"}}"#
        ),
        Kind::Cond { forget, summary } => {
            let f: Vec<String> = forget
                .iter()
                .map(|n| {
                    if n % 5 == 0 {
                        format!(r#""{}-summary""#, id(*n))
                    } else {
                        format!(r#""{}""#, id(*n))
                    }
                })
                .collect();
            let s = summary.map_or(String::new(), |o| {
                format!(r#","summary":"sum","summary_offset":{o}"#)
            });
            format!(
                r#","forgotten_event_ids":[{}]{s},"llm_response_id":"c","kind":"Condensation"}}"#,
                f.join(",")
            )
        }
        Kind::Request => r#","kind":"CondensationRequest"}"#.to_owned(),
        Kind::Pause => r#","kind":"PauseEvent"}"#.to_owned(),
        Kind::Garbage => return format!("{head},"),
    };
    format!("{head}{body}")
}

const VERSIONS: [SdkVersion; 8] = [
    SdkVersion::V1_0_0,
    SdkVersion::new(1, 6, 0),
    SdkVersion::new(1, 9, 1),
    SdkVersion::V1_10_0,
    SdkVersion::V1_11_5,
    SdkVersion::new(1, 26, 0),
    SdkVersion::new(1, 33, 0),
    SdkVersion::LATEST,
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_logs_never_panic(
        specs in proptest::collection::vec(spec(), 0..24),
        leaf in proptest::option::of(0u8..26),
        v in 0usize..VERSIONS.len(),
        forced in any::<bool>(),
    ) {
        let texts: Vec<(String, String)> = specs.iter().map(|s| (id(s.id), json(s))).collect();
        let state = leaf.map(|l| format!(r#"{{"leaf_event_id":"{}","head_is_empty":false}}"#, id(l)));
        let input = ViewInput {
            events: texts
                .iter()
                .enumerate()
                .map(|(i, (fid, raw))| EventInput { index: i, file_id: fid, raw: raw.as_bytes() })
                .collect(),
            base_state: state.as_deref().map(str::as_bytes),
            sidecars: None,
        };
        let options = ViewOptions {
            version: forced.then_some(VERSIONS[v]),
            ..Default::default()
        };
        let view = View::build(&input, &options);
        let n = view.events().len();
        prop_assert_eq!(n, specs.len());
        let conversation = view.conversation().to_vec();
        for e in view.entries() {
            match *e {
                Entry::Event(p) | Entry::Summary(p) => {
                    prop_assert!(p < n);
                    prop_assert!(conversation.contains(&p));
                }
            }
        }
        prop_assert!(view.messages().len() <= view.context().len());
        let version = view.version().version;
        let sdk = view.sdk_messages();
        prop_assert_eq!(sdk.len(), view.messages().len());
        let wire = view.wire_messages_with(&WireOptions {
            prompt_caching: true,
            vision: true,
            function_calling: true,
            ..Default::default()
        });
        prop_assert_eq!(wire.len(), view.messages().len());
        let strings = view.wire_messages_with(&WireOptions::default());
        prop_assert_eq!(strings.len(), view.messages().len());
        // Every branch walk ends (cycles are cut) and stays in range.
        for b in view.tree().branches() {
            prop_assert!(b.events.len() <= n);
        }
        let _ = view.tree().cycles();
        let _ = version;
    }
}
