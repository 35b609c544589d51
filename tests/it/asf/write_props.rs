//! Whatever the ASF appender writes verifies, and reads back to the same
//! bytes: a property test over generated sessions (items with arbitrary
//! JSON and unicode, unknown and namespaced members, numbers the I-JSON
//! test rounds, configs, branches, labels, responses with their
//! `request_hash`, convergence), plus the refusals.

use agentlog::asf::{Appender, ParentRef, Session, WriteError, ts::ts_from_unix};
use agentlog::json::{Map, OwnedValue};
use proptest::prelude::*;

fn number() -> impl Strategy<Value = OwnedValue> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| format!("{f:e}")),
        Just("9007199254740993".to_owned()),
        Just("1152921504606846976".to_owned()),
        Just("100.000".to_owned()),
        Just("-0".to_owned()),
    ]
    .prop_map(|t| OwnedValue::parse(t.as_bytes()).expect("a number literal"))
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_]{1,6}",
        "\\PC{1,4}",
        Just("\u{1f600}".to_owned()),
        Just("\u{fb01}".to_owned()),
    ]
}

fn json() -> impl Strategy<Value = OwnedValue> {
    let leaf = prop_oneof![
        Just(OwnedValue::Null),
        any::<bool>().prop_map(OwnedValue::Bool),
        number(),
        "\\PC{0,12}".prop_map(OwnedValue::String),
        "[\\x00-\\x1f\"\\\\]{0,4}".prop_map(OwnedValue::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(OwnedValue::Array),
            prop::collection::vec((key(), inner), 0..5).prop_map(|kv| {
                let mut m = Map::new();
                for (k, v) in kv {
                    m.insert(k, v);
                }
                OwnedValue::Object(m)
            }),
        ]
    })
}

#[derive(Debug, Clone)]
enum Step {
    User(String, OwnedValue),
    Assistant(String),
    Call,
    Config(String, OwnedValue),
    Branch(usize),
    Label(usize, bool),
    Ext(String, OwnedValue),
    Converge(usize),
    Response,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        ("\\PC{0,20}", json()).prop_map(|(t, j)| Step::User(t, j)),
        "\\PC{0,20}".prop_map(Step::Assistant),
        Just(Step::Call),
        ("[a-z0-9-]{1,8}", json()).prop_map(|(m, j)| Step::Config(m, j)),
        any::<usize>().prop_map(Step::Branch),
        (any::<usize>(), any::<bool>()).prop_map(|(i, b)| Step::Label(i, b)),
        ("[a-z]{1,5}", json()).prop_map(|(n, j)| Step::Ext(n, j)),
        any::<usize>().prop_map(Step::Converge),
        Just(Step::Response),
    ]
}

fn obj(pairs: Vec<(&str, OwnedValue)>) -> Map {
    let mut m = Map::new();
    for (k, v) in pairs {
        m.insert(k, v);
    }
    m
}

