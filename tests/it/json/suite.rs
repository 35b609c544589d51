//! JSONTestSuite (`tests/data/JSONTestSuite/test_parsing`): every
//! `y_` case is accepted, every `n_` case is refused with an error except the
//! three whose only fault is a literal Python's `json` reads (`NaN`,
//! `Infinity`, `-Infinity`), which are read as Python reads them, and no
//! `i_` case panics.
//!
//! The expectations follow Python's `json.loads` on the decoded text (what a
//! Python program reading these files with `open(...).read()` sees): of the
//! `n_` cases it accepts exactly `n_number_NaN.json`,
//! `n_number_infinity.json` and `n_number_minus_infinity.json`; it accepts
//! every `i_` case that is valid UTF-8 without a byte-order mark, and
//! refuses the others at decoding.

use crate::common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use agentlog::json::{Dialect, JsonErrorKind, OwnedValue, Parser};

fn cases() -> Vec<(String, Vec<u8>)> {
    let dir: PathBuf = common::data_dir().join("JSONTestSuite/test_parsing");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".json") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        out.push((name, bytes));
    }
    out.sort();
    assert!(
        out.len() > 300,
        "the suite has 318 cases, found {}",
        out.len()
    );
    out
}

/// The `n_` cases Python's `json` reads, with the `f64` each holds in its
/// one-element array.
const PYTHON_READS: [(&str, f64); 3] = [
    ("n_number_NaN.json", f64::NAN),
    ("n_number_infinity.json", f64::INFINITY),
    ("n_number_minus_infinity.json", f64::NEG_INFINITY),
];

/// Parses with a fresh parser and with a parser reused across all cases (a
/// failed parse must not poison the next); both must agree.
fn parse_both(shared: &mut Parser, bytes: &[u8]) -> Result<OwnedValue, JsonErrorKind> {
    let fresh = OwnedValue::parse(bytes).map_err(|e| e.kind());
    let reused = OwnedValue::parse_with(shared, bytes)
        .map(|(v, _)| v)
        .map_err(|e| e.kind());
    assert_eq!(fresh, reused, "fresh and reused parsers disagree");
    fresh
}

/// A value written back compactly parses to the same value.
fn assert_round_trip(name: &str, v: &OwnedValue) {
    let text = v.to_string();
    let again = OwnedValue::parse(text.as_bytes())
        .unwrap_or_else(|e| panic!("{name}: written form {text:?} does not parse: {e}"));
    assert_eq!(&again, v, "{name}: round trip changed the value");
}

#[test]
fn y_cases_are_accepted() {
    let mut shared = Parser::new();
    let mut n = 0;
    for (name, bytes) in cases().iter().filter(|(n, _)| n.starts_with("y_")) {
        match parse_both(&mut shared, bytes) {
            Ok(v) => assert_round_trip(name, &v),
            Err(e) => panic!(
                "{name}: refused ({e:?}): {:?}",
                String::from_utf8_lossy(bytes)
            ),
        }
        n += 1;
    }
    assert!(n >= 95, "{n} y_ cases");
}

#[test]
fn n_cases_are_refused_but_pythons_three() {
    let mut shared = Parser::new();
    let mut refused = 0;
    let mut read = 0;
    for (name, bytes) in cases().iter().filter(|(n, _)| n.starts_with("n_")) {
        let python = PYTHON_READS.iter().find(|(n, _)| n == name);
        let result = parse_both(&mut shared, bytes);
        match (python, result) {
            (Some((_, want)), Ok(v)) => {
                let items = v.as_array().unwrap_or_else(|| panic!("{name}: {v:?}"));
                assert_eq!(items.len(), 1, "{name}");
                let got = items[0].as_number().expect("a number").as_f64();
                assert!(
                    got == *want || (got.is_nan() && want.is_nan()),
                    "{name}: {got} != {want}"
                );
                let mut p = Parser::new();
                assert_eq!(p.parse(bytes).unwrap().dialect(), Dialect::Python);
                assert_round_trip(name, &v);
                read += 1;
            }
            (Some(_), Err(e)) => panic!("{name}: Python reads it, refused here ({e:?})"),
            (None, Ok(v)) => panic!(
                "{name}: accepted as {v:?}: {:?}",
                String::from_utf8_lossy(bytes)
            ),
            (None, Err(_)) => refused += 1,
        }
    }
    assert_eq!(read, 3);
    assert!(refused >= 180, "{refused} n_ cases refused");
}

#[test]
fn n_case_errors_carry_offsets() {
    let mut p = Parser::new();
    for (name, bytes) in cases().iter().filter(|(n, _)| n.starts_with("n_")) {
        if let Err(e) = p.parse(bytes)
            && e.kind() != JsonErrorKind::Empty
        {
            let off = e
                .offset()
                .unwrap_or_else(|| panic!("{name}: {e} has no offset"));
            assert!(off <= bytes.len(), "{name}: offset {off} past the end");
        }
    }
}

#[test]
fn i_cases_do_not_panic_and_follow_python() {
    let mut shared = Parser::new();
    for (name, bytes) in cases().iter().filter(|(n, _)| n.starts_with("i_")) {
        let result = catch_unwind(AssertUnwindSafe(|| {
            let r = parse_both(&mut shared, bytes);
            if let Ok(v) = &r {
                assert_round_trip(name, v);
            }
            r
        }))
        .unwrap_or_else(|_| panic!("{name}: panicked"));
        let bom = bytes.starts_with(b"\xef\xbb\xbf");
        let utf8 = std::str::from_utf8(bytes).is_ok();
        match result {
            Ok(_) => assert!(utf8 && !bom, "{name}: accepted, Python refuses it"),
            Err(kind) => {
                assert!(
                    !utf8 || bom,
                    "{name}: refused ({kind:?}), Python reads it: {:?}",
                    String::from_utf8_lossy(bytes)
                );
                let want = if bom {
                    JsonErrorKind::Bom
                } else {
                    JsonErrorKind::InvalidUtf8
                };
                assert_eq!(kind, want, "{name}");
            }
        }
    }
}
