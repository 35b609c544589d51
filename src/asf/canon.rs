//! Canonical JSON (RFC 8785, the JSON Canonicalization Scheme) and the
//! I-JSON test the ASF entry hash requires, on the crate's JSON layer.
//!
//! - Members are sorted by their names' UTF-16 code units; no whitespace.
//! - Strings are written as ECMAScript's `JSON.stringify` writes them: `"`,
//!   `\` and the control characters escaped (`\b \t \n \f \r` short, the
//!   others `\u00xx`), everything else as UTF-8.
//! - Numbers are written as ECMAScript writes the nearest binary64 value
//!   (`ryu-js`), after the test of RFC 0001 "Entry hash": finite, and a
//!   whole number either exact in binary64 or equal to the canonical
//!   rendering of its nearest double.
//! - A repeated member name, a lone surrogate escape and a number failing
//!   the test are [`CanonError`]s: no canonical form exists.
//!
//! [`canonical_value`] reads a parsed line in place (the tape, and the raw
//! spans where a literal is copied as it stands; nothing decoded into owned
//! values), in one walk when simd-json parsed it; [`canonical_owned`]
//! writes an [`OwnedValue`]. Both give the same bytes for the same value.

use smallvec::SmallVec;
use std::cmp::Ordering;

#[cfg(target_arch = "x86_64")]
use crate::json::block::Block;
use crate::json::write::{write_plain_str, write_str};
use crate::json::{JsonType, OwnedValue, Value};

/// Why a value has no canonical form (it is not I-JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CanonError {
    /// An object repeats a member name.
    DuplicateName(String),
    /// A string (or a member name) holds a lone surrogate escape.
    LoneSurrogate,
    /// A number is not finite in binary64 (or not a number literal).
    NotFinite(String),
    /// A whole number that binary64 does not hold and that is not the
    /// canonical rendering of its nearest double (`9007199254740993`).
    InexactInteger(String),
}

impl std::fmt::Display for CanonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CanonError::DuplicateName(n) => write!(f, "member name {n:?} repeated in one object"),
            CanonError::LoneSurrogate => f.write_str("a string holds a lone surrogate"),
            CanonError::NotFinite(t) => write!(f, "number {t} is not finite in binary64"),
            CanonError::InexactInteger(t) => write!(
                f,
                "whole number {t} is neither exact in binary64 nor the canonical rendering of its nearest double"
            ),
        }
    }
}

impl std::error::Error for CanonError {}

