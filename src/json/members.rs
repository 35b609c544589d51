//! Lossless decoding of objects with declared members.
//!
//! A type declared with [`json_object!`](crate::json_object) decodes each
//! member it declares into a typed field and remembers, in input order,
//! every member of the object: declared ones by field number, the others
//! (undeclared names, declared names holding another JSON type than the
//! field's, and every earlier occurrence of a repeated name) as raw byte
//! spans of the pristine input. Encoding walks that order: undeclared
//! members are copied byte for byte, declared ones are written from their
//! fields (a string the caller did not change is copied raw as well, so an
//! unchanged object re-encodes to the same members byte for byte), fields
//! set by the caller that the input did not have are appended, and a
//! declared member the caller cleared is left out.

use smallvec::SmallVec;

use super::value::Value;
use super::write::write_str;

/// The field number of a member no field declares.
pub const UNDECLARED: u8 = u8::MAX;

/// One member of a decoded object, as it stood in the input.
#[derive(Debug, Clone, Copy)]
pub struct Slot<'a> {
    /// The field number, or [`UNDECLARED`].
    pub field: u8,
    /// The name, unescaped.
    pub key: &'a str,
    /// The name's raw bytes, quotes included.
    pub raw_key: &'a [u8],
    /// The value's raw bytes.
    pub raw: &'a [u8],
}

/// The bookkeeping every decoded object carries: its members in input
/// order, and which declared members were `null`.
#[derive(Debug, Clone, Default)]
pub struct Members<'a> {
    slots: SmallVec<[Slot<'a>; 8]>,
    null: u64,
}

impl<'a> Members<'a> {
    /// Records a member. Used by decoders made with
    /// [`json_object!`](crate::json_object).
    #[doc(hidden)]
    pub fn push(&mut self, slot: Slot<'a>) {
        if slot.field != UNDECLARED {
            self.demote(slot.field);
        }
        self.slots.push(slot);
    }

    /// Turns every earlier occurrence of declared field `field` into an
    /// undeclared member, kept verbatim: a later occurrence of the name
    /// wins, whether it fits the field or not. Used by decoders made with
    /// [`json_object!`](crate::json_object).
    #[doc(hidden)]
    pub fn demote(&mut self, field: u8) {
        // At most one slot holds a given declared field (each push demotes
        // the one before), so the search stops at it, from the end: over an
        // object it costs at most (declared fields x members), never
        // members squared (a million repeats of one name would be 10^12
        // steps).
        if let Some(s) = self.slots.iter_mut().rev().find(|s| s.field == field) {
            s.field = UNDECLARED;
        }
    }

    /// Marks declared field `field` as `null` in the input (or clears that).
    pub fn set_null(&mut self, field: u8, null: bool) {
        if field < 64 {
            if null {
                self.null |= 1 << field;
            } else {
                self.null &= !(1 << field);
            }
        }
    }

    /// Whether declared field `field` was `null`.
    pub fn is_null(&self, field: u8) -> bool {
        field < 64 && self.null & (1 << field) != 0
    }

    /// Every member in input order.
    pub fn slots(&self) -> &[Slot<'a>] {
        &self.slots
    }

    /// The members kept raw (undeclared, mistyped or repeated), in order.
    pub fn undeclared(&self) -> impl Iterator<Item = &Slot<'a>> {
        self.slots.iter().filter(|s| s.field == UNDECLARED)
    }

    /// The raw bytes of the last member kept raw under `key`: an undeclared
    /// member, or a declared one whose JSON type did not fit its field.
    pub fn get_raw(&self, key: &str) -> Option<&'a [u8]> {
        self.slots
            .iter()
            .rev()
            .find(|s| s.field == UNDECLARED && s.key == key)
            .map(|s| s.raw)
    }

    /// Whether the input carried `key` at all (declared or not).
    pub fn contains(&self, key: &str) -> bool {
        self.slots.iter().any(|s| s.key == key)
    }

    /// Whether the input carried declared field `field` with a value that
    /// fit it, or `null`.
    pub fn had_field(&self, field: u8) -> bool {
        self.slots.iter().any(|s| s.field == field)
    }

    /// How many members the object had.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the object had no member.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

