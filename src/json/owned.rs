//! An owned JSON value, for callers that keep data past a document's life
//! or build JSON of their own (OC Chat records, rebuilt model messages).
//!
//! Objects keep their members in order (duplicates too); numbers read from a
//! document keep their text, so writing an unchanged value back gives the
//! digits that were read. Serialisation follows Python's `json.dumps` with
//! its separators, `indent` and `ensure_ascii` options.

use std::fmt;

use super::error::JsonError;
use super::value::{JsonType, Value};
use super::write::{python_float_repr, write_str};
use super::{Dialect, Parser};

/// A JSON number: its text as read or written, and its value.
#[derive(Clone)]
pub struct Number {
    text: Box<str>,
}

impl Number {
    /// A number from its JSON text (trusted to be a JSON or Python number
    /// literal: the caller read it from a document).
    pub(crate) fn from_text(text: &str) -> Self {
        Number { text: text.into() }
    }

    /// The number's text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The number as an `f64`.
    pub fn as_f64(&self) -> f64 {
        match &*self.text {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            t => t.parse().unwrap_or(f64::NAN),
        }
    }

    /// The number as an `i64` when it is written as an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        self.text.parse().ok()
    }

    /// Whether the text is an integer literal (no fraction, no exponent).
    pub fn is_integer(&self) -> bool {
        !self.text.contains(['.', 'e', 'E', 'N', 'I'])
    }
}

impl From<i64> for Number {
    fn from(v: i64) -> Self {
        Number {
            text: v.to_string().into(),
        }
    }
}

impl From<u64> for Number {
    fn from(v: u64) -> Self {
        Number {
            text: v.to_string().into(),
        }
    }
}

impl From<f64> for Number {
    fn from(v: f64) -> Self {
        Number {
            text: python_float_repr(v).into(),
        }
    }
}

/// Numbers are equal when their values are, as Python compares `1` and
/// `1.0`; integer literals compare exactly (beyond 2^53 too).
impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        if self.is_integer() && other.is_integer() {
            let a = self.text.trim_start_matches('-');
            let b = other.text.trim_start_matches('-');
            let neg_a = self.text.starts_with('-') && !a.trim_start_matches('0').is_empty();
            let neg_b = other.text.starts_with('-') && !b.trim_start_matches('0').is_empty();
            return neg_a == neg_b && a.trim_start_matches('0') == b.trim_start_matches('0');
        }
        let (x, y) = (self.as_f64(), other.as_f64());
        x == y || (x.is_nan() && y.is_nan())
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// An owned JSON value.
#[derive(Clone, Debug, Default)]
pub enum OwnedValue {
    /// `null`.
    #[default]
    Null,
    /// A boolean.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<OwnedValue>),
    /// An object, members in order.
    Object(Map),
}

/// JSON values are equal as Python compares the decoded objects: member
/// order does not matter, the last of duplicate names counts, `1 == 1.0`.
impl PartialEq for OwnedValue {
    fn eq(&self, other: &Self) -> bool {
        use OwnedValue::*;
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (Number(a), Number(b)) => a == b,
            (String(a), String(b)) => a == b,
            (Array(a), Array(b)) => a == b,
            (Object(a), Object(b)) => a == b,
            _ => false,
        }
    }
}

/// An ordered JSON object.
#[derive(Clone, Debug, Default)]
pub struct Map {
    entries: Vec<(String, OwnedValue)>,
}

impl PartialEq for Map {
    fn eq(&self, other: &Self) -> bool {
        // The same members in the same order make the same dict, whatever
        // the duplicates; only maps that differ so need the dict view.
        if self.entries.len() == other.entries.len()
            && self.entries.iter().zip(&other.entries).all(|(a, b)| a == b)
        {
            return true;
        }
        let a = self.deduped();
        let b = other.deduped();
        a.len() == b.len() && a.iter().all(|(k, v)| b.get(k) == Some(v))
    }
}

impl Map {
    /// An empty object.
    pub fn new() -> Self {
        Map::default()
    }

    /// The members, in order, duplicates included.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &OwnedValue)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The members as a slice.
    pub fn entries(&self) -> &[(String, OwnedValue)] {
        &self.entries
    }

    /// The members, mutable.
    pub fn entries_mut(&mut self) -> &mut Vec<(String, OwnedValue)> {
        &mut self.entries
    }

    /// The members as Python's dict holds them: the last value of each name.
    fn deduped(&self) -> std::collections::HashMap<&str, &OwnedValue> {
        let mut out = std::collections::HashMap::with_capacity(self.entries.len());
        for (k, v) in &self.entries {
            out.insert(k.as_str(), v);
        }
        out
    }

