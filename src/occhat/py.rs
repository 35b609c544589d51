//! The few pieces of Python semantics `persistence.py`'s behaviour depends on:
//! `str.isspace`/`str.strip`, truthiness, `str()` of a decoded JSON value,
//! `pathlib` path normalisation and ordering, and writing JSON exactly as
//! `json.dump(value, f, indent=2, ensure_ascii=False)` writes what
//! `json.loads` read.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::json::write::python_float_repr;
use crate::json::{Map, Number, OwnedValue, Style};

/// Python's `str.isspace` for one character: the characters whose
/// bidirectional class is WS, B or S, or whose category is Zs.
pub(crate) fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\u{0b}'
            | '\u{0c}'
            | '\r'
            | '\u{1c}'..='\u{1f}'
            | ' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// Python's `str.strip()` (no argument).
pub(crate) fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// Python's truthiness of a decoded JSON value.
pub(crate) fn truthy(v: &OwnedValue) -> bool {
    match v {
        OwnedValue::Null => false,
        OwnedValue::Bool(b) => *b,
        OwnedValue::Number(n) => {
            if n.is_integer() {
                !n.as_str()
                    .trim_start_matches('-')
                    .trim_start_matches('0')
                    .is_empty()
            } else {
                // NaN is truthy in Python; only zeros are false.
                n.as_f64() != 0.0
            }
        }
        OwnedValue::String(s) => !s.is_empty(),
        OwnedValue::Array(a) => !a.is_empty(),
        OwnedValue::Object(m) => !m.is_empty(),
    }
}

/// The text Python's `json.loads` then `str()`/`repr()` gives a number:
/// integers as their digits (`-0` is `0`), floats as `repr(float)`.
pub(crate) fn number_text(text: &str) -> Cow<'_, str> {
    match text {
        "NaN" | "Infinity" | "-Infinity" => return Cow::Borrowed(text),
        _ => {}
    }
    let is_int = !text.contains(['.', 'e', 'E']);
    if is_int {
        let digits = text.strip_prefix('-').unwrap_or(text);
        let trimmed = digits.trim_start_matches('0');
        if trimmed.is_empty() {
            return Cow::Borrowed("0");
        }
        if trimmed.len() == digits.len() {
            return Cow::Borrowed(text);
        }
        let sign = if text.starts_with('-') { "-" } else { "" };
        return Cow::Owned(format!("{sign}{trimmed}"));
    }
    let v: f64 = text.parse().unwrap_or(f64::NAN);
    let repr = python_float_repr(v);
    if repr == text {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(repr)
    }
}

/// Python's `str()` of a decoded JSON value, as an f-string formats it.
pub(crate) fn to_str(v: &OwnedValue) -> Cow<'_, str> {
    match v {
        OwnedValue::String(s) => Cow::Borrowed(s),
        _ => Cow::Owned(repr(v)),
    }
}

/// Python's `repr()` of a decoded JSON value (`None`, `True`, `'text'`,
/// `[1, 2]`, `{'a': 1}`).
///
/// String escapes follow `repr(str)` for ASCII and Latin-1 control
/// characters; other characters Python deems unprintable (a handful of
/// format and separator code points) are written as themselves.
pub(crate) fn repr(v: &OwnedValue) -> String {
    let mut out = String::new();
    repr_into(v, &mut out);
    out
}

