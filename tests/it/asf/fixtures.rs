//! `agentlog::asf` against the reference implementation's fixtures
//! (`tests/data/asf`): every valid session verifies, every
//! invalid one is flagged for its reason, the context at every tip equals
//! the fixture's, and read → write gives the same bytes.

use crate::common;

use std::path::PathBuf;

use agentlog::asf::{HeaderError, ProblemKind, Session};
use agentlog::json::OwnedValue;

fn fixtures() -> PathBuf {
    common::data_dir().join("asf")
}

/// The reference fixtures that verify.
const VALID: [&str; 8] = [
    "basic",
    "branch",
    "compaction",
    "fork",
    "runs",
    "resume",
    "replay",
    "instructions",
];

fn session_bytes(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join("sessions").join(format!("{name}.jsonl"))).expect("fixture")
}

#[test]
fn valid_sessions_verify_and_write_back_byte_for_byte() {
    for name in VALID {
        let bytes = session_bytes(name);
        let s = Session::read(&bytes).expect("reads");
        let problems = s.verify();
        assert!(problems.is_empty(), "{name}: {problems:#?}");
        assert!(s.entries().iter().all(|e| e.verified), "{name}");
        let mut out = Vec::new();
        s.write_canonical(&mut out).expect("canonical");
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&bytes),
            "{name}"
        );
    }
}

#[test]
fn every_response_request_hash_is_rebuilt() {
    let mut checked = 0;
    for name in VALID {
        let bytes = session_bytes(name);
        let s = Session::read(&bytes).expect("reads");
        for e in s.entries().iter().filter(|e| e.entry_type == "response") {
            let recorded = e
                .request_hash
                .as_deref()
                .expect("fixture responses carry a hash");
            let rebuilt = s.request_context(&e.id).unwrap().request_hash().unwrap();
            assert_eq!(rebuilt, recorded, "{name} line {}", e.line);
            checked += 1;
        }
    }
    assert!(checked >= 19, "{checked}");
}

#[test]
fn bad_parent_is_flagged_on_its_line() {
    let bytes = session_bytes("bad-parent");
    let s = Session::read(&bytes).unwrap();
    let problems = s.verify();
    let unknown: Vec<_> = problems
        .iter()
        .filter(|p| matches!(p.kind, ProblemKind::UnknownParent(_)))
        .collect();
    assert_eq!(unknown.len(), 1, "{problems:#?}");
    assert_eq!(unknown[0].line, 4);
    assert_eq!(unknown[0].kind.code(), "unknown-parent");
}

/// The header promises `dispatch` beside a call with an output and no
/// dispatch: flagged on the output's line, and nothing else is.
#[test]
fn bad_records_is_flagged_on_the_output() {
    let bytes = session_bytes("bad-records");
    let problems = Session::read(&bytes).unwrap().verify();
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(problems[0].line, 6);
    assert_eq!(problems[0].kind.code(), "records");
    assert!(
        problems[0].kind.to_string().contains("call_1"),
        "{}",
        problems[0]
    );
}

#[test]
fn truncated_last_line_is_tolerated_and_reported() {
    let bytes = session_bytes("truncated");
    let s = Session::read(&bytes).unwrap();
    let problems = s.verify();
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(problems[0].kind, ProblemKind::TruncatedLastLine);
    assert_eq!(
        problems[0].line,
        bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count()
    );
    // Everything before it is read and verifies.
    assert_eq!(s.entries().len(), 8);
    assert!(s.entries().iter().all(|e| e.verified));
}

#[test]
fn duplicate_id_is_reported_and_kept_once() {
    let bytes = session_bytes("duplicate-id");
    let s = Session::read(&bytes).unwrap();
    let problems = s.verify();
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(matches!(problems[0].kind, ProblemKind::DuplicateId(_)));
    assert_eq!(problems[0].line, 11);
    let basic = session_bytes("basic");
    let b = Session::read(&basic).unwrap();
    assert_eq!(s.entries().len(), b.entries().len());
}