    /// How many members (duplicates counted).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no member.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value of `key` (the last one when the name repeats).
    pub fn get(&self, key: &str) -> Option<&OwnedValue> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// The value of `key`, mutable (the last one when the name repeats).
    pub fn get_mut(&mut self, key: &str) -> Option<&mut OwnedValue> {
        self.entries
            .iter_mut()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    /// Sets `key`: replaces the value in place when present (keeping its
    /// position, as a Python dict does), appends otherwise.
    pub fn insert(&mut self, key: impl Into<String>, value: OwnedValue) {
        let key = key.into();
        if let Some(v) = self.get_mut(&key) {
            *v = value;
        } else {
            self.entries.push((key, value));
        }
    }

    /// Removes every member named `key`; returns the last value.
    pub fn remove(&mut self, key: &str) -> Option<OwnedValue> {
        let mut last = None;
        self.entries.retain_mut(|(k, v)| {
            if k == key {
                last = Some(std::mem::take(v));
                false
            } else {
                true
            }
        });
        last
    }
}

impl FromIterator<(String, OwnedValue)> for Map {
    fn from_iter<T: IntoIterator<Item = (String, OwnedValue)>>(iter: T) -> Self {
        Map {
            entries: iter.into_iter().collect(),
        }
    }
}

impl From<Value<'_>> for OwnedValue {
    /// Copies a document's value (numbers keep their text; duplicates and
    /// order are kept). Iterative, so depth is bounded by the parser's limit
    /// only through the heap.
    fn from(v: Value<'_>) -> Self {
        to_owned(v)
    }
}

fn scalar(v: Value<'_>) -> OwnedValue {
    match v.json_type() {
        JsonType::Null => OwnedValue::Null,
        JsonType::Bool => OwnedValue::Bool(v.as_bool().unwrap_or(false)),
        JsonType::Number => OwnedValue::Number(Number::from_text(v.raw_str())),
        JsonType::String => OwnedValue::String(v.as_str().unwrap_or("").to_owned()),
        JsonType::Array => OwnedValue::Array(Vec::new()),
        JsonType::Object => OwnedValue::Object(Map::new()),
    }
}

