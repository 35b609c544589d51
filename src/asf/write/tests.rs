//! The appender's own tests: trusted appends against checked ones.

use super::*;

fn map(json: &str) -> Map {
    match OwnedValue::parse(json.as_bytes()).unwrap() {
        OwnedValue::Object(m) => m,
        _ => panic!("not an object"),
    }
}

fn header() -> Map {
    map(r#"{"id":"s1","created_at":"2026-01-01T00:00:00Z"}"#)
}

const TS: &str = "2026-01-01T00:00:01Z";

#[test]
fn trusted_appends_write_the_bytes_checked_ones_do() {
    let call = r#"{"type":"function_call","call_id":"c1","name":"t","arguments":"{}"}"#;
    let mut checked = Appender::new(header()).unwrap();
    let mut trusted = Appender::trusted(header(), Vec::new()).unwrap();
    for a in [&mut checked, &mut trusted] {
        a.append("config", TS, map(r#"{"model":"m"}"#)).unwrap();
        a.append(
            "item",
            TS,
            map(r#"{"item":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi\n"}]}}"#),
        )
        .unwrap();
    }
    // The call: whole for the checked appender, canonical for the
    // trusted one.
    let call_value = OwnedValue::parse(call.as_bytes()).unwrap();
    let c = checked
        .append(
            "item",
            TS,
            obj_with("item", call_value.clone(), Some(("response", "r1"))),
        )
        .unwrap();
    let canonical = canon::to_canonical(&call_value).unwrap();
    let t = trusted
        .append_canonical(
            "item",
            TS,
            map(r#"{"response":"r1"}"#),
            &[("item", &canonical)],
            Some("c1"),
        )
        .unwrap();
    assert_eq!(c, t);
    for a in [&mut checked, &mut trusted] {
        let decision = format!(
            r#"{{"call_id":"c1","target":"{c}","verdict":"reject","by":"human","reason":"no"}}"#
        );
        a.append("decision", TS, map(&decision)).unwrap();
        // Normalised as a checked append normalises.
        a.append("x:record", TS, map(r#"{"n":9007199254740993}"#))
            .unwrap();
    }
    assert_eq!(checked.bytes(), trusted.bytes());
    let s = Session::read(trusted.bytes()).unwrap();
    assert_eq!(s.verify(), Vec::new());
}

#[test]
fn trusted_appends_keep_the_rules_across_lines() {
    let mut a = Appender::trusted(header(), Vec::new()).unwrap();
    let call = br#"{"arguments":"{}","call_id":"c1","name":"t","type":"function_call"}"#;
    let first = a
        .append_canonical("item", TS, Map::new(), &[("item", call)], Some("c1"))
        .unwrap();
    // The same call id again.
    let again = a.append_canonical(
        "item",
        "2026-01-01T00:00:02Z",
        Map::new(),
        &[("item", call)],
        Some("c1"),
    );
    assert!(matches!(again, Err(WriteError::Rule(_))), "{again:?}");
    // A function_call without a call id.
    let empty = a.append(
        "item",
        TS,
        map(r#"{"item":{"type":"function_call","name":"t","arguments":"{}"}}"#),
    );
    assert!(matches!(empty, Err(WriteError::Rule(_))), "{empty:?}");
    // A compaction keeping an entry off the path; a decision on a call
    // id its target does not carry.
    let off = a.append(
        "compaction",
        TS,
        map(r#"{"first_kept":"sha256:0000000000000000000000000000000000000000000000000000000000000000","summary":{"type":"message","role":"user","content":[]}}"#),
    );
    assert!(matches!(off, Err(WriteError::Rule(_))), "{off:?}");
    let wrong = format!(
        r#"{{"call_id":"c2","target":"{first}","verdict":"reject","by":"human","reason":"no"}}"#
    );
    let wrong = a.append("decision", TS, map(&wrong));
    assert!(matches!(wrong, Err(WriteError::Rule(_))), "{wrong:?}");
    // A reserved member.
    let reserved = a.append_canonical("x:y", TS, Map::new(), &[("ts", b"1")], None);
    assert!(
        matches!(reserved, Err(WriteError::Reserved(_))),
        "{reserved:?}"
    );
    // Nothing refused was written.
    let s = Session::read(a.bytes()).unwrap();
    assert_eq!(s.entries().len(), 1);
    assert_eq!(s.verify(), Vec::new());
}

fn obj_with(k: &str, v: OwnedValue, extra: Option<(&str, &str)>) -> Map {
    let mut m = Map::new();
    m.insert(k, v);
    if let Some((k, v)) = extra {
        m.insert(k, OwnedValue::string(v));
    }
    m
}

#[test]
fn an_id_is_looked_up_by_the_digest_it_spells_and_only_in_its_one_spelling() {
    let d: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ 0xa5);
    let id = hex_ref(&d);
    assert_eq!(digest_of(&id), Some(d));
    // Every other spelling names nothing: upper case, no prefix, short,
    // long, not hex.
    for other in [
        id.to_uppercase(),
        format!("SHA256:{}", &id[PREFIX.len()..]),
        format!("sha256:{}", id[PREFIX.len()..].to_uppercase()),
        id[PREFIX.len()..].to_owned(),
        id[..id.len() - 1].to_owned(),
        format!("{id}0"),
        format!("{}g", &id[..id.len() - 1]),
        String::new(),
    ] {
        assert_eq!(digest_of(&other), None, "{other}");
    }
    // The appender: the entry it wrote is found by its id, not by another
    // spelling of the same digest.
    let mut a = Appender::trusted(header(), Vec::new()).unwrap();
    let first = a.append("config", TS, map(r#"{"model":"m"}"#)).unwrap();
    a.append("config", TS, map(r#"{"model":"n"}"#)).unwrap();
    assert!(a.contains(&first));
    let upper = format!("sha256:{}", first[PREFIX.len()..].to_uppercase());
    assert!(!a.contains(&upper));
    assert_eq!(
        a.set_leaf(&upper),
        Err(WriteError::UnknownEntry(upper.clone()))
    );
    assert_eq!(
        a.append_at(Some(&upper), &[], "config", TS, map(r#"{"model":"o"}"#)),
        Err(WriteError::UnknownEntry(upper))
    );
    a.set_leaf(&first).unwrap();
    assert_eq!(a.leaf(), Some(first.as_str()));
}

#[test]
fn an_entry_under_a_moved_leaf_hangs_from_that_leaf() {
    // A, B under A; the leaf moved back to A; C under it. The path from C
    // is C, A: B is not on it (the leaf's position moves with the leaf).
    let mut a = Appender::trusted(header(), Vec::new()).unwrap();
    let first = a.append("config", TS, map(r#"{"model":"m"}"#)).unwrap();
    let second = a.append("config", TS, map(r#"{"model":"n"}"#)).unwrap();
    a.set_leaf(&first).unwrap();
    let third = a.append("config", TS, map(r#"{"model":"o"}"#)).unwrap();
    let compaction = |kept: &str| {
        map(&format!(
            r#"{{"first_kept":"{kept}","summary":{{"type":"message","role":"user","content":[]}}}}"#
        ))
    };
    assert!(matches!(
        a.append("compaction", TS, compaction(&second)),
        Err(WriteError::Rule(_))
    ));
    assert_eq!(a.leaf(), Some(third.as_str()));
    a.append("compaction", TS, compaction(&first)).unwrap();
}

/// A trusted appender never reads its lines back, so it makes no line
/// reader; a checked one makes one at its first line, and its checks
/// still refuse what a reader refuses.
#[test]
fn only_a_checked_appender_reads_its_lines_back() {
    let mut trusted = Appender::trusted(header(), Vec::new()).unwrap();
    trusted
        .append("config", TS, map(r#"{"model":"m"}"#))
        .unwrap();
    trusted.append("x:record", TS, map(r#"{"n":1}"#)).unwrap();
    assert!(trusted.reader.is_none());
    let mut checked = Appender::new(header()).unwrap();
    assert!(checked.reader.is_none());
    checked
        .append("config", TS, map(r#"{"model":"m"}"#))
        .unwrap();
    assert!(checked.reader.is_some());
    let bad = checked.append("item", TS, map(r#"{"item":5}"#));
    assert!(matches!(bad, Err(WriteError::Rule(_))), "{bad:?}");
}