/// Compares two names by UTF-16 code units, as RFC 8785 sorts members.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    // Byte order equals code-point order, which equals UTF-16 order unless a
    // supplementary character meets a BMP character at or above U+E000.
    if a.is_ascii() || b.is_ascii() {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Appends the canonical form of `v`.
pub fn canonical_value(v: Value<'_>, out: &mut Vec<u8>) -> Result<(), CanonError> {
    if v.is_strict() {
        canonical_strict(v, out)
    } else {
        canonical_value_skipping(v, &[], out)
    }
}

/// The largest magnitude up to which every integer is a binary64 value:
/// ECMAScript writes such an integer as its decimal digits.
const EXACT_INTEGERS: u64 = 1 << 53;

/// [`canonical_value`] for a value of a document simd-json parsed, whose
/// strings hold no lone surrogate: written in one walk of the tape, names
/// from their decoded text (no raw span, no surrogate scan), members sorted
/// by bytes when every name is ASCII (the same order as UTF-16's then),
/// integers the tape holds within ±2^53 written from the tape. Anything
/// else takes the general path of each scalar: a string literal as it
/// stands when it is already canonical, other numbers through the I-JSON
/// test on their literal.
fn canonical_strict(v: Value<'_>, out: &mut Vec<u8>) -> Result<(), CanonError> {
    match v.json_type() {
        JsonType::Null => out.extend_from_slice(b"null"),
        JsonType::Bool => out.extend_from_slice(if v.as_bool() == Some(true) {
            b"true"
        } else {
            b"false"
        }),
        JsonType::Number => match v.tape_integer() {
            Some((negative, m)) if m <= EXACT_INTEGERS => {
                if negative && m != 0 {
                    out.push(b'-');
                }
                push_decimal(out, m);
            }
            _ => canonical_number(v.raw_str(), out)?,
        },
        JsonType::String => {
            let s = v.as_str().unwrap_or("");
            let raw = v.raw();
            if raw.len() == s.len() + 2 {
                // No escape in the literal (each one is longer than what it
                // stands for): its text is the string's, canonical unless it
                // holds a raw control character.
                if no_control(s.as_bytes()) {
                    out.extend_from_slice(raw);
                } else {
                    write_str(out, s, false);
                }
            } else if plain_literal(raw) {
                out.extend_from_slice(raw);
            } else {
                write_str(out, s, false);
            }
        }
        JsonType::Array => {
            out.push(b'[');
            if let Some(a) = v.as_array() {
                for (i, e) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    canonical_strict(e, out)?;
                }
            }
            out.push(b']');
        }
        JsonType::Object => {
            let Some(o) = v.as_object() else {
                out.extend_from_slice(b"{}");
                return Ok(());
            };
            // Each name beside its first eight bytes as a number, which
            // orders most names in one comparison.
            let mut members: SmallVec<[(u64, &str, Value<'_>); 16]> = o
                .iter()
                .map(|m| (name_prefix(m.key), m.key, m.value))
                .collect();
            if members.iter().all(|m| m.1.is_ascii()) {
                // Equal names are refused below, whichever comes first.
                members.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
            } else {
                members.sort_by(|a, b| cmp_utf16(a.1, b.1));
            }
            out.push(b'{');
            for (i, &(_, k, value)) in members.iter().enumerate() {
                if i > 0 {
                    if members[i - 1].1 == k {
                        return Err(CanonError::DuplicateName(k.to_owned()));
                    }
                    out.push(b',');
                }
                write_name(out, k);
                out.push(b':');
                canonical_strict(value, out)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

/// The first eight bytes of `k` as a big-endian number, zeros past its
/// end: names whose numbers differ are in the order of their numbers by
/// bytes (a name that ends first has a zero where the other has a byte,
/// which is no smaller); names whose numbers are equal are compared whole.
fn name_prefix(k: &str) -> u64 {
    let b = k.as_bytes();
    match b.first_chunk::<8>() {
        Some(first) => u64::from_be_bytes(*first),
        None => b
            .iter()
            .enumerate()
            .fold(0, |p, (i, &c)| p | u64::from(c) << (56 - 8 * i)),
    }
}

/// Appends a member's name as a JSON string literal: as it stands between
/// quotes when it is printable ASCII without `"` or `\` (a name is short,
/// and [`write_str`] looks at a short string byte by byte), else through
/// [`write_str`].
fn write_name(out: &mut Vec<u8>, k: &str) {
    if k.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        write_plain_str(out, k);
    } else {
        write_str(out, k, false);
    }
}

/// Appends the decimal digits of `m`.
fn push_decimal(out: &mut Vec<u8>, mut m: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// Whether no byte is a control character (below U+0020).
fn no_control(bytes: &[u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let controls = |b: &[u8]| Block::first(b).map_or(0, Block::controls);
        // Four blocks at a time, without an early exit within them.
        let mut fours = bytes.chunks_exact(64);
        for q in fours.by_ref() {
            if q.chunks_exact(16).fold(0, |any, b| any | controls(b)) != 0 {
                return false;
            }
        }
        let mut blocks = fours.remainder().chunks_exact(16);
        if blocks.by_ref().any(|b| controls(b) != 0) {
            return false;
        }
        Block::padded(blocks.remainder()).controls() == 0
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        !bytes.iter().any(|&b| b < 0x20)
    }
}

/// Appends the canonical form of the object `v` without its top-level
/// members named in `skip` (the ASF envelope). `v` must be an object when
/// `skip` is not empty; other values ignore `skip`.
pub fn canonical_value_skipping(
    v: Value<'_>,
    skip: &[&str],
    out: &mut Vec<u8>,
) -> Result<(), CanonError> {
    canonical_marking(v, skip, None, out).map(|_| ())
}

/// [`canonical_value_skipping`], also giving where in `out` the canonical
/// value of the top-level member `mark` was written (when `v` has it).
pub(crate) fn canonical_marking(
    v: Value<'_>,
    skip: &[&str],
    mark: Option<&str>,
    out: &mut Vec<u8>,
) -> Result<Option<std::ops::Range<usize>>, CanonError> {
    let mut marked = None;
    match v.json_type() {
        JsonType::Null => out.extend_from_slice(b"null"),
        JsonType::Bool => out.extend_from_slice(if v.as_bool() == Some(true) {
            b"true"
        } else {
            b"false"
        }),
        JsonType::Number => canonical_number(v.raw_str(), out)?,
        JsonType::String => {
            let raw = v.raw();
            if plain_literal(raw) {
                out.extend_from_slice(raw);
            } else {
                check_surrogates(raw)?;
                write_str(out, v.as_str().unwrap_or(""), false);
            }
        }
        JsonType::Array => {
            out.push(b'[');
            if let Some(a) = v.as_array() {
                for (i, e) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    canonical_value(e, out)?;
                }
            }
            out.push(b']');
        }
        JsonType::Object => {
            let Some(o) = v.as_object() else {
                out.extend_from_slice(b"{}");
                return Ok(None);
            };
            // On the stack for the objects events hold (no allocation per object).
            let mut members: SmallVec<[_; 16]> =
                o.iter().filter(|m| !skip.contains(&m.key)).collect();
            for m in &members {
                check_surrogates(m.raw_key())?;
            }
            members.sort_by(|a, b| cmp_utf16(a.key, b.key));
            out.push(b'{');
            for (i, m) in members.iter().enumerate() {
                if i > 0 {
                    if members[i - 1].key == m.key {
                        return Err(CanonError::DuplicateName(m.key.to_owned()));
                    }
                    out.push(b',');
                }
                let raw_key = m.raw_key();
                if plain_literal(raw_key) {
                    out.extend_from_slice(raw_key);
                } else {
                    write_str(out, m.key, false);
                }
                out.push(b':');
                let start = out.len();
                canonical_value(m.value, out)?;
                if mark == Some(m.key) {
                    marked = Some(start..out.len());
                }
            }
            out.push(b'}');
        }
    }
    Ok(marked)
}

/// Whether the raw text of `v` is already its canonical form: no white
/// space between tokens, every object's members in strictly increasing
/// UTF-16 order of their names (so no name repeats), every string literal
/// spelled as the canonical form writes it, every number literal as
/// ECMAScript writes its value (and passing the I-JSON test). One walk over
/// the tape and the spans, nothing written; a `false` sends the caller to
/// the full canonicaliser, which also finds what is not I-JSON.
pub(crate) fn is_canonical(v: Value<'_>) -> bool {
    match v.json_type() {
        JsonType::Null | JsonType::Bool => true,
        JsonType::Number => canonical_number_literal(v.raw_str()),
        JsonType::String => plain_literal(v.raw()),
        JsonType::Array => {
            let Some(a) = v.as_array() else {
                return false;
            };
            let span = v.span();
            // Where the next token must start: right after `[` or a `,`.
            let mut next = span.start + 1;
            for e in a.iter() {
                let s = e.span();
                if s.start != next || !is_canonical(e) {
                    return false;
                }
                next = s.end + 1;
            }
            span.end == if a.is_empty() { span.start + 2 } else { next }
        }
        JsonType::Object => {
            let Some(o) = v.as_object() else {
                return false;
            };
            let span = v.span();
            let mut next = span.start + 1;
            let mut prev: Option<&str> = None;
            for m in o.iter() {
                let k = m.key_value.span();
                if k.start != next
                    || !plain_literal(m.raw_key())
                    || prev.is_some_and(|p| cmp_utf16(p, m.key).is_ge())
                {
                    return false;
                }
                let s = m.value.span();
                if s.start != k.end + 1 || !is_canonical(m.value) {
                    return false;
                }
                prev = Some(m.key);
                next = s.end + 1;
            }
            span.end == if o.is_empty() { span.start + 2 } else { next }
        }
    }
}

/// Whether a number literal is the canonical spelling of its value: a whole
/// number of at most 15 digits without a leading zero (binary64 holds it and
/// ECMAScript writes it as it stands) at once, anything else by writing it.
fn canonical_number_literal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text).as_bytes();
    if (1..=15).contains(&digits.len()) && digits.iter().all(u8::is_ascii_digit) {
        return if digits[0] == b'0' { text == "0" } else { true };
    }
    let mut out = Vec::with_capacity(24);
    canonical_number(text, &mut out).is_ok() && out == text.as_bytes()
}

/// Whether a string literal's raw text (quotes included) is its canonical
/// spelling: no control character between its quotes (a lenient parse may
/// let one through raw), and every escape one the canonical form writes
/// (`\"`, `\\`, `\b \f \n \r \t`, and `\u00xx` in lowercase for the other
/// control characters). Such a literal holds no surrogate escape either.
fn plain_literal(raw: &[u8]) -> bool {
    let [b'"', inner @ .., b'"'] = raw else {
        return false;
    };
    // One pass finds control characters and backslashes, sixteen bytes at a
    // time (SSE2, the x86-64 baseline); `free`: where the bytes outside an
    // escape start again (a backslash before it ends a `\\`).
    let mut free = 0;
    let mut at = 0;
    #[cfg(target_arch = "x86_64")]
    while let Some(block) = inner.get(at..).and_then(Block::first) {
        let (control, mut backslashes) = (block.controls(), block.backslashes());
        if control != 0 {
            return false;
        }
        while backslashes != 0 {
            let k = at + backslashes.trailing_zeros() as usize;
            backslashes &= backslashes - 1;
            if k >= free {
                match canonical_escape_len(inner, k) {
                    Some(n) => free = k + n,
                    None => return false,
                }
            }
        }
        at += 16;
    }
    while let Some(&b) = inner.get(at) {
        if b < 0x20 {
            return false;
        }
        if b == b'\\' && at >= free {
            match canonical_escape_len(inner, at) {
                Some(n) => free = at + n,
                None => return false,
            }
        }
        at += 1;
    }
    true
}

/// The length of the escape at `k` of a literal's text (a backslash) when
/// the canonical form writes it so: `\"`, `\\`, `\b \f \n \r \t`, and
/// `\u00xx` in lowercase for the other control characters.
#[inline]
fn canonical_escape_len(inner: &[u8], k: usize) -> Option<usize> {
    match inner.get(k + 1)? {
        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => Some(2),
        b'u' => {
            let &[b'0', b'0', hi @ (b'0' | b'1'), lo] = inner.get(k + 2..k + 6)? else {
                return None;
            };
            let lo = match lo {
                b'0'..=b'9' => lo - b'0',
                b'a'..=b'f' => lo - b'a' + 10,
                _ => return None,
            };
            if matches!((hi - b'0') * 16 + lo, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                return None;
            }
            Some(6)
        }
        _ => None,
    }
}

/// Appends the canonical form of an owned value.
pub fn canonical_owned(v: &OwnedValue, out: &mut Vec<u8>) -> Result<(), CanonError> {
    match v {
        OwnedValue::Null => out.extend_from_slice(b"null"),
        OwnedValue::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        OwnedValue::Number(n) => canonical_number(n.as_str(), out)?,
        OwnedValue::String(s) => write_str(out, s, false),
        OwnedValue::Array(a) => {
            out.push(b'[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical_owned(e, out)?;
            }
            out.push(b']');
        }
        OwnedValue::Object(m) => {
            let mut members: SmallVec<[_; 16]> = m.entries().iter().collect();
            members.sort_by(|a, b| cmp_utf16(&a.0, &b.0));
            out.push(b'{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    if members[i - 1].0 == *k {
                        return Err(CanonError::DuplicateName(k.clone()));
                    }
                    out.push(b',');
                }
                write_str(out, k, false);
                out.push(b':');
                canonical_owned(v, out)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

/// The canonical bytes of an owned value.
pub fn to_canonical(v: &OwnedValue) -> Result<Vec<u8>, CanonError> {
    let mut out = Vec::with_capacity(256);
    canonical_owned(v, &mut out)?;
    Ok(out)
}

/// Fails on a `\uD800`–`\uDFFF` escape that is not half of a pair, in the
/// raw text of a string literal.
fn check_surrogates(raw: &[u8]) -> Result<(), CanonError> {
    if !raw.contains(&b'\\') {
        return Ok(());
    }
    let mut i = 0;
    let mut pending_high = false;
    while i < raw.len() {
        if raw[i] != b'\\' {
            if pending_high {
                return Err(CanonError::LoneSurrogate);
            }
            i += 1;
            continue;
        }
        let esc = raw.get(i + 1).copied();
        if esc == Some(b'u') {
            let unit = raw
                .get(i + 2..i + 6)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u16::from_str_radix(h, 16).ok())
                .unwrap_or(0);
            match unit {
                0xD800..=0xDBFF => {
                    if pending_high {
                        return Err(CanonError::LoneSurrogate);
                    }
                    pending_high = true;
                }
                0xDC00..=0xDFFF => {
                    if !pending_high {
                        return Err(CanonError::LoneSurrogate);
                    }
                    pending_high = false;
                }
                _ => {
                    if pending_high {
                        return Err(CanonError::LoneSurrogate);
                    }
                }
            }
            i += 6;
        } else {
            if pending_high {
                return Err(CanonError::LoneSurrogate);
            }
            i += 2;
        }
    }
    if pending_high {
        return Err(CanonError::LoneSurrogate);
    }
    Ok(())
}

/// Appends the canonical spelling of the number literal `text`, after the
/// I-JSON test.
pub fn canonical_number(text: &str, out: &mut Vec<u8>) -> Result<(), CanonError> {
    let f = check_number(text)?;
    let mut buf = ryu_js::Buffer::new();
    out.extend_from_slice(buf.format_finite(f).as_bytes());
    Ok(())
}

/// The I-JSON test of RFC 0001 on a number literal; the nearest binary64
/// value when it passes.
pub fn check_number(text: &str) -> Result<f64, CanonError> {
    // A whole number of at most 15 digits is exact in binary64: no need to
    // write its double out to compare.
    let digits = text.strip_prefix('-').unwrap_or(text).as_bytes();
    if (1..=15).contains(&digits.len())
        && digits.iter().all(u8::is_ascii_digit)
        && (digits[0] != b'0' || digits.len() == 1)
        && let Ok(f) = text.parse::<f64>()
    {
        return Ok(f);
    }
    let f: f64 = match parse_literal(text) {
        Some(_) => text
            .parse()
            .map_err(|_| CanonError::NotFinite(text.to_owned()))?,
        None => return Err(CanonError::NotFinite(text.to_owned())),
    };
    if !f.is_finite() {
        return Err(CanonError::NotFinite(text.to_owned()));
    }
    let Some(exact) = whole_digits(text) else {
        return Ok(f);
    };
    // The exact integer value of the double (every finite double at or
    // beyond 2^53 is whole; below it a whole literal rounds to a whole one).
    let held = format!("{:.0}", f.abs());
    if held == exact {
        return Ok(f);
    }
    let mut buf = ryu_js::Buffer::new();
    let canonical = buf.format_finite(f).to_owned();
    if whole_digits(canonical.trim_start_matches('-')).as_deref() == Some(exact.as_str()) {
        return Ok(f);
    }
    Err(CanonError::InexactInteger(text.to_owned()))
}

/// A JSON number literal split: digits before and after the point, and the
/// exponent (saturating). `None` for anything that is not one.
fn parse_literal(text: &str) -> Option<(&str, &str, i64)> {
    let t = text.strip_prefix('-').unwrap_or(text);
    let (mant, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let (int, frac) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if mant.contains('.') && (frac.is_empty() || !frac.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let e = match exp {
        None => 0,
        Some(e) => {
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let mut v: i64 = 0;
            for b in digits.bytes() {
                v = v.saturating_mul(10).saturating_add(i64::from(b - b'0'));
            }
            if e.starts_with('-') { -v } else { v }
        }
    };
    Some((int, frac, e))
}

/// The decimal digits of the literal's exact value when it is a whole
/// number (no sign, no leading zeros, `"0"` for zero); `None` when it has a
/// fraction. Called only on finite literals, so the digits stay short.
fn whole_digits(text: &str) -> Option<String> {
    let (int, frac, e) = parse_literal(text.strip_prefix('-').unwrap_or(text))?;
    let mut digits: String = int.chars().chain(frac.chars()).collect();
    let mut exp = e.saturating_sub(frac.len() as i64);
    let trimmed = digits.trim_start_matches('0').len();
    if trimmed == 0 {
        return Some("0".to_owned());
    }
    digits.drain(..digits.len() - trimmed);
    while digits.ends_with('0') {
        digits.pop();
        exp = exp.saturating_add(1);
    }
    if exp < 0 {
        return None;
    }
    // A finite double is below 1e309: a longer whole number cannot pass.
    if digits.len() as i64 + exp > 400 {
        return Some(String::new());
    }
    digits.extend(std::iter::repeat_n('0', exp as usize));
    Some(digits)
}

#[cfg(test)]
mod tests;