/// A type a declared member can decode into.
pub trait FieldValue<'a>: Sized {
    /// Decodes `v`; `None` when it is of another JSON type than the field's
    /// (the member is then kept raw, never lost). `v` is never `null`: null
    /// members are recorded by [`Members`].
    fn decode_field(v: Value<'a>) -> Option<Self>;
    /// Decodes `v` into the same fields as [`decode_field`](Self::decode_field)
    /// (`None` in the same cases), without what only writing the value
    /// back needs: objects record no [`Members`] and strings no raw
    /// literal, so the document's spans are not computed for it. For
    /// readers of the fields only: a value decoded this way written back
    /// loses its undeclared members and its strings' escapes.
    fn decode_lean(v: Value<'a>) -> Option<Self> {
        Self::decode_field(v)
    }
    /// Writes the value as JSON.
    fn encode_field(&self, out: &mut Vec<u8>);
}

/// A JSON string read from a document: its text, and the raw literal it
/// came from, which encoding writes back unchanged. A `Str` made from a
/// plain `&str` is written canonically.
#[derive(Clone, Copy)]
pub struct Str<'a> {
    text: &'a str,
    raw: Option<&'a [u8]>,
}

impl<'a> Str<'a> {
    /// A string with no raw literal (written canonically).
    pub const fn new(text: &'a str) -> Self {
        Str { text, raw: None }
    }

    /// The unescaped text.
    #[inline]
    pub fn as_str(&self) -> &'a str {
        self.text
    }

    /// The raw literal it was read from, quotes included.
    pub fn raw(&self) -> Option<&'a [u8]> {
        self.raw
    }
}

impl std::ops::Deref for Str<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        self.text
    }
}

impl std::fmt::Debug for Str<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.text.fmt(f)
    }
}

impl std::fmt::Display for Str<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.text.fmt(f)
    }
}

impl PartialEq for Str<'_> {
    fn eq(&self, o: &Self) -> bool {
        self.text == o.text
    }
}

impl Eq for Str<'_> {}

impl PartialEq<str> for Str<'_> {
    fn eq(&self, o: &str) -> bool {
        self.text == o
    }
}

impl PartialEq<&str> for Str<'_> {
    fn eq(&self, o: &&str) -> bool {
        self.text == *o
    }
}

impl<'a> From<&'a str> for Str<'a> {
    fn from(s: &'a str) -> Self {
        Str::new(s)
    }
}

impl AsRef<str> for Str<'_> {
    fn as_ref(&self) -> &str {
        self.text
    }
}

impl<'a> FieldValue<'a> for Str<'a> {
    #[inline]
    fn decode_field(v: Value<'a>) -> Option<Self> {
        v.as_str().map(|text| Str {
            text,
            raw: Some(v.raw()),
        })
    }
    #[inline]
    fn decode_lean(v: Value<'a>) -> Option<Self> {
        v.as_str().map(Str::new)
    }
    fn encode_field(&self, out: &mut Vec<u8>) {
        match self.raw {
            Some(r) => out.extend_from_slice(r),
            None => write_str(out, self.text, false),
        }
    }
}

impl<'a> FieldValue<'a> for bool {
    fn decode_field(v: Value<'a>) -> Option<Self> {
        v.as_bool()
    }
    fn encode_field(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(if *self { b"true" } else { b"false" });
    }
}

/// Any JSON value, kept as read (numbers, free-form objects).
impl<'a> FieldValue<'a> for Value<'a> {
    #[inline]
    fn decode_field(v: Value<'a>) -> Option<Self> {
        Some(v)
    }
    fn encode_field(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.raw());
    }
}

/// A list of a declared element type, allocated in the document's arena.
/// The member is kept raw when any element does not fit.
pub type List<'a, T> = bumpalo::collections::Vec<'a, T>;

