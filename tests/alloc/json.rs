//! A counting global allocator proves that, in steady state, parsing one
//! more small file and looking up its envelope makes no heap allocation,
//! and that decoding a `json_object!` type with at most 8 members makes
//! none either.
//!
//! Allocations are counted on the measuring thread, only while a test
//! switches counting on.

use crate::{allocations, common};

use std::path::PathBuf;

use agentlog::json::{Parser, Str, Value};

#[test]
fn the_counter_counts() {
    let _g = crate::measure_lock();
    let (n, v) = allocations(|| Vec::<u8>::with_capacity(10));
    assert_eq!(n, 1);
    let (n, _) = allocations(|| {
        let mut v = v;
        v.extend_from_slice(&[0; 100]);
        v
    });
    assert_eq!(n, 1, "a realloc counts");
}

/// Small event files of one conversation per SDK version.
fn event_files() -> Vec<PathBuf> {
    let root = common::corpus_dir().join("openhands");
    let mut out = Vec::new();
    for version in ["1.0.0", "1.58.2"] {
        let scenario = root.join(version).join("coding");
        for conv in std::fs::read_dir(&scenario).unwrap() {
            let events = conv.unwrap().path().join("events");
            if let Ok(rd) = std::fs::read_dir(&events) {
                for e in rd {
                    let path = e.unwrap().path();
                    let name = path.file_name().unwrap().to_string_lossy();
                    if name.starts_with("event-") && name.ends_with(".json") {
                        out.push(path);
                    }
                }
            }
        }
    }
    out.sort();
    assert!(out.len() >= 40, "{} event files", out.len());
    out
}

/// The envelope every event carries, looked up in one pass; returns
/// something derived from every answer so nothing is optimised away.
fn envelope(parser: &mut Parser, bytes: &[u8]) -> usize {
    let doc = parser.parse(bytes).expect("an event file parses");
    let obj = doc.root().as_object().expect("an object");
    let [kind, id, ts, source, parent] =
        obj.get_many(["kind", "id", "timestamp", "source", "parent_id"]);
    let s = |v: Option<Value<'_>>| v.and_then(|v| v.as_str()).map_or(0, str::len);
    s(kind) + s(id) + s(ts) + s(source) + s(parent)
}

#[test]
fn steady_state_parse_and_envelope_allocate_nothing() {
    let _g = crate::measure_lock();
    let files = event_files();
    let contents: Vec<Vec<u8>> = files.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let mut parser = Parser::new();
    // Warm up on the same documents: buffers grow to their sizes.
    let mut want = Vec::new();
    for _ in 0..2 {
        want.clear();
        for c in &contents {
            want.push(envelope(&mut parser, c));
        }
    }
    assert!(want.iter().all(|&n| n > 0));
    for (i, c) in contents.iter().enumerate() {
        let (n, got) = allocations(|| envelope(&mut parser, c));
        assert_eq!(got, want[i]);
        assert_eq!(n, 0, "{}: {n} allocations", files[i].display());
    }
}

#[test]
fn steady_state_read_parse_and_envelope_allocate_nothing() {
    let _g = crate::measure_lock();
    let files = event_files();
    let mut parser = Parser::new();
    let mut buf = Vec::new();
    let once = |parser: &mut Parser, buf: &mut Vec<u8>, p: &PathBuf| {
        buf.clear();
        agentlog::source::read_into(p, buf).unwrap();
        envelope(parser, buf)
    };
    for _ in 0..2 {
        for p in &files {
            once(&mut parser, &mut buf, p);
        }
    }
    for p in &files {
        let (n, _) = allocations(|| once(&mut parser, &mut buf, p));
        assert_eq!(n, 0, "{}: {n} allocations", p.display());
    }
}

