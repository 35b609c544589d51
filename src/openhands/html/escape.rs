//! Writing text into HTML: every byte of input text goes through
//! [`text`], which escapes the five characters that can end a text run or
//! an attribute value (`&`, `<`, `>`, `"`, `'`), so no input can open an
//! element, close one, or leave an attribute. Numbers are written with
//! thousands separators ([`thousands`]).

use std::io::{self, Write};

/// Writes `s` HTML-escaped, in runs between the characters that need an
/// entity (no intermediate string).
pub(crate) fn text(w: &mut impl Write, s: &str) -> io::Result<()> {
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let entity: &[u8] = match b {
            b'&' => b"&amp;",
            b'<' => b"&lt;",
            b'>' => b"&gt;",
            b'"' => b"&quot;",
            b'\'' => b"&#39;",
            _ => continue,
        };
        w.write_all(bytes.get(start..i).unwrap_or_default())?;
        w.write_all(entity)?;
        start = i + 1;
    }
    w.write_all(bytes.get(start..).unwrap_or_default())
}

/// `n` with a comma between each group of three digits (`1,234,567`).
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// At most `max` characters of the first line of `s` that is not blank,
/// with `…` when cut.
pub(crate) fn preview(s: &str, max: usize) -> String {
    let first = s
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut out: String = first.chars().take(max).collect();
    if out.len() < first.len() || s.trim().lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(s: &str) -> String {
        let mut v = Vec::new();
        text(&mut v, s).expect("vec");
        String::from_utf8(v).expect("utf-8")
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(esc("a<b>&\"'c"), "a&lt;b&gt;&amp;&quot;&#39;c");
        assert_eq!(
            esc("</script><img onerror=x>"),
            "&lt;/script&gt;&lt;img onerror=x&gt;"
        );
        assert_eq!(esc("é ü"), "é ü");
        assert_eq!(esc(""), "");
    }

    #[test]
    fn numbers_and_previews() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(13_228), "13,228");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(preview("\n  first line \nsecond", 40), "first line…");
        assert_eq!(preview("abcdef", 3), "abc…");
        assert_eq!(preview("one", 10), "one");
    }
}
