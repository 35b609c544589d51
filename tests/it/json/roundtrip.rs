//! Round trips of the JSON layer.
//!
//! - A property test over generated JSON text (varied white space, escapes,
//!   unicode, lone surrogates, numbers written `12.0`, with exponents, beyond
//!   64 bits, Python's `NaN`/`Infinity`, duplicate names, nesting): the
//!   parser reads exactly the value the generator meant; decoding with a
//!   `json_object!` type and encoding again gives the same value with every
//!   member in place and undeclared members byte for byte; a changed
//!   declared member is written canonically; `OwnedValue` parse → write →
//!   parse is the identity in every style.
//! - Every `*.json` file of the shared corpus is read losslessly.
//! - Edge cases: 100,000-deep nesting, 10,000-digit numbers, invalid UTF-8
//!   in strings, a million tiny members.

use crate::common;

use std::path::{Path, PathBuf};

use agentlog::json::{
    Dialect, Items, JsonErrorKind, List, Map, OwnedValue, Parser, Str, Style, UNDECLARED, Value,
};
use proptest::prelude::*;

agentlog::json_object! {
    /// A nested declared object.
    pub struct Child<'a> {
        /// A string.
        name: Str<'a> = "name",
        /// A flag.
        flag: bool = "flag",
    }
}

agentlog::json_object! {
    /// The type the round trip decodes with: a few declared members of each
    /// field kind, the others kept raw.
    pub struct Probe<'a> {
        /// The class name.
        kind: Str<'a> = "kind",
        /// The id.
        id: Str<'a> = "id",
        /// A timestamp.
        timestamp: Str<'a> = "timestamp",
        /// A flag.
        flag: bool = "flag",
        /// Any value.
        n: Value<'a> = "n",
        /// A list of strings, all or nothing.
        tags: List<'a, Str<'a>> = "tags",
        /// A list of strings, element by element.
        items: Items<'a, Str<'a>> = "items",
        /// A nested object.
        child: Child<'a> = "child",
    }
}

// ---------------------------------------------------------------------------
// The generator: JSON text together with the value it means.

/// A generated value: what it means, and how it is written.
#[derive(Clone, Debug)]
enum Gen {
    Null,
    Bool(bool),
    /// A number literal (its text is its meaning: numbers keep their text).
    Num(String),
    Str(GStr),
    /// Elements, and a seed choosing the white space around them.
    Arr(Vec<Gen>, u64),
    /// Members, and a seed choosing the white space around them.
    Obj(Vec<(GStr, Gen)>, u64),
}

/// A generated string: the literal (quotes included) and its decoded text.
#[derive(Clone, Debug)]
struct GStr {
    lit: String,
    text: String,
    /// Whether the literal holds a lone surrogate escape (Python's dialect).
    lone: bool,
}

/// A piece of a string literal.
#[derive(Clone, Debug)]
enum Piece {
    /// A character written as itself.
    Plain(char),
    /// A two-character escape.
    Short(u8),
    /// `\uXXXX` of a BMP character, upper- or lower-case hex digits.
    U(char, bool),
    /// A character beyond the BMP as an escaped surrogate pair.
    Pair(char),
    /// A lone surrogate escape (decodes to U+FFFD).
    Lone(u16),
}

fn piece() -> impl Strategy<Value = Piece> {
    let plain = any::<char>().prop_filter("not quote, backslash or control", |c| {
        !matches!(c, '"' | '\\') && (*c as u32) >= 0x20
    });
    prop_oneof![
        60 => prop::sample::select(&b"abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 _.:/-"[..])
            .prop_map(|b| Piece::Plain(b as char)),
        30 => plain.prop_map(Piece::Plain),
        20 => prop::sample::select(&b"\"\\/bfnrt"[..]).prop_map(Piece::Short),
        20 => (any::<char>().prop_filter("BMP", |c| (*c as u32) < 0x10000), any::<bool>())
            .prop_map(|(c, up)| Piece::U(c, up)),
        10 => (0x10000u32..0x110000).prop_filter_map("a char", char::from_u32).prop_map(Piece::Pair),
        2 => (0xD800u16..0xE000).prop_map(Piece::Lone),
    ]
}