fn open_frame(v: Value<'_>) -> Option<Frame<'_>> {
    if let Some(a) = v.as_array() {
        Some(Frame::Arr(a.iter(), Vec::with_capacity(a.len())))
    } else {
        v.as_object().map(|o| {
            Frame::Obj(
                o.iter(),
                Map {
                    entries: Vec::with_capacity(o.len()),
                },
                None,
            )
        })
    }
}

/// A container being copied: its remaining children and what is built.
enum Frame<'a> {
    Arr(super::value::Elements<'a>, Vec<OwnedValue>),
    Obj(super::value::MemberIter<'a>, Map, Option<String>),
}

fn to_owned(root: Value<'_>) -> OwnedValue {
    let open = open_frame;
    let Some(first) = open(root) else {
        return scalar(root);
    };
    let mut stack = vec![first];
    loop {
        let Some(top) = stack.last_mut() else {
            return OwnedValue::Null;
        };
        let next = match top {
            Frame::Arr(it, _) => it.next(),
            Frame::Obj(it, _, pending) => it.next().map(|m| {
                *pending = Some(m.key.to_owned());
                m.value
            }),
        };
        let done = match next {
            Some(child) => {
                if let Some(f) = open(child) {
                    stack.push(f);
                    continue;
                }
                Some(scalar(child))
            }
            None => None,
        };
        let value = match done {
            Some(v) => v,
            None => {
                // The top container is complete.
                let Some(frame) = stack.pop() else {
                    return OwnedValue::Null;
                };
                let v = match frame {
                    Frame::Arr(_, items) => OwnedValue::Array(items),
                    Frame::Obj(_, map, _) => OwnedValue::Object(map),
                };
                if stack.is_empty() {
                    return v;
                }
                v
            }
        };
        match stack.last_mut() {
            Some(Frame::Arr(_, items)) => items.push(value),
            Some(Frame::Obj(_, map, pending)) => {
                let k = pending.take().unwrap_or_default();
                map.entries.push((k, value));
            }
            None => return value,
        }
    }
}

/// How to write an [`OwnedValue`], after Python's `json.dumps` options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// `indent=N`: pretty-print with N spaces; `None` for one line.
    pub indent: Option<usize>,
    /// Python's default separators (`", "` and `": "`) on one line; compact
    /// (`","`, `":"`) when false. With an indent, items end lines and the
    /// key separator is `": "`, as Python writes.
    pub spaced: bool,
    /// `ensure_ascii`: escape every non-ASCII character.
    pub ensure_ascii: bool,
}

impl Style {
    /// Compact, non-ASCII kept: what pydantic's `model_dump_json` writes.
    pub const COMPACT: Style = Style {
        indent: None,
        spaced: false,
        ensure_ascii: false,
    };
    /// `json.dumps(v)`: spaced separators, ASCII only.
    pub const PYTHON_DEFAULT: Style = Style {
        indent: None,
        spaced: true,
        ensure_ascii: true,
    };
    /// `json.dump(v, f, indent=2, ensure_ascii=False)`: what OC Chat writes.
    pub const INDENT2_UNICODE: Style = Style {
        indent: Some(2),
        spaced: true,
        ensure_ascii: false,
    };
}

impl OwnedValue {
    /// Parses bytes into an owned value (with a parser of its own).
    pub fn parse(input: &[u8]) -> Result<OwnedValue, JsonError> {
        let mut p = super::doc::PooledParser::take();
        let doc = p.parse(input)?;
        Ok(OwnedValue::from(doc.root()))
    }

    /// Parses with the given parser, also telling which dialect read it.
    pub fn parse_with(
        parser: &mut Parser,
        input: &[u8],
    ) -> Result<(OwnedValue, Dialect), JsonError> {
        let doc = parser.parse(input)?;
        Ok((OwnedValue::from(doc.root()), doc.dialect()))
    }

    /// A string value.
    pub fn string(s: impl Into<String>) -> Self {
        OwnedValue::String(s.into())
    }

    /// An integer value.
    pub fn int(v: i64) -> Self {
        OwnedValue::Number(Number::from(v))
    }

    /// A float value (written as Python's `repr`).
    pub fn float(v: f64) -> Self {
        OwnedValue::Number(Number::from(v))
    }

    /// The JSON type.
    pub fn json_type(&self) -> JsonType {
        match self {
            OwnedValue::Null => JsonType::Null,
            OwnedValue::Bool(_) => JsonType::Bool,
            OwnedValue::Number(_) => JsonType::Number,
            OwnedValue::String(_) => JsonType::String,
            OwnedValue::Array(_) => JsonType::Array,
            OwnedValue::Object(_) => JsonType::Object,
        }
    }

    /// The string, if a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            OwnedValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if a boolean.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            OwnedValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number, if a number.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            OwnedValue::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The array, if an array.
    pub fn as_array(&self) -> Option<&Vec<OwnedValue>> {
        match self {
            OwnedValue::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The array, mutable, if an array.
    pub fn as_array_mut(&mut self) -> Option<&mut Vec<OwnedValue>> {
        match self {
            OwnedValue::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The object, if an object.
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            OwnedValue::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The object, mutable, if an object.
    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            OwnedValue::Object(m) => Some(m),
            _ => None,
        }
    }

    /// A member of an object (the last of duplicates); `None` otherwise.
    pub fn get(&self, key: &str) -> Option<&OwnedValue> {
        self.as_object().and_then(|m| m.get(key))
    }

    /// Whether the value is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, OwnedValue::Null)
    }

    /// Writes the value in `style`.
    pub fn write_to(&self, out: &mut Vec<u8>, style: Style) {
        self.write_level(out, style, 0);
    }

    /// The value as a string in `style`.
    pub fn to_string_styled(&self, style: Style) -> String {
        let mut out = Vec::new();
        self.write_to(&mut out, style);
        String::from_utf8(out).unwrap_or_default()
    }

    /// The value as compact JSON (also its [`Display`](fmt::Display)).
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out, Style::COMPACT);
        out
    }

    fn newline(out: &mut Vec<u8>, indent: usize, level: usize) {
        out.push(b'\n');
        out.resize(out.len() + indent * level, b' ');
    }

    fn write_level(&self, out: &mut Vec<u8>, style: Style, level: usize) {
        match self {
            OwnedValue::Null => out.extend_from_slice(b"null"),
            OwnedValue::Bool(true) => out.extend_from_slice(b"true"),
            OwnedValue::Bool(false) => out.extend_from_slice(b"false"),
            OwnedValue::Number(n) => out.extend_from_slice(n.as_str().as_bytes()),
            OwnedValue::String(s) => write_str(out, s, style.ensure_ascii),
            OwnedValue::Array(items) => {
                out.push(b'[');
                if items.is_empty() {
                    out.push(b']');
                    return;
                }
                for (i, item) in items.iter().enumerate() {
                    Self::before_element(out, style, level, i);
                    item.write_level(out, style, level + 1);
                }
                if let Some(ind) = style.indent {
                    Self::newline(out, ind, level);
                }
                out.push(b']');
            }
            OwnedValue::Object(map) => Self::write_object(map, out, style, level, |_, _| {}),
        }
    }

    /// [`write_to`](Self::write_to), giving also where the value of this
    /// object's member `key` is in `out` (the last of that name, the one
    /// [`get`](Self::get) finds); `None` when this is not an object or has
    /// no such member.
    pub fn write_to_finding(
        &self,
        out: &mut Vec<u8>,
        style: Style,
        key: &str,
    ) -> Option<std::ops::Range<usize>> {
        let OwnedValue::Object(map) = self else {
            self.write_to(out, style);
            return None;
        };
        let mut found = None;
        Self::write_object(map, out, style, 0, |k, at| {
            if k == key {
                found = Some(at);
            }
        });
        found
    }

    /// What goes before the `i`th element of an array or member of an
    /// object at `level`: the separator after the one before, and the
    /// element's line break and indentation.
    fn before_element(out: &mut Vec<u8>, style: Style, level: usize, i: usize) {
        if i > 0 {
            out.push(b',');
            if style.indent.is_none() && style.spaced {
                out.push(b' ');
            }
        }
        if let Some(ind) = style.indent {
            Self::newline(out, ind, level + 1);
        }
    }

    /// Writes the object `map` at `level`, telling `member` each member's
    /// name and where its value was written.
    fn write_object(
        map: &Map,
        out: &mut Vec<u8>,
        style: Style,
        level: usize,
        mut member: impl FnMut(&str, std::ops::Range<usize>),
    ) {
        out.push(b'{');
        if map.is_empty() {
            out.push(b'}');
            return;
        }
        for (i, (k, v)) in map.entries.iter().enumerate() {
            Self::before_element(out, style, level, i);
            write_str(out, k, style.ensure_ascii);
            out.push(b':');
            if style.spaced || style.indent.is_some() {
                out.push(b' ');
            }
            let start = out.len();
            v.write_level(out, style, level + 1);
            member(k, start..out.len());
        }
        if let Some(ind) = style.indent {
            Self::newline(out, ind, level);
        }
        out.push(b'}');
    }
}

