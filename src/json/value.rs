//! Lazy values on the tape: typed getters that never panic, member lookup by
//! name without building a map, raw spans.

use simd_json::{Node, StaticNode};

use super::doc::{DocCore, Span};

/// The JSON type of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonType {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A number (including Python's `NaN` and `Infinity`).
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl JsonType {
    /// The type's name as JSON Schema spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Bool => "boolean",
            JsonType::Number => "number",
            JsonType::String => "string",
            JsonType::Array => "array",
            JsonType::Object => "object",
        }
    }
}

/// An integer read from a JSON number: a whole number, possibly written
/// `12.0`; `exact` is false when a fraction was dropped (`12.5` reads as 12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Int {
    /// The value, truncated toward zero.
    pub value: i64,
    /// Whether no fraction was dropped.
    pub exact: bool,
}

/// One value of a parsed [`Document`](super::Document): a cheap copyable
/// handle (a reference and a tape index). Nothing is decoded until a getter
/// asks, and no getter panics: a value of another type answers `None`.
#[derive(Clone, Copy)]
pub struct Value<'a> {
    doc: &'a DocCore<'a>,
    idx: usize,
}

impl std::fmt::Debug for Value<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let raw = self.raw();
        match std::str::from_utf8(raw) {
            Ok(s) if s.len() <= 200 => write!(f, "Value({s})"),
            Ok(s) => write!(f, "Value({}…)", s.get(..200).unwrap_or("")),
            Err(_) => write!(f, "Value({} bytes)", raw.len()),
        }
    }
}

/// Two values are equal when they hold the same JSON value (member order
/// ignored, numbers compared by value, the last of duplicate members kept).
impl PartialEq for Value<'_> {
    fn eq(&self, other: &Self) -> bool {
        super::owned::OwnedValue::from(*self) == super::owned::OwnedValue::from(*other)
    }
}

impl<'a> Value<'a> {
    #[inline]
    pub(crate) fn new(doc: &'a DocCore<'a>, idx: usize) -> Self {
        Value { doc, idx }
    }