fn repr_into(v: &OwnedValue, out: &mut String) {
    // Depth is bounded by the parser's limit; values built by callers are
    // shallow. An explicit stack keeps this from recursing on input.
    enum Step<'a> {
        Value(&'a OwnedValue),
        Text(&'static str),
        Key(&'a str),
    }
    let mut stack = vec![Step::Value(v)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(t) => out.push_str(t),
            Step::Key(k) => {
                repr_str(k, out);
                out.push_str(": ");
            }
            Step::Value(v) => match v {
                OwnedValue::Null => out.push_str("None"),
                OwnedValue::Bool(true) => out.push_str("True"),
                OwnedValue::Bool(false) => out.push_str("False"),
                OwnedValue::Number(n) => match n.as_str() {
                    "NaN" => out.push_str("nan"),
                    "Infinity" => out.push_str("inf"),
                    "-Infinity" => out.push_str("-inf"),
                    t => {
                        let t = number_text(t);
                        match &*t {
                            "NaN" => out.push_str("nan"),
                            "Infinity" => out.push_str("inf"),
                            "-Infinity" => out.push_str("-inf"),
                            t => out.push_str(t),
                        }
                    }
                },
                OwnedValue::String(s) => repr_str(s, out),
                OwnedValue::Array(items) => {
                    out.push('[');
                    stack.push(Step::Text("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        if i > 0 {
                            stack.push(Step::Text(", "));
                        }
                    }
                }
                OwnedValue::Object(map) => {
                    out.push('{');
                    stack.push(Step::Text("}"));
                    let members = dict_members(map);
                    for (i, (k, v)) in members.into_iter().enumerate().rev() {
                        stack.push(Step::Value(v));
                        stack.push(Step::Key(k));
                        if i > 0 {
                            stack.push(Step::Text(", "));
                        }
                    }
                }
            },
        }
    }
}

fn repr_str(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..=0xa0).contains(&(c as u32)) || c == '\u{ad}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// An object's members as a Python dict holds them after `json.loads`: in
/// the order names first appear, each with its last value.
pub(crate) fn dict_members(map: &Map) -> Vec<(&str, &OwnedValue)> {
    let entries = map.entries();
    let mut out: Vec<(&str, &OwnedValue)> = Vec::with_capacity(entries.len());
    if entries.len() <= 16 {
        // Small objects: a linear probe.
        for (k, v) in entries {
            match out.iter_mut().find(|(kk, _)| *kk == k) {
                Some(slot) => slot.1 = v,
                None => out.push((k, v)),
            }
        }
        return out;
    }
    // Large ones (a hostile meta may hold a million members): an index, so
    // the cost stays linear.
    let mut at: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
    for (k, v) in entries {
        match at.get(k.as_str()) {
            Some(&i) => {
                if let Some(slot) = out.get_mut(i) {
                    slot.1 = v;
                }
            }
            None => {
                at.insert(k, out.len());
                out.push((k, v));
            }
        }
    }
    out
}

/// Writes `value` byte for byte as Python's
/// `json.dump(json.loads(text), f, indent=2, ensure_ascii=False)` does
/// (`ascii` false) or with `ensure_ascii=True` (`ascii` true): numbers as
/// Python re-writes them (`1E2` → `100.0`, `-0` → `0`, `1e400` →
/// `Infinity`), duplicate member names collapsed as a dict does (first
/// position, last value). A string that held a lone surrogate was decoded
/// to U+FFFD and is written so (Python would fail to encode it).
pub(crate) fn write_json(value: &OwnedValue, ascii: bool, out: &mut Vec<u8>) {
    let style = if ascii {
        Style {
            ensure_ascii: true,
            ..Style::INDENT2_UNICODE
        }
    } else {
        Style::INDENT2_UNICODE
    };
    if needs_normalising(value) {
        normalised(value).write_to(out, style);
    } else {
        value.write_to(out, style);
    }
}

/// `write_json` into a fresh buffer.
pub(crate) fn dump(value: &OwnedValue) -> Vec<u8> {
    let mut out = Vec::new();
    write_json(value, false, &mut out);
    out
}

fn needs_normalising(value: &OwnedValue) -> bool {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            OwnedValue::Number(n) if *number_text(n.as_str()) != *n.as_str() => return true,
            OwnedValue::Array(items) => stack.extend(items.iter()),
            OwnedValue::Object(map) => {
                if dict_members(map).len() != map.len() {
                    return true;
                }
                stack.extend(map.entries().iter().map(|(_, v)| v));
            }
            _ => {}
        }
    }
    false
}

