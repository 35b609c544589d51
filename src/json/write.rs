//! Writing JSON: string escaping and number formatting as Python writes
//! them, so that what this crate writes is what the Python programs that own
//! these formats would have written.

#[cfg(target_arch = "x86_64")]
use super::block::Block;

/// Appends `s` between quotes as it stands: the literal [`write_str`]
/// writes for a string the caller knows needs no escape (no `"`, `\` or
/// control character: an id, a hex digest, a canonical time, a checked
/// name), without looking at its bytes (debug builds check them).
pub(crate) fn write_plain_str(out: &mut Vec<u8>, s: &str) {
    debug_assert!(
        s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\'),
        "{s:?} needs escapes"
    );
    out.reserve(s.len() + 2);
    out.push(b'"');
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
}

/// Appends `s` as a JSON string literal, quotes included.
///
/// With `ensure_ascii` false (pydantic's `model_dump_json`, and
/// `json.dump(..., ensure_ascii=False)`) only `"`, `\` and control
/// characters are escaped; with it true (Python's `json.dumps` default)
/// every non-ASCII character is written as `\uXXXX` (surrogate pairs beyond
/// the BMP), as Python does.
pub fn write_str(out: &mut Vec<u8>, s: &str, ensure_ascii: bool) {
    let bytes = s.as_bytes();
    // The literal is at least the string and its quotes: one reservation
    // instead of the growth of every run's copy.
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // Without `ensure_ascii`, a byte that is not ASCII is copied as it
    // stands: only `"`, `\\` and control characters need a look.
    let high = if ensure_ascii { u64::MAX } else { 0 };
    let mut run = 0;
    let mut i = 0;
    // Sixteen bytes at a time (SSE2, which every x86-64 processor has): the
    // bytes of a block that need a look, exactly, as a bit mask, each
    // handled in order; a block without any is skipped whole.
    #[cfg(target_arch = "x86_64")]
    while let Some(block) = bytes.get(i..).and_then(Block::first) {
        look_at_each(
            out,
            s,
            i,
            block.escapes(ensure_ascii),
            &mut run,
            ensure_ascii,
        );
        i += 16;
    }
    // The last bytes (fewer than sixteen) as one more block, padded with
    // spaces (which need nothing), rather than looked at one by one.
    #[cfg(target_arch = "x86_64")]
    if let Some(rest) = bytes.get(i..)
        && !rest.is_empty()
    {
        let look = Block::padded(rest).escapes(ensure_ascii);
        look_at_each(out, s, i, look, &mut run, ensure_ascii);
        i = bytes.len();
    }
    while i < bytes.len() {
        // Eight bytes at a time while none of them needs a look (no `"`,
        // `\\`, control character, or non-ASCII byte with `ensure_ascii`);
        // else straight to the first one that may.
        if let Some(w) = bytes.get(i..i + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(w);
            let look = needs_look(u64::from_le_bytes(word), high);
            if look == 0 {
                i += 8;
                continue;
            }
            i += (look.trailing_zeros() / 8) as usize;
        }
        look_at(out, s, i, &mut run, ensure_ascii);
        i += 1;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// [`look_at`] each byte of the block of `s` at `start` whose bit is set
/// in `look` (bit `n` for the byte at `start + n`), in order.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn look_at_each(
    out: &mut Vec<u8>,
    s: &str,
    start: usize,
    mut look: u32,
    run: &mut usize,
    ensure_ascii: bool,
) {
    while look != 0 {
        let at = start + look.trailing_zeros() as usize;
        look &= look - 1;
        look_at(out, s, at, run, ensure_ascii);
    }
}

/// Writes what the byte of `s` at `i` needs, if anything: the run of
/// plain bytes since `run` first, then its escape (`run` moves past it).
/// A byte that needs nothing is left in the run.
#[inline(always)]
fn look_at(out: &mut Vec<u8>, s: &str, i: usize, run: &mut usize, ensure_ascii: bool) {
    let bytes = s.as_bytes();
    let Some(&b) = bytes.get(i) else { return };
    if let Some(e) = short_escape(b) {
        out.extend_from_slice(&bytes[*run..i]);
        out.extend_from_slice(&[b'\\', e]);
        *run = i + 1;
    } else if b < 0x20 {
        out.extend_from_slice(&bytes[*run..i]);
        push_u_escape(out, b as u16);
        *run = i + 1;
    } else if ensure_ascii && b >= 0x80 {
        // Handled per char below.
        out.extend_from_slice(&bytes[*run..i]);
        // Only act at char starts.
        if b & 0xC0 != 0x80 {
            let ch = s
                .get(i..)
                .and_then(|t| t.chars().next())
                .unwrap_or('\u{FFFD}');
            let mut units = [0u16; 2];
            for u in ch.encode_utf16(&mut units) {
                push_u_escape(out, *u);
            }
        }
        *run = i + 1;
    }
}

/// The letter of the two-character escape of `b` (`\"`, `\\`, `\n`, `\r`,
/// `\t`, `\b`, `\f`), if it has one.
#[inline]
fn short_escape(b: u8) -> Option<u8> {
    match b {
        b'"' => Some(b'"'),
        b'\\' => Some(b'\\'),
        b'\n' => Some(b'n'),
        b'\r' => Some(b'r'),
        b'\t' => Some(b't'),
        0x08 => Some(b'b'),
        0x0c => Some(b'f'),
        _ => None,
    }
}

/// The bytes of `x` (little-endian) that need a look: the high bit of each
/// byte that is a `"`, a `\\`, a control character or (where `high` has
/// the byte's high bit) not ASCII (which the byte loop handles), and
/// possibly of bytes above such a byte (the subtractions' borrows run
/// upwards), never of a byte below the first one that needs it: the lowest
/// flagged byte is where the look starts.
fn needs_look(x: u64, high: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // The classic zero-byte test: a byte of `v` that is zero is flagged,
    // and a borrow only starts at such a byte (or a byte below 0x20 in the
    // control test), so the lowest flag is exact. Bytes with the high bit
    // set are flagged by `x & HIGH` and start no borrow.
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let below_space = x.wrapping_sub(ONES * 0x20) & !x & HIGH;
    (x & HIGH & high)
        | below_space
        | zero(x ^ (ONES * u64::from(b'"')))
        | zero(x ^ (ONES * u64::from(b'\\')))
}

fn push_u_escape(out: &mut Vec<u8>, u: u16) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[((u >> shift) & 0xF) as usize]);
    }
}