impl<'a, T: FieldValue<'a>> FieldValue<'a> for List<'a, T> {
    fn decode_field(v: Value<'a>) -> Option<Self> {
        let arr = v.as_array()?;
        let mut out = List::with_capacity_in(arr.len(), v.arena());
        for e in arr.iter() {
            out.push(T::decode_field(e)?);
        }
        Some(out)
    }
    fn decode_lean(v: Value<'a>) -> Option<Self> {
        let arr = v.as_array()?;
        let mut out = List::with_capacity_in(arr.len(), v.arena());
        for e in arr.iter() {
            out.push(T::decode_lean(e)?);
        }
        Some(out)
    }
    fn encode_field(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        for (i, e) in self.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            e.encode_field(out);
        }
        out.push(b']');
    }
}

/// An element of a list read element by element: an element that did not
/// fit the declared type is kept with the reason.
#[derive(Debug, Clone)]
pub enum Item<'a, T> {
    /// An element that decoded.
    Ok(T),
    /// An element of another JSON type, kept as read.
    Bad {
        /// The element.
        raw: Value<'a>,
        /// Why it did not decode.
        error: ElementError,
    },
}

impl<'a, T: Expected> Item<'a, T> {
    /// The element `v`, decoded as `t` (`None`: it did not fit `T`).
    fn of(v: Value<'a>, t: Option<T>) -> Self {
        match t {
            Some(t) => Item::Ok(t),
            None => Item::Bad {
                raw: v,
                error: ElementError {
                    expected: T::EXPECTED,
                    found: v.json_type().as_str(),
                },
            },
        }
    }
}

/// Why an element of a list did not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("expected {expected}, found {found}")]
pub struct ElementError {
    /// The JSON type the element should have.
    pub expected: &'static str,
    /// The JSON type it has.
    pub found: &'static str,
}

/// A list read element by element ([`Item`]); only a non-array is kept raw.
pub type Items<'a, T> = bumpalo::collections::Vec<'a, Item<'a, T>>;

/// What an element decoder expects, for [`ElementError`].
pub trait Expected {
    /// The JSON type name the element must have.
    const EXPECTED: &'static str;
}

/// An element kept whatever it holds: one that does not fit `T` is
/// [`Item::Bad`], written back byte for byte. So [`Items`] (a [`List`] of
/// them) is only kept raw when it is not an array, and a [`Dict`] of them
/// only when it is not an object.
impl<'a, T: FieldValue<'a> + Expected> FieldValue<'a> for Item<'a, T> {
    fn decode_field(v: Value<'a>) -> Option<Self> {
        Some(Item::of(v, T::decode_field(v)))
    }
    fn decode_lean(v: Value<'a>) -> Option<Self> {
        Some(Item::of(v, T::decode_lean(v)))
    }
    fn encode_field(&self, out: &mut Vec<u8>) {
        match self {
            Item::Ok(t) => t.encode_field(out),
            Item::Bad { raw, .. } => out.extend_from_slice(raw.raw()),
        }
    }
}

/// An object read as a map with values of one declared type: its entries
/// in input order (a repeated key each time), keys kept with their raw
/// literals. The member is kept raw when a value does not fit; with
/// [`Item`] values, a value that does not fit is kept in its entry instead.
#[derive(Debug, Clone)]
pub struct Dict<'a, V> {
    entries: List<'a, (Str<'a>, V)>,
}

