//! The body of a `response` entry: the response's id, status and model, its
//! usage and latency from the SDK's metrics in the state file, and its
//! `request_hash`; as an owned body, or its members written straight in
//! canonical form.

use foldhash::{HashMap, HashMapExt};

use crate::json::{Map, OwnedValue, Value};

use super::{obj, s};

/// The SDK's metrics of each response id, in the state file's parse: its
/// token usage record and its latency.
pub(super) struct ResponseMetrics<'d> {
    /// Each response id's token usage record.
    pub(super) usage: HashMap<&'d str, Value<'d>>,
    /// Each response id's latency, in seconds.
    pub(super) latency: HashMap<&'d str, f64>,
}

pub(super) fn metrics<'d>(state: Option<Value<'d>>) -> ResponseMetrics<'d> {
    let mut m = ResponseMetrics {
        usage: HashMap::new(),
        latency: HashMap::new(),
    };
    let Some(all) = state.and_then(|s| s.get("stats")?.get("usage_to_metrics")?.as_object()) else {
        return m;
    };
    for (_, usage) in all.iter().map(|x| (x.key, x.value)) {
        for u in usage
            .get("token_usages")
            .and_then(|v| v.as_array())
            .into_iter()
            .flat_map(|a| a.iter())
        {
            if let Some(id) = u.get("response_id").and_then(|v| v.as_str()) {
                m.usage.insert(id, u);
            }
        }
        for l in usage
            .get("response_latencies")
            .and_then(|v| v.as_array())
            .into_iter()
            .flat_map(|a| a.iter())
        {
            if let (Some(id), Some(lat)) = (
                l.get("response_id").and_then(|v| v.as_str()),
                l.get("latency").and_then(|v| v.as_f64()),
            ) {
                m.latency.insert(id, lat);
            }
        }
    }
    m
}

/// A token usage record of the SDK in the Responses shape.
pub(super) fn usage_of(u: Value<'_>) -> OwnedValue {
    let n = |k: &str| u.get(k).and_then(|v| v.as_i64()).unwrap_or(0);
    let (input, output) = (n("prompt_tokens"), n("completion_tokens"));
    OwnedValue::Object(obj(vec![
        ("input_tokens", OwnedValue::int(input)),
        (
            "input_tokens_details",
            OwnedValue::Object(obj(vec![(
                "cached_tokens",
                OwnedValue::int(n("cache_read_tokens")),
            )])),
        ),
        ("output_tokens", OwnedValue::int(output)),
        (
            "output_tokens_details",
            OwnedValue::Object(obj(vec![(
                "reasoning_tokens",
                OwnedValue::int(n("reasoning_tokens")),
            )])),
        ),
        // Wrapping, as a release build always added (no panic on a
        // record whose counts overflow).
        ("total_tokens", OwnedValue::int(input.wrapping_add(output))),
    ]))
}

/// The body of a `response` entry: `response_id`, `status`, `model` (when
/// known), `usage` (from the SDK's usage record `usage`), `latency_ms`
/// (from `latency`, in seconds) and `request_hash`.
pub(super) fn response_body(
    r: &str,
    model: Option<&str>,
    usage: Option<Value<'_>>,
    latency: Option<f64>,
    request_hash: &str,
) -> Map {
    let mut body = obj(vec![("response_id", s(r)), ("status", s("completed"))]);
    if let Some(m) = model {
        body.insert("model", s(m));
    }
    if let Some(u) = usage {
        body.insert("usage", usage_of(u));
    }
    if let Some(l) = latency {
        body.insert("latency_ms", OwnedValue::int((l * 1000.0).round() as i64));
    }
    body.insert("request_hash", s(request_hash));
    body
}