#[test]
fn contexts_equal_the_fixtures_at_every_tip() {
    for name in ["basic", "branch", "compaction"] {
        let bytes = session_bytes(name);
        let s = Session::read(&bytes).unwrap();
        let want = OwnedValue::parse(
            &std::fs::read(fixtures().join("context").join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        let want = want.as_object().unwrap();
        let tips = s.tips();
        assert_eq!(tips.len(), want.len(), "{name}");
        for tip in tips {
            let got = s.context(Some(&tip.id)).unwrap().to_json();
            let expected = want
                .get(&tip.id)
                .unwrap_or_else(|| panic!("{name}: tip {}", tip.id));
            assert_eq!(&got, expected, "{name} at {}:\n{}", tip.id, got);
        }
        // The settings never carry the omitted parts (provenance, no part
        // of the request).
        assert!(s.tips().iter().all(|t| {
            s.context(Some(&t.id))
                .unwrap()
                .to_json()
                .get("settings")
                .unwrap()
                .get("instructions_omitted")
                .is_none()
        }));
        // The leaf the resume rule gives is the last entry (no leaf label).
        assert_eq!(s.leaf().unwrap().id, s.entries().last().unwrap().id);
        assert_eq!(
            s.context(None).unwrap(),
            s.context(Some(&s.entries().last().unwrap().id)).unwrap()
        );
    }
}

/// The reference's context fixture for `instructions`, keyed by the
/// entries' `legacy_id`: equal at its tip, member for member, though the
/// path carries omitted parts in force (which the settings leave out).
#[test]
fn instructions_context_equals_the_reference_with_omitted_parts_in_force() {
    let bytes = session_bytes("instructions");
    let s = Session::read(&bytes).unwrap();
    let mut parser = agentlog::json::Parser::new();
    let legacy: std::collections::HashMap<String, String> = s
        .entries()
        .iter()
        .map(|e| {
            let v = e.to_owned_value(&mut parser).unwrap();
            (
                v.get("legacy_id").unwrap().as_str().unwrap().to_owned(),
                e.id.clone(),
            )
        })
        .collect();
    let want =
        OwnedValue::parse(&std::fs::read(fixtures().join("context/instructions.json")).unwrap())
            .unwrap();
    let want = want.as_object().unwrap();
    assert_eq!(want.len(), s.tips().len());
    for (tip, expected) in want.iter() {
        let ctx = s.context(Some(&legacy[tip])).unwrap();
        assert!(
            !ctx.settings.omitted.is_empty(),
            "omitted parts are in force"
        );
        let got = ctx.to_json();
        assert_eq!(got.get("settings"), expected.get("settings"), "{tip}");
        assert_eq!(got.get("items"), expected.get("items"), "{tip}");
        for key in ["entries", "item_entries"] {
            let ids: Vec<OwnedValue> = expected
                .get(key)
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .map(|l| OwnedValue::string(legacy[l.as_str().unwrap()].clone()))
                .collect();
            assert_eq!(got.get(key), Some(&OwnedValue::Array(ids)), "{tip} {key}");
        }
    }
}

#[test]
fn fork_prefix_is_checked() {
    let bytes = session_bytes("fork");
    let s = Session::read(&bytes).unwrap();
    assert_eq!(s.prefix_len(), 6);
    // Moving an own entry above the base's path breaks the prefix.
    let text = String::from_utf8(bytes.clone()).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.swap(6, 7);
    let broken = lines.join("\n") + "\n";
    let s = Session::read(broken.as_bytes()).unwrap();
    let problems = s.verify();
    assert!(
        problems
            .iter()
            .any(|p| matches!(p.kind, ProblemKind::UnknownParent(_))),
        "{problems:#?}"
    );
    // A base that is not in the file.
    let mut header = OwnedValue::parse(lines[0].as_bytes()).unwrap();
    header.as_object_mut().unwrap().insert(
        "base",
        OwnedValue::string(
            "sha256:0000000000000000000000000000000000000000000000000000000000000000",
        ),
    );
    let text = format!(
        "{}\n{}\n",
        header,
        text.lines().skip(1).collect::<Vec<_>>().join("\n")
    );
    let problems = Session::read(text.as_bytes()).unwrap().verify();
    assert!(
        problems
            .iter()
            .any(|p| matches!(p.kind, ProblemKind::Prefix(_))),
        "{problems:#?}"
    );
}

#[test]
fn a_changed_byte_fails_the_hash_and_an_unknown_format_is_refused() {
    let bytes = session_bytes("basic");
    let text = String::from_utf8(bytes).unwrap();
    let tampered = text.replacen("What is 2+2?", "What is 2+3?", 1);
    let problems = Session::read(tampered.as_bytes()).unwrap().verify();
    assert!(
        problems
            .iter()
            .any(|p| p.line == 3 && matches!(p.kind, ProblemKind::HashMismatch { .. })),
        "{problems:#?}"
    );
    let ts = text.replacen(
        "\"ts\":\"2026-09-17T12:00:02.5Z\"",
        "\"ts\":\"2026-09-17T12:00:02.50Z\"",
        1,
    );
    let problems = Session::read(ts.as_bytes()).unwrap().verify();
    assert!(
        problems
            .iter()
            .any(|p| matches!(p.kind, ProblemKind::TsSpelling(_))),
        "{problems:#?}"
    );
    let newer = text.replacen("agentsession/0.10", "agentsession/0.11", 1);
    let err = Session::read(newer.as_bytes()).unwrap_err();
    assert_eq!(
        err,
        HeaderError::UnsupportedFormat("agentsession/0.11".into())
    );
    assert!(err.to_string().contains("agentsession/0.11"));
    let older = text.replacen("agentsession/0.10", "agentsession/0.4", 1);
    assert!(matches!(
        Session::read(older.as_bytes()),
        Err(HeaderError::UnsupportedFormat(_))
    ));
    let minor9 = text.replacen("agentsession/0.10", "agentsession/0.9", 1);
    assert!(
        Session::read(minor9.as_bytes())
            .unwrap()
            .verify()
            .is_empty()
    );
    assert_eq!(Session::read(b"").unwrap_err(), HeaderError::Empty);
    assert_eq!(
        Session::read(b"{\"type\":\"x\"}\n").unwrap_err(),
        HeaderError::NotSession
    );
}

#[test]
fn unknown_members_and_namespaced_entries_are_kept() {
    use agentlog::asf::Appender;
    use agentlog::json::Map;
    let bytes = session_bytes("basic");
    let s = Session::read(&bytes).unwrap();
    let header = OwnedValue::parse(s.header_raw()).unwrap();
    let mut header = header.as_object().unwrap().clone();
    header.insert("acme:extra", OwnedValue::string("kept"));
    let mut a = Appender::new(header).unwrap();
    let mut body = Map::new();
    body.insert("acme:note", OwnedValue::int(3));
    body.insert(
        "data",
        OwnedValue::parse(br#"{"z":1,"a":[1.50,"\u00e9"]}"#).unwrap(),
    );
    a.append("acme:mark", "2026-09-17T12:00:00Z", body).unwrap();
    let written = a.into_bytes();
    let s = Session::read(&written).unwrap();
    assert!(s.verify().is_empty(), "{:#?}", s.verify());
    let mut out = Vec::new();
    s.write_canonical(&mut out).unwrap();
    assert_eq!(out, written);
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains(r#""acme:extra":"kept""#), "{text}");
    assert!(text.contains(r#""data":{"a":[1.5,"é"],"z":1}"#), "{text}");
}

/// The leaf `response` of `fork` re-signed with another `request_hash`
/// (its `id` matching its new body), so only the request comparison fails:
/// `verify` reports it; `verify_entries`, which leaves that comparison out,
/// finds the file sound, and both report a broken `id` alike.
#[test]
fn verify_entries_leaves_out_only_the_request_hash_comparison() {
    use agentlog::asf::hash::sha256_ref;

    let other = sha256_ref(b"a request that was never sent");
    let (resigned, last) = common::asf::fork_with_request_hash(&other);
    let s = Session::read(resigned.as_bytes()).expect("reads");
    assert!(s.entries().iter().all(|e| e.verified), "the new id holds");
    let all = s.verify();
    assert_eq!(all.len(), 1, "{all:#?}");
    assert_eq!(all[0].line, last);
    assert!(
        matches!(&all[0].kind, ProblemKind::RequestHash { recorded, .. } if *recorded == other),
        "{all:#?}"
    );
    assert!(s.verify_entries().is_empty());

    // A body changed without a new id: both find it.
    let tampered = resigned.replace(&other, &sha256_ref(b"yet another request"));
    let s = Session::read(tampered.as_bytes()).expect("reads");
    let entries_only = s.verify_entries();
    assert!(!entries_only.is_empty());
    assert!(entries_only.iter().all(|p| p.line == last));
    let all = s.verify();
    assert!(all.len() > entries_only.len());
    assert!(entries_only.iter().all(|p| all.contains(p)));
}

/// How the reference's header names the fixture's format, and so how this
/// reader (of 0.5 to 0.10) takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Format {
    /// 0.5 to 0.10: read as it stands.
    Read,
    /// `agentsession/0.11` over entries a 0.10 writer writes the same
    /// (the reference's README: only the header's `format` changes from
    /// 0.5 to 0.11): refused as it stands (Versioning), and read for the
    /// outcome with the header's `format` lowered in memory.
    Later,
    /// A major or minor this reader does not name, over entries it cannot
    /// read as 0.10: refused, nothing more.
    Refused,
}

/// One session fixture of `tests/data/asf/sessions`: what the reference
/// implementation (ChristopherDavenport/agentsession) makes of it, and
/// the problems (line, code) this reader must report, exactly and only
/// (none: the fixture verifies).
struct Case {
    name: &'static str,
    format: Format,
    reference: &'static str,
    problems: &'static [(usize, &'static str)],
}

/// Every session fixture, the reference's outcome mapped to our problem
/// codes (`docs/asf-conformance.md`, "Reference fixtures", carries the same
/// table). Where an invalid fixture's fault hides entries from the path
/// (a line that does not parse or has no `id`), the entries after it are
/// reported too: a parent that names no entry, and the request hashes the
/// shortened path no longer rebuilds.
const CASES: &[Case] = &[
    Case {
        name: "basic",
        format: Format::Read,
        reference: "valid",
        problems: &[],
    },
    Case {
        name: "branch",
        format: Format::Read,
        reference: "valid",
        problems: &[],
    },
    Case {
        name: "compaction",
        format: Format::Read,
        reference: "valid",
        problems: &[],
    },
    Case {
        name: "fork",
        format: Format::Read,
        reference: "valid (base found in its origin)",
        problems: &[],
    },
    Case {
        name: "runs",
        format: Format::Read,
        reference: "valid",
        problems: &[],
    },
    Case {
        name: "resume",
        format: Format::Read,
        reference: "valid",
        problems: &[],
    },
    Case {
        name: "replay",
        format: Format::Read,
        reference: "valid",
        problems: &[],
    },
    Case {
        name: "instructions",
        format: Format::Read,
        reference: "valid",
        problems: &[],
    },
    Case {
        name: "extensions",
        format: Format::Read,
        reference: "valid (unknown members and namespaced entries kept)",
        problems: &[],
    },
    Case {
        name: "interleaved",
        format: Format::Read,
        reference: "valid (custom entries between a response's items)",
        problems: &[],
    },
    Case {
        name: "normalised",
        format: Format::Read,
        reference: "valid (9007199254740993 normalised with its `was`, 2^60, a lone surrogate, bytes with their `raw`)",
        problems: &[],
    },
    Case {
        name: "queued",
        format: Format::Later,
        reference: "valid",
        problems: &[],
    },
    Case {
        name: "parts",
        format: Format::Read,
        reference: "valid (deltas keeping runs of parts by `keep`, a part by `hash`, `attempts`, a workspace's host and instance)",
        problems: &[],
    },
    Case {
        name: "omitted",
        format: Format::Read,
        reference: "valid (omitted lists naming runs of the list in force by `keep`, beside a `replace` and a checkpoint that write it whole)",
        problems: &[],
    },
    Case {
        name: "empty-resume",
        format: Format::Refused,
        reference: "valid 0.11 (a `resume` over an empty segment, accepted from 0.11)",
        problems: &[],
    },
    Case {
        name: "judged",
        format: Format::Refused,
        reference: "valid 0.11 (`link` `rel: judged_by`)",
        problems: &[],
    },
    Case {
        name: "omit",
        format: Format::Refused,
        reference: "valid 0.11 (`config` `omit`, which changes the context)",
        problems: &[],
    },
    Case {
        name: "converge",
        format: Format::Read,
        reference: "valid (a reference into another session: only its shape is checked)",
        // RFC 0001 0.10, Convergence: "Each reference MUST name an `entry`
        // by hash"; these carry a migration's legacy ids (Versioning: such
        // a file "MUST NOT be re-emitted as 0.5 or later").
        problems: &[(12, "parents"), (13, "parents"), (19, "parents")],
    },
    Case {
        name: "bad-parent",
        format: Format::Read,
        reference: "broken parent link",
        problems: &[
            (4, "unknown-parent"),
            (5, "request-hash"),
            (8, "request-hash"),
        ],
    },
    Case {
        name: "bad-parents",
        format: Format::Read,
        reference: "ErrBadConvergence (a `parents` reference to an entry written later)",
        problems: &[(3, "parents")],
    },
    Case {
        name: "bad-first-kept",
        format: Format::Read,
        reference: "context error: `first_kept` off the path",
        problems: &[(3, "reference")],
    },
    Case {
        name: "bad-base-root",
        format: Format::Read,
        reference: "an own entry that is a second root",
        problems: &[(10, "prefix")],
    },
    Case {
        name: "bad-base-parent",
        format: Format::Read,
        reference: "an own entry hung from the prefix above the base",
        problems: &[(10, "prefix")],
    },
    Case {
        name: "bad-base-prefix",
        format: Format::Later,
        reference: "a line before the base not on the path to it",
        problems: &[(8, "prefix")],
    },
    Case {
        name: "bad-records",
        format: Format::Read,
        reference: "records: `dispatch` promised, an output with no dispatch",
        problems: &[(6, "records")],
    },
    Case {
        name: "bad-resume",
        format: Format::Later,
        reference: "a `resume` whose segment takes up no call (source computes `input`)",
        problems: &[(9, "run-source")],
    },
    Case {
        name: "corrupt-middle",
        format: Format::Read,
        reference: "a line before the last that does not parse",
        problems: &[
            (3, "bad-json"),
            (4, "unknown-parent"),
            (6, "request-hash"),
            (9, "request-hash"),
        ],
    },
    Case {
        name: "missing-id",
        format: Format::Read,
        reference: "an entry without its `id`",
        problems: &[
            (3, "envelope"),
            (4, "unknown-parent"),
            (6, "request-hash"),
            (9, "request-hash"),
        ],
    },
    Case {
        name: "truncated",
        format: Format::Read,
        reference: "a truncated last line, tolerated and reported",
        problems: &[(10, "truncated-last-line")],
    },
    Case {
        name: "duplicate-id",
        format: Format::Read,
        reference: "an id met twice, kept once and reported",
        problems: &[(11, "duplicate-id")],
    },
    Case {
        name: "unsupported-format",
        format: Format::Refused,
        reference: "unsupported format (agentsession/1.0)",
        problems: &[],
    },
];

/// The fixture's bytes as this reader is to read them: as stored, or with
/// a `Later` header's `format` lowered to 0.10.
fn readable(case: &Case) -> Vec<u8> {
    let bytes = session_bytes(case.name);
    match case.format {
        Format::Read | Format::Refused => bytes,
        Format::Later => String::from_utf8(bytes)
            .unwrap()
            .replacen("\"agentsession/0.11\"", "\"agentsession/0.10\"", 1)
            .into_bytes(),
    }
}

#[test]
fn every_reference_session_fixture_gives_the_reference_outcome() {
    let dir = fixtures().join("sessions");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = CASES.iter().map(|c| c.name.to_owned()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "every session fixture is in CASES");
    for case in CASES {
        let stored = session_bytes(case.name);
        match case.format {
            Format::Read => {}
            Format::Later | Format::Refused => {
                let err = Session::read(&stored).unwrap_err();
                assert!(
                    matches!(err, HeaderError::UnsupportedFormat(_)),
                    "{}: {err:?}",
                    case.name
                );
                if case.format == Format::Refused {
                    continue;
                }
            }
        }
        let bytes = readable(case);
        let s = Session::read(&bytes).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let got: Vec<(usize, &str)> = s.verify().iter().map(|p| (p.line, p.kind.code())).collect();
        assert_eq!(
            got, case.problems,
            "{} (reference: {})",
            case.name, case.reference
        );
        // Checking never changes the file, and a file read whole writes
        // back byte for byte.
        if case.problems.is_empty() {
            let mut out = Vec::new();
            s.write_canonical(&mut out).unwrap();
            assert_eq!(out, bytes, "{}", case.name);
        }
    }
}

/// Every `context/<name>.json`: the context the reference builds at each
/// tip of `sessions/<name>.jsonl`, keyed by entry id or, where the
/// reference's test names entries so, by `legacy_id` (in the keys and in
/// `entries`, `item_entries`). The members the reference writes are equal;
/// ours may carry more beside them.
#[test]
fn every_reference_context_equals_ours_at_every_tip() {
    let mut parser = agentlog::json::Parser::new();
    let mut compared = 0;
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures().join("context"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for file in files {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let case = CASES
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("context {name} has no session"));
        let bytes = readable(case);
        let s = Session::read(&bytes).unwrap();
        let mut ids: std::collections::HashMap<String, String> = s
            .entries()
            .iter()
            .filter_map(|e| {
                let v = e.to_owned_value(&mut parser)?;
                Some((v.get("legacy_id")?.as_str()?.to_owned(), e.id.clone()))
            })
            .collect();
        for e in s.entries() {
            ids.insert(e.id.clone(), e.id.clone());
        }
        let id = |k: &str| {
            ids.get(k)
                .cloned()
                .unwrap_or_else(|| panic!("{name}: no entry {k}"))
        };
        let want = OwnedValue::parse(&std::fs::read(&file).unwrap()).unwrap();
        let want = want.as_object().unwrap();
        let mut tips: Vec<String> = s.tips().iter().map(|t| t.id.clone()).collect();
        let mut keys: Vec<String> = want.iter().map(|(k, _)| id(k)).collect();
        tips.sort();
        keys.sort();
        assert_eq!(tips, keys, "{name}: the reference's tips are ours");
        for (tip, expected) in want.iter() {
            let got = s.context(Some(&id(tip))).unwrap().to_json();
            for (member, value) in expected.as_object().unwrap().iter() {
                let value = match member {
                    "entries" | "item_entries" => OwnedValue::Array(
                        value
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|l| OwnedValue::string(id(l.as_str().unwrap())))
                            .collect(),
                    ),
                    _ => value.clone(),
                };
                assert_eq!(got.get(member), Some(&value), "{name} at {tip}: {member}");
            }
            compared += 1;
        }
    }
    assert!(compared >= 13, "{compared}");
}

/// The reference's hand-written sources earlier than 0.5
/// (`sessions/v0.4/`): RFC 0001 0.10 says a reader reads them by migrating
/// them in memory; this reader does not migrate (README, Limitations) and
/// refuses each one by its header, reading nothing.
#[test]
fn reference_files_earlier_than_0_5_are_refused() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures().join("sessions/v0.4"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2);
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        let err = Session::read(&bytes).unwrap_err();
        assert!(
            matches!(&err, HeaderError::UnsupportedFormat(f) if f.starts_with("agentsession/0.") && f != "agentsession/0.5"),
            "{}: {err:?}",
            file.display()
        );
    }
}