impl<'a, V> Dict<'a, V> {
    /// The entries in order (a repeated key appears each time).
    pub fn entries(&self) -> &[(Str<'a>, V)] {
        &self.entries
    }

    /// The value of `key` (the last entry when it repeats).
    pub fn get(&self, key: &str) -> Option<&V> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k.as_str() == key)
            .map(|(_, v)| v)
    }

    /// The keys, sorted, each once.
    pub fn keys(&self) -> Vec<&'a str> {
        let mut k: Vec<&'a str> = self.entries.iter().map(|(k, _)| k.as_str()).collect();
        k.sort_unstable();
        k.dedup();
        k
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<'a, V: FieldValue<'a>> FieldValue<'a> for Dict<'a, V> {
    fn decode_field(v: Value<'a>) -> Option<Self> {
        let obj = v.as_object()?;
        let mut entries = List::with_capacity_in(obj.len(), v.arena());
        for m in obj.iter() {
            let k = Str::decode_field(m.key_value)?;
            entries.push((k, V::decode_field(m.value)?));
        }
        Some(Dict { entries })
    }
    fn decode_lean(v: Value<'a>) -> Option<Self> {
        let obj = v.as_object()?;
        let mut entries = List::with_capacity_in(obj.len(), v.arena());
        for m in obj.iter() {
            let k = Str::decode_lean(m.key_value)?;
            entries.push((k, V::decode_lean(m.value)?));
        }
        Some(Dict { entries })
    }
    fn encode_field(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        for (i, (k, v)) in self.entries.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match k.raw() {
                Some(r) => {
                    out.extend_from_slice(r);
                    out.push(b':');
                }
                None => write_key(out, k),
            }
            v.encode_field(out);
        }
        out.push(b'}');
    }
}

impl<V> Expected for Dict<'_, V> {
    const EXPECTED: &'static str = "object";
}

impl Expected for Str<'_> {
    const EXPECTED: &'static str = "string";
}

/// Writes one member `"key":` for a field the input did not carry.
#[doc(hidden)]
pub fn write_key(out: &mut Vec<u8>, key: &str) {
    write_str(out, key, false);
    out.push(b':');
}

