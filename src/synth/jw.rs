//! A minimal streaming JSON writer for the two ways the SDK writes files:
//! pydantic's compact dump with `kind` last (1.7.4+), and Python's
//! `json.dumps` with `", "`/`": "` separators, `\uXXXX` escapes and `kind`
//! first (1.0–1.6). Strings go through [`write_str`], so every generated
//! file is valid JSON whatever the text holds.

use crate::json::write::{python_float_repr, write_str};

/// How a document is spelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spelling {
    /// `", "` and `": "` (Python `json.dumps`) instead of `,` and `:`.
    pub spaced: bool,
    /// Non-ASCII as `\uXXXX`.
    pub ascii: bool,
    /// `"kind"` as the first member (1.0) instead of the last (1.7.4+).
    pub kind_first: bool,
}

impl Spelling {
    /// pydantic `model_dump_json` (SDK 1.7.4 and later).
    pub const PYDANTIC: Spelling = Spelling {
        spaced: false,
        ascii: false,
        kind_first: false,
    };
    /// `json.dumps(model_dump())` (SDK 1.0 – 1.6).
    pub const LEGACY: Spelling = Spelling {
        spaced: true,
        ascii: true,
        kind_first: true,
    };
    /// `json.dumps(obj)` with defaults: what tool-call arguments look like.
    pub const PY_DUMPS: Spelling = Spelling {
        spaced: true,
        ascii: true,
        kind_first: true,
    };
}

const MAX_DEPTH: usize = 16;

/// Writes into a buffer it owns for the time of one document; the caller
/// takes the buffer back with [`Jw::into_inner`] and reuses it.
pub(crate) struct Jw {
    pub out: Vec<u8>,
    sp: Spelling,
    first: bool,
    /// `kind` values still to be written when their object closes.
    pending: [Option<&'static str>; MAX_DEPTH],
    depth: usize,
}

impl Jw {
    /// Starts a document in `out` (cleared).
    pub(crate) fn new(mut out: Vec<u8>, sp: Spelling) -> Self {
        out.clear();
        Jw {
            out,
            sp,
            first: true,
            pending: [None; MAX_DEPTH],
            depth: 0,
        }
    }

    /// The buffer, for reuse.
    pub(crate) fn into_inner(self) -> Vec<u8> {
        self.out
    }

    fn comma(&mut self) {
        if !self.first {
            if self.sp.spaced {
                self.out.extend_from_slice(b", ");
            } else {
                self.out.push(b',');
            }
        }
        self.first = false;
    }

    /// Starts an object; `kind` is written first or last by the spelling.
    pub(crate) fn begin(&mut self, kind: Option<&'static str>) {
        self.out.push(b'{');
        self.first = true;
        let later = match kind {
            Some(k) if self.sp.kind_first => {
                self.key("kind");
                self.str(k);
                None
            }
            other => other,
        };
        if let Some(slot) = self.pending.get_mut(self.depth) {
            *slot = later;
        }
        self.depth += 1;
    }

    /// Ends the innermost object.
    pub(crate) fn end(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        if let Some(Some(k)) = self.pending.get_mut(self.depth).map(|s| s.take()) {
            self.key("kind");
            self.str(k);
        }
        self.out.push(b'}');
        self.first = false;
    }

    pub(crate) fn begin_arr(&mut self) {
        self.out.push(b'[');
        self.first = true;
    }

    pub(crate) fn end_arr(&mut self) {
        self.out.push(b']');
        self.first = false;
    }

    /// Before each array element.
    pub(crate) fn elem(&mut self) {
        self.comma();
    }

    pub(crate) fn key(&mut self, k: &str) {
        self.comma();
        write_str(&mut self.out, k, self.sp.ascii);
        if self.sp.spaced {
            self.out.extend_from_slice(b": ");
        } else {
            self.out.push(b':');
        }
    }

    pub(crate) fn str(&mut self, v: &str) {
        write_str(&mut self.out, v, self.sp.ascii);
    }

    pub(crate) fn raw(&mut self, v: &[u8]) {
        self.out.extend_from_slice(v);
    }

    pub(crate) fn int(&mut self, v: i64) {
        let mut b = itoa_buf();
        self.out.extend_from_slice(fmt_int(&mut b, v));
    }

    pub(crate) fn bool(&mut self, v: bool) {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
    }

    pub(crate) fn null(&mut self) {
        self.out.extend_from_slice(b"null");
    }

    /// A float as the spelling's producer writes it: Python's `repr` for
    /// `json.dumps`, ryu's format for pydantic (see [`pydantic_float`]).
    pub(crate) fn float(&mut self, v: f64) {
        let s = if self.sp.spaced {
            python_float_repr(v)
        } else {
            pydantic_float(v)
        };
        self.out.extend_from_slice(s.as_bytes());
    }

    pub(crate) fn kv_str(&mut self, k: &str, v: &str) {
        self.key(k);
        self.str(v);
    }

    pub(crate) fn kv_int(&mut self, k: &str, v: i64) {
        self.key(k);
        self.int(v);
    }

    pub(crate) fn kv_bool(&mut self, k: &str, v: bool) {
        self.key(k);
        self.bool(v);
    }

    pub(crate) fn kv_null(&mut self, k: &str) {
        self.key(k);
        self.null();
    }

    pub(crate) fn kv_float(&mut self, k: &str, v: f64) {
        self.key(k);
        self.float(v);
    }

    pub(crate) fn kv_raw(&mut self, k: &str, v: &[u8]) {
        self.key(k);
        self.raw(v);
    }

    /// `"k": []`
    pub(crate) fn kv_empty_arr(&mut self, k: &str) {
        self.key(k);
        self.out.extend_from_slice(b"[]");
        self.first = false;
    }

