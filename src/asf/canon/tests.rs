//! The canonical form against the RFC's examples, the owned values' form, and the corpus.

use super::*;
use crate::json::Parser;

fn canon(input: &str) -> Result<String, CanonError> {
    let mut p = Parser::new();
    let doc = p.parse(input.as_bytes()).expect("parses");
    let mut out = Vec::new();
    canonical_value(doc.root(), &mut out)?;
    Ok(String::from_utf8(out).unwrap())
}

#[test]
fn numbers_follow_the_rfc_examples() {
    for (lit, want) in [
        ("9007199254740992", "9007199254740992"),
        ("1e20", "100000000000000000000"),
        ("0.1", "0.1"),
        ("1152921504606847000", "1152921504606847000"),
        ("1152921504606846976", "1152921504606847000"),
        ("-0", "0"),
        ("1E21", "1e+21"),
        ("1.5e-7", "1.5e-7"),
        ("100.0", "100"),
        ("0.000001", "0.000001"),
        ("1e-7", "1e-7"),
    ] {
        assert_eq!(canon(lit).as_deref(), Ok(want), "{lit}");
    }
    for lit in [
        "9007199254740993",
        "9.007199254740993e15",
        "90071992547409930e-1",
    ] {
        assert!(
            matches!(canon(lit), Err(CanonError::InexactInteger(_))),
            "{lit}"
        );
    }
    assert!(matches!(canon("1e400"), Err(CanonError::NotFinite(_))));
    assert!(matches!(canon("NaN"), Err(CanonError::NotFinite(_))));
}

#[test]
fn members_sort_by_utf16_and_strings_escape_as_ecmascript() {
    // U+1F600 (surrogates D83D DE00) sorts before U+FB01 in UTF-16.
    let got =
        canon("{\"\u{fb01}\":1,\"\u{1f600}\":2,\"b\":[true,null],\"a\":\"\\u0001\\u2028\\/\"}")
            .unwrap();
    assert_eq!(
        got,
        "{\"a\":\"\\u0001\u{2028}/\",\"b\":[true,null],\"\u{1f600}\":2,\"\u{fb01}\":1}"
    );
}

#[test]
fn not_i_json_is_refused() {
    assert_eq!(
        canon("{\"a\":1,\"a\":2}"),
        Err(CanonError::DuplicateName("a".into()))
    );
    assert_eq!(canon("\"\\ud83d\""), Err(CanonError::LoneSurrogate));
    assert_eq!(canon("\"\\ude00x\""), Err(CanonError::LoneSurrogate));
    assert_eq!(canon("\"\\ud83d\\ude00\"").unwrap(), "\"\u{1f600}\"");
    assert_eq!(canon("{\"\\ud800\":1}"), Err(CanonError::LoneSurrogate));
}

#[test]
fn strings_copied_as_they_stand_equal_the_decoded_and_rewritten() {
    // Literals with and without escapes, long (past one 64-byte chunk),
    // non-ASCII, as names and values: the parse written canonically
    // equals the owned value written canonically.
    let long = "x".repeat(70);
    for input in [
        format!("{{\"{long}\":\"{long}é\",\"a\":\"plain ☃\"}}"),
        format!("[\"{long}\\n{long}\",\"\\u00e9\",\"\\/\",\"\\\"\"]"),
        "{\"k\\u0041\":\"\\u001f\",\"\\t\":\"\"}".to_owned(),
        format!("{{\"a\\nb\":\"{long}\\\"\\\\\\b\\f\\r\\u0000\\u000A\\u0008\"}}"),
    ] {
        let mut p = Parser::new();
        let doc = p.parse(input.as_bytes()).expect("parses");
        let mut from_parse = Vec::new();
        canonical_value(doc.root(), &mut from_parse).unwrap();
        let owned = to_canonical(&OwnedValue::from(doc.root())).unwrap();
        assert_eq!(from_parse, owned, "{input}");
    }
    // Each verdict with the text shifted across the 16-byte blocks.
    for (inner, plain) in [
        ("a\\nb\\\"\\\\\\u001f\\u0000", true),
        ("\\\\u12 \\\\\\\\\\t", true),
        ("a\\/b", false),
        ("\\u000a", false),
        ("\\u001F", false),
        ("\\u00e9", false),
        ("\\ud83d\\ude00", false),
        ("\\u00", false),
        ("a\tb", false),
        ("é ☃", true),
    ] {
        for shift in 0..20 {
            let lit = format!("\"{}{inner}{}\"", "x".repeat(shift), "y".repeat(shift % 5));
            assert_eq!(plain_literal(lit.as_bytes()), plain, "{lit}");
        }
    }
    assert!(!plain_literal(b"abc"));
}

/// The walk of a strictly parsed document ([`canonical_strict`]) against
/// the owned value's canonical form, result for result (bytes or error);
/// whether the document was parsed strictly (else nothing compared: the
/// owned value of a lone surrogate has lost it).
fn strict_equals_owned(input: &[u8]) -> bool {
    let mut p = Parser::new();
    let Ok(doc) = p.parse(input) else {
        return false;
    };
    if !doc.root().is_strict() {
        return false;
    }
    let mut from_parse = Vec::new();
    let walked = canonical_value(doc.root(), &mut from_parse).map(|()| from_parse);
    let owned = to_canonical(&OwnedValue::from(doc.root()));
    assert_eq!(
        walked
            .as_ref()
            .map(|b| String::from_utf8_lossy(b).into_owned()),
        owned
            .as_ref()
            .map(|b| String::from_utf8_lossy(b).into_owned()),
        "{}",
        String::from_utf8_lossy(input)
    );
    doc.root().is_strict()
}

