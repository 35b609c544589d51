//! The rows of one OC Chat session: its `conversations` row, its messages
//! (as stored), the assistant's tool calls with the tool messages that
//! answer them, and one `llm_calls` row with the session's token totals
//! (OC Chat records no calls, no cost), the totals `stats --json` counts.

use std::collections::HashMap;

use crate::json::{OwnedValue, Style};
use crate::occhat::{ChatSession, SessionEntry};

use super::DatasetError;
use super::dataset::Dataset;
use super::schema::Table;
use crate::chars::char_count;

/// An assistant's tool call.
struct OcCall {
    position: u64,
    name: String,
    id: Option<String>,
    arguments: Option<String>,
}

/// A JSON value as text: a string's own text, else compact JSON (how
/// `agentlog ls` and `stats` name a session and a model).
pub fn text_of(v: &OwnedValue) -> String {
    match v.as_str() {
        Some(s) => s.to_owned(),
        None => v.to_string_styled(Style::COMPACT),
    }
}

fn compact(v: &OwnedValue) -> String {
    v.to_string_styled(Style::COMPACT)
}

/// A `YYYYMMDD_HHMMSS` creation stamp (local time, naive) in microseconds.
fn stamp_micros(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 15 || b[8] != b'_' || !s.is_char_boundary(8) {
        return None;
    }
    let n = |r: std::ops::Range<usize>| s.get(r)?.parse::<i16>().ok();
    let dt = jiff::civil::DateTime::new(
        n(0..4)?,
        i8::try_from(n(4..6)?).ok()?,
        i8::try_from(n(6..8)?).ok()?,
        i8::try_from(n(9..11)?).ok()?,
        i8::try_from(n(11..13)?).ok()?,
        i8::try_from(n(13..15)?).ok()?,
        0,
    )
    .ok()?;
    let t = jiff::tz::Offset::UTC.to_timestamp(dt).ok()?;
    Some(t.as_microsecond())
}

/// The text parts of a message's `content` (a string, or a list of parts
/// with `text`; an OC Chat message or an OpenHands wire message), joined by
/// line breaks (borrowed when `content` is one string).
pub(super) fn content_text(v: Option<&OwnedValue>) -> Option<std::borrow::Cow<'_, str>> {
    let v = v?;
    if let Some(s) = v.as_str() {
        return Some(std::borrow::Cow::Borrowed(s));
    }
    let parts: Vec<&str> = v
        .as_array()?
        .iter()
        .filter_map(|p| p.get("text").and_then(OwnedValue::as_str))
        .collect();
    Some(std::borrow::Cow::Owned(parts.join("\n")))
}