    /// `"k": {}`
    pub(crate) fn kv_empty_obj(&mut self, k: &str) {
        self.key(k);
        self.out.extend_from_slice(b"{}");
        self.first = false;
    }

    /// `"k": ["a", "b"]`
    pub(crate) fn kv_str_arr(&mut self, k: &str, items: &[&str]) {
        self.key(k);
        self.begin_arr();
        for it in items {
            self.elem();
            self.str(it);
        }
        self.end_arr();
    }

    /// A `TextContent` block: `{"cache_prompt": false, "type": "text", "text": ...}`.
    pub(crate) fn text_content(&mut self, text: &str) {
        self.begin(None);
        self.kv_bool("cache_prompt", false);
        self.kv_str("type", "text");
        self.kv_str("text", text);
        self.end();
    }

    /// `"k": [TextContent]` for one text.
    pub(crate) fn kv_text_list(&mut self, k: &str, text: &str) {
        self.key(k);
        self.begin_arr();
        self.elem();
        self.text_content(text);
        self.end_arr();
    }
}

/// A float as pydantic-core writes it (it uses the `ryu` crate's format):
/// the shortest round-trip digits, positional for decimal exponents from
/// -5 to 16 (`0.000015`, `8.0`), scientific otherwise without padding or
/// `+` (`3e-6`, `1e16`). Python's `repr` differs only outside that range
/// (`1.5e-05`). Non-finite values are written as `null`, as pydantic does.
pub(crate) fn pydantic_float(v: f64) -> String {
    if !v.is_finite() {
        return "null".into();
    }
    // `{:e}` gives the shortest round-trip digits as d.ddde<exp>.
    let sci = format!("{v:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let len = digits.len() as i32;
    // value = digits * 10^e with e = exp - (len - 1); kk = len + e = exp + 1.
    let kk = exp + 1;
    let e = kk - len;
    let mut out = String::with_capacity(24);
    if neg {
        out.push('-');
    }
    if e >= 0 && kk <= 16 {
        out.push_str(&digits);
        for _ in 0..e {
            out.push('0');
        }
        out.push_str(".0");
    } else if 0 < kk && kk <= 16 {
        let (a, b) = digits.split_at(kk as usize);
        out.push_str(a);
        out.push('.');
        out.push_str(b);
    } else if -5 < kk && kk <= 0 {
        out.push_str("0.");
        for _ in 0..(-kk) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let (a, b) = digits.split_at(1);
        out.push_str(a);
        if !b.is_empty() {
            out.push('.');
            out.push_str(b);
        }
        out.push('e');
        out.push_str(&(kk - 1).to_string());
    }
    out
}

type ItoaBuf = [u8; 24];

fn itoa_buf() -> ItoaBuf {
    [0u8; 24]
}

fn fmt_int(buf: &mut ItoaBuf, v: i64) -> &[u8] {
    let neg = v < 0;
    let mut n = v.unsigned_abs();
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if neg {
        i -= 1;
        buf[i] = b'-';
    }
    &buf[i..]
}

/// Appends the decimal digits of `v`, zero-padded to `width`.
pub(crate) fn push_padded(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut b = itoa_buf();
    let digits = fmt_int(&mut b, i64::try_from(v).unwrap_or(i64::MAX));
    for _ in digits.len()..width {
        out.push(b'0');
    }
    out.extend_from_slice(digits);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(sp: Spelling) -> String {
        let mut w = Jw::new(Vec::new(), sp);
        w.begin(Some("ActionEvent"));
        w.kv_str("id", "x\"é");
        w.key("action");
        w.begin(Some("TerminalAction"));
        w.kv_str("command", "ls");
        w.kv_int("n", -12);
        w.end();
        w.kv_empty_arr("thought");
        w.kv_float("f", 0.1);
        w.end();
        String::from_utf8(w.into_inner()).unwrap_or_default()
    }

    #[test]
    fn pydantic_floats_match_the_corpus() {
        // Values and spellings seen in 1.58.2 base_state.json files.
        assert_eq!(pydantic_float(3e-6), "3e-6");
        assert_eq!(pydantic_float(1.5e-5), "0.000015");
        assert_eq!(pydantic_float(8.0), "8.0");
        assert_eq!(pydantic_float(300.0), "300.0");
        assert_eq!(pydantic_float(0.026208000000000002), "0.026208000000000002");
        assert_eq!(pydantic_float(1796095229.7760725), "1796095229.7760725");
        assert_eq!(
            pydantic_float(0.0073778629302978516),
            "0.0073778629302978516"
        );
        assert_eq!(pydantic_float(-2.5e20), "-2.5e20");
        assert_eq!(pydantic_float(1e16), "1e16");
        assert_eq!(pydantic_float(0.0), "0.0");
    }

    #[test]
    fn compact_kind_last() {
        assert_eq!(
            doc(Spelling::PYDANTIC),
            r#"{"id":"x\"é","action":{"command":"ls","n":-12,"kind":"TerminalAction"},"thought":[],"f":0.1,"kind":"ActionEvent"}"#
        );
    }

    #[test]
    fn legacy_kind_first() {
        assert_eq!(
            doc(Spelling::LEGACY),
            r#"{"kind": "ActionEvent", "id": "x\"\u00e9", "action": {"kind": "TerminalAction", "command": "ls", "n": -12}, "thought": [], "f": 0.1}"#
        );
    }

    #[test]
    fn padded() {
        let mut v = Vec::new();
        push_padded(&mut v, 42, 5);
        push_padded(&mut v, 123_456, 5);
        assert_eq!(v, b"00042123456");
    }
}