fn gstr_of(pieces: &[Piece]) -> GStr {
    let mut lit = String::from("\"");
    let mut text = String::new();
    let mut lone = false;
    // A lone high surrogate followed by a low one would pair up: the
    // generator keeps lone surrogates lone by never writing one right
    // before a `\u` escape.
    let mut prev_lone = false;
    for p in pieces {
        match p {
            Piece::Plain(c) => {
                lit.push(*c);
                text.push(*c);
            }
            Piece::Short(b) => {
                lit.push('\\');
                lit.push(*b as char);
                text.push(match b {
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    other => *other as char,
                });
            }
            Piece::U(c, up) => {
                if prev_lone {
                    lit.push('.');
                    text.push('.');
                }
                let hex = format!("{:04x}", *c as u32);
                lit.push_str("\\u");
                lit.push_str(&if *up { hex.to_uppercase() } else { hex });
                text.push(*c);
            }
            Piece::Pair(c) => {
                if prev_lone {
                    lit.push('.');
                    text.push('.');
                }
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    lit.push_str(&format!("\\u{u:04X}"));
                }
                text.push(*c);
            }
            Piece::Lone(u) => {
                if prev_lone {
                    lit.push('.');
                    text.push('.');
                }
                lit.push_str(&format!("\\u{u:04x}"));
                text.push('\u{FFFD}');
                lone = true;
            }
        }
        prev_lone = matches!(p, Piece::Lone(_));
    }
    lit.push('"');
    GStr { lit, text, lone }
}

fn gstr() -> impl Strategy<Value = GStr> {
    prop::collection::vec(piece(), 0..12).prop_map(|p| gstr_of(&p))
}

/// A member name: often one the probe type declares, sometimes written with
/// escapes (`"\u006bind"` is `kind`), often a short one likely to repeat.
fn key() -> impl Strategy<Value = GStr> {
    const NAMES: [&str; 13] = [
        "kind",
        "id",
        "timestamp",
        "flag",
        "n",
        "tags",
        "items",
        "child",
        "name",
        "source",
        "parent_id",
        "a",
        "b",
    ];
    prop_oneof![
        5 => prop::sample::select(&NAMES[..]).prop_map(|k| GStr {
            lit: format!("\"{k}\""),
            text: k.to_owned(),
            lone: false,
        }),
        1 => prop::sample::select(&NAMES[..]).prop_map(|k| {
            // The first character escaped.
            let mut chars = k.chars();
            let first = chars.next().unwrap_or('k');
            GStr {
                lit: format!("\"\\u{:04x}{}\"", first as u32, chars.as_str()),
                text: k.to_owned(),
                lone: false,
            }
        }),
        2 => gstr(),
    ]
}

/// A regex strategy compiled once (a `&str` strategy parses its regex for
/// every value).
fn regex(re: &str) -> impl Strategy<Value = String> + use<> {
    proptest::string::string_regex(re).expect("a valid regex")
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => any::<i64>().prop_map(|v| v.to_string()),
        6 => (-1000i64..1000).prop_map(|v| format!("{v}.0")),
        9 => any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(agentlog::json::write::python_float_repr),
        9 => regex("-?(0|[1-9][0-9]{0,18})(\\.[0-9]{1,12})?([eE][-+]?[0-9]{1,2})?"),
        1 => regex("-?[1-9][0-9]{19,60}"),
        2 => regex("-?[1-9](\\.[0-9]{1,5})?[eE][-+]?[3-9][0-9]{2}"),
        1 => prop::sample::select(&["NaN", "Infinity", "-Infinity", "-0", "0.0", "-0.0", "1E+2"][..])
            .prop_map(str::to_owned),
    ]
}