#[test]
fn the_strict_walk_equals_the_owned_canonical_form_on_edge_cases() {
    let long = "y".repeat(70);
    let strict = [
        // Escapes, as names and values; `\/` and upper-case hex are
        // rewritten, control characters escaped as ECMAScript does.
        r#"{"a\"b":"\/\u00E9\u001F\b\f\n\r\t\"\\","a":"\u0041"}"#.to_owned(),
        format!(r#"["{long}","{long}\n{long}","é{long}☃","\u2028"]"#),
        // Names sorted by UTF-16: a supplementary character (surrogates
        // D83D DE00) before U+FB01, escaped or not; ASCII and non-ASCII.
        r#"{"\ufb01":1,"\ud83d\ude00":2,"z":3,"é":4,"\uE000":5,"😀a":6}"#.to_owned(),
        r#"{"ﬁ":1,"😀":2,"b":{"é":[],"e":{}},"a":[[1,[2,[3]]],{}]}"#.to_owned(),
        // Numbers: whole ones the tape holds, at and past 2^53, signs,
        // fractions and exponents through the literal.
        "[0,-0,1,-1,9007199254740992,-9007199254740992,\
         18446744073709551615,-9223372036854775808,1.0,-0.0,1e20,1E21,1.5e-7,\
         100.0,0.1,1152921504606846976,123456789012345678]"
            .to_owned(),
        "[9007199254740993]".to_owned(),
        "[-9007199254740993]".to_owned(),
        // Names that share their first eight bytes, end within them,
        // or hold NUL (a zero like the padding past a name's end).
        r#"{"abcdefgh2":1,"abcdefgh1":2,"abcdefgh":3,"abc":4,"abc\u0000":5,"abcdefghi\u0000":6,"":7,"\u0000":8,"ab\u0000c":9,"abd":10,"abcdefgh\u0000":11,"~~~~~~~~~":12}"#.to_owned(),
        r#"{"abcdefgh":1,"abcdefgh":2}"#.to_owned(),
        // Duplicate names, ASCII and not, nested.
        r#"{"a":1,"b":2,"a":3}"#.to_owned(),
        r#"{"x":{"é":1,"é":2}}"#.to_owned(),
        r#"{"\u0061":1,"a":2}"#.to_owned(),
        // White space as Python's `json.dumps` writes it.
        r#"{"kind": "X", "list": [1, 2.5, "s"], "obj": {"b": null, "a": true}}"#.to_owned(),
        "[]".to_owned(),
        "{}".to_owned(),
        "\"\"".to_owned(),
    ];
    for input in &strict {
        assert!(strict_equals_owned(input.as_bytes()), "not strict: {input}");
    }
    // What only the lenient parse reads takes the general path.
    for input in [
        r#"["\ud83d"]"#,
        "[1e400]",
        "[18446744073709551616]",
        "[NaN]",
        r#"{"\ude00":1}"#,
        // Raw control characters in a string.
        "[\"a\u{1}b\tc\"]",
    ] {
        assert!(!strict_equals_owned(input.as_bytes()), "strict: {input}");
    }
}

#[test]
fn the_strict_walk_equals_the_owned_canonical_form_on_the_corpus() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus");
    let mut stack = vec![root];
    let (mut files, mut strict) = (0, 0);
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("corpus").flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "json") {
                let bytes = std::fs::read(&path).expect("reads");
                files += 1;
                strict += usize::from(strict_equals_owned(&bytes));
            }
        }
    }
    assert!(files > 1000 && strict > files / 2, "{strict} of {files}");
}

#[test]
fn a_value_is_canonical_exactly_when_its_text_is_its_canonical_form() {
    for input in [
        r#"{"a":1,"b":[true,null,"x\n"],"c":{}}"#,
        r#"{"a":1,"b":[true,null,"x\n"],"c":{} }"#,
        r#"{"b":1,"a":2}"#,
        r#"{"a":1,"a":1}"#,
        r#"[1.5,-0.25,1e-7,100,0,-12,123456789012345678]"#,
        r#"[1.50]"#,
        r#"[-0]"#,
        r#"[1E3]"#,
        r#"[1e+21]"#,
        r#"[ 1]"#,
        r#"[1 ,2]"#,
        r#"[]"#,
        r#"[ ]"#,
        r#"{ }"#,
        r#"{"a" :1}"#,
        r#"{"a": 1}"#,
        r#"{"\u00e9":1}"#,
        r#"{"é":"\/"}"#,
        r#"{"é":"\u001f","😀":1,"ﬁ":2}"#,
        r#"{"ﬁ":2,"😀":1}"#,
        r#"["\ud83d\ude00"]"#,
        r#"[9007199254740993]"#,
    ] {
        let mut p = Parser::new();
        let doc = p.parse(input.as_bytes()).expect("parses");
        let mut out = Vec::new();
        let same = canonical_value(doc.root(), &mut out).is_ok() && out == input.as_bytes();
        assert_eq!(is_canonical(doc.root()), same, "{input}");
    }
}
