//! The fallback parser: what simd-json refuses but Python's `json` reads.
//!
//! It runs only after simd-json has refused a document, builds the same tape
//! simd-json builds (so every consumer is unaware which parser ran) and
//! fills the span table as it goes. It is iterative (an explicit stack), so
//! hostile nesting cannot overflow the call stack, and it checks every index.
//!
//! Beyond RFC 8259 it accepts exactly what `json.loads` accepts:
//! `NaN`, `Infinity` and `-Infinity` (read as the `f64` values), integers of
//! any length (read as the nearest `f64`; the raw span keeps every digit),
//! floats that overflow (infinity, as Python's `float()`), and lone UTF-16
//! surrogate escapes such as `"\ud800"`, which Python keeps in its `str` but
//! which no Rust `str` can hold: they decode to U+FFFD, and the raw span
//! keeps the escape, so writing the value back is exact.

use bumpalo::Bump;
use simd_json::{Node, StaticNode};

use super::MAX_DEPTH;
use super::doc::Span;
use super::error::{JsonError, JsonErrorKind};

fn err(kind: JsonErrorKind, off: usize, detail: &'static str) -> JsonError {
    JsonError::new(kind, Some(off), detail)
}

fn syntax(off: usize, detail: &'static str) -> JsonError {
    err(JsonErrorKind::Syntax, off, detail)
}

#[inline]
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(c) = b.get(i) {
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// An open container on the explicit stack (kept by the [`Parser`] from one
/// document to the next, so the fallback allocates nothing in steady state
/// either).
///
/// [`Parser`]: super::Parser
#[derive(Debug)]
pub(crate) struct Open {
    node: usize,
    len: usize,
    object: bool,
}

/// Parses `input` into `nodes` and `spans` (both cleared first), with
/// `stack` (cleared first) for the open containers.
pub(crate) fn parse<'p>(
    input: &'p [u8],
    arena: &'p Bump,
    nodes: &mut Vec<Node<'p>>,
    spans: &mut Vec<Span>,
    stack: &mut Vec<Open>,
) -> Result<(), JsonError> {
    nodes.clear();
    spans.clear();
    stack.clear();
    let text = match std::str::from_utf8(input) {
        Ok(t) => t,
        Err(e) => return Err(err(JsonErrorKind::InvalidUtf8, e.valid_up_to(), "")),
    };
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    // State machine: expecting a value (after `[`, `,` in arrays, `:`), or a
    // key (after `{` / `,` in objects).
    'value: loop {
        // Parse one value at i. `empty` is set when it opens a container
        // that closes at once, which then has no element to count.
        let mut empty = false;
        let c = *b
            .get(i)
            .ok_or_else(|| syntax(i, "unexpected end of input"))?;
        match c {
            b'{' | b'[' => {
                if stack.len() >= MAX_DEPTH {
                    return Err(err(JsonErrorKind::TooDeep, i, ""));
                }
                let object = c == b'{';
                let node = nodes.len();
                nodes.push(if object {
                    Node::Object { len: 0, count: 0 }
                } else {
                    Node::Array { len: 0, count: 0 }
                });
                spans.push(Span {
                    start: i as u32,
                    end: 0,
                });
                stack.push(Open {
                    node,
                    len: 0,
                    object,
                });
                i = skip_ws(b, i + 1);
                let close = if object { b'}' } else { b']' };
                if b.get(i) == Some(&close) {
                    empty = true;
                } else {
                    if object {
                        i = parse_key(text, arena, i, nodes, spans)?;
                    }
                    continue 'value;
                }
            }
            b'"' => {
                let (s, end) = parse_string(text, arena, i)?;
                nodes.push(Node::String(s));
                spans.push(Span {
                    start: i as u32,
                    end: end as u32,
                });
                i = end;
            }
            _ => {
                let (node, end) = parse_scalar(text, i)?;
                nodes.push(node);
                spans.push(Span {
                    start: i as u32,
                    end: end as u32,
                });
                i = end;
            }
        }
        // After a value (or an empty container's open): close containers or
        // move to the next element.
        loop {
            let Some(top) = stack.last_mut() else {
                // Top-level value done: only white space may follow.
                let j = skip_ws(b, i);
                if j != b.len() {
                    return Err(syntax(j, "trailing data"));
                }
                return Ok(());
            };
            if !empty {
                top.len += 1;
            }
            empty = false;
            i = skip_ws(b, i);
            let close = if top.object { b'}' } else { b']' };
            match b.get(i) {
                Some(&x) if x == close => {
                    let open = stack.pop().unwrap_or(Open {
                        node: 0,
                        len: 0,
                        object: false,
                    });
                    let count = nodes.len() - open.node - 1;
                    if let Some(n) = nodes.get_mut(open.node) {
                        *n = if open.object {
                            Node::Object {
                                len: open.len,
                                count,
                            }
                        } else {
                            Node::Array {
                                len: open.len,
                                count,
                            }
                        };
                    }
                    if let Some(s) = spans.get_mut(open.node) {
                        s.end = (i + 1) as u32;
                    }
                    i += 1;
                }
                Some(b',') => {
                    i = skip_ws(b, i + 1);
                    if top.object {
                        i = parse_key(text, arena, i, nodes, spans)?;
                    }
                    continue 'value;
                }
                Some(_) => return Err(syntax(i, "expected ',' or a closing bracket")),
                None => return Err(syntax(i, "unexpected end of input")),
            }
        }
    }
}

