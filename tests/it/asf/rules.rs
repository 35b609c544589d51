//! The conformance table of `docs/asf-conformance.md`: for every rule the
//! reader checks, one file built from a valid reference fixture and broken
//! in that one way (ids recomputed, so only that rule fails), and the
//! admissible look-alikes that must verify.

use crate::common::asf::Lines;

use agentlog::asf::{Problem, Session};
use agentlog::json::OwnedValue;

const ZERO: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

fn s(v: &str) -> OwnedValue {
    OwnedValue::string(v)
}

/// Which check a case runs: every rule, or every rule but the
/// `request_hash` comparisons (for a fault whose nature changes what the
/// path rebuilds, so that the request comparison fails beside it).
#[derive(Clone, Copy, PartialEq)]
enum Scope {
    All,
    Entries,
}

struct Case {
    name: &'static str,
    code: &'static str,
    scope: Scope,
    /// The file and the line the one problem must be on.
    build: fn() -> (String, usize),
}

fn line_of(_: &Lines, i: usize) -> usize {
    i + 2
}

/// A session id other than the fixtures'.
const OTHER: &str = "01995b2a-0000-7000-8000-0000000000ff";

/// A `parents` reference.
fn reference(entry: &str, session: Option<&str>) -> OwnedValue {
    let mut r = agentlog::json::Map::new();
    r.insert("entry", s(entry));
    if let Some(x) = session {
        r.insert("session", s(x));
    }
    OwnedValue::Object(r)
}

/// The `nth` (0-based) `config` whose `member` list holds a `keep` (with
/// `nth` 0 and no such entry: the first `config` carrying `member`).
fn keeps(l: &Lines, member: &str, nth: usize) -> usize {
    let with = |e: &OwnedValue, keep: bool| {
        e.get(member)
            .and_then(OwnedValue::as_array)
            .is_some_and(|a| !keep || a.iter().any(|p| p.get("keep").is_some()))
    };
    (0..l.entries.len())
        .filter(|&i| with(&l.entries[i], true))
        .nth(nth)
        .or_else(|| (0..l.entries.len()).find(|&i| with(&l.entries[i], false)))
        .expect("a config with the list")
}

/// Sets the `keep` of element `at` of the `member` list of entry `c`.
fn set_keep(l: &mut Lines, c: usize, member: &str, at: usize, n: i64) {
    let mut list = l.entries[c].get(member).unwrap().clone();
    let el = &mut list.as_array_mut().unwrap()[at];
    assert!(el.get("keep").is_some(), "element {at} is a keep");
    el.as_object_mut()
        .unwrap()
        .insert("keep", OwnedValue::int(n));
    l.set(c, member, Some(list));
}

fn problems(text: &str, scope: Scope) -> Vec<Problem> {
    let s = Session::read(text.as_bytes()).expect("reads");
    match scope {
        Scope::All => s.verify(),
        Scope::Entries => s.verify_entries(),
    }
}