fn normalised(value: &OwnedValue) -> OwnedValue {
    match value {
        OwnedValue::Number(n) => {
            let t = number_text(n.as_str());
            if *t == *n.as_str() {
                value.clone()
            } else {
                OwnedValue::Number(Number::from_text(&t))
            }
        }
        OwnedValue::Array(items) => OwnedValue::Array(items.iter().map(normalised).collect()),
        OwnedValue::Object(map) => OwnedValue::Object(
            dict_members(map)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), normalised(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A path as `pathlib` spells it: repeated separators and `.` components
/// dropped, no trailing separator, `.` for the empty path. `..` is kept.
pub(crate) fn norm_path(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// `Path(base) / part` as `pathlib` joins: an absolute `part` replaces
/// `base`; the result is normalised as [`norm_path`] does.
pub(crate) fn join(base: &Path, part: impl AsRef<Path>) -> PathBuf {
    norm_path(&base.join(part))
}

/// Orders two file names as Python orders the `str` it decodes them to
/// (`os.fsdecode`: UTF-8 with `surrogateescape`), which is what
/// `sorted(Path.iterdir())` does for the entries of one directory.
pub(crate) fn cmp_names(a: &OsStr, b: &OsStr) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if let (Ok(x), Ok(y)) = (std::str::from_utf8(a), std::str::from_utf8(b)) {
        // UTF-8 byte order is code point order.
        return x.cmp(y);
    }
    code_points(a).cmp(code_points(b))
}

fn code_points(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes.utf8_chunks().flat_map(|chunk| {
        chunk
            .valid()
            .chars()
            .map(|c| c as u32)
            .chain(chunk.invalid().iter().map(|&b| 0xDC00 + u32::from(b)))
    })
}

/// `Path.stem` and `Path.suffix` of a file name, as Python 3.11 splits
/// them: the suffix is the last `.`-part unless the dot is the first or the
/// last character.
pub(crate) fn stem_suffix(name: &OsStr) -> (&OsStr, &OsStr) {
    let b = name.as_bytes();
    match b.iter().rposition(|&c| c == b'.') {
        Some(i) if i > 0 && i + 1 < b.len() => (
            OsStr::from_bytes(b.get(..i).unwrap_or_default()),
            OsStr::from_bytes(b.get(i..).unwrap_or_default()),
        ),
        _ => (name, OsStr::new("")),
    }
}

/// Python's `str.casefold()`: lower case plus the full case foldings that
/// lower-casing misses (sharp s, ligatures, final sigma and the like).
pub(crate) fn casefold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            'ß' | 'ẞ' => out.push_str("ss"),
            'ς' => out.push('σ'),
            'ŉ' => out.push_str("\u{2bc}n"),
            'ǰ' => out.push_str("j\u{30c}"),
            'ﬀ' => out.push_str("ff"),
            'ﬁ' => out.push_str("fi"),
            'ﬂ' => out.push_str("fl"),
            'ﬃ' => out.push_str("ffi"),
            'ﬄ' => out.push_str("ffl"),
            'ﬅ' | 'ﬆ' => out.push_str("st"),
            'µ' => out.push('μ'),
            'ſ' => out.push('s'),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_python_rewrites_them() {
        for (input, want) in [
            ("1", "1"),
            ("-0", "0"),
            ("12345678901234567890123", "12345678901234567890123"),
            ("1.0", "1.0"),
            ("1.50", "1.5"),
            ("1E2", "100.0"),
            ("1e400", "Infinity"),
            ("-1e400", "-Infinity"),
            ("-0.0", "-0.0"),
            ("NaN", "NaN"),
            ("1e-7", "1e-07"),
        ] {
            assert_eq!(number_text(input), want, "{input}");
        }
    }

    #[test]
    fn repr_like_python() {
        let v = OwnedValue::parse(
            br#"{"a": [1, 2.50, null, true], "b": "it's", "c": "x\ny", "a": "last"}"#,
        )
        .unwrap();
        assert_eq!(repr(&v), r#"{'a': 'last', 'b': "it's", 'c': 'x\ny'}"#);
        assert_eq!(to_str(&OwnedValue::string("plain")), "plain");
        assert_eq!(to_str(&OwnedValue::Null), "None");
    }

    #[test]
    fn dump_collapses_duplicates_and_normalises_numbers() {
        let v = OwnedValue::parse(br#"{"a": 1, "b": 1E2, "a": [ -0 ]}"#).unwrap();
        assert_eq!(
            String::from_utf8(dump(&v)).unwrap(),
            "{\n  \"a\": [\n    0\n  ],\n  \"b\": 100.0\n}"
        );
    }

    #[test]
    fn paths_as_pathlib() {
        assert_eq!(join(Path::new("sessions"), ""), PathBuf::from("sessions"));
        assert_eq!(join(Path::new("./s//"), "a/./b/"), PathBuf::from("s/a/b"));
        assert_eq!(join(Path::new("s"), "/abs"), PathBuf::from("/abs"));
        assert_eq!(norm_path(Path::new("")), PathBuf::from("."));
        let (st, su) = stem_suffix(OsStr::new("x_meta.json"));
        assert_eq!((st, su), (OsStr::new("x_meta"), OsStr::new(".json")));
        assert_eq!(stem_suffix(OsStr::new(".hidden")).1, OsStr::new(""));
        assert_eq!(stem_suffix(OsStr::new("trail.")).1, OsStr::new(""));
    }

    #[test]
    fn name_order_is_code_point_order() {
        let bad = OsStr::from_bytes(b"\x80");
        assert_eq!(cmp_names(OsStr::new("中"), bad), Ordering::Less);
        assert_eq!(cmp_names(OsStr::new("a"), OsStr::new("b")), Ordering::Less);
    }

    #[test]
    fn strip_and_truthiness() {
        assert_eq!(strip("\u{a0} a \u{3000}"), "a");
        assert!(!truthy(&OwnedValue::parse(b"0.0").unwrap()));
        assert!(truthy(&OwnedValue::parse(b"NaN").unwrap()));
        assert!(!truthy(&OwnedValue::parse(b"-0").unwrap()));
        assert!(!truthy(&OwnedValue::parse(b"{}").unwrap()));
        assert_eq!(casefold("Straße"), "strasse");
    }
}