    #[inline]
    fn node(self) -> Node<'a> {
        self.doc
            .nodes()
            .get(self.idx)
            .copied()
            .unwrap_or(Node::Static(StaticNode::Null))
    }

    /// The index of the node after this value and everything in it.
    #[inline]
    pub(crate) fn next_index(self) -> usize {
        match self.node() {
            Node::Object { count, .. } | Node::Array { count, .. } => self.idx + 1 + count,
            _ => self.idx + 1,
        }
    }

    /// The value's JSON type.
    pub fn json_type(self) -> JsonType {
        match self.node() {
            Node::String(_) => JsonType::String,
            Node::Object { .. } => JsonType::Object,
            Node::Array { .. } => JsonType::Array,
            Node::Static(StaticNode::Null) => JsonType::Null,
            Node::Static(StaticNode::Bool(_)) => JsonType::Bool,
            Node::Static(_) => JsonType::Number,
        }
    }

    /// Whether the value is `null`.
    #[inline]
    pub fn is_null(self) -> bool {
        matches!(self.node(), Node::Static(StaticNode::Null))
    }

    /// The string, unescaped; `None` for another type.
    #[inline]
    pub fn as_str(self) -> Option<&'a str> {
        match self.node() {
            Node::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean; `None` for another type.
    pub fn as_bool(self) -> Option<bool> {
        match self.node() {
            Node::Static(StaticNode::Bool(b)) => Some(b),
            _ => None,
        }
    }

    /// The number as an `f64`; `None` for another type.
    pub fn as_f64(self) -> Option<f64> {
        match self.node() {
            Node::Static(StaticNode::F64(v)) => Some(v),
            Node::Static(StaticNode::I64(v)) => Some(v as f64),
            Node::Static(StaticNode::U64(v)) => Some(v as f64),
            _ => None,
        }
    }

    /// The number as an integer: a whole number possibly written `12.0`,
    /// with `exact` false when a fraction was dropped. `None` for another
    /// type, `NaN`, infinities and values outside `i64`.
    pub fn as_int(self) -> Option<Int> {
        match self.node() {
            Node::Static(StaticNode::I64(v)) => Some(Int {
                value: v,
                exact: true,
            }),
            Node::Static(StaticNode::U64(v)) => i64::try_from(v)
                .ok()
                .map(|value| Int { value, exact: true }),
            Node::Static(StaticNode::F64(v)) => {
                if !v.is_finite() {
                    return None;
                }
                let t = v.trunc();
                // i64::MAX as f64 rounds up to 2^63, which is out of range.
                if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&t) {
                    Some(Int {
                        value: t as i64,
                        exact: t == v,
                    })
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// The number as an exact `i64` (written without a fraction or with a
    /// zero one); `None` otherwise.
    pub fn as_i64(self) -> Option<i64> {
        self.as_int().filter(|i| i.exact).map(|i| i.value)
    }

    /// The number as a `u64` when it was written as a whole number without
    /// a fraction or exponent and lies in `u64`'s range (`None` otherwise,
    /// and for another type).
    #[inline]
    pub fn as_u64(self) -> Option<u64> {
        match self.node() {
            Node::Static(StaticNode::U64(v)) => Some(v),
            Node::Static(StaticNode::I64(v)) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// Whether the document this value belongs to was parsed by simd-json
    /// ([`Dialect::Strict`](super::Dialect::Strict)): every `\\u` escape in
    /// its strings is a scalar value or a surrogate pair, every number a
    /// JSON number literal.
    #[inline]
    pub(crate) fn is_strict(self) -> bool {
        self.doc.dialect() == super::Dialect::Strict
    }

    /// The sign and magnitude of an integer the tape holds as one (a
    /// literal without fraction or exponent in `i64` or `u64`'s range);
    /// `None` for any other value.
    #[inline]
    pub(crate) fn tape_integer(self) -> Option<(bool, u64)> {
        match self.node() {
            Node::Static(StaticNode::I64(v)) => Some((v < 0, v.unsigned_abs())),
            Node::Static(StaticNode::U64(v)) => Some((false, v)),
            _ => None,
        }
    }

    /// The object; `None` for another type.
    #[inline]
    pub fn as_object(self) -> Option<Object<'a>> {
        match self.node() {
            Node::Object { len, .. } => Some(Object {
                doc: self.doc,
                idx: self.idx,
                len,
            }),
            _ => None,
        }
    }

    /// The array; `None` for another type.
    #[inline]
    pub fn as_array(self) -> Option<Array<'a>> {
        match self.node() {
            Node::Array { len, .. } => Some(Array {
                doc: self.doc,
                idx: self.idx,
                len,
            }),
            _ => None,
        }
    }

    /// A member of an object by name (the last one when the name repeats, as
    /// Python's `json` and pydantic keep); `None` when absent or not an object.
    #[inline]
    pub fn get(self, key: &str) -> Option<Value<'a>> {
        self.as_object().and_then(|o| o.get(key))
    }

    /// The value's span in the pristine input.
    pub fn span(self) -> Span {
        if self.idx == 0 {
            // The root: the whole input less surrounding white space, with
            // no need for the span table.
            let input = self.doc.input;
            let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
            let start = input.iter().position(|b| !ws(b)).unwrap_or(0);
            let end = input.iter().rposition(|b| !ws(b)).map_or(start, |e| e + 1);
            return Span {
                start: start as u32,
                end: end as u32,
            };
        }
        self.doc.span(self.idx)
    }

    /// The value's raw bytes, exactly as in the input.
    pub fn raw(self) -> &'a [u8] {
        self.doc.input.get(self.span().range()).unwrap_or(&[])
    }

    /// The value's raw text (the input was valid UTF-8 to parse at all).
    pub fn raw_str(self) -> &'a str {
        std::str::from_utf8(self.raw()).unwrap_or("")
    }

    /// The arena of the document this value belongs to.
    pub fn arena(self) -> &'a bumpalo::Bump {
        self.doc.arena
    }
}

/// An object on the tape: members looked up by name by walking the tape,
/// without building a map.
#[derive(Clone, Copy)]
pub struct Object<'a> {
    doc: &'a DocCore<'a>,
    idx: usize,
    len: usize,
}

impl std::fmt::Debug for Object<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_value().fmt(f)
    }
}