fn cases() -> Vec<Case> {
    use Scope::*;
    vec![
        // The header's `records` promise.
        Case {
            name: "an output with no dispatch under a dispatch promise",
            code: "records",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                l.remove(l.legacy("p0000001"));
                (l.resign(), line_of(&l, l.legacy("i0000002")))
            },
        },
        Case {
            name: "an answer with no dispatch under a dispatch promise",
            code: "records",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let d = l.legacy("d0000003");
                l.set(d, "verdict", Some(s("answer")));
                (l.resign(), line_of(&l, d))
            },
        },
        Case {
            name: "a model call outside any run under a run promise",
            code: "records",
            scope: All,
            build: || {
                let mut l = Lines::of("resume");
                l.remove(l.legacy("u0000006"));
                l.remove(l.legacy("u0000005"));
                (l.resign(), line_of(&l, l.legacy("r0000002")))
            },
        },
        // Decision order.
        Case {
            name: "a dispatch after a reject",
            code: "call-order",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let i = l.dispatch_after(l.legacy("d0000003"), "call_3");
                (l.resign(), line_of(&l, i))
            },
        },
        Case {
            name: "a dispatch after an answer",
            code: "call-order",
            scope: All,
            build: || {
                let mut l = Lines::of("replay");
                let i = l.dispatch_after(l.call_event("decision", "call_notify", 0), "call_notify");
                (l.resign(), line_of(&l, i))
            },
        },
        Case {
            name: "a dispatch after the call's output",
            code: "call-order",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let i = l.dispatch_after(l.legacy("i0000002"), "call_2");
                (l.resign(), line_of(&l, i))
            },
        },
        Case {
            name: "a decision after a reject",
            code: "call-order",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let i = l.decide_after(l.legacy("d0000003"), "call_3", "proceed");
                (l.resign(), line_of(&l, i))
            },
        },
        Case {
            name: "a decision after an answer",
            code: "call-order",
            scope: All,
            build: || {
                let mut l = Lines::of("replay");
                let at = l.call_event("decision", "call_notify", 0);
                let i = l.decide_after(at, "call_notify", "hold");
                (l.resign(), line_of(&l, i))
            },
        },
        Case {
            name: "a reject after a dispatch",
            code: "call-order",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let i = l.decide_after(l.legacy("p0000001"), "call_2", "reject");
                (l.resign(), line_of(&l, i))
            },
        },
        Case {
            name: "a reject after the call's output",
            code: "call-order",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let i = l.decide_after(l.legacy("i0000002"), "call_2", "reject");
                (l.resign(), line_of(&l, i))
            },
        },
        Case {
            name: "an answer after the call's output",
            code: "call-order",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let i = l.decide_after(l.legacy("i0000002"), "call_2", "answer");
                (l.resign(), line_of(&l, i))
            },
        },
        Case {
            name: "an output straight after a hold",
            code: "call-order",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                l.remove(l.legacy("p0000002"));
                (l.resign(), line_of(&l, l.legacy("i0000004")))
            },
        },
        Case {
            name: "an output after a hold that follows the dispatch",
            code: "call-order",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                l.decide_after(l.legacy("p0000001"), "call_2", "hold");
                (l.resign(), line_of(&l, l.legacy("i0000002")))
            },
        },
        // Call ids and targets.
        Case {
            name: "a dispatch whose target is another call",
            code: "call-id",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let p = l.legacy("p0000001");
                let other = l.call_item("call_1");
                l.set(p, "target", Some(s(&other)));
                (l.resign(), line_of(&l, p))
            },
        },
        Case {
            name: "a repeated call_id",
            code: "call-id",
            scope: Entries,
            build: || {
                let mut l = Lines::of("runs");
                let fc = l.legacy("r0000001-3");
                let mut item = l.entries[fc].get("item").unwrap().clone();
                item.as_object_mut().unwrap().insert("call_id", s("call_1"));
                let i = l.insert_after(fc, "item", &[("item", item), ("response", s("resp_1"))]);
                (l.resign(), line_of(&l, i))
            },
        },
        Case {
            name: "an empty call_id",
            code: "call-id",
            scope: Entries,
            build: || {
                let mut l = Lines::of("runs");
                let fc = l.legacy("r0000001-3");
                let mut item = l.entries[fc].get("item").unwrap().clone();
                item.as_object_mut().unwrap().insert("call_id", s(""));
                let i = l.insert_after(fc, "item", &[("item", item), ("response", s("resp_1"))]);
                (l.resign(), line_of(&l, i))
            },
        },
        Case {
            name: "a dispatch whose target is not on its path",
            code: "reference",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let p = l.legacy("p0000001");
                l.set(p, "target", Some(s(ZERO)));
                (l.resign(), line_of(&l, p))
            },
        },
        // Runs.
        Case {
            name: "a resume whose segment takes up no call",
            code: "run-source",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let u = l.legacy("u0000001");
                l.set(u, "source", Some(s("resume")));
                (l.resign(), line_of(&l, u))
            },
        },
        Case {
            name: "an input whose segment takes up a held call",
            code: "run-source",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let u = l.legacy("u0000003");
                l.set(u, "source", Some(s("input")));
                (l.resign(), line_of(&l, u))
            },
        },
        Case {
            name: "an end reason the segment does not compute (input_required)",
            code: "run-reason",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let u = l.legacy("u0000002");
                l.set(u, "reason", Some(s("done")));
                (l.resign(), line_of(&l, u))
            },
        },
        Case {
            name: "an end reason the segment does not compute (stopped)",
            code: "run-reason",
            scope: All,
            build: || {
                let mut l = Lines::of("resume");
                let u = l.legacy("u0000004");
                l.set(u, "reason", Some(s("done")));
                (l.resign(), line_of(&l, u))
            },
        },
        Case {
            name: "an end reason the segment does not compute (done)",
            code: "run-reason",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let u = l.legacy("u0000004");
                l.set(u, "reason", Some(s("aborted")));
                (l.resign(), line_of(&l, u))
            },
        },
        Case {
            name: "an end reason the segment does not compute (error)",
            code: "run-reason",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let r = l.legacy("r0000002");
                l.set(
                    r,
                    "error",
                    Some(OwnedValue::parse(br#"{"code":"server_error","message":"x"}"#).unwrap()),
                );
                (l.resign(), line_of(&l, l.legacy("u0000004")))
            },
        },
        Case {
            name: "an end reason the segment does not compute (aborted)",
            code: "run-reason",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                l.remove(l.legacy("d0000001"));
                (l.resign(), line_of(&l, l.legacy("u0000002")))
            },
        },
        Case {
            name: "an output item of a run's model call before the run's start",
            code: "run-order",
            scope: All,
            build: || {
                let mut l = Lines::of("resume");
                let start = l.legacy("u0000005");
                let members: Vec<(String, OwnedValue)> = l.entries[start]
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(k, _)| !["id", "parent", "ts", "type"].contains(k))
                    .map(|(k, v)| (k.to_owned(), v.clone()))
                    .collect();
                let members: Vec<(&str, OwnedValue)> = members
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.clone()))
                    .collect();
                l.remove(start);
                l.insert_after(l.legacy("i0000005"), "run", &members);
                (l.resign(), line_of(&l, l.legacy("i0000005")))
            },
        },
        Case {
            name: "a pending list that leaves out a held call",
            code: "run-pending",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let u = l.legacy("u0000002");
                l.set(u, "pending", Some(OwnedValue::Array(vec![])));
                (l.resign(), line_of(&l, u))
            },
        },
        Case {
            name: "a pending list naming a call with its output",
            code: "run-pending",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let u = l.legacy("u0000004");
                l.set(u, "pending", Some(OwnedValue::Array(vec![s("call_1")])));
                (l.resign(), line_of(&l, u))
            },
        },
        Case {
            name: "a run end with no start of its own run",
            code: "run-pairing",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let u = l.legacy("u0000004");
                l.set(u, "run_id", Some(s("run-9")));
                (l.resign(), line_of(&l, u))
            },
        },
        Case {
            name: "a run started inside an open one",
            code: "run-pairing",
            scope: All,
            build: || {
                let mut l = Lines::of("resume");
                l.remove(l.legacy("u0000004"));
                (l.resign(), line_of(&l, l.legacy("u0000005")))
            },
        },
        // Writing discipline and references.
        Case {
            name: "an output item after its response",
            code: "response-order",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let (a, b) = (l.legacy("r0000002-1"), l.legacy("r0000002"));
                let above = l.entries[a].get("parent").cloned();
                let (ida, idb) = (l.id(a), l.id(b));
                let after = l.legacy("u0000004");
                l.set(b, "parent", above);
                l.set(a, "parent", Some(s(&idb)));
                l.set(after, "parent", Some(s(&ida)));
                l.entries.swap(a, b);
                (l.resign(), line_of(&l, b))
            },
        },
        Case {
            name: "queued_from naming an entry that is not queued",
            code: "reference",
            scope: All,
            build: || {
                let mut l = Lines::of("replay");
                let i = l.pos(|e| e.get("queued_from").is_some());
                let other = l.id(i - 1);
                l.set(i, "queued_from", Some(s(&other)));
                (l.resign(), line_of(&l, i))
            },
        },
        Case {
            name: "an outcome whose target is not in the file",
            code: "reference",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let o = l.legacy("o0000001");
                l.set(o, "target", Some(s(ZERO)));
                (l.resign(), line_of(&l, o))
            },
        },
        Case {
            name: "a first_kept not on the path",
            code: "reference",
            scope: Entries,
            build: || {
                let mut l = Lines::of("replay");
                let c = l.pos(|e| e.get("type").and_then(OwnedValue::as_str) == Some("compaction"));
                l.set(c, "first_kept", Some(s(ZERO)));
                (l.resign(), line_of(&l, c))
            },
        },
        Case {
            name: "a branch_summary whose from names no entry of the file",
            code: "reference",
            scope: All,
            build: || {
                let mut l = Lines::of("branch");
                let b = l.legacy("b0000001");
                l.set(b, "from", Some(s(ZERO)));
                (l.resign(), line_of(&l, b))
            },
        },
        // Config members.
        Case {
            name: "instructions that are not the join of the parts beside them",
            code: "config",
            scope: Entries,
            build: || {
                let mut l = Lines::of("instructions");
                let c = l.legacy("c0000001");
                l.set(c, "instructions", Some(s("Something else.")));
                (l.resign(), line_of(&l, c))
            },
        },
        Case {
            name: "a replace whose parts are named by hash without instructions",
            code: "config",
            scope: Entries,
            build: || {
                let mut l = Lines::of("instructions");
                let c = l.legacy("c0000002");
                l.set(c, "replace", Some(OwnedValue::Bool(true)));
                (l.resign(), line_of(&l, c))
            },
        },
        Case {
            name: "a keep with another member beside it",
            code: "config",
            scope: Entries,
            build: || {
                let mut l = Lines::of("replay");
                let c = l.pos(|e| {
                    e.get("instructions_parts")
                        .and_then(OwnedValue::as_array)
                        .is_some_and(|a| a.iter().any(|p| p.get("keep").is_some()))
                });
                let mut parts = l.entries[c].get("instructions_parts").unwrap().clone();
                parts.as_array_mut().unwrap()[0]
                    .as_object_mut()
                    .unwrap()
                    .insert("hash", s(ZERO));
                l.set(c, "instructions_parts", Some(parts));
                (l.resign(), line_of(&l, c))
            },
        },
        Case {
            name: "instructions that are not the join of parts named by hash",
            code: "config",
            scope: All,
            build: || {
                let mut l = Lines::of("instructions");
                let c = l.legacy("c0000002");
                l.set(c, "instructions", Some(s("Something else.")));
                (l.resign(), line_of(&l, c))
            },
        },
        Case {
            name: "a keep among the parts that runs past the end of the list",
            code: "config",
            scope: All,
            build: || {
                let mut l = Lines::of("parts");
                let c = keeps(&l, "instructions_parts", 1);
                set_keep(&mut l, c, "instructions_parts", 3, 8);
                (l.resign(), line_of(&l, c))
            },
        },
        Case {
            name: "a keep among the parts that takes a part the list names",
            code: "config",
            scope: Entries,
            build: || {
                let mut l = Lines::of("parts");
                let c = keeps(&l, "instructions_parts", 1);
                set_keep(&mut l, c, "instructions_parts", 0, 5);
                (l.resign(), line_of(&l, c))
            },
        },
        Case {
            name: "an omitted keep that runs past the end of the list",
            code: "config",
            scope: All,
            build: || {
                let mut l = Lines::of("omitted");
                let c = keeps(&l, "instructions_omitted", 1);
                set_keep(&mut l, c, "instructions_omitted", 2, 50);
                (l.resign(), line_of(&l, c))
            },
        },
        Case {
            name: "an omitted keep that takes a part the list names",
            code: "config",
            scope: All,
            build: || {
                let mut l = Lines::of("omitted");
                let c = keeps(&l, "instructions_omitted", 1);
                set_keep(&mut l, c, "instructions_omitted", 0, 8);
                (l.resign(), line_of(&l, c))
            },
        },
        Case {
            name: "an omitted keep over a list in force that names an id twice",
            code: "config",
            scope: All,
            build: || {
                let mut l = Lines::of("omitted");
                let mut list = l.entries[0].get("instructions_omitted").unwrap().clone();
                let a = list.as_array_mut().unwrap();
                let first = a[0].clone();
                a.push(first);
                l.set(0, "instructions_omitted", Some(list));
                (
                    l.resign(),
                    line_of(&l, keeps(&l, "instructions_omitted", 0)),
                )
            },
        },
        Case {
            name: "a compaction checkpoint holding a delta member",
            code: "config",
            scope: Entries,
            build: || {
                let mut l = Lines::of("replay");
                let c = l.pos(|e| e.get("type").and_then(OwnedValue::as_str) == Some("compaction"));
                let mut config = l.entries[c].get("config").unwrap().clone();
                config
                    .as_object_mut()
                    .unwrap()
                    .insert("tools_added", OwnedValue::Array(vec![]));
                l.set(c, "config", Some(config));
                (l.resign(), line_of(&l, c))
            },
        },
        // Envelope, hashes and links.
        Case {
            name: "a parents reference that names no entry by hash",
            code: "parents",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let o = l.legacy("o0000001");
                let mut r = agentlog::json::Map::new();
                r.insert("entry", s("u0000004"));
                r.insert("session", s("01995b2a-0000-7000-8000-0000000000ff"));
                l.set(
                    o,
                    "parents",
                    Some(OwnedValue::Array(vec![OwnedValue::Object(r)])),
                );
                (l.resign(), line_of(&l, o))
            },
        },
        Case {
            name: "parents naming one entry with and without session",
            code: "parents",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let o = l.legacy("o0000001");
                let e = l.id(l.legacy("u0000003"));
                let refs = vec![reference(&e, None), reference(&e, Some(OTHER))];
                l.set(o, "parents", Some(OwnedValue::Array(refs)));
                (l.resign(), line_of(&l, o))
            },
        },
        Case {
            name: "parents repeating the parent",
            code: "parents",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let o = l.legacy("o0000001");
                let p = l.id(l.legacy("u0000004"));
                l.set(
                    o,
                    "parents",
                    Some(OwnedValue::Array(vec![reference(&p, None)])),
                );
                (l.resign(), line_of(&l, o))
            },
        },
        Case {
            name: "parents out of order",
            code: "parents",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let o = l.legacy("o0000001");
                let (a, b) = (l.id(l.legacy("u0000003")), l.id(l.legacy("u0000001")));
                let refs = vec![reference(&a, Some(OTHER)), reference(&b, None)];
                l.set(o, "parents", Some(OwnedValue::Array(refs)));
                (l.resign(), line_of(&l, o))
            },
        },
        Case {
            name: "parents empty",
            code: "parents",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let o = l.legacy("o0000001");
                l.set(o, "parents", Some(OwnedValue::Array(vec![])));
                (l.resign(), line_of(&l, o))
            },
        },
        Case {
            name: "a parent that names no earlier entry",
            code: "unknown-parent",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let o = l.legacy("o0000001");
                l.set(o, "parent", Some(s(ZERO)));
                (l.resign(), line_of(&l, o))
            },
        },
        Case {
            name: "an id that is not the entry's hash",
            code: "hash-mismatch",
            scope: All,
            build: || {
                let l = Lines::of("runs");
                let text = l.resign().replacen("approval:chris", "approval:someone", 1);
                (text, line_of(&l, l.legacy("u0000003")))
            },
        },
        Case {
            name: "a ts in another spelling",
            code: "ts-spelling",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let o = l.legacy("o0000001");
                l.set(o, "ts", Some(s("2026-09-20T12:00:22.000Z")));
                (l.resign(), line_of(&l, o))
            },
        },
        Case {
            name: "a number that is not I-JSON",
            code: "not-i-json",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let o = l.legacy("o0000001");
                l.set(o, "acme:n", Some(OwnedValue::int(7)));
                let text = l
                    .resign()
                    .replacen("\"acme:n\":7", "\"acme:n\":9007199254740993", 1);
                (text, line_of(&l, o))
            },
        },
        Case {
            name: "a body member by a reserved name",
            code: "reserved-member",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let o = l.legacy("o0000001");
                l.set(o, "content", Some(s("x")));
                (l.resign(), line_of(&l, o))
            },
        },
        Case {
            name: "a type neither core nor namespaced",
            code: "unknown-type",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let o = l.legacy("o0000001");
                l.set(o, "type", Some(s("verdict")));
                (l.resign(), line_of(&l, o))
            },
        },
        Case {
            name: "a member the type requires missing",
            code: "member",
            scope: All,
            build: || {
                let mut l = Lines::of("replay");
                let q = l.pos(|e| e.get("type").and_then(OwnedValue::as_str) == Some("queued"));
                l.set(q, "mode", None);
                (l.resign(), line_of(&l, q))
            },
        },
        Case {
            name: "an entry without parent",
            code: "envelope",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                l.set(0, "parent", None);
                (l.resign(), line_of(&l, 0))
            },
        },
        Case {
            name: "an id with another prefix",
            code: "envelope",
            scope: All,
            build: || {
                let l = Lines::of("runs");
                let o = l.legacy("o0000001");
                let text = l.resign();
                let last = text.lines().last().unwrap();
                let id = last
                    .split("\"id\":\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap();
                let other = id.replacen("sha256:", "sha512:", 1);
                (text.replacen(id, &other, 1), line_of(&l, o))
            },
        },
        Case {
            name: "a header member malformed",
            code: "header",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                l.header
                    .as_object_mut()
                    .unwrap()
                    .insert("created_at", s("yesterday"));
                (l.resign(), 1)
            },
        },
        Case {
            name: "a base that is not in the file",
            code: "prefix",
            scope: All,
            build: || {
                let mut l = Lines::of("fork");
                l.header.as_object_mut().unwrap().insert("base", s(ZERO));
                (l.resign(), 1)
            },
        },
        Case {
            name: "a line ended by CR LF",
            code: "line-ending",
            scope: All,
            build: || {
                let text = Lines::of("runs").resign();
                let first = text.find('\n').unwrap();
                let mut out = text.clone();
                out.insert(first, '\r');
                (out, 1)
            },
        },
        Case {
            name: "a line before the last that does not parse",
            code: "bad-json",
            scope: All,
            build: || {
                let text = Lines::of("runs").resign();
                let last = text[..text.len() - 1].rfind('\n').unwrap();
                let mut out = text.clone();
                out.insert_str(last + 1, "{\"type\":\n");
                (out, text.lines().count())
            },
        },
        Case {
            name: "a line that is not an object",
            code: "not-object",
            scope: All,
            build: || {
                let text = Lines::of("runs").resign();
                let last = text[..text.len() - 1].rfind('\n').unwrap();
                let mut out = text.clone();
                out.insert_str(last + 1, "[]\n");
                (out, text.lines().count())
            },
        },
        Case {
            name: "a truncated last line",
            code: "truncated-last-line",
            scope: All,
            build: || {
                let text = Lines::of("runs").resign();
                let n = text.lines().count();
                (text[..text.len() - 30].to_owned(), n)
            },
        },
        Case {
            name: "an id met twice",
            code: "duplicate-id",
            scope: All,
            build: || {
                let text = Lines::of("runs").resign();
                let second = text.lines().nth(1).unwrap().to_owned();
                let n = text.lines().count();
                (format!("{text}{second}\n"), n + 1)
            },
        },
        Case {
            name: "a request_hash the path does not rebuild",
            code: "request-hash",
            scope: All,
            build: || {
                let mut l = Lines::of("runs");
                let r = l.legacy("r0000002");
                l.set(r, "request_hash", Some(s(ZERO)));
                (l.resign(), line_of(&l, r))
            },
        },
    ]
}

