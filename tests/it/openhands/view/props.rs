//! Random event logs (kinds, shared ids, tool-call ids, batches, parents,
//! cycles, condensations, broken files) never make the view panic or loop;
//! on every generated log the view meets the invariants the `view` fuzz
//! target checks (`fuzz_checks::view`: no event twice in a branch, the head
//! is the active branch's last event, every cycle reported), and its tree
//! agrees with one worked out here from the log's description: each
//! event's parent, the events on cycles, and the active branch's path.

use crate::fuzz_checks;

use std::collections::{BTreeSet, HashMap};

use agentlog::openhands::view::{
    EventInput, Head, Parent, PathFault, SdkVersion, View, ViewEntry, ViewInput, ViewOptions,
    WireOptions,
};
use fuzz_checks::ViewCase;
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

/// Each event's parent, from the log's description: `parent_id` names the
/// first event of that id (else it dangles), `__root__` is none, and an
/// event without one (or that does not parse) follows the one before it.
fn expected_parents(specs: &[Spec]) -> Vec<Parent> {
    let mut first: HashMap<u8, usize> = HashMap::new();
    for (pos, s) in specs.iter().enumerate() {
        first.entry(s.id).or_insert(pos);
    }
    specs
        .iter()
        .enumerate()
        .map(|(pos, s)| match (s.parent, &s.kind) {
            (Some(24), k) if !matches!(k, Kind::Garbage) => Parent::Root,
            (Some(p), k) if !matches!(k, Kind::Garbage) => match first.get(&p) {
                Some(&q) => Parent::Explicit(q),
                None => Parent::Dangling(id(p)),
            },
            _ if pos == 0 => Parent::Root,
            _ => Parent::Legacy(pos - 1),
        })
        .collect()
}

fn position(p: &Parent) -> Option<usize> {
    match p {
        Parent::Explicit(q) | Parent::Legacy(q) => Some(*q),
        Parent::Root | Parent::Dangling(_) => None,
    }
}

/// The positions on a cycle of parent links: those a walk from themselves
/// comes back to.
fn on_cycles(parents: &[Parent]) -> BTreeSet<usize> {
    (0..parents.len())
        .filter(|&start| {
            let mut cur = position(&parents[start]);
            for _ in 0..parents.len() {
                match cur {
                    Some(p) if p == start => return true,
                    Some(p) => cur = position(&parents[p]),
                    None => return false,
                }
            }
            false
        })
        .collect()
}

/// The path from the root to `pos`, walked here: parent links followed
/// until a root, a dangling parent, or an event met before.
fn expected_path(parents: &[Parent], pos: usize) -> (Vec<usize>, Option<PathFault>) {
    let mut seen = BTreeSet::new();
    let mut path = Vec::new();
    let mut fault = None;
    let mut cur = Some(pos);
    while let Some(p) = cur {
        if !seen.insert(p) {
            fault = Some(PathFault::Cycle(p));
            break;
        }
        path.push(p);
        cur = match &parents[p] {
            Parent::Dangling(id) => {
                fault = Some(PathFault::Dangling(p, id.clone()));
                None
            }
            other => position(other),
        };
    }
    path.reverse();
    (path, fault)
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
                ViewEntry::Event(p) | ViewEntry::Summary(p) => {
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
        // The tree, against the one worked out from the description.
        let tree = view.tree();
        let parents = expected_parents(&specs);
        prop_assert_eq!(tree.parents(), &parents[..]);
        let cyclic = on_cycles(&parents);
        let cycles = tree.cycles();
        let reported: BTreeSet<usize> = cycles.iter().flatten().copied().collect();
        prop_assert_eq!(&reported, &cyclic, "the events on cycles");
        for c in &cycles {
            // A reported cycle is one: each event's parent is the next.
            let set: BTreeSet<usize> = c.iter().copied().collect();
            prop_assert_eq!(set.len(), c.len(), "a cycle repeats an event");
            for &p in c {
                prop_assert!(position(&parents[p]).is_some_and(|q| set.contains(&q)));
            }
        }
        let active = tree.active_branch();
        match tree.head() {
            Head::Event(h) => {
                let (path, fault) = expected_path(&parents, *h);
                prop_assert_eq!(&active.events, &path);
                prop_assert_eq!(&active.fault, &fault);
                prop_assert_eq!(active.events.last(), Some(h), "the head ends the branch");
            }
            _ => prop_assert!(active.events.is_empty()),
        }
        for p in 0..n {
            let (path, fault) = expected_path(&parents, p);
            let b = tree.path_to_root(p);
            prop_assert_eq!(&b.events, &path);
            prop_assert_eq!(&b.fault, &fault);
        }
        for b in tree.branches() {
            let set: BTreeSet<usize> = b.events.iter().copied().collect();
            prop_assert_eq!(set.len(), b.events.len(), "a branch repeats an event");
        }
        let _ = version;
        // And everything the `view` fuzz target checks.
        fuzz_checks::view(&ViewCase {
            events: texts.iter().map(|(fid, raw)| (fid.clone(), raw.clone().into_bytes())).collect(),
            state: state.map(String::into_bytes),
            sidecars: None,
            version: options.version,
            head: None,
        });
    }
}