fn header() -> Map {
    obj(vec![
        (
            "id",
            OwnedValue::string("01995b2a-0000-7000-8000-00000000abcd"),
        ),
        ("created_at", OwnedValue::string("2026-09-17T12:00:00Z")),
        (
            "harness",
            OwnedValue::parse(br#"{"name":"proptest","version":"1"}"#).unwrap(),
        ),
        ("acme:whatever", OwnedValue::int(1)),
    ])
}

fn text_message(role: &str, kind: &str, text: &str) -> OwnedValue {
    let mut part = Map::new();
    part.insert("type", OwnedValue::string(kind));
    part.insert("text", OwnedValue::string(text));
    OwnedValue::Object(obj(vec![
        ("type", OwnedValue::string("message")),
        ("role", OwnedValue::string(role)),
        ("content", OwnedValue::Array(vec![OwnedValue::Object(part)])),
    ]))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn what_the_appender_writes_verifies(steps in prop::collection::vec(step(), 1..24)) {
        let mut a = Appender::new(header()).unwrap();
        let mut ids: Vec<String> = Vec::new();
        let mut calls = 0;
        for (n, s) in steps.into_iter().enumerate() {
            let ts = ts_from_unix(1_789_646_400 + (n as i64) / 3, (n as u32 % 3) * 250_000_000);
            let r = match s {
                Step::User(t, j) => {
                    let mut body = obj(vec![("item", text_message("user", "input_text", &t))]);
                    body.insert("acme:meta", j);
                    a.append("item", &ts, body)
                }
                Step::Assistant(t) => a.append(
                    "item",
                    &ts,
                    obj(vec![("item", text_message("assistant", "output_text", &t)), ("response", OwnedValue::string("resp_x"))]),
                ),
                Step::Call => {
                    calls += 1;
                    let item = obj(vec![
                        ("type", OwnedValue::string("function_call")),
                        ("call_id", OwnedValue::string(format!("call_{calls}"))),
                        ("name", OwnedValue::string("f")),
                        ("arguments", OwnedValue::string("{}")),
                    ]);
                    a.append("item", &ts, obj(vec![("item", OwnedValue::Object(item))]))
                }
                Step::Config(model, extra) => {
                    let mut body = obj(vec![("model", OwnedValue::string(model))]);
                    if let OwnedValue::Object(_) = extra { body.insert("extra", extra); }
                    a.append("config", &ts, body)
                }
                Step::Branch(i) if !ids.is_empty() => {
                    let p = ids[i % ids.len()].clone();
                    a.append_at(Some(&p), &[], "info", &ts, obj(vec![("name", OwnedValue::string("branch"))]))
                }
                Step::Label(i, leaf) if !ids.is_empty() => {
                    let t = ids[i % ids.len()].clone();
                    a.append("label", &ts, obj(vec![
                        ("target", OwnedValue::string(t)),
                        ("label", if leaf { OwnedValue::string("leaf") } else { OwnedValue::Null }),
                    ]))
                }
                Step::Ext(name, j) => a.append(&format!("acme:{name}"), &ts, obj(vec![("data", j)])),
                Step::Converge(i) if ids.len() > 1 => {
                    let leaf = a.leaf().map(str::to_owned);
                    let other = ids[i % ids.len()].clone();
                    let far = format!("sha256:{}", "ab".repeat(32));
                    let refs = [ParentRef { session: None, entry: other.clone() }, ParentRef { session: Some("elsewhere".into()), entry: far }];
                    if leaf.as_deref() == Some(other.as_str()) { continue; }
                    a.append_at(leaf.as_deref(), &refs, "item", &ts, obj(vec![("item", text_message("user", "input_text", "merged"))]))
                }
                Step::Response => {
                    let leaf = a.leaf().map(str::to_owned);
                    let hash = match &leaf {
                        Some(l) => {
                            let s = Session::read(a.bytes()).unwrap();
                            s.context(Some(l)).unwrap().request_hash().unwrap()
                        }
                        None => continue,
                    };
                    a.append("response", &ts, obj(vec![
                        ("request_hash", OwnedValue::string(hash)),
                        ("usage", OwnedValue::parse(br#"{"input_tokens":1,"output_tokens":2}"#).unwrap()),
                    ]))
                }
                _ => continue,
            };
            match r {
                Ok(id) => ids.push(id),
                Err(WriteError::Duplicate(_)) => {}
                Err(e) => prop_assert!(false, "refused: {e}"),
            }
        }
        let bytes = a.into_bytes();
        let s = Session::read(&bytes).unwrap();
        let problems = s.verify();
        prop_assert!(problems.is_empty(), "{problems:#?}\n{}", String::from_utf8_lossy(&bytes));
        prop_assert_eq!(s.entries().len(), ids.len());
        let mut out = Vec::new();
        s.write_canonical(&mut out).unwrap();
        prop_assert_eq!(&out, &bytes);
        // A context builds at every entry.
        for e in s.entries() {
            prop_assert!(s.context(Some(&e.id)).is_ok());
        }
    }
}

#[test]
fn refusals() {
    let mut a = Appender::new(header()).unwrap();
    let ts = "2026-09-17T12:00:00Z";
    let dup = OwnedValue::parse(br#"{"a":1,"a":2}"#).unwrap();
    assert!(matches!(
        a.append("info", ts, obj(vec![("x", dup)])),
        Err(WriteError::NotIJson(_))
    ));
    assert!(matches!(
        a.append("info", ts, obj(vec![("content", OwnedValue::Null)])),
        Err(WriteError::Reserved(_))
    ));
    assert!(matches!(
        a.append("info", "2026-09-17T12:00:00.0Z", Map::new()),
        Err(WriteError::Ts(_))
    ));
    assert!(matches!(
        a.append_at(Some("sha256:00"), &[], "info", ts, Map::new()),
        Err(WriteError::UnknownEntry(_))
    ));
    assert!(matches!(
        a.append("nonsense", ts, Map::new()),
        Err(WriteError::Rule(_))
    ));
    assert!(matches!(
        a.append(
            "response",
            ts,
            obj(vec![(
                "request_hash",
                OwnedValue::string(format!("sha256:{}", "0".repeat(64)))
            )])
        ),
        Err(WriteError::Rule(_))
    ));
    // `parents` naming one entry twice (with and without `session`: the
    // hash is the identity), or naming the parent.
    let first = a.append("info", ts, Map::new()).unwrap();
    let second = a
        .append("info", "2026-09-17T12:00:01Z", Map::new())
        .unwrap();
    let twice = [
        ParentRef {
            session: None,
            entry: first.clone(),
        },
        ParentRef {
            session: Some("elsewhere".into()),
            entry: first.clone(),
        },
    ];
    let refused = |r: Result<String, WriteError>| matches!(r, Err(WriteError::Rule(p)) if p.kind.code() == "parents");
    assert!(refused(a.append_at(
        Some(&second),
        &twice,
        "info",
        "2026-09-17T12:00:02Z",
        Map::new()
    )));
    let parent = [ParentRef {
        session: None,
        entry: second.clone(),
    }];
    assert!(refused(a.append_at(
        Some(&second),
        &parent,
        "info",
        "2026-09-17T12:00:02Z",
        Map::new()
    )));
    // A number the I-JSON test rejects is rounded and recorded.
    let big = OwnedValue::parse(b"9007199254740993").unwrap();
    a.append("info", ts, obj(vec![("n", big)])).unwrap();
    let text = String::from_utf8(a.bytes().to_vec()).unwrap();
    assert!(
        text.contains(
            r#""n":9007199254740992,"normalised":[{"at":"/n","was":"9007199254740993"}]"#
        ),
        "{text}"
    );
    // Nothing refused was written.
    assert_eq!(text.lines().count(), 4);
    assert!(Session::read(a.bytes()).unwrap().verify().is_empty());
}

#[test]
fn leaf_labels_follow_the_resume_rule() {
    let mut a = Appender::new(header()).unwrap();
    let t = |n: u32| ts_from_unix(1_789_646_400 + i64::from(n), 0);
    let info = |name: &str| obj(vec![("name", OwnedValue::string(name))]);
    let c0 = a.append("info", &t(0), info("root")).unwrap();
    let i1 = a.append("info", &t(1), info("one")).unwrap();
    let i2 = a.append("info", &t(2), info("two")).unwrap();
    let b1 = a
        .append_at(Some(&i1), &[], "info", &t(3), info("branch"))
        .unwrap();
    assert_eq!(
        a.leaf(),
        Some(i2.as_str()),
        "a branch does not move the leaf"
    );
    let label = |target: &str, leaf: bool| {
        obj(vec![
            ("target", OwnedValue::string(target)),
            (
                "label",
                if leaf {
                    OwnedValue::string("leaf")
                } else {
                    OwnedValue::Null
                },
            ),
        ])
    };
    let l = a.append("label", &t(4), label(&b1, true)).unwrap();
    let s = Session::read(a.bytes()).unwrap();
    assert_eq!(
        s.leaf().unwrap().id,
        b1,
        "the label's target when nothing follows it"
    );
    let b2 = a
        .append_at(Some(&b1), &[], "info", &t(5), info("extended"))
        .unwrap();
    let s = Session::read(a.bytes()).unwrap();
    assert_eq!(
        s.leaf().unwrap().id,
        b2,
        "the branch marked and then extended"
    );
    // An entry on the other branch, after the label, does not move it.
    a.append_at(Some(&l), &[], "info", &t(6), info("elsewhere"))
        .unwrap();
    assert_eq!(Session::read(a.bytes()).unwrap().leaf().unwrap().id, b2);
    // A null label clears it: the last entry again.
    let last = a
        .append_at(Some(&b2), &[], "label", &t(7), label(&b1, false))
        .unwrap();
    let s = Session::read(a.bytes()).unwrap();
    assert_eq!(s.leaf().unwrap().id, last);
    // A label naming a label is not in force; the last entry, itself a
    // `leaf` label, resolves to its nearest ancestor that is not one.
    a.append_at(Some(&last), &[], "label", &t(8), label(&l, true))
        .unwrap();
    let s = Session::read(a.bytes()).unwrap();
    assert_eq!(s.leaf().unwrap().id, last);
    assert!(s.verify().is_empty(), "{:?}", s.verify());
    let _ = c0;
}
