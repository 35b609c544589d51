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
            let mut members: SmallVec<[(&str, Value<'_>); 16]> =
                o.iter().map(|m| (m.key, m.value)).collect();
            if members.iter().all(|m| m.0.is_ascii()) {
                // Equal names are refused below, whichever comes first.
                members.sort_unstable_by(|a, b| a.0.cmp(b.0));
            } else {
                members.sort_by(|a, b| cmp_utf16(a.0, b.0));
            }
            out.push(b'{');
            for (i, (k, value)) in members.iter().enumerate() {
                if i > 0 {
                    if members[i - 1].0 == *k {
                        return Err(CanonError::DuplicateName((*k).to_owned()));
                    }
                    out.push(b',');
                }
                write_name(out, k);
                out.push(b':');
                canonical_strict(*value, out)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
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
mod tests {
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
}
