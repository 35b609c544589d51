//! Python string semantics the SDK's rendering relies on: lengths and slices
//! in code points, `str.strip`, `str.splitlines`, the middle truncation of
//! `maybe_truncate` and the SHA-256 file names of saved outputs.

/// `len(s)`: the number of code points.
pub(crate) fn py_len(s: &str) -> usize {
    s.chars().count()
}

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
    let count = py_len(s);
    if n >= count {
        return s;
    }
    match s.char_indices().nth(count - n) {
        Some((i, _)) => s.get(i..).unwrap_or(""),
        None => "",
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
    let len = py_len(content);
    if limit == 0 || len <= limit {
        return content.to_owned();
    }
    let notice_len = py_len(TRUNCATE_NOTICE);
    if notice_len >= limit {
        return head(TRUNCATE_NOTICE, limit).to_owned();
    }
    let available = limit - notice_len;
    let proposed_head = available / 2 + available % 2;
    let notice: String = match persist {
        Some(p) if !p.save_dir.is_empty() => {
            let hash = sha256_hex(content.as_bytes());
            let name = format!("{}_output_{}.txt", p.prefix, hash.get(..8).unwrap_or(""));
            let path = join_path(p.save_dir, &name);
            let line = py_splitlines_count(head(content, proposed_head)) + 1;
            format!(
                "<response clipped><NOTE>Due to the max output limit, only part of the full response has been shown to you. The complete output has been saved to {path} - you can use other tools to view the full content (truncated part starts around line {line}).</NOTE>"
            )
        }
        _ => TRUNCATE_NOTICE.to_owned(),
    };
    let final_len = py_len(&notice);
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

/// SHA-256 of `data` as 64 lowercase hex digits (FIPS 180-4).
pub(crate) fn sha256_hex(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let bit_len = (data.len() as u64).wrapping_mul(8);
    let mut tail_block = Vec::with_capacity(128);
    let full = data.len() - data.len() % 64;
    tail_block.extend_from_slice(data.get(full..).unwrap_or(&[]));
    tail_block.push(0x80);
    while tail_block.len() % 64 != 56 {
        tail_block.push(0);
    }
    tail_block.extend_from_slice(&bit_len.to_be_bytes());
    let blocks = data
        .get(..full)
        .unwrap_or(&[])
        .chunks_exact(64)
        .chain(tail_block.chunks_exact(64));
    for block in blocks {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = String::with_capacity(64);
    for word in h {
        for byte in word.to_be_bytes() {
            out.push(char::from_digit(u32::from(byte >> 4), 16).unwrap_or('0'));
            out.push(char::from_digit(u32::from(byte & 15), 16).unwrap_or('0'));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_known_vectors() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let long = "a".repeat(1000);
        assert_eq!(
            sha256_hex(long.as_bytes()),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"
        );
    }

    #[test]
    fn truncation_keeps_head_and_tail_in_code_points() {
        let s: String = "é".repeat(300);
        let out = maybe_truncate(&s, 200, None);
        assert_eq!(py_len(&out), 200);
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
        let hash = sha256_hex(s.as_bytes());
        assert!(out.contains(&format!("/x/obs/terminal_output_{}.txt", &hash[..8])));
        assert_eq!(py_len(&out), 400);
        assert!(out.contains("truncated part starts around line"));
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
