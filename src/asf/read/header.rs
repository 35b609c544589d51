//! The header line, and the RFC 3339 spelling its times and the entries'
//! follow.

use super::*;

pub(super) fn read_header(
    parser: &mut Parser,
    line: &[u8],
    problems: &mut Vec<Problem>,
) -> Result<Header, HeaderError> {
    let doc = parser
        .parse(line)
        .map_err(|e| HeaderError::HeaderNotJson(e.to_string()))?;
    let Some(obj) = doc.root().as_object() else {
        return Err(HeaderError::HeaderNotJson("not an object".into()));
    };
    if obj.get("type").and_then(|v| v.as_str()) != Some("session") {
        return Err(HeaderError::NotSession);
    }
    let format = obj.get("format").and_then(|v| v.as_str()).unwrap_or("");
    let minor = format
        .strip_prefix("agentsession/0.")
        .and_then(|m| (!m.starts_with('0') || m == "0").then_some(m))
        .and_then(|m| m.parse::<u32>().ok())
        .filter(|m| (OLDEST_MINOR..=NEWEST_MINOR).contains(m))
        .ok_or_else(|| HeaderError::UnsupportedFormat(format.to_owned()))?;
    let mut bad = |m: String| {
        problems.push(Problem {
            line: 1,
            kind: ProblemKind::Header(m),
        })
    };
    let mut out = Vec::new();
    if let Err(e) = canon::canonical_value(doc.root(), &mut out) {
        bad(format!("the header is not I-JSON: {e}"));
    }
    let string = |name: &str| obj.get(name).and_then(|v| v.as_str()).map(str::to_owned);
    let id = string("id").unwrap_or_default();
    if id.is_empty() {
        bad("header: `id` must be a non-empty string".into());
    }
    match string("created_at") {
        Some(c) if is_rfc3339(&c) => {}
        _ => bad("header: `created_at` must be an RFC 3339 date-time".into()),
    }
    match string("payload") {
        Some(p) if p.starts_with("openresponses/") => {}
        _ => bad("header: `payload` must name the payload profile (`openresponses/<date>`)".into()),
    }
    let opt_string = |name: &str, bad: &mut dyn FnMut(String)| match obj.get(name) {
        None => None,
        Some(v) => match v.as_str() {
            Some(s) => Some(s.to_owned()),
            None => {
                bad(format!("header: `{name}` must be a string"));
                None
            }
        },
    };
    let base = opt_string("base", &mut bad);
    if let Some(b) = &base
        && !hash::is_hash(b)
    {
        bad(format!("header: `base` {b:?} is not a sha256 hash"));
    }
    let parent_session = opt_string("parent_session", &mut bad);
    let spawned_by = opt_string("spawned_by", &mut bad);
    let _ = opt_string("cwd", &mut bad);
    if let Some(m) = opt_string("media", &mut bad)
        && m != "inline"
        && m != "sidecar"
    {
        bad(format!(
            "header: `media` {m:?} is neither \"inline\" nor \"sidecar\""
        ));
    }
    let mut records = Vec::new();
    if let Some(r) = obj.get("records") {
        match r.as_array() {
            Some(a) => {
                for v in a.iter() {
                    match v.as_str() {
                        Some(s) => records.push(s.to_owned()),
                        None => bad("header: `records` must hold strings".into()),
                    }
                }
            }
            None => bad("header: `records` must be an array".into()),
        }
    }
    if let Some(h) = obj.get("harness")
        && h.json_type() != JsonType::Object
    {
        bad("header: `harness` must be an object".into());
    }
    let redacted = match obj.get("redacted") {
        None => false,
        Some(v) => match v.as_bool() {
            Some(b) => b,
            None => {
                bad("header: `redacted` must be a boolean".into());
                false
            }
        },
    };
    Ok(Header {
        format: format.to_owned(),
        minor,
        id,
        base,
        parent_session,
        spawned_by,
        records,
        redacted,
    })
}

/// RFC 3339 `date-time` (any offset, any fraction).
pub(crate) fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 20 {
        return false;
    }
    let d = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if !(d(0..4)
        && b[4] == b'-'
        && d(5..7)
        && b[7] == b'-'
        && d(8..10)
        && matches!(b[10], b'T' | b't' | b' ')
        && d(11..13)
        && b[13] == b':'
        && d(14..16)
        && b[16] == b':'
        && d(17..19))
    {
        return false;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match &b[i..] {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}
