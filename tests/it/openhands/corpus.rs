//! The OpenHands reader against the real SDK's conversation directories
//! (tests/data/corpus/openhands/<version>/<scenario>/) and what the same SDK
//! version reads back from them (<scenario>.oracle.json).

use crate::common;
use crate::common::openhands::oracle_files;

use crate::fuzz_checks::same::assert_same;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use agentlog::json::{Item, OwnedValue, Parser};
use agentlog::openhands::{
    self, Conversation, FileStatus, Reader, count, find_sessions, float, hex_id, read_conversation,
};
use serde_json::Value as J;

fn corpus() -> PathBuf {
    common::corpus_dir().join("openhands")
}

/// Every (scenario dir, oracle) of the corpus.
fn oracles() -> Vec<(PathBuf, J)> {
    let out: Vec<(PathBuf, J)> = oracle_files()
        .into_iter()
        .map(|f| {
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            let scenario = f.with_file_name(name.trim_end_matches(".oracle.json"));
            let oracle: J = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
            (scenario, oracle)
        })
        .collect();
    assert!(out.len() >= 40, "corpus incomplete: {} oracles", out.len());
    out
}

fn opt_str(v: &J) -> Option<&str> {
    v.as_str()
}

#[test]
fn events_match_the_oracle() {
    let mut reader = Reader::new();
    let mut parser = Parser::new();
    let mut n_conv = 0;
    let mut n_events = 0;
    for (scenario, oracle) in oracles() {
        for c in oracle["conversations"].as_array().unwrap() {
            let rel = c["path"].as_str().unwrap();
            let dir = scenario.join(rel);
            let conv = reader.read(&dir).unwrap();
            let what = dir.display().to_string();
            n_conv += 1;
            assert_eq!(conv.name(), dir.file_name().unwrap().to_str().unwrap());
            assert_eq!(
                conv.event_file_count() as u64,
                c["event_file_count"].as_u64().unwrap(),
                "{what}"
            );
            assert_eq!(
                conv.parsed_event_count() as u64,
                c["event_count"].as_u64().unwrap(),
                "{what}"
            );
            let want = c["events"].as_array().unwrap();
            assert_eq!(conv.len(), want.len(), "{what}");
            for (ev, w) in conv.events().zip(want) {
                n_events += 1;
                let w = w.as_array().unwrap();
                assert!(ev.is_ok(), "{what}: {:?}", ev.error());
                assert_eq!(ev.index(), w[0].as_u64().unwrap(), "{what}");
                assert_eq!(ev.id(), opt_str(&w[1]), "{what}");
                assert_eq!(ev.file_id(), w[1].as_str().unwrap(), "{what}");
                assert_eq!(ev.kind_name(), opt_str(&w[2]), "{what}");
                assert_eq!(ev.source(), opt_str(&w[3]), "{what}");
                assert_eq!(ev.parent_id(), opt_str(&w[4]), "{what}");
                assert_eq!(ev.has_parent(), !w[4].is_null(), "{what}");
                assert!(
                    ev.timestamp().is_some_and(|t| openhands::parse_time(
                        t,
                        openhands::UtcOffset::UTC
                    )
                    .is_some_and(|p| p.naive)),
                    "{what}: {:?}",
                    ev.timestamp()
                );
                let raw_name = format!("event-{:05}-{}.json", ev.index(), ev.file_id());
                assert_eq!(ev.file_name(), raw_name);
                let on_disk = std::fs::read(dir.join("events").join(ev.file_name())).unwrap();
                assert_eq!(ev.raw(), &on_disk[..]);
            }
            // Every file of events/ is an event; the other files are the
            // oracle's.
            for f in conv.files() {
                assert_eq!(f.status(), FileStatus::Event, "{what}: {}", f.name());
                assert!(f.reason().is_none());
            }
            assert_eq!(conv.files().len(), conv.len());
            assert_eq!(conv.event_files().gap(), None);
            let mut got: BTreeSet<String> = conv.others().iter().cloned().collect();
            if conv.state().is_some() {
                got.insert("base_state.json".into());
            }
            if conv.meta().is_some() {
                got.insert("meta.json".into());
            }
            for s in conv.sidecars() {
                got.insert(format!("events/{s}"));
            }
            let want: BTreeSet<String> = c["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap().to_owned())
                .collect();
            assert_eq!(got, want, "{what}");
            assert_eq!(conv.units(), 1 + conv.files().len() + conv.others().len());

            // The state, as the SDK reads it.
            let bs = &c["base_state"];
            assert!(conv.state().and_then(|f| f.error()).is_none());
            let doc = conv.state().map(|f| f.open(&mut parser)).unwrap().unwrap();
            let st = doc.state();
            assert_eq!(st.id.as_deref(), bs["id"].as_str(), "{what}");
            assert_eq!(
                hex_id(st.id.as_deref().unwrap()),
                bs["id_hex"].as_str().unwrap()
            );
            assert_eq!(conv.name(), bs["id_hex"].as_str().unwrap());
            let ai = st.agent_info();
            assert_eq!(ai.kind, bs["agent_kind"].as_str(), "{what}");
            assert_eq!(ai.model, bs["llm_model"].as_str(), "{what}");
            assert_eq!(ai.usage_id, bs["llm_usage_id"].as_str(), "{what}");
            assert_eq!(
                st.execution_status.as_deref(),
                bs["execution_status"].as_str()
            );
            assert_eq!(
                st.leaf_event_id.as_deref(),
                bs["leaf_event_id"].as_str(),
                "{what}"
            );
            assert!(st.working_dir().is_some());
            // The agent's tools (by name, in order), its condenser's kind
            // (`null` for none) and the confirmation policy's kind.
            let agent = st.agent.expect("the agent");
            let tools: Vec<&str> = agent
                .get("tools")
                .and_then(|t| t.as_array())
                .expect("the agent's tools")
                .iter()
                .map(|t| {
                    t.get("name")
                        .and_then(|n| n.as_str())
                        .expect("a tool's name")
                })
                .collect();
            let want_tools: Vec<&str> = bs["tools"]
                .as_array()
                .expect("the oracle's tools")
                .iter()
                .map(|t| t.as_str().unwrap())
                .collect();
            assert_eq!(tools, want_tools, "{what}: tools");
            let condenser = agent.get("condenser").filter(|c| !c.is_null()).map(|c| {
                c.get("kind")
                    .and_then(|k| k.as_str())
                    .expect("the condenser's kind")
            });
            assert!(
                bs.get("condenser").is_some(),
                "{what}: the oracle records the condenser"
            );
            assert_eq!(condenser, bs["condenser"].as_str(), "{what}: condenser");
            let policy = st
                .confirmation_policy
                .and_then(|p| p.get("kind"))
                .and_then(|k| k.as_str());
            assert!(policy.is_some(), "{what}: no confirmation policy");
            assert_eq!(
                policy,
                bs["confirmation_policy"].as_str(),
                "{what}: confirmation_policy"
            );
            let stats = st.stats.as_ref().unwrap();
            let map = stats.usage_to_metrics.as_ref().unwrap();
            let want_keys: Vec<&str> = {
                let mut k: Vec<&str> = bs["stats"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .map(String::as_str)
                    .collect();
                k.sort();
                k
            };
            assert_eq!(map.keys(), want_keys, "{what}");
            for (k, w) in bs["stats"].as_object().unwrap() {
                let Some(Item::Ok(m)) = map.get(k) else {
                    panic!("{what}: {k}")
                };
                assert_eq!(float(m.accumulated_cost), w["accumulated_cost"].as_f64());
                let acc = m.accumulated_token_usage.as_ref().unwrap();
                assert_eq!(
                    count(acc.prompt_tokens),
                    w["prompt_tokens"].as_u64().unwrap()
                );
                assert_eq!(
                    count(acc.completion_tokens),
                    w["completion_tokens"].as_u64().unwrap()
                );
                assert_eq!(
                    m.costs.as_ref().unwrap().len() as u64,
                    w["n_costs"].as_u64().unwrap()
                );
            }
        }
    }
    assert!(
        n_conv >= 50 && n_events >= 3000,
        "{n_conv} conversations, {n_events} events"
    );
}

/// The conversations the oracles list, found by `find_sessions` and the
/// sub-agent lists.
#[test]
fn sessions_and_subagents() {
    for (scenario, oracle) in oracles() {
        let want: BTreeSet<String> = oracle["conversations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["path"].as_str().unwrap().to_owned())
            .collect();
        let mut got = BTreeSet::new();
        let top = find_sessions(&scenario).unwrap();
        for dir in &top {
            let mut stack = vec![dir.clone()];
            while let Some(d) = stack.pop() {
                let rel = d
                    .strip_prefix(&scenario)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                got.insert(rel);
                let conv = read_conversation(&d).unwrap();
                for s in conv.subagent_dirs() {
                    assert_eq!(openhands::subagent_parent(&s).as_deref(), Some(d.as_path()));
                    stack.push(s);
                }
            }
            assert!(openhands::subagent_parent(dir).is_none());
        }
        assert_eq!(got, want, "{}", scenario.display());
        // From a file in a conversation, and from the store above.
        for dir in &top {
            let state = dir.join("base_state.json");
            assert!(openhands::is_conversation_file(&state));
            assert_eq!(find_sessions(&state).unwrap(), vec![dir.clone()]);
            let conv = read_conversation(&state).unwrap();
            assert_eq!(conv.dir(), dir.as_path());
            if let Some(ev) = conv.events().next() {
                let f = dir.join("events").join(ev.file_name());
                assert!(openhands::is_conversation_file(&f));
                assert_eq!(openhands::conversation_dir(&f).unwrap(), *dir);
            }
            assert_eq!(find_sessions(dir).unwrap(), vec![dir.clone()]);
        }
    }
    let all = find_sessions(corpus()).unwrap();
    assert!(all.len() >= 50, "{}", all.len());
}

/// Decoding then encoding every event (with every decoder), every state and
/// meta gives the same JSON value, undeclared members byte for byte; the
/// compact files of SDK 1.7.4+ come back byte for byte.
#[test]
fn round_trip() {
    let mut reader = Reader::new();
    let mut parser = Parser::new();
    let mut out = Vec::new();
    let mut checked = 0usize;
    let mut terminals = 0usize;
    for dir in find_all() {
        let conv = reader.read(&dir).unwrap();
        let compact = !dir.to_string_lossy().contains("/1.0.0/");
        for ev in conv.events() {
            let want = OwnedValue::parse(ev.raw()).unwrap();
            let doc = ev.open(&mut parser).unwrap();
            macro_rules! check {
                ($x:expr, $what:literal) => {{
                    let x = $x;
                    out.clear();
                    x.write_to(&mut out);
                    let got = OwnedValue::parse(&out).unwrap();
                    assert!(
                        got == want,
                        "{}: {} {}",
                        dir.display(),
                        ev.file_name(),
                        $what
                    );
                    if compact {
                        assert_eq!(
                            String::from_utf8_lossy(&out),
                            String::from_utf8_lossy(ev.raw()),
                            "{} {}",
                            ev.file_name(),
                            $what
                        );
                    }
                    for s in x.members.undeclared() {
                        assert!(contains(&out, s.raw_key) && contains(&out, s.raw));
                    }
                    checked += 1;
                    x
                }};
            }
            let m = check!(doc.message(), "message");
            let a = check!(doc.action(), "action");
            let o = check!(doc.observation(), "observation");
            check!(doc.agent_error(), "agent_error");
            let c = check!(doc.condensation(), "condensation");
            check!(doc.system_prompt(), "system_prompt");
            check!(doc.user_reject(), "user_reject");
            // The kinds' own members decode.
            match ev.kind_name().unwrap() {
                "MessageEvent" => {
                    let msg = m.llm_message.as_ref().unwrap();
                    assert!(msg.role.is_some());
                    assert!(
                        msg.content
                            .as_ref()
                            .unwrap()
                            .items()
                            .iter()
                            .all(|i| matches!(i, Item::Ok(_)))
                    );
                    assert!(m.members.undeclared().all(|s| s.key != "llm_message"));
                }
                "ActionEvent" => {
                    assert!(a.tool_call.is_some() && a.llm_response_id.is_some());
                    assert!(a.thought.is_some());
                    if let Some(act) = a.action_object() {
                        assert!(act.kind.is_some());
                        out.clear();
                        act.write_to(&mut out);
                        assert!(
                            OwnedValue::parse(&out).unwrap()
                                == OwnedValue::parse(a.action.unwrap().raw()).unwrap()
                        );
                    }
                }
                "ObservationEvent" => {
                    let obs = o.observation.as_ref().unwrap();
                    assert!(obs.kind.is_some() && obs.content.is_some());
                    let k = obs.kind.as_deref().unwrap();
                    if k == "TerminalObservation" || k == "ExecuteBashObservation" {
                        let t = obs.terminal();
                        let j: J = serde_json::from_slice(ev.raw()).unwrap();
                        let md = &j["observation"]["metadata"];
                        assert_eq!(t.exit_code, md["exit_code"].as_i64().unwrap_or(-1));
                        assert_eq!(t.working_dir, md["working_dir"].as_str());
                        assert_eq!(t.suffix, md["suffix"].as_str().unwrap_or(""));
                        terminals += 1;
                    }
                }
                "Condensation" => {
                    let (ids, bad) = c.forgotten();
                    assert_eq!(bad, 0);
                    assert!(!ids.is_empty());
                }
                _ => {}
            }
        }
        {
            let doc = conv.state().map(|f| f.open(&mut parser)).unwrap().unwrap();
            let want = OwnedValue::parse(conv.state().map(|f| f.raw()).unwrap()).unwrap();
            let st = doc.state();
            out.clear();
            st.write_to(&mut out);
            assert!(OwnedValue::parse(&out).unwrap() == want, "state");
            if compact {
                assert_eq!(out, conv.state().map(|f| f.raw()).unwrap());
            }
            for s in st.members.undeclared() {
                assert!(contains(&out, s.raw_key) && contains(&out, s.raw));
            }
            checked += 1;
        }
        if let Some(m) = conv.meta().map(|f| f.open(&mut parser)) {
            let doc = m.unwrap();
            let meta = doc.meta();
            out.clear();
            meta.write_to(&mut out);
            assert!(
                OwnedValue::parse(&out).unwrap()
                    == OwnedValue::parse(conv.meta().map(|f| f.raw()).unwrap()).unwrap()
            );
        }
    }
    assert!(checked > 20_000, "{checked}");
    assert!(terminals > 400, "{terminals}");
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

/// Every conversation directory of the corpus, sub-agents included.
fn find_all() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = find_sessions(corpus()).unwrap();
    while let Some(d) = stack.pop() {
        let conv = read_conversation(&d).unwrap();
        stack.extend(conv.subagent_dirs());
        out.push(d);
    }
    out.sort();
    out
}

/// Every file under `dir`, by relative path with `/`.
fn files_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn parse_agrees_with_read() {
    let mut reader = Reader::new();
    let mut n = 0;
    for dir in find_all() {
        let from_disk = reader.read(&dir).unwrap();
        let files = files_of(&dir);
        let name = dir.file_name().unwrap().to_str().unwrap();
        let from_memory = reader.parse(name, &files);
        assert_same(&from_disk, &from_memory, &dir.display().to_string());
        // And the free function, from owned pairs in another order.
        let owned: Vec<(String, Vec<u8>)> = files.into_iter().rev().collect();
        assert_same(&from_disk, &openhands::parse(name, owned), "owned");
        n += 1;
    }
    assert!(n >= 50);
}

#[test]
fn reader_reuse_gives_the_same() {
    let dirs = find_all();
    let mut reader = Reader::new();
    let mut conv = Conversation::new();
    for d in dirs.iter().chain(dirs.iter().rev()) {
        reader.read_into(d, &mut conv).unwrap();
        let fresh = read_conversation(d).unwrap();
        assert_same(&conv, &fresh, &d.display().to_string());
    }
}

#[test]
fn names_only() {
    for dir in find_all() {
        let conv = read_conversation(&dir).unwrap();
        let ids = openhands::event_ids(&dir).unwrap();
        let want: std::collections::HashSet<String> =
            conv.events().map(|e| e.file_id().to_owned()).collect();
        assert_eq!(ids, want);
        let scan =
            openhands::EventFiles::scan(&dir.join("events"), openhands::NamePattern::FiveDigits)
                .unwrap();
        assert_eq!(scan.len(), conv.len());
        assert!(scan.ids().eq(conv.events().map(|e| e.file_id())));
    }
}
