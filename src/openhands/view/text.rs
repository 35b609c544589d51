//! Python string semantics the SDK's rendering relies on: slices in code
//! points (lengths: [`char_count`]), `str.strip`, `str.splitlines`, the
//! middle truncation of `maybe_truncate` and the SHA-256 file names of
//! saved outputs.

use crate::chars::char_count;

/// Python's `str.isspace` for one character: Unicode White_Space plus the
/// four information separators U+001C – U+001F.
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `s.strip() == ""`.
pub(crate) fn py_is_blank(s: &str) -> bool {
    s.chars().all(py_space)
}

/// `s[:n]` in code points.
fn head(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => s.get(..i).unwrap_or(s),
        None => s,
    }
}

/// `s[-n:]` in code points, for `n > 0` (Python's `s[-0:]` is the whole
/// string; callers never ask for that).
fn tail(s: &str, n: usize) -> &str {
    if n == 0 {
        return "";
    }
    // The `n`th code point from the end starts the tail (walked from the
    // end: the head is neither counted nor walked).
    match s.char_indices().nth_back(n - 1) {
        Some((i, _)) => s.get(i..).unwrap_or(""),
        None => s,
    }
}

/// `len(s.splitlines())`.
fn py_splitlines_count(s: &str) -> usize {
    let mut count = 0;
    let mut chars = s.chars().peekable();
    let mut in_line = false;
    while let Some(c) = chars.next() {
        let brk = matches!(
            c,
            '\n' | '\r'
                | '\u{0b}'
                | '\u{0c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if brk {
            if c == '\r' && chars.peek() == Some(&'\n') {
                chars.next();
            }
            count += 1;
            in_line = false;
        } else {
            in_line = true;
        }
    }
    if in_line {
        count += 1;
    }
    count
}

/// The notice `maybe_truncate` puts in the middle.
pub(crate) const TRUNCATE_NOTICE: &str = "<response clipped><NOTE>Due to the max output limit, only part of the full response has been shown to you.</NOTE>";

/// Where `maybe_truncate` saves the full text (1.4.0+): the directory from
/// the observation and the tool's file-name prefix.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Persist<'s> {
    pub(crate) save_dir: &'s str,
    pub(crate) prefix: &'s str,
}

/// The path of a file saved under `dir` (`str(Path(dir) / name)`).
pub(crate) fn join_path(dir: &str, name: &str) -> String {
    let trimmed = dir.trim_end_matches('/');
    if trimmed.is_empty() && dir.starts_with('/') {
        format!("/{name}")
    } else {
        format!("{trimmed}/{name}")
    }
}

/// `maybe_truncate(content, limit, save_dir=..., tool_prefix=...)`: the
/// head and tail of `content` around a notice, when it is longer than
/// `limit` code points. With `persist`, the notice names the file the SDK
/// saves the full text to (`<prefix>_output_<sha256[:8]>.txt`) and the line
/// where the cut starts; the file itself is not written here (the SDK
/// writes it as a side effect of rendering).
pub(crate) fn maybe_truncate(content: &str, limit: usize, persist: Option<Persist<'_>>) -> String {
    let len = char_count(content);
    if limit == 0 || len <= limit {
        return content.to_owned();
    }
    let notice_len = char_count(TRUNCATE_NOTICE);
    if notice_len >= limit {
        return head(TRUNCATE_NOTICE, limit).to_owned();
    }
    let available = limit - notice_len;
    let proposed_head = available / 2 + available % 2;
    let notice: String = match persist {
        Some(p) if !p.save_dir.is_empty() => {
            let hash = crate::hash::sha256_hex(content.as_bytes());
            let name = format!("{}_output_{}.txt", p.prefix, hash.get(..8).unwrap_or(""));
            let path = join_path(p.save_dir, &name);
            let line = py_splitlines_count(head(content, proposed_head)) + 1;
            format!(
                "<response clipped><NOTE>Due to the max output limit, only part of the full response has been shown to you. The complete output has been saved to {path} - you can use other tools to view the full content (truncated part starts around line {line}).</NOTE>"
            )
        }
        _ => TRUNCATE_NOTICE.to_owned(),
    };
    let final_len = char_count(&notice);
    if final_len >= limit {
        return head(&notice, limit).to_owned();
    }
    let remaining = limit - final_len;
    let head_chars = proposed_head.min(remaining);
    let tail_chars = remaining - head_chars;
    let mut out = String::with_capacity(content.len().min(limit * 4) + notice.len());
    out.push_str(head(content, head_chars));
    out.push_str(&notice);
    if tail_chars > 0 {
        out.push_str(tail(content, tail_chars));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_head_and_tail_in_code_points() {
        let s: String = "é".repeat(300);
        let out = maybe_truncate(&s, 200, None);
        assert_eq!(char_count(&out), 200);
        assert!(out.contains(TRUNCATE_NOTICE));
        // 200 - 113 = 87: head 44, tail 43.
        assert!(out.starts_with(&"é".repeat(44)));
        assert!(!out.starts_with(&"é".repeat(45)));
        assert_eq!(maybe_truncate("short", 200, None), "short");
        assert_eq!(maybe_truncate(&s, 10, None), head(TRUNCATE_NOTICE, 10));
    }

    #[test]
    fn persisted_notice_names_the_file_and_line() {
        let s = "line\n".repeat(100);
        let out = maybe_truncate(
            &s,
            400,
            Some(Persist {
                save_dir: "/x/obs/",
                prefix: "terminal",
            }),
        );
        let hash = crate::hash::sha256_hex(s.as_bytes());
        assert!(out.contains(&format!("/x/obs/terminal_output_{}.txt", &hash[..8])));
        assert_eq!(char_count(&out), 400);
        assert!(out.contains("truncated part starts around line"));
    }

    /// `s[-n:]`: the last `n` code points (all of them when `n` is more),
    /// with characters of one to four bytes.
    #[test]
    fn tail_is_the_last_code_points() {
        let s = "aé☃😀bc";
        let chars: Vec<char> = s.chars().collect();
        for n in 1..=8 {
            let want: String = chars[chars.len().saturating_sub(n)..].iter().collect();
            assert_eq!(tail(s, n), want, "{n}");
        }
    }

    #[test]
    fn python_whitespace_and_lines() {
        assert!(py_is_blank(" \t\n\u{1c}\u{3000}"));
        assert!(!py_is_blank(" x "));
        assert_eq!(py_splitlines_count("a\nb\r\nc"), 3);
        assert_eq!(py_splitlines_count("a\n"), 1);
        assert_eq!(py_splitlines_count(""), 0);
    }
}
