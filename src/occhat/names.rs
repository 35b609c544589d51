//! Session names as path components: [`fs_safe_name`].

use super::FS_SAFE_PLACEHOLDER;
use super::py;

/// Characters Windows rejects in a path component; mapped to `_`.
const RESERVED_CHARS: &[char] = &[':', '*', '?', '"', '<', '>', '|'];

/// Windows reserved device names (compared case-insensitively on the stem).
const DEVICE_NAMES: &[&str] = &[
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

/// Maps a session name to a string that is always usable as ONE path
/// component, as OC Chat's `fs_safe_name` does:
///
/// - `/` and `\` become `--`;
/// - `:*?"<>|` and ASCII control characters become `_`;
/// - leading and trailing white space (Python's `str.isspace`) and trailing
///   dots and spaces are removed: this collapses `.` and `..`;
/// - a Windows device name gains `_` on its stem (`con.log` → `con_.log`);
/// - an empty result becomes [`FS_SAFE_PLACEHOLDER`].
///
/// It is the identity on names that are already legal components.
///
/// **Difference from `persistence.py`'s code (1):** `persistence.py` strips white space,
/// then trailing dots and spaces, once; that can uncover white space the
/// first strip did not see (`"a\u{a0}."` → `"a\u{a0}"`, and a second call
/// gives `"a"`), so `persistence.py` is not idempotent as documented. Here the strip
/// is repeated to a fixed point, so one call gives what any number of calls
/// would: `fs_safe_name(fs_safe_name(x)) == fs_safe_name(x)` for every `x`.
///
/// ```
/// use agentlog::occhat::fs_safe_name;
/// assert_eq!(fs_safe_name("upstage/solar-pro4"), "upstage--solar-pro4");
/// assert_eq!(fs_safe_name("con.log"), "con_.log");
/// assert_eq!(fs_safe_name(" .. "), "unnamed-session");
/// assert_eq!(fs_safe_name("a\u{a0}."), "a");
/// ```
pub fn fs_safe_name(name: &str) -> String {
    let mut text = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        match c {
            '/' | '\\' => text.push_str("--"),
            c if RESERVED_CHARS.contains(&c) || (c as u32) < 32 => text.push('_'),
            c => text.push(c),
        }
    }
    // Strip to a fixed point (difference 1): each round can only shorten.
    let mut cur: &str = &text;
    loop {
        let next = py::strip(cur).trim_end_matches(['.', ' ']);
        if next.len() == cur.len() {
            break;
        }
        cur = next;
    }
    if cur.is_empty() {
        return FS_SAFE_PLACEHOLDER.to_owned();
    }
    let (stem, rest) = match cur.find('.') {
        Some(i) => cur.split_at(i),
        None => (cur, ""),
    };
    let lower = stem.to_lowercase();
    if DEVICE_NAMES.contains(&lower.as_str()) {
        return format!("{stem}_{rest}");
    }
    cur.to_owned()
}

/// What `persistence.py`'s `fs_safe_name` returns: the same mapping with a single
/// strip pass. Kept to document and test difference 1; not used for paths.
#[cfg(test)]
pub(crate) fn persistence_fs_safe_name(name: &str) -> String {
    let mut text = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        match c {
            '/' | '\\' => text.push_str("--"),
            c if RESERVED_CHARS.contains(&c) || (c as u32) < 32 => text.push('_'),
            c => text.push(c),
        }
    }
    let cur = py::strip(&text).trim_end_matches(['.', ' ']);
    if cur.is_empty() {
        return FS_SAFE_PLACEHOLDER.to_owned();
    }
    let (stem, rest) = match cur.find('.') {
        Some(i) => cur.split_at(i),
        None => (cur, ""),
    };
    if DEVICE_NAMES.contains(&stem.to_lowercase().as_str()) {
        return format!("{stem}_{rest}");
    }
    cur.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping() {
        for (input, want) in [
            ("my-session", "my-session"),
            ("a/b\\c", "a--b--c"),
            ("a:b*c?d\"e<f>g|h", "a_b_c_d_e_f_g_h"),
            ("tab\there", "tab_here"),
            ("  x  ", "x"),
            ("x. . .", "x"),
            (".", "unnamed-session"),
            ("..", "unnamed-session"),
            ("", "unnamed-session"),
            ("CON", "CON_"),
            ("lpt9.txt.bak", "lpt9_.txt.bak"),
            ("console", "console"),
            ("a\u{a0}.", "a"),
            ("a.\u{3000}.", "a"),
        ] {
            assert_eq!(fs_safe_name(input), want, "{input:?}");
            assert_eq!(fs_safe_name(want), want, "idempotent on {want:?}");
        }
    }

    #[test]
    fn persistence_py_is_not_idempotent_here() {
        assert_eq!(persistence_fs_safe_name("a\u{a0}."), "a\u{a0}");
        assert_eq!(persistence_fs_safe_name("a\u{a0}"), "a");
    }
}