/// Parses `"key"` and the `:` after it; returns the offset of the value.
fn parse_key<'p>(
    text: &'p str,
    arena: &'p Bump,
    i: usize,
    nodes: &mut Vec<Node<'p>>,
    spans: &mut Vec<Span>,
) -> Result<usize, JsonError> {
    let b = text.as_bytes();
    if b.get(i) != Some(&b'"') {
        return Err(syntax(i, "expected a member name"));
    }
    let (s, end) = parse_string(text, arena, i)?;
    nodes.push(Node::String(s));
    spans.push(Span {
        start: i as u32,
        end: end as u32,
    });
    let j = skip_ws(b, end);
    if b.get(j) != Some(&b':') {
        return Err(syntax(j, "expected ':'"));
    }
    Ok(skip_ws(b, j + 1))
}

fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let mut v = 0u32;
    for k in 0..4 {
        let d = (*b.get(i + k)? as char).to_digit(16)?;
        v = v * 16 + d;
    }
    Some(v)
}

/// Parses the string starting at the quote at `start`; returns its text and
/// the offset after the closing quote.
fn parse_string<'p>(
    text: &'p str,
    arena: &'p Bump,
    start: usize,
) -> Result<(&'p str, usize), JsonError> {
    let b = text.as_bytes();
    let mut i = start + 1;
    // Fast path: no escapes.
    loop {
        match b.get(i) {
            None => return Err(syntax(start, "unterminated string")),
            Some(b'"') => {
                let s = text.get(start + 1..i).unwrap_or("");
                return Ok((s, i + 1));
            }
            Some(b'\\') => break,
            Some(&c) if c < 0x20 => return Err(syntax(i, "control character in string")),
            Some(_) => i += 1,
        }
    }
    let mut out = bumpalo::collections::String::new_in(arena);
    out.push_str(text.get(start + 1..i).unwrap_or(""));
    loop {
        match b.get(i) {
            None => return Err(syntax(start, "unterminated string")),
            Some(b'"') => return Ok((out.into_bump_str(), i + 1)),
            Some(b'\\') => {
                let e = *b
                    .get(i + 1)
                    .ok_or_else(|| syntax(i, "unterminated escape"))?;
                i += 2;
                match e {
                    b'"' => out.push('"'),
                    b'\\' => out.push('\\'),
                    b'/' => out.push('/'),
                    b'b' => out.push('\u{8}'),
                    b'f' => out.push('\u{c}'),
                    b'n' => out.push('\n'),
                    b'r' => out.push('\r'),
                    b't' => out.push('\t'),
                    b'u' => {
                        let hi = hex4(b, i).ok_or_else(|| syntax(i - 2, "bad \\u escape"))?;
                        i += 4;
                        if (0xD800..0xDC00).contains(&hi) {
                            // A high surrogate: combine with a following low one.
                            if b.get(i) == Some(&b'\\')
                                && b.get(i + 1) == Some(&b'u')
                                && let Some(lo) = hex4(b, i + 2)
                                && (0xDC00..0xE000).contains(&lo)
                            {
                                let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                                out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                                i += 6;
                            } else {
                                out.push('\u{FFFD}');
                            }
                        } else {
                            out.push(char::from_u32(hi).unwrap_or('\u{FFFD}'));
                        }
                    }
                    _ => return Err(syntax(i - 2, "bad escape")),
                }
            }
            Some(&c) if c < 0x20 => return Err(syntax(i, "control character in string")),
            Some(_) => {
                // Copy a run of plain bytes (UTF-8 was validated up front,
                // and runs end at ASCII bytes, so they are char boundaries).
                let run_start = i;
                while let Some(&c) = b.get(i) {
                    if c == b'"' || c == b'\\' || c < 0x20 {
                        break;
                    }
                    i += 1;
                }
                out.push_str(text.get(run_start..i).unwrap_or(""));
            }
        }
    }
}

/// Parses a literal or number at `i`.
fn parse_scalar(text: &str, i: usize) -> Result<(Node<'static>, usize), JsonError> {
    let b = text.as_bytes();
    let rest = b.get(i..).unwrap_or(&[]);
    for (lit, node) in [
        (&b"true"[..], StaticNode::Bool(true)),
        (b"false", StaticNode::Bool(false)),
        (b"null", StaticNode::Null),
        (b"NaN", StaticNode::F64(f64::NAN)),
        (b"Infinity", StaticNode::F64(f64::INFINITY)),
        (b"-Infinity", StaticNode::F64(f64::NEG_INFINITY)),
    ] {
        if rest.starts_with(lit) {
            return Ok((Node::Static(node), i + lit.len()));
        }
    }
    // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?
    let mut j = i;
    if b.get(j) == Some(&b'-') {
        j += 1;
    }
    match b.get(j) {
        Some(b'0') => j += 1,
        Some(b'1'..=b'9') => {
            while matches!(b.get(j), Some(b'0'..=b'9')) {
                j += 1;
            }
        }
        _ => return Err(syntax(i, "expected a value")),
    }
    let mut float = false;
    if b.get(j) == Some(&b'.') && matches!(b.get(j + 1), Some(b'0'..=b'9')) {
        float = true;
        j += 1;
        while matches!(b.get(j), Some(b'0'..=b'9')) {
            j += 1;
        }
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(b.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        if matches!(b.get(k), Some(b'0'..=b'9')) {
            float = true;
            j = k;
            while matches!(b.get(j), Some(b'0'..=b'9')) {
                j += 1;
            }
        }
    }
    let s = text.get(i..j).unwrap_or("0");
    let node = if !float {
        if let Ok(v) = s.parse::<u64>() {
            StaticNode::U64(v)
        } else if let Ok(v) = s.parse::<i64>() {
            StaticNode::I64(v)
        } else {
            StaticNode::F64(s.parse::<f64>().unwrap_or(f64::NAN))
        }
    } else {
        StaticNode::F64(s.parse::<f64>().unwrap_or(f64::NAN))
    };
    Ok((Node::Static(node), j))
}