fn leaf() -> impl Strategy<Value = Gen> {
    prop_oneof![
        1 => Just(Gen::Null),
        1 => any::<bool>().prop_map(Gen::Bool),
        4 => number().prop_map(Gen::Num),
        4 => gstr().prop_map(Gen::Str),
    ]
}

fn object_of(inner: BoxedStrategy<Gen>) -> impl Strategy<Value = Gen> {
    let string = gstr().prop_map(Gen::Str).boxed();
    let strings = prop::collection::vec(string.clone(), 0..4).prop_map(|v| Gen::Arr(v, 7));
    let declared = prop_oneof![
        (
            prop::sample::select(&["kind", "id", "timestamp", "name"][..]),
            string.clone()
        )
            .prop_map(|(k, v)| (plain_key(k), v)),
        any::<bool>().prop_map(|b| (plain_key("flag"), Gen::Bool(b))),
        (any::<u64>(), strings).prop_map(|(s, arr)| match arr {
            Gen::Arr(v, _) => (
                plain_key(if s % 2 == 0 { "tags" } else { "items" }),
                Gen::Arr(v, s)
            ),
            other => (plain_key("tags"), other),
        }),
    ];
    let member = prop_oneof![
        3 => (key(), inner),
        2 => declared,
    ];
    (prop::collection::vec(member, 0..8), any::<u64>()).prop_map(|(m, s)| Gen::Obj(m, s))
}

fn plain_key(k: &str) -> GStr {
    GStr {
        lit: format!("\"{k}\""),
        text: k.to_owned(),
        lone: false,
    }
}

fn value() -> BoxedStrategy<Gen> {
    leaf()
        .prop_recursive(4, 48, 8, |inner| {
            prop_oneof![
                (prop::collection::vec(inner.clone(), 0..8), any::<u64>())
                    .prop_map(|(v, s)| Gen::Arr(v, s)),
                object_of(inner),
            ]
        })
        .boxed()
}

/// A document: mostly an object (what the decoders read), with white space
/// around it.
fn document() -> impl Strategy<Value = (Gen, u64)> {
    let root = prop_oneof![6 => object_of(value()), 1 => value()];
    (root, any::<u64>())
}

/// White space chosen by a seed.
struct Ws(u64);

impl Ws {
    fn next(&mut self) -> &'static str {
        // xorshift
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        const WS: [&str; 8] = ["", "", "", " ", "\n", "\t", "\r\n  ", "  "];
        WS[(self.0 % 8) as usize]
    }
}

fn render(g: &Gen, out: &mut String) {
    match g {
        Gen::Null => out.push_str("null"),
        Gen::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Gen::Num(t) => out.push_str(t),
        Gen::Str(s) => out.push_str(&s.lit),
        Gen::Arr(items, seed) => {
            let mut ws = Ws(seed | 1);
            out.push('[');
            out.push_str(ws.next());
            for (i, e) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(ws.next());
                    out.push(',');
                    out.push_str(ws.next());
                }
                render(e, out);
            }
            out.push_str(ws.next());
            out.push(']');
        }
        Gen::Obj(members, seed) => {
            let mut ws = Ws(seed | 1);
            out.push('{');
            out.push_str(ws.next());
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push_str(ws.next());
                    out.push(',');
                    out.push_str(ws.next());
                }
                out.push_str(&k.lit);
                out.push_str(ws.next());
                out.push(':');
                out.push_str(ws.next());
                render(v, out);
            }
            out.push_str(ws.next());
            out.push('}');
        }
    }
}

/// Whether the text needs Python's dialect (simd-json refuses it).
fn pythonic(g: &Gen) -> bool {
    match g {
        Gen::Null | Gen::Bool(_) => false,
        Gen::Num(t) => {
            // simd-json reads integers that fit u64 (or i64 when
            // negative) and floats that stay finite.
            let int_fits = if t.starts_with('-') {
                t.parse::<i64>().is_ok()
            } else {
                t.parse::<u64>().is_ok()
            };
            t.contains(['N', 'I'])
                || (!t.contains(['.', 'e', 'E']) && !int_fits)
                || t.parse::<f64>().is_ok_and(|v| v.is_infinite())
        }
        Gen::Str(s) => s.lone,
        Gen::Arr(items, _) => items.iter().any(pythonic),
        Gen::Obj(members, _) => members.iter().any(|(k, v)| k.lone || pythonic(v)),
    }
}