impl<'a> Object<'a> {
    /// How many members the object has (duplicates counted).
    #[inline]
    pub fn len(self) -> usize {
        self.len
    }

    /// Whether the object has no member.
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// The object as a value.
    pub fn as_value(self) -> Value<'a> {
        Value::new(self.doc, self.idx)
    }

    /// The members in input order, duplicates included.
    #[inline]
    pub fn iter(self) -> MemberIter<'a> {
        MemberIter {
            doc: self.doc,
            next: self.idx + 1,
            left: self.len,
        }
    }

    /// The member named `key`: the last one when the name repeats.
    pub fn get(self, key: &str) -> Option<Value<'a>> {
        let mut found = None;
        for m in self.iter() {
            if same_key(m.key, key) {
                found = Some(m.value);
            }
        }
        found
    }

    /// Looks up several names in one pass: `out[i]` is the (last) member
    /// named `keys[i]`.
    pub fn get_many<const N: usize>(self, keys: [&str; N]) -> [Option<Value<'a>>; N] {
        let mut out = [None; N];
        for m in self.iter() {
            for (slot, k) in out.iter_mut().zip(keys.iter()) {
                if same_key(m.key, k) {
                    *slot = Some(m.value);
                }
            }
        }
        out
    }
}

/// Key equality with cheap rejections first (length, first byte), so most
/// non-matching names never reach a `memcmp`.
#[inline(always)]
fn same_key(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.first() == b.first() && a == b
}

impl<'a> IntoIterator for Object<'a> {
    type Item = Member<'a>;
    type IntoIter = MemberIter<'a>;
    fn into_iter(self) -> MemberIter<'a> {
        self.iter()
    }
}

/// One member of an object.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    /// The name, unescaped.
    pub key: &'a str,
    /// The name as a value (for its raw span).
    pub key_value: Value<'a>,
    /// The value.
    pub value: Value<'a>,
}

impl<'a> Member<'a> {
    /// The raw bytes of the name, quotes and escapes included.
    pub fn raw_key(&self) -> &'a [u8] {
        self.key_value.raw()
    }
}

/// Iterator over an object's members.
#[derive(Clone)]
pub struct MemberIter<'a> {
    doc: &'a DocCore<'a>,
    next: usize,
    left: usize,
}

impl<'a> Iterator for MemberIter<'a> {
    type Item = Member<'a>;
    #[inline]
    fn next(&mut self) -> Option<Member<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let key_value = Value::new(self.doc, self.next);
        let key = key_value.as_str().unwrap_or("");
        let value = Value::new(self.doc, self.next + 1);
        self.next = value.next_index();
        Some(Member {
            key,
            key_value,
            value,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for MemberIter<'_> {}

/// An array on the tape.
#[derive(Clone, Copy)]
pub struct Array<'a> {
    doc: &'a DocCore<'a>,
    idx: usize,
    len: usize,
}

impl std::fmt::Debug for Array<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_value().fmt(f)
    }
}

impl<'a> Array<'a> {
    /// How many elements the array has.
    #[inline]
    pub fn len(self) -> usize {
        self.len
    }

    /// Whether the array is empty.
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// The array as a value.
    pub fn as_value(self) -> Value<'a> {
        Value::new(self.doc, self.idx)
    }

    /// The elements in order.
    #[inline]
    pub fn iter(self) -> Elements<'a> {
        Elements {
            doc: self.doc,
            next: self.idx + 1,
            left: self.len,
        }
    }

    /// The element at `i` (walks the tape: O(i)).
    pub fn get(self, i: usize) -> Option<Value<'a>> {
        self.iter().nth(i)
    }
}

impl<'a> IntoIterator for Array<'a> {
    type Item = Value<'a>;
    type IntoIter = Elements<'a>;
    fn into_iter(self) -> Elements<'a> {
        self.iter()
    }
}

/// Iterator over an array's elements.
#[derive(Clone)]
pub struct Elements<'a> {
    doc: &'a DocCore<'a>,
    next: usize,
    left: usize,
}

impl<'a> Iterator for Elements<'a> {
    type Item = Value<'a>;
    #[inline]
    fn next(&mut self) -> Option<Value<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let v = Value::new(self.doc, self.next);
        self.next = v.next_index();
        Some(v)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Elements<'_> {}