#[test]
fn steady_state_python_dialect_allocates_nothing() {
    let _g = crate::measure_lock();
    let docs: [&[u8]; 3] = [
        br#"{"a": NaN, "b": [Infinity, -Infinity, 123456789012345678901234567890], "c": "x\ud800y"}"#,
        br#"[{"kind": "X", "v": 1e400}, {"kind": "Y", "s": "\u00e9\n"}, NaN]"#,
        br#"{"id": "e", "deep": [[[[[[[[[[[[[[[[NaN]]]]]]]]]]]]]]]]}"#,
    ];
    let mut parser = Parser::new();
    let run = |parser: &mut Parser, d: &[u8]| {
        let doc = parser.parse(d).unwrap();
        assert_eq!(doc.dialect(), agentlog::json::Dialect::Python);
        let root = doc.root();
        let spans: usize = match root.as_object() {
            Some(o) => o.iter().map(|m| m.value.raw().len()).sum(),
            None => root.as_array().unwrap().iter().map(|v| v.raw().len()).sum(),
        };
        spans
    };
    for _ in 0..2 {
        for d in docs {
            run(&mut parser, d);
        }
    }
    for d in docs {
        let (n, got) = allocations(|| run(&mut parser, d));
        assert!(got > 0);
        assert_eq!(n, 0, "{}: {n} allocations", String::from_utf8_lossy(d));
    }
}

agentlog::json_object! {
    /// An event envelope.
    pub struct Envelope<'a> {
        /// The class name.
        kind: Str<'a> = "kind",
        /// The id.
        id: Str<'a> = "id",
        /// When.
        timestamp: Str<'a> = "timestamp",
        /// Who.
        source: Str<'a> = "source",
        /// Anything.
        extra: Value<'a> = "extra",
    }
}

#[test]
fn decoding_an_object_of_up_to_8_members_allocates_nothing() {
    let _g = crate::measure_lock();
    let inputs: [&[u8]; 3] = [
        br#"{"id":"a","timestamp":"t","source":"agent","kind":"MessageEvent"}"#,
        br#"{"id":"a","timestamp":"t","source":"agent","x":[1,2],"extra":{"k":null},"kind":"K","id":"dup","y":null}"#,
        br#"{"kind":1,"id":null,"timestamp":"caf\u00e9","source":true}"#,
    ];
    let mut parser = Parser::new();
    let run = |parser: &mut Parser, d: &[u8]| {
        let doc = parser.parse(d).unwrap();
        let e = Envelope::decode(doc.root()).unwrap();
        assert!(e.members.len() <= 8);
        e.members.len() + e.kind.map_or(0, |k| k.len()) + e.timestamp.map_or(0, |k| k.len())
    };
    for _ in 0..2 {
        for d in inputs {
            run(&mut parser, d);
        }
    }
    for d in inputs {
        let (n, got) = allocations(|| run(&mut parser, d));
        assert!(got > 0);
        assert_eq!(n, 0, "{}: {n} allocations", String::from_utf8_lossy(d));
    }
}

#[test]
fn steady_state_spans_of_deep_documents_allocate_nothing() {
    let _g = crate::measure_lock();
    // Deeper than any small inline stack, so the span pass's stack must be
    // the parser's, reused.
    let depth = 500;
    let strict = "[".repeat(depth) + "1" + &"]".repeat(depth);
    let python = "[".repeat(depth) + "NaN" + &"]".repeat(depth);
    let mut parser = Parser::new();
    let run = |parser: &mut Parser, d: &[u8]| {
        let doc = parser.parse(d).unwrap();
        let mut v = doc.root();
        while let Some(first) = v.as_array().and_then(|a| a.get(0)) {
            v = first;
        }
        v.raw().len() + doc.root().as_array().unwrap().get(0).unwrap().raw().len()
    };
    for _ in 0..2 {
        run(&mut parser, strict.as_bytes());
        run(&mut parser, python.as_bytes());
    }
    for d in [&strict, &python] {
        let (n, got) = allocations(|| run(&mut parser, d.as_bytes()));
        assert_eq!(got, d.len() - 2 + if d == &strict { 1 } else { 3 });
        assert_eq!(n, 0, "{n} allocations");
    }
}