/// Checks that `v` is exactly what `g` means: same types, same strings,
/// numbers with the same text, members in the same order with duplicates.
fn check_meaning(g: &Gen, v: &OwnedValue, path: &str) -> Result<(), TestCaseError> {
    match (g, v) {
        (Gen::Null, OwnedValue::Null) => {}
        (Gen::Bool(a), OwnedValue::Bool(b)) => prop_assert_eq!(a, b, "{}", path),
        (Gen::Num(t), OwnedValue::Number(n)) => prop_assert_eq!(t.as_str(), n.as_str(), "{}", path),
        (Gen::Str(s), OwnedValue::String(t)) => prop_assert_eq!(&s.text, t, "{}", path),
        (Gen::Arr(items, _), OwnedValue::Array(vs)) => {
            prop_assert_eq!(items.len(), vs.len(), "{}", path);
            for (i, (g, v)) in items.iter().zip(vs).enumerate() {
                check_meaning(g, v, &format!("{path}[{i}]"))?;
            }
        }
        (Gen::Obj(members, _), OwnedValue::Object(map)) => {
            prop_assert_eq!(members.len(), map.len(), "{}", path);
            for ((k, g), (k2, v)) in members.iter().zip(map.iter()) {
                prop_assert_eq!(&k.text, k2, "{}", path);
                check_meaning(g, v, &format!("{path}.{k2}"))?;
            }
        }
        _ => prop_assert!(false, "{}: {:?} read as {:?}", path, g, v),
    }
    Ok(())
}

/// Decodes `doc_root` with the probe type, encodes it, and checks the
/// result: same value, same members in the same order, undeclared members
/// (and unchanged strings) byte for byte.
fn check_probe(root: Value<'_>, parser: &mut Parser) -> Result<(), TestCaseError> {
    let Some(probe) = Probe::decode(root) else {
        prop_assert!(root.as_object().is_none());
        return Ok(());
    };
    let obj = root.as_object().expect("decoded, so an object");
    let encoded = probe.to_json();
    let original = OwnedValue::from(root);
    let doc = parser
        .parse(&encoded)
        .map_err(|e| TestCaseError::fail(format!("encoded form does not parse: {e}")))?;
    let again = doc.root();
    prop_assert_eq!(
        &OwnedValue::from(again),
        &original,
        "decode → encode changed the value: {}",
        String::from_utf8_lossy(&encoded)
    );
    // Nothing changed: the same members, in input order, with the same
    // names byte for byte; undeclared members' values byte for byte.
    let out = again.as_object().expect("an object");
    prop_assert_eq!(out.len(), obj.len());
    prop_assert_eq!(probe.members.len(), obj.len());
    for ((m_in, m_out), slot) in obj.iter().zip(out.iter()).zip(probe.members.slots()) {
        prop_assert_eq!(m_in.raw_key(), m_out.raw_key());
        prop_assert_eq!(slot.raw_key, m_in.raw_key());
        prop_assert_eq!(slot.raw, m_in.value.raw());
        if slot.field == UNDECLARED || m_in.value.as_str().is_some() || m_in.value.is_null() {
            prop_assert_eq!(
                m_in.value.raw(),
                m_out.value.raw(),
                "member {} not kept byte for byte",
                m_in.key
            );
        }
    }
    drop(doc);

    // A declared member the caller changes is written canonically, the
    // rest stays as it was.
    let mut changed = probe.clone();
    changed.kind = Some(Str::new("changed \"kind\" é\u{1}"));
    changed.flag = None;
    let flag = Probe::KEYS.iter().position(|k| *k == "flag").unwrap_or(0) as u8;
    changed.members.set_null(flag, false);
    let encoded = changed.to_json();
    let v = OwnedValue::parse(&encoded)
        .map_err(|e| TestCaseError::fail(format!("changed form does not parse: {e}")))?;
    let mut want = match original {
        OwnedValue::Object(m) => m,
        _ => Map::new(),
    };
    // The last `kind` takes the new value (in place, as a dict update);
    // `flag` is gone unless an earlier duplicate or a mistyped one is kept.
    let kept_flags: Vec<(String, OwnedValue)> = obj
        .iter()
        .zip(probe.members.slots())
        .filter(|(m, s)| m.key == "flag" && s.field == UNDECLARED)
        .map(|(m, _)| ("flag".to_owned(), OwnedValue::from(m.value)))
        .collect();
    want.remove("flag");
    for (k, v) in kept_flags {
        want.insert(k, v);
    }
    want.insert("kind", OwnedValue::string("changed \"kind\" é\u{1}"));
    prop_assert_eq!(
        v,
        OwnedValue::Object(want),
        "{}",
        String::from_utf8_lossy(&encoded)
    );
    Ok(())
}