impl fmt::Display for OwnedValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_styled(Style::COMPACT))
    }
}

impl From<&str> for OwnedValue {
    fn from(s: &str) -> Self {
        OwnedValue::String(s.to_owned())
    }
}

impl From<String> for OwnedValue {
    fn from(s: String) -> Self {
        OwnedValue::String(s)
    }
}

impl From<bool> for OwnedValue {
    fn from(b: bool) -> Self {
        OwnedValue::Bool(b)
    }
}

impl From<i64> for OwnedValue {
    fn from(v: i64) -> Self {
        OwnedValue::int(v)
    }
}

impl From<Map> for OwnedValue {
    fn from(m: Map) -> Self {
        OwnedValue::Object(m)
    }
}

impl From<Vec<OwnedValue>> for OwnedValue {
    fn from(v: Vec<OwnedValue>) -> Self {
        OwnedValue::Array(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `write_to_finding` writes what `write_to` writes, in every style,
    /// and the range it gives is the text `write_to` gives for the member
    /// `get` finds.
    #[test]
    fn write_to_finding_is_write_to_with_the_member_span() {
        let cases: &[&str] = &[
            r#"{"role":"assistant","content":"a\n\"b\"\u0001é","tool_calls":[{"id":"c1","type":"function","function":{"name":"t","arguments":"{\"x\": 1}"}}]}"#,
            r#"{"tool_calls":null,"role":"tool","tool_calls":[1,2.50,{"a":[]}],"name":"x"}"#,
            r#"{"role":"user","content":[{"type":"text","text":"hi"}]}"#,
            r#"{}"#,
            r#"[{"tool_calls":1}]"#,
            r#""text""#,
        ];
        for style in [
            Style::COMPACT,
            Style::PYTHON_DEFAULT,
            Style::INDENT2_UNICODE,
        ] {
            for case in cases {
                let v = OwnedValue::parse(case.as_bytes()).expect("test JSON parses");
                let mut want = Vec::new();
                v.write_to(&mut want, style);
                let mut line = Vec::new();
                let span = v.write_to_finding(&mut line, style, "tool_calls");
                assert_eq!(
                    String::from_utf8_lossy(&line),
                    String::from_utf8_lossy(&want)
                );
                // At level 1 when indented, as the member's value is.
                let calls = v.get("tool_calls").map(|c| {
                    let mut out = Vec::new();
                    c.write_level(&mut out, style, 1);
                    out
                });
                assert_eq!(span.map(|r| line[r].to_vec()), calls, "{case}");
            }
        }
    }
}