/// Appends `v` as Python's `repr(float)` writes it, which is what `json.dumps`
/// writes: the shortest digits that read back to the same value, in
/// positional notation for exponents from -4 to 15 (always with a fraction,
/// `1.0`), scientific otherwise (`1e+16`, `1.5e-07`); `NaN`, `Infinity` and
/// `-Infinity` for the non-finite values, as Python's `json` does.
pub fn write_f64(out: &mut Vec<u8>, v: f64) {
    out.extend_from_slice(python_float_repr(v).as_bytes());
}

/// Python's `repr` of a float (see [`write_f64`]).
pub fn python_float_repr(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: d.ddddde<exp>.
    let sci = format!("{v:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if neg { "-" } else { "" };
    if (-4..16).contains(&exp) {
        // Positional.
        let n = digits.len() as i32;
        let s = if exp >= 0 {
            let int_len = exp + 1;
            if n <= int_len {
                format!("{}{}.0", digits, "0".repeat((int_len - n) as usize))
            } else {
                format!(
                    "{}.{}",
                    &digits[..int_len as usize],
                    &digits[int_len as usize..]
                )
            }
        } else {
            format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
        };
        format!("{sign}{s}")
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        let mant = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mant}e{esign}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python() {
        for (v, s) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1.5e-7, "1.5e-07"),
            (123456789.125, "123456789.125"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
            (1e15, "1000000000000000.0"),
            (3e-6, "3e-06"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
        ] {
            assert_eq!(python_float_repr(v), s, "{v}");
        }
    }

    #[test]
    fn escapes_like_python() {
        let mut out = Vec::new();
        write_str(&mut out, "a\"b\\c\n\u{1}é😀", false);
        assert_eq!(out, "\"a\\\"b\\\\c\\n\\u0001é😀\"".as_bytes());
        out.clear();
        write_str(&mut out, "é😀", true);
        assert_eq!(out, b"\"\\u00e9\\ud83d\\ude00\"");
    }
}

#[cfg(test)]
mod word_scan_tests {
    use super::write_str;

    /// The byte-at-a-time writer the word scan skips ahead of.
    fn reference(s: &str, ensure_ascii: bool) -> String {
        let mut out = String::from("\"");
        for ch in s.chars() {
            match ch {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c if ensure_ascii && !c.is_ascii() => {
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{u:04x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    /// `write_str` gives the reference's text for `s`, escaped and not.
    fn writes_as_reference(s: &str) {
        for ascii in [false, true] {
            let mut out = Vec::new();
            write_str(&mut out, s, ascii);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                reference(s, ascii),
                "{s:?}"
            );
        }
    }

    #[test]
    fn two_escapes_in_one_word_at_every_pair_of_offsets() {
        let specials = ["\"", "\\", "\n", "\u{1}", "é", "\u{7f}", "a", "!", "#"];
        for len in 0..18 {
            for a in 0..=len {
                for b in a..=len {
                    for sa in specials {
                        for sb in specials {
                            let mut s: String =
                                "abcdefghijklmnopqrstuvwxyz".chars().take(len).collect();
                            s.insert_str(b, sb);
                            s.insert_str(a, sa);
                            writes_as_reference(&s);
                        }
                    }
                }
            }
        }
    }

    /// Escapes on both sides of the 16-byte blocks' boundaries, and runs
    /// of them, in strings of up to three blocks and a tail.
    #[test]
    fn escapes_across_blocks() {
        let specials = [
            "\"", "\\", "\n", "\u{1}", "\u{1f}", "é", "😀", "\u{7f}", " ",
        ];
        for len in 0..56 {
            for (k, sp) in specials.iter().enumerate() {
                for at in [0, 7, 8, 15, 16, 17, 31, 32, 33, 47, 48] {
                    let mut s: String = "abcdefghijklmnopqrstuvwxyz"
                        .chars()
                        .cycle()
                        .take(len)
                        .collect();
                    if at <= s.len() {
                        s.insert_str(at, sp);
                    }
                    let other = specials[(k + 1) % specials.len()];
                    let mid = s.len() / 2;
                    if s.is_char_boundary(mid) {
                        s.insert_str(mid, other);
                    }
                    writes_as_reference(&s);
                }
            }
            let all: String = specials.iter().cycle().take(len).copied().collect();
            writes_as_reference(&all);
        }
    }

    #[test]
    fn escapes_at_every_offset_of_a_word() {
        let specials = [
            "\"", "\\", "\n", "\u{1}", "\u{1f}", "é", "😀", " ", "a", "\u{7f}",
        ];
        for len in 0..20 {
            for at in 0..len.max(1) {
                for sp in specials {
                    let mut s: String = "abcdefghijklmnopqrstuvwxyz".chars().take(len).collect();
                    if at <= s.len() {
                        s.insert_str(at, sp);
                    }
                    writes_as_reference(&s);
                }
            }
        }
    }
}