/// Declares a lossless JSON object type: each declared member becomes an
/// `Option` field (absent, `null` or of another JSON type: `None`), and
/// `members` keeps the rest (see the [module docs](crate::json::members)).
///
/// ```
/// use agentlog::json::{Parser, Str};
/// agentlog::json_object! {
///     /// A point.
///     pub struct Point<'a> {
///         /// Its name.
///         name: Str<'a> = "name",
///         /// Whether it is visible.
///         visible: bool = "visible",
///     }
/// }
/// let mut p = Parser::new();
/// let doc = p.parse(br#"{"name":"a\u0062","x": 1,"visible":true}"#).unwrap();
/// let pt = Point::decode(doc.root()).unwrap();
/// assert_eq!(pt.name.unwrap(), "ab");
/// assert_eq!(pt.to_json(), br#"{"name":"a\u0062","x":1,"visible":true}"#);
/// ```
#[macro_export]
macro_rules! json_object {
    (
        $(#[$meta:meta])*
        pub struct $name:ident<'a> {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $ty:ty = $key:literal
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default)]
        pub struct $name<'a> {
            $(
                $(#[$fmeta])*
                pub $field: Option<$ty>,
            )*
            /// Every member as read: order, raw undeclared members, nulls.
            pub members: $crate::json::Members<'a>,
        }

        impl<'a> $name<'a> {
            /// The member names this type declares, in field order.
            pub const KEYS: &'static [&'static str] = &[$($key),*];

            /// Decodes an object; `None` when `v` is not an object.
            pub fn decode(v: $crate::json::Value<'a>) -> Option<Self> {
                let obj = v.as_object()?;
                let mut out = Self::default();
                for m in obj.iter() {
                    let mut field = $crate::json::UNDECLARED;
                    match m.key {
                        $(
                            $key => {
                                let n = Self::field_number($key);
                                if m.value.is_null() {
                                    out.$field = None;
                                    out.members.set_null(n, true);
                                    field = n;
                                } else if let Some(x) = <$ty as $crate::json::FieldValue<'a>>::decode_field(m.value) {
                                    out.$field = Some(x);
                                    out.members.set_null(n, false);
                                    field = n;
                                } else {
                                    // Of another JSON type: kept raw. It is
                                    // the last occurrence so far, so an
                                    // earlier one is kept raw as well.
                                    out.$field = None;
                                    out.members.set_null(n, false);
                                    out.members.demote(n);
                                }
                            }
                        )*
                        _ => {}
                    }
                    out.members.push($crate::json::Slot {
                        field,
                        key: m.key,
                        raw_key: m.raw_key(),
                        raw: m.value.raw(),
                    });
                }
                Some(out)
            }

            /// Decodes an object's declared members into the same fields
            /// as [`decode`](Self::decode) (the last occurrence of a name
            /// decides; `null` or another JSON type: `None`), without the
            /// bookkeeping writing it back needs: `members` is left empty
            /// and strings keep no raw literal
            /// ([`FieldValue::decode_lean`](crate::json::FieldValue::decode_lean)).
            /// `None` when `v` is not an object. For readers of the fields
            /// only: [`write_to`](Self::write_to) would not give the input
            /// back.
            pub fn decode_lean(v: $crate::json::Value<'a>) -> Option<Self> {
                let obj = v.as_object()?;
                let mut out = Self::default();
                for m in obj.iter() {
                    match m.key {
                        $(
                            $key => {
                                out.$field = if m.value.is_null() {
                                    None
                                } else {
                                    <$ty as $crate::json::FieldValue<'a>>::decode_lean(m.value)
                                };
                            }
                        )*
                        _ => {}
                    }
                }
                Some(out)
            }

            fn field_number(key: &str) -> u8 {
                let mut i = 0u8;
                for k in Self::KEYS {
                    if *k == key {
                        return i;
                    }
                    i += 1;
                }
                $crate::json::UNDECLARED
            }

            /// Writes the object back: members in input order, undeclared
            /// ones byte for byte, declared ones from their fields.
            pub fn write_to(&self, out: &mut Vec<u8>) {
                let mut written: u64 = 0;
                let mut first = true;
                out.push(b'{');
                for slot in self.members.slots() {
                    if slot.field == $crate::json::UNDECLARED {
                        if !first { out.push(b','); }
                        first = false;
                        out.extend_from_slice(slot.raw_key);
                        out.push(b':');
                        out.extend_from_slice(slot.raw);
                        continue;
                    }
                    let n = slot.field;
                    if n < 64 { written |= 1u64 << n; }
                    if self.write_field(n, Some(slot.raw_key), &mut first, out) {
                        continue;
                    }
                    if self.members.is_null(n) {
                        if !first { out.push(b','); }
                        first = false;
                        out.extend_from_slice(slot.raw_key);
                        out.extend_from_slice(b":null");
                    }
                }
                let mut n = 0u8;
                for _ in Self::KEYS {
                    if n < 64 && written & (1u64 << n) == 0 {
                        self.write_field(n, None, &mut first, out);
                    }
                    n += 1;
                }
                out.push(b'}');
            }

            /// Writes field `n` when set; returns whether it wrote.
            #[allow(unused_variables, unused_mut, unused_assignments)]
            fn write_field(&self, n: u8, raw_key: Option<&[u8]>, first: &mut bool, out: &mut Vec<u8>) -> bool {
                let mut i = 0u8;
                $(
                    if i == n {
                        if let Some(x) = &self.$field {
                            if !*first { out.push(b','); }
                            *first = false;
                            match raw_key {
                                Some(k) => { out.extend_from_slice(k); out.push(b':'); }
                                None => $crate::json::members::write_key(out, $key),
                            }
                            $crate::json::FieldValue::encode_field(x, out);
                            return true;
                        }
                        return false;
                    }
                    i += 1;
                )*
                false
            }

            /// The object written back as JSON bytes.
            pub fn to_json(&self) -> Vec<u8> {
                let mut out = Vec::new();
                self.write_to(&mut out);
                out
            }
        }

        impl<'a> $crate::json::FieldValue<'a> for $name<'a> {
            fn decode_field(v: $crate::json::Value<'a>) -> Option<Self> {
                Self::decode(v)
            }
            fn decode_lean(v: $crate::json::Value<'a>) -> Option<Self> {
                Self::decode_lean(v)
            }
            fn encode_field(&self, out: &mut Vec<u8>) {
                self.write_to(out);
            }
        }

        impl $crate::json::members::Expected for $name<'_> {
            const EXPECTED: &'static str = "object";
        }
    };
}