/// [`response_body`]'s members written straight in canonical form into
/// `out`: each member's name and where its value's bytes are. `None` when
/// some integer is one a binary64 does not hold exactly (or a sum
/// overflows): the appender's normalisation would rewrite it, so the caller
/// goes through the owned body.
pub(super) fn response_members(
    r: &str,
    model: Option<&str>,
    usage: Option<Value<'_>>,
    latency: Option<f64>,
    request_hash: &str,
    out: &mut Vec<u8>,
) -> Option<Vec<(&'static str, std::ops::Range<usize>)>> {
    use crate::json::write::write_str;
    use std::io::Write as _;
    const EXACT: i64 = 1 << 53;
    let int = |out: &mut Vec<u8>, n: i64| -> Option<()> {
        if !(-EXACT..=EXACT).contains(&n) {
            return None;
        }
        write!(out, "{n}").ok()
    };
    // Each member's value ends where the next begins.
    let base = out.len();
    let mut members: Vec<(&'static str, std::ops::Range<usize>)> = Vec::with_capacity(6);
    let mut mark = |k: &'static str, end: usize| {
        let start = members.last().map_or(base, |(_, at)| at.end);
        members.push((k, start..end));
    };
    write_str(out, r, false);
    mark("response_id", out.len());
    out.extend_from_slice(b"\"completed\"");
    mark("status", out.len());
    if let Some(m) = model {
        write_str(out, m, false);
        mark("model", out.len());
    }
    if let Some(u) = usage {
        // As `usage_of` builds it, its members in UTF-16 order.
        let n = |k: &str| u.get(k).and_then(|v| v.as_i64()).unwrap_or(0);
        let (input, output) = (n("prompt_tokens"), n("completion_tokens"));
        out.extend_from_slice(b"{\"input_tokens\":");
        int(out, input)?;
        out.extend_from_slice(b",\"input_tokens_details\":{\"cached_tokens\":");
        int(out, n("cache_read_tokens"))?;
        out.extend_from_slice(b"},\"output_tokens\":");
        int(out, output)?;
        out.extend_from_slice(b",\"output_tokens_details\":{\"reasoning_tokens\":");
        int(out, n("reasoning_tokens"))?;
        out.extend_from_slice(b"},\"total_tokens\":");
        int(out, input.checked_add(output)?)?;
        out.push(b'}');
        mark("usage", out.len());
    }
    if let Some(l) = latency {
        int(out, (l * 1000.0).round() as i64)?;
        mark("latency_ms", out.len());
    }
    write_str(out, request_hash, false);
    mark("request_hash", out.len());
    Some(members)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asf::canon::to_canonical;
    use crate::json::Parser;

    /// A `response`'s members written straight are the bytes its owned
    /// body canonicalises to, whatever the usage record holds; where an
    /// integer would need the appender's normalisation, none is written.
    #[test]
    fn response_members_written_straight_equal_the_owned_body() {
        let usages = [
            Some(
                r#"{"prompt_tokens":1200,"completion_tokens":34,"cache_read_tokens":1000,"reasoning_tokens":12,"response_id":"r"}"#,
            ),
            Some(r#"{"prompt_tokens":0}"#),
            Some(r#"{"prompt_tokens":-3,"completion_tokens":"7","reasoning_tokens":2.0}"#),
            Some(r#"{"prompt_tokens":9007199254740992,"completion_tokens":0}"#),
            Some(r#"{"prompt_tokens":9007199254740993,"completion_tokens":0}"#),
            Some(r#"{"prompt_tokens":9007199254740992,"completion_tokens":1}"#),
            Some(r#"{"prompt_tokens":9223372036854775807,"completion_tokens":1}"#),
            Some(r#"[]"#),
            None,
        ];
        let latencies = [
            None,
            Some(1.2345),
            Some(0.0),
            Some(-0.0004),
            Some(f64::NAN),
            Some(1e300),
        ];
        let mut written = 0;
        for usage in usages {
            let mut parser = Parser::new();
            let doc = usage.map(|u| parser.parse(u.as_bytes()).expect("json"));
            let value = doc.as_ref().map(|d| d.root());
            for latency in latencies {
                for model in [None, Some("gpt \"x\"\n")] {
                    let mut out = Vec::new();
                    let direct =
                        response_members("r-1", model, value, latency, "sha256:00", &mut out);
                    let body = response_body("r-1", model, value, latency, "sha256:00");
                    let owned = to_canonical(&OwnedValue::Object(body));
                    let Some(members) = direct else {
                        // Only where a number is out of a double's exact
                        // range.
                        assert!(usage.is_some() || latency == Some(1e300));
                        continue;
                    };
                    let mut sorted: Vec<(&str, &[u8])> = members
                        .iter()
                        .map(|(k, at)| (*k, &out[at.clone()]))
                        .collect();
                    sorted.sort_by(|a, b| crate::asf::canon::cmp_utf16(a.0, b.0));
                    let mut joined = b"{".to_vec();
                    for (i, (k, v)) in sorted.iter().enumerate() {
                        if i > 0 {
                            joined.push(b',');
                        }
                        crate::json::write::write_str(&mut joined, k, false);
                        joined.push(b':');
                        joined.extend_from_slice(v);
                    }
                    joined.push(b'}');
                    assert_eq!(
                        String::from_utf8(joined).unwrap(),
                        String::from_utf8(owned.expect("canonical")).unwrap(),
                        "{usage:?} {latency:?} {model:?}"
                    );
                    written += 1;
                }
            }
        }
        assert!(written > 40, "{written}");
    }
}