/// Every case breaks exactly its rule, on its line; the file it was built
/// from, re-signed unchanged, verifies.
#[test]
fn each_single_fault_file_breaks_only_its_rule() {
    for name in [
        "runs",
        "resume",
        "replay",
        "instructions",
        "fork",
        "basic",
        "branch",
        "parts",
        "omitted",
    ] {
        let text = Lines::of(name).resign();
        let raw = std::fs::read_to_string(crate::common::asf::fixture(name)).unwrap();
        // Re-signing an unchanged file gives its entries back as they were.
        assert_eq!(
            text.lines().skip(1).collect::<Vec<_>>(),
            raw.lines().skip(1).collect::<Vec<_>>(),
            "{name}"
        );
        assert!(problems(&text, Scope::All).is_empty(), "{name}");
    }
    let mut codes = std::collections::BTreeSet::new();
    let mut failed = Vec::new();
    for c in cases() {
        let (text, line) = (c.build)();
        let got = problems(&text, c.scope);
        if !(got.len() == 1 && got[0].kind.code() == c.code && got[0].line == line) {
            failed.push(format!(
                "{}: want one {} on line {line}, got {got:#?}",
                c.name, c.code
            ));
        }
        codes.insert(c.code);
    }
    assert!(
        failed.is_empty(),
        "{} cases failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
    // Every code the reader has (`ProblemKind`, 28 of them) is exercised.
    assert_eq!(codes.len(), 28, "{codes:?}");
}

/// Files that look like faults and are not: each verifies.
#[test]
fn admissible_look_alikes_verify() {
    // 2^60 written canonically, and written exactly.
    let mut l = Lines::of("basic");
    l.set(
        0,
        "acme:n",
        Some(OwnedValue::parse(b"1152921504606847000").unwrap()),
    );
    let text = l.resign();
    assert!(text.contains("\"acme:n\":1152921504606847000"), "{text}");
    assert_eq!(problems(&text, Scope::All), vec![]);
    let exact = text.replacen("1152921504606847000", "1152921504606846976", 1);
    assert_eq!(problems(&exact, Scope::All), vec![]);

    // A leaf label cleared by null: the last entry is the leaf again.
    let mut l = Lines::of("basic");
    let last = l.entries.len() - 1;
    let target = l.id(1);
    let a = l.insert_after(
        last,
        "label",
        &[("target", s(&target)), ("label", s("leaf"))],
    );
    let b = l.insert_after(
        a,
        "label",
        &[("target", s(&target)), ("label", OwnedValue::Null)],
    );
    let text = l.resign();
    let sess = Session::read(text.as_bytes()).unwrap();
    assert_eq!(sess.verify(), vec![]);
    assert_eq!(sess.leaf().unwrap().line, line_of(&l, b));

    // A fork naming dispatch whose prefix, from a session that promised
    // nothing, holds a call with an output and no dispatch.
    let mut l = Lines::of("fork");
    l.header
        .as_object_mut()
        .unwrap()
        .insert("records", OwnedValue::Array(vec![s("dispatch")]));
    assert_eq!(problems(&l.resign(), Scope::All), vec![]);
    // The same promise on the session that wrote those entries is broken.
    let mut l = Lines::of("basic");
    l.header
        .as_object_mut()
        .unwrap()
        .insert("records", OwnedValue::Array(vec![s("dispatch")]));
    let got = problems(&l.resign(), Scope::All);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(got[0].kind.code(), "records");

    // A run cut off (no end) is the crash signal, not a fault; a reject
    // and its output need no dispatch under the promise (runs has one).
    let mut l = Lines::of("runs");
    l.remove(l.legacy("o0000001"));
    l.remove(l.legacy("u0000004"));
    assert_eq!(problems(&l.resign(), Scope::All), vec![]);

    // A written `error` stands over any segment.
    let mut l = Lines::of("runs");
    let u = l.legacy("u0000002");
    l.set(u, "reason", Some(s("error")));
    assert_eq!(problems(&l.resign(), Scope::All), vec![]);
}