proptest! {
    // 10,000 cases. XorShift: the default ChaCha generator is most of the
    // time of an unoptimised test build.
    #![proptest_config(ProptestConfig {
        rng_algorithm: proptest::test_runner::RngAlgorithm::XorShift,
        ..ProptestConfig::with_cases(10_000)
    })]

    #[test]
    fn generated_json_round_trips((g, seed) in document()) {
        let mut text = String::new();
        let mut ws = Ws(seed | 1);
        text.push_str(ws.next());
        render(&g, &mut text);
        text.push_str(ws.next());
        let mut parser = Parser::new();
        let (owned, dialect) = OwnedValue::parse_with(&mut parser, text.as_bytes())
            .map_err(|e| TestCaseError::fail(format!("{text:?} does not parse: {e}")))?;
        let want_dialect = if pythonic(&g) { Dialect::Python } else { Dialect::Strict };
        prop_assert_eq!(dialect, want_dialect, "{:?}", text);
        check_meaning(&g, &owned, "$")?;

        // Raw spans: the root's raw text is the input less outer white space.
        {
            let doc = parser.parse(text.as_bytes()).expect("parsed above");
            prop_assert_eq!(doc.root().raw_str(), text.trim_matches([' ', '\n', '\t', '\r']));
            let mut scratch = Parser::new();
            check_probe(doc.root(), &mut scratch)?;
        }

        // OwnedValue: parse → write → parse is the identity in every style,
        // and writing is stable.
        for style in [Style::COMPACT, Style::PYTHON_DEFAULT, Style::INDENT2_UNICODE] {
            let written = owned.to_string_styled(style);
            let back = OwnedValue::parse(written.as_bytes())
                .map_err(|e| TestCaseError::fail(format!("{written:?} does not parse: {e}")))?;
            prop_assert_eq!(&back, &owned, "{:?}", written);
            prop_assert_eq!(back.to_string_styled(style), written);
        }
    }
}

// ---------------------------------------------------------------------------
// The corpus.

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

