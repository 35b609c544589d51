//! The JSON layer: lookups, spans, quirks, lossless write-back.

use agentlog::json::{Dialect, JsonErrorKind, JsonType, OwnedValue, Parser, Str, Style, Value};

agentlog::json_object! {
    /// A test object.
    pub struct Thing<'a> {
        /// A string.
        name: Str<'a> = "name",
        /// A flag.
        on: bool = "on",
        /// Anything.
        n: Value<'a> = "n",
        /// A list of strings.
        tags: agentlog::json::List<'a, Str<'a>> = "tags",
    }
}

#[test]
fn lookup_spans_and_types() {
    let mut p = Parser::new();
    let input = br#" {"a": [1, 2.0, "x\ny"] , "b":{"c" : null}, "a":true, "d": -12.5} "#;
    let doc = p.parse(input).unwrap();
    let root = doc.root();
    assert_eq!(root.json_type(), JsonType::Object);
    assert_eq!(
        root.get("a").unwrap().as_bool(),
        Some(true),
        "last duplicate wins"
    );
    let obj = root.as_object().unwrap();
    let first_a = obj.iter().next().unwrap().value;
    assert_eq!(first_a.raw(), br#"[1, 2.0, "x\ny"]"#);
    let elems: Vec<_> = first_a.as_array().unwrap().iter().collect();
    assert_eq!(elems[0].raw(), b"1");
    assert_eq!(elems[1].raw(), b"2.0");
    assert_eq!(elems[1].as_int().unwrap().value, 2);
    assert!(elems[1].as_int().unwrap().exact);
    assert_eq!(elems[2].as_str(), Some("x\ny"));
    assert_eq!(elems[2].raw(), br#""x\ny""#);
    assert_eq!(root.get("b").unwrap().raw(), br#"{"c" : null}"#);
    assert!(root.get("b").unwrap().get("c").unwrap().is_null());
    let d = root.get("d").unwrap().as_int().unwrap();
    assert_eq!((d.value, d.exact), (-12, false));
    assert_eq!(root.raw(), &input[1..input.len() - 1]);
    assert_eq!(root.get("zz"), None);
}

#[test]
fn python_quirks() {
    let mut p = Parser::new();
    {
        let doc = p
            .parse(b"[NaN, Infinity, -Infinity, 123456789012345678901234567890, 1e400]")
            .unwrap();
        assert_eq!(doc.dialect(), Dialect::Python);
        let a: Vec<Value> = doc.root().as_array().unwrap().iter().collect();
        assert!(a[0].as_f64().unwrap().is_nan());
        assert_eq!(a[1].as_f64(), Some(f64::INFINITY));
        assert_eq!(a[2].as_f64(), Some(f64::NEG_INFINITY));
        assert_eq!(a[3].raw(), b"123456789012345678901234567890");
        assert_eq!(a[4].as_f64(), Some(f64::INFINITY));
    }
    {
        let doc = p
            .parse(br#"{"s": "a\ud800b", "t": "\ud83d\ude00"}"#)
            .unwrap();
        assert_eq!(doc.root().get("s").unwrap().as_str(), Some("a\u{FFFD}b"));
        assert_eq!(doc.root().get("s").unwrap().raw(), br#""a\ud800b""#);
        assert_eq!(doc.root().get("t").unwrap().as_str(), Some("😀"));
    }
    assert_eq!(
        p.parse(b"\xef\xbb\xbf{}").unwrap_err().kind(),
        JsonErrorKind::Bom
    );
    assert_eq!(p.parse(b"").unwrap_err().kind(), JsonErrorKind::Empty);
    assert_eq!(p.parse(b"  \n").unwrap_err().kind(), JsonErrorKind::Empty);
    assert_eq!(
        p.parse(b"{\"a\":\"\xff\"}").unwrap_err().kind(),
        JsonErrorKind::InvalidUtf8
    );
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    assert_eq!(
        p.parse(deep.as_bytes()).unwrap_err().kind(),
        JsonErrorKind::TooDeep
    );
    let e = p.parse(b"{\"a\": tru}").unwrap_err();
    assert_eq!(e.kind(), JsonErrorKind::Syntax);
    assert!(e.offset().is_some());
}

#[test]
fn lossless_object_round_trip() {
    let mut p = Parser::new();
    let input = br#"{"x" : {"keep": [1,2 ,3]}, "name":"caf\u00e9", "on":1, "n": 12.0, "tags":["a","b"], "name":"second", "y":null}"#;
    let doc = p.parse(input).unwrap();
    let t = Thing::decode(doc.root()).unwrap();
    assert_eq!(t.name.unwrap(), "second");
    assert_eq!(t.on, None, "mistyped member is kept raw, not decoded");
    assert_eq!(t.members.get_raw("on"), Some(&b"1"[..]));
    assert_eq!(t.n.unwrap().raw(), b"12.0");
    assert_eq!(t.tags.as_ref().unwrap().len(), 2);
    let out = t.to_json();
    let s = String::from_utf8(out.clone()).unwrap();
    assert!(s.contains(r#""x":{"keep": [1,2 ,3]}"#), "{s}");
    assert!(s.contains(r#""name":"caf\u00e9""#), "{s}");
    assert_eq!(
        OwnedValue::parse(&out).unwrap(),
        OwnedValue::parse(input).unwrap()
    );
    // A changed declared member is encoded canonically.
    let mut t2 = t.clone();
    t2.name = Some(Str::new("new \"one\""));
    t2.on = Some(true);
    let v = OwnedValue::parse(&t2.to_json()).unwrap();
    assert_eq!(v.get("name").unwrap().as_str(), Some("new \"one\""));
    assert_eq!(v.get("on").unwrap().as_bool(), Some(true));
}

#[test]
fn owned_python_styles() {
    let v = OwnedValue::parse(br#"{"a":[1,2.5,{"b":"\u00e9"}],"c":{},"d":[]}"#).unwrap();
    assert_eq!(
        v.to_string_styled(Style::INDENT2_UNICODE),
        "{\n  \"a\": [\n    1,\n    2.5,\n    {\n      \"b\": \"é\"\n    }\n  ],\n  \"c\": {},\n  \"d\": []\n}"
    );
    assert_eq!(
        v.to_string_styled(Style::PYTHON_DEFAULT),
        r#"{"a": [1, 2.5, {"b": "\u00e9"}], "c": {}, "d": []}"#
    );
}