/// Adds the rows of one listed session; `session` is its loaded content
/// (`None` when it could not be loaded: the `conversations` and
/// `llm_calls` rows from the listing only, `malformed` = 1).
pub fn add_occhat(
    ds: &mut Dataset,
    entry: &SessionEntry,
    session: Option<&ChatSession>,
) -> Result<(), DatasetError> {
    let id = text_of(&entry.name);
    let model = text_of(&entry.model);
    let snapshot = Some(ds.snapshot());
    let created = session
        .and_then(|s| s.created.as_deref())
        .and_then(stamp_micros);
    let partition = ds.partition_of(created);
    let empty = Vec::new();
    let messages = session.map_or(&empty, |s| &s.messages);
    let mut calls: Vec<OcCall> = Vec::new();
    let mut by_id: HashMap<String, usize> = HashMap::new();
    let mut answers: Vec<Option<(u64, Option<String>)>> = Vec::new();
    for (position, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(OwnedValue::as_str);
        let tool_calls = m.get("tool_calls");
        for c in tool_calls
            .and_then(OwnedValue::as_array)
            .into_iter()
            .flatten()
        {
            let f = c.get("function");
            let name = f
                .and_then(|f| f.get("name"))
                .and_then(OwnedValue::as_str)
                .unwrap_or("(none)");
            let args = f
                .and_then(|f| f.get("arguments"))
                .map(|a| match a.as_str() {
                    Some(s) => s.to_owned(),
                    None => compact(a),
                });
            let cid = c.get("id").and_then(OwnedValue::as_str).map(str::to_owned);
            if let Some(cid) = &cid {
                by_id.insert(cid.clone(), calls.len());
            }
            calls.push(OcCall {
                position: position as u64,
                name: name.to_owned(),
                id: cid,
                arguments: args,
            });
            answers.push(None);
        }
        let tool_call_id = m.get("tool_call_id").and_then(OwnedValue::as_str);
        if role == Some("tool")
            && let Some(&n) = tool_call_id.and_then(|t| by_id.get(t))
            && let Some(slot) = answers.get_mut(n)
            && slot.is_none()
        {
            *slot = Some((
                position as u64,
                content_text(m.get("content")).map(std::borrow::Cow::into_owned),
            ));
        }
        let text = content_text(m.get("content"));
        let length = text.as_deref().map(|t| char_count(t) as u64);
        let calls_json = tool_calls.map(compact);
        let whole = compact(m);
        ds.push(Table::Messages, &partition, |r| {
            r.str(Some(&id))
                .str(Some("occhat"))
                .count(Some(position as u64))
                .str(role)
                .str(text.as_deref())
                .count(length)
                .str(tool_call_id)
                .str(m.get("name").and_then(OwnedValue::as_str))
                .str(calls_json.as_deref())
                .str(Some(&whole))
                .utc(snapshot)
                .end()
        })?;
    }
    for (n, (call, answer)) in calls.iter().zip(&answers).enumerate() {
        let OcCall {
            position,
            name,
            id: cid,
            arguments: args,
        } = call;
        ds.push(Table::ToolCalls, &partition, |r| {
            r.str(Some(&id))
                .str(Some("occhat"))
                .count(Some(n as u64))
                .count(Some(*position))
                .str(None)
                .str(Some(name))
                .str(cid.as_deref())
                .str(None)
                .str(None)
                .str(args.as_deref())
                .time(None)
                .str(answer.as_ref().map(|_| "observation"))
                .count(answer.as_ref().map(|a| a.0))
                .str(None)
                .bool(None)
                .i64(None)
                .str(answer.as_ref().and_then(|a| a.1.as_deref()))
                .str(None)
                .str(None)
                .time(None)
                .f64(None)
                .utc(snapshot)
                .end()
        })?;
    }
    let pos = |v: i64| u64::try_from(v).unwrap_or(0);
    let st = &entry.stats;
    let tok = [
        pos(st.total_prompt_tokens),
        pos(st.total_completion_tokens),
        pos(st.prompt_cache_hit_tokens),
    ];
    let as_i64 = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    ds.push(Table::LlmCalls, &partition, |r| {
        r.str(Some(&id))
            .str(Some("occhat"))
            .str(None)
            .str(Some("session"))
            .count(None)
            .str(Some(&model))
            .str(None)
            .str(None)
            .i64(Some(as_i64(tok[0])))
            .i64(Some(as_i64(tok[1])))
            .i64(Some(as_i64(tok[2])))
            .i64(Some(0))
            .i64(Some(0))
            .i64(Some(as_i64(tok[0]).saturating_add(as_i64(tok[1]))))
            .i64(None)
            .f64(Some(0.0))
            .f64(None)
            .utc(snapshot)
            .end()
    })?;
    let loaded = session.is_some();
    ds.push(Table::Conversations, &partition, |r| {
        r.str(Some(&id))
            .str(Some("occhat"))
            .str(None)
            .str(Some(&entry.filepath.to_string_lossy()))
            .count(Some(0))
            .str(None)
            .str(None)
            .str(Some(&id))
            .str(None)
            .str(Some(&model))
            .str(Some(&model))
            .str(None)
            .str(None)
            .time(created)
            .time(None)
            .bool(created.map(|_| true))
            .count(Some(messages.len() as u64))
            .count(None)
            .count(Some(u64::from(!loaded)))
            .count(Some(u64::from(!loaded)))
            .count(Some(0))
            .count(Some(0))
            .count(Some(tok[0]))
            .count(Some(tok[1]))
            .count(Some(tok[2]))
            .count(Some(0))
            .count(Some(0))
            .f64(Some(0.0))
            .str(Some("full"))
            .utc(snapshot)
            .end()
    })
}