#[test]
fn corpus_is_read_losslessly() {
    let mut files = Vec::new();
    json_files(&common::corpus_dir(), &mut files);
    files.sort();
    assert!(files.len() > 3000, "{} corpus files", files.len());
    let mut parser = Parser::new();
    let mut scratch = Parser::new();
    let mut buf = Vec::new();
    for path in &files {
        buf.clear();
        agentlog::source::read_into(path, &mut buf).unwrap();
        let doc = parser
            .parse(&buf)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let owned = OwnedValue::from(doc.root());
        // An independent reader agrees on the value.
        let serde: serde_json::Value = serde_json::from_slice(&buf).unwrap();
        assert_eq!(owned, from_serde(&serde), "{}", path.display());
        for style in [Style::COMPACT, Style::INDENT2_UNICODE] {
            let written = owned.to_string_styled(style);
            assert_eq!(
                OwnedValue::parse(written.as_bytes()).unwrap(),
                owned,
                "{}",
                path.display()
            );
        }
        if doc.root().as_object().is_some() {
            check_probe(doc.root(), &mut scratch)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}

/// serde_json's value as an `OwnedValue` (numbers by their text: the
/// `arbitrary_precision` feature keeps it).
fn from_serde(v: &serde_json::Value) -> OwnedValue {
    match v {
        serde_json::Value::Null => OwnedValue::Null,
        serde_json::Value::Bool(b) => OwnedValue::Bool(*b),
        serde_json::Value::Number(n) => OwnedValue::parse(n.to_string().as_bytes()).unwrap(),
        serde_json::Value::String(s) => OwnedValue::string(s.as_str()),
        serde_json::Value::Array(a) => OwnedValue::Array(a.iter().map(from_serde).collect()),
        serde_json::Value::Object(m) => {
            OwnedValue::Object(m.iter().map(|(k, v)| (k.clone(), from_serde(v))).collect())
        }
    }
}

// ---------------------------------------------------------------------------
// Edge cases.

#[test]
fn deep_nesting_is_a_typed_error_from_both_parsers() {
    let mut p = Parser::new();
    let n = 100_000;
    let arrays = "[".repeat(n) + &"]".repeat(n);
    let objects = "{\"a\":".repeat(n) + "1" + &"}".repeat(n);
    // NaN inside sends the document to the fallback parser.
    let fallback = "[".repeat(n) + "NaN" + &"]".repeat(n);
    let unclosed = "[{\"a\":".repeat(n);
    for doc in [&arrays, &objects, &fallback, &unclosed] {
        let e = p.parse(doc.as_bytes()).unwrap_err();
        assert_eq!(e.kind(), JsonErrorKind::TooDeep, "{}", &doc[..20]);
        assert!(e.offset().is_some());
    }
    // The limit itself is accepted, one more is not, from both parsers.
    let max = agentlog::json::MAX_DEPTH;
    for inner in ["1", "NaN"] {
        let ok = "[".repeat(max) + inner + &"]".repeat(max);
        let doc = p.parse(ok.as_bytes()).unwrap();
        let mut v = doc.root();
        for _ in 1..max {
            v = v.as_array().unwrap().get(0).unwrap();
        }
        assert_eq!(v.raw(), format!("[{inner}]").as_bytes());
        let owned = OwnedValue::from(doc.root());
        drop(doc);
        assert_eq!(OwnedValue::parse(&owned.to_json()).unwrap(), owned);
        let over = "[".repeat(max + 1) + inner + &"]".repeat(max + 1);
        assert_eq!(
            p.parse(over.as_bytes()).unwrap_err().kind(),
            JsonErrorKind::TooDeep
        );
    }
}

#[test]
fn huge_numbers_keep_every_digit() {
    let int = "9".repeat(10_000);
    let neg = format!("-{}", "1".repeat(10_000));
    let frac = format!("0.{}", "3".repeat(10_000));
    let long_float = format!("1.{}e5", "0".repeat(9_998));
    let exp = "1e99999".to_owned();
    let tiny = "-1e-99999".to_owned();
    let mut p = Parser::new();
    for (text, f) in [
        (&int, f64::INFINITY),
        (&neg, f64::NEG_INFINITY),
        (&frac, 1.0 / 3.0),
        (&long_float, 100_000.0),
        (&exp, f64::INFINITY),
        (&tiny, -0.0),
    ] {
        let input = format!("{{\"n\": {text}, \"kind\": \"k\", \"other\": [{text}]}}");
        let doc = p.parse(input.as_bytes()).unwrap();
        let n = doc.root().get("n").unwrap();
        assert_eq!(n.raw_str(), text.as_str());
        assert_eq!(n.as_f64(), Some(f), "{}", &text[..10]);
        assert_eq!(n.as_i64().is_some(), f.is_finite() && text != &frac);
        let probe = Probe::decode(doc.root()).unwrap();
        assert_eq!(probe.n.unwrap().raw_str(), text.as_str());
        let encoded = probe.to_json();
        assert!(
            String::from_utf8(encoded.clone())
                .unwrap()
                .contains(text.as_str())
        );
        let owned = OwnedValue::from(doc.root());
        assert_eq!(
            owned.get("n").unwrap().as_number().unwrap().as_str(),
            text.as_str()
        );
        assert_eq!(OwnedValue::parse(&encoded).unwrap(), owned);
        assert_eq!(OwnedValue::parse(&owned.to_json()).unwrap(), owned);
    }
    // Integers compare exactly, beyond what an f64 holds.
    let a = OwnedValue::parse(int.as_bytes()).unwrap();
    let b = OwnedValue::parse(format!("{}8", "9".repeat(9_999)).as_bytes()).unwrap();
    assert_ne!(a, b);
}

#[test]
fn invalid_utf8_is_a_typed_error_at_its_offset() {
    let bad: [&[u8]; 8] = [
        b"\xff",
        b"\xc3",             // truncated
        b"\xc0\x80",         // overlong
        b"\xed\xa0\x80",     // an encoded surrogate
        b"\xf4\x90\x80\x80", // beyond U+10FFFF
        b"\x80",             // lone continuation
        b"\xe2\x82",         // truncated 3-byte
        b"\xfe\xfe",
    ];
    let mut p = Parser::new();
    for b in bad {
        for (prefix, suffix) in [
            (&br#"{"s": "ok "#[..], &br#" tail"}"#[..]),
            (br#"{"k"#, br#"": 1}"#),
            (br#"["a", NaN, ""#, br#""]"#),
            (br#"[1, "#, b"]"),
        ] {
            let mut input = prefix.to_vec();
            input.extend_from_slice(b);
            input.extend_from_slice(suffix);
            let e = p.parse(&input).unwrap_err();
            assert_eq!(e.kind(), JsonErrorKind::InvalidUtf8, "{input:?}");
            assert_eq!(e.offset(), Some(prefix.len()), "{input:?}");
        }
    }
}

#[test]
fn a_million_tiny_members() {
    let n = 1_000_000;
    let mut text = String::with_capacity(n * 16);
    text.push('{');
    for i in 0..n {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!("\"m{i}\":{i}"));
    }
    text.push_str(",\"kind\":\"last\"}");
    let mut p = Parser::new();
    let doc = p.parse(text.as_bytes()).unwrap();
    let obj = doc.root().as_object().unwrap();
    assert_eq!(obj.len(), n + 1);
    assert_eq!(obj.get("m999999").unwrap().as_i64(), Some(999_999));
    let [a, b, kind] = obj.get_many(["m0", "m500000", "kind"]);
    assert_eq!(a.unwrap().raw(), b"0");
    assert_eq!(b.unwrap().as_i64(), Some(500_000));
    assert_eq!(kind.unwrap().as_str(), Some("last"));
    {
        let probe = Probe::decode(doc.root()).unwrap();
        assert_eq!(probe.members.len(), n + 1);
        assert_eq!(probe.kind.unwrap(), "last");
        assert_eq!(probe.to_json(), text.as_bytes());
    }
    let owned = OwnedValue::from(doc.root());
    assert_eq!(owned.to_string(), text);
    drop(doc);
    assert_eq!(OwnedValue::parse(text.as_bytes()).unwrap(), owned);
}

#[test]
fn a_mistyped_last_duplicate_keeps_the_earlier_one() {
    // The earlier `kind` fits its field, the last does not: Python keeps
    // the last, so the field is unset, and both are written back as read.
    let input = br#"{"kind":"a","flag":true,"kind":1,"flag":"no"}"#;
    let mut p = Parser::new();
    let doc = p.parse(input).unwrap();
    let probe = Probe::decode(doc.root()).unwrap();
    assert_eq!(probe.kind, None);
    assert_eq!(probe.flag, None);
    assert!(probe.members.slots().iter().all(|s| s.field == UNDECLARED));
    assert_eq!(probe.to_json(), input);
}
