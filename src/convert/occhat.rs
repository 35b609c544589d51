//! An OC Chat session (its chat log's chat-completions messages, usage and
//! metadata) as an ASF session.
//!
//! - The header: the session id is OC Chat's `session_id` when it is a
//!   UUID (else a UUIDv5 under the nil namespace over
//!   `occhat/<session_id or name>`), `created_at` the session's `created`
//!   stamp (OC Chat's local time, read as UTC), `occhat:session` its name.
//! - A `config`: the model, the system prompt as `instructions`, the
//!   reasoning effort as `reasoning.effort`.
//! - An `occhat:session` record entry with the metadata members the
//!   session keeps (name, id, created, model, reasoning effort, token
//!   profile, generation options, endpoint, token stats, and the meta and
//!   chat-log members OC Chat's code does not write).
//! - Each message of the chat log as Open Responses items (see the
//!   conversion of chat-completions messages in this module's sibling),
//!   the message itself kept whole as `occhat:message` on its first entry;
//!   a leading system message equal to the system prompt is the config's
//!   `instructions`. An assistant message's `usage` becomes a `response`
//!   entry after its items (Responses usage; OC Chat's own in
//!   `occhat:usage`). A message with no item form (an assistant message
//!   with neither content nor calls) is kept as an `occhat:message` record.
//!
//! A message, or the metadata, holding a value I-JSON cannot carry even
//! after the appender's normalisation (OC Chat's `json` writes a NaN or an
//! infinity as `NaN`, `Infinity`) is kept as its JSON text (`raw`) in its
//! `occhat:message` or `occhat:session` record; such a message is not in
//! the context, and its report row says so.
//!
//! OC Chat stores no time per message: every entry carries the session's
//! creation time.

use crate::asf::Appender;
use crate::json::{Map, OwnedValue, Style};
use crate::occhat::ChatSession;

use super::chat::items_of;
use super::{ConvertError, Converted, Outcome, ReportRow, not_ijson};

fn s(v: &str) -> OwnedValue {
    OwnedValue::string(v)
}

/// The session id of an OC Chat session.
pub fn session_id(session: &ChatSession) -> String {
    match uuid::Uuid::try_parse(&session.session_id) {
        Ok(u) => u.hyphenated().to_string(),
        Err(_) => {
            let key = if session.session_id.is_empty() {
                &session.name
            } else {
                &session.session_id
            };
            uuid::Uuid::new_v5(&uuid::Uuid::nil(), format!("occhat/{key}").as_bytes())
                .hyphenated()
                .to_string()
        }
    }
}

/// `YYYYMMDD_HHMMSS` as a canonical `ts`.
fn ts_of(created: Option<&str>) -> String {
    let fallback = "1970-01-01T00:00:00Z".to_owned();
    let Some(c) = created else { return fallback };
    let b = c.as_bytes();
    if b.len() != 15
        || b[8] != b'_'
        || !b
            .iter()
            .enumerate()
            .all(|(i, d)| i == 8 || d.is_ascii_digit())
    {
        return fallback;
    }
    let ts = format!(
        "{}-{}-{}T{}:{}:{}Z",
        &c[0..4],
        &c[4..6],
        &c[6..8],
        &c[9..11],
        &c[11..13],
        &c[13..15]
    );
    if crate::asf::ts::is_canonical_ts(&ts) {
        ts
    } else {
        fallback
    }
}

fn usage_of(u: &OwnedValue) -> OwnedValue {
    let n = |k: &str| u.get(k).and_then(|v| v.as_number()?.as_i64()).unwrap_or(0);
    let mut details = Map::new();
    details.insert(
        "cached_tokens",
        OwnedValue::int(n("prompt_cache_hit_tokens")),
    );
    let mut m = Map::new();
    m.insert("input_tokens", OwnedValue::int(n("prompt_tokens")));
    m.insert("input_tokens_details", OwnedValue::Object(details));
    m.insert("output_tokens", OwnedValue::int(n("completion_tokens")));
    m.insert("total_tokens", OwnedValue::int(n("total_tokens")));
    OwnedValue::Object(m)
}

/// A value as compact JSON text (a NaN or an infinity spelled as the
/// source spelled it).
fn json_text(v: &OwnedValue) -> String {
    let mut buf = Vec::new();
    v.write_to(&mut buf, Style::COMPACT);
    String::from_utf8_lossy(&buf).into_owned()
}

/// Appends a record entry; when its body holds a value I-JSON cannot carry,
/// the record holds the body's JSON text (`text()`) as `raw` instead, so
/// nothing is lost.
fn append_or_text(
    a: &mut Appender,
    kind: &str,
    ts: &str,
    body: Map,
    text: impl FnOnce() -> String,
) -> Result<(), ConvertError> {
    match a.append(kind, ts, body) {
        Ok(_) => Ok(()),
        Err(e) if not_ijson(&e) => {
            let mut record = Map::new();
            record.insert("raw", s(&text()));
            a.append(kind, ts, record)?;
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

/// Converts one session.
pub fn convert(session: &ChatSession) -> Result<Converted, ConvertError> {
    let sid = session_id(session);
    let ts = ts_of(session.created.as_deref());
    let mut header = Map::new();
    header.insert("id", s(&sid));
    header.insert("created_at", s(&ts));
    let mut harness = Map::new();
    harness.insert("name", s("agentlog"));
    harness.insert("version", s(env!("CARGO_PKG_VERSION")));
    header.insert("harness", OwnedValue::Object(harness));
    header.insert("occhat:session", s(&session.name));
    let mut a = Appender::trusted(header, Vec::new())?;

    let mut config = Map::new();
    if !session.model.is_empty() {
        config.insert("model", s(&session.model));
    }
    let system = session.system_prompt.clone().or_else(|| {
        let first = session.messages.first()?;
        (first.get("role").and_then(OwnedValue::as_str) == Some("system"))
            .then(|| {
                first
                    .get("content")
                    .and_then(OwnedValue::as_str)
                    .map(str::to_owned)
            })
            .flatten()
    });
    if let Some(p) = &system {
        config.insert("instructions", s(p));
    }
    if !session.reasoning_effort.is_empty() {
        let mut r = Map::new();
        r.insert("effort", s(&session.reasoning_effort));
        config.insert("reasoning", OwnedValue::Object(r));
    }
    a.append("config", &ts, config)?;

    let mut meta = Map::new();
    meta.insert("name", s(&session.name));
    meta.insert("session_id", s(&session.session_id));
    meta.insert(
        "created",
        session.created.as_deref().map_or(OwnedValue::Null, s),
    );
    meta.insert("model", s(&session.model));
    meta.insert("reasoning_effort", s(&session.reasoning_effort));
    meta.insert("token_profile", s(&session.token_profile));
    meta.insert(
        "generation_options",
        OwnedValue::Object(session.generation_options.clone()),
    );
    meta.insert("endpoint_name", s(&session.endpoint_name));
    meta.insert("stats", session.stats.to_value());
    meta.insert("meta_extra", OwnedValue::Object(session.meta_extra.clone()));
    meta.insert(
        "chat_log_extra",
        OwnedValue::Object(session.chat_log_extra.clone()),
    );
    let text = json_text(&OwnedValue::Object(meta.clone()));
    append_or_text(&mut a, "occhat:session", &ts, meta, || text)?;

    let mut report = Vec::new();
    for (i, m) in session.messages.iter().enumerate() {
        let role = m
            .get("role")
            .and_then(OwnedValue::as_str)
            .unwrap_or("?")
            .to_owned();
        let row = |outcome| ReportRow {
            event: format!("message {i}"),
            kind: role.clone(),
            outcome,
        };
        if i == 0
            && role == "system"
            && system.is_some()
            && m.get("content").and_then(OwnedValue::as_str) == system.as_deref()
        {
            let mut body = Map::new();
            body.insert("message", m.clone());
            append_or_text(&mut a, "occhat:message", &ts, body, || json_text(m))?;
            report.push(row(Outcome::Mapped(vec!["config", "occhat:message"])));
            continue;
        }
        let items = items_of(m);
        if items.is_empty() {
            let mut body = Map::new();
            body.insert("message", m.clone());
            append_or_text(&mut a, "occhat:message", &ts, body, || json_text(m))?;
            report.push(row(Outcome::Extension(
                "a message with no content and no calls; kept as an occhat:message record".into(),
            )));
            continue;
        }
        let mut in_context = true;
        for (j, item) in items.into_iter().enumerate() {
            let mut body = Map::new();
            body.insert("item", item);
            if j == 0 {
                body.insert("occhat:message", m.clone());
                // The first item carries the whole message: when it cannot
                // be written, no part of the message can be in the context,
                // and the message is kept as its JSON text instead. (Once
                // it is written, the items after it, parts of the same
                // message, can be.)
                match a.append("item", &ts, body) {
                    Ok(_) => continue,
                    Err(e) if not_ijson(&e) => {
                        let mut record = Map::new();
                        record.insert("raw", s(&json_text(m)));
                        a.append("occhat:message", &ts, record)?;
                        report.push(row(Outcome::Extension(format!(
                            "not I-JSON ({e}); not in the context, kept as its JSON text in an occhat:message record"
                        ))));
                        in_context = false;
                        break;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            a.append("item", &ts, body)?;
        }
        if !in_context {
            continue;
        }
        let mut mapped = vec!["item"];
        if let Some(u) = m.get("usage").filter(|u| u.as_object().is_some()) {
            let mut body = Map::new();
            if !session.model.is_empty() {
                body.insert("model", s(&session.model));
            }
            body.insert("usage", usage_of(u));
            body.insert("occhat:usage", u.clone());
            a.append("response", &ts, body)?;
            mapped.push("response");
        }
        report.push(row(Outcome::Mapped(mapped)));
    }
    Ok(Converted {
        session_id: sid,
        bytes: a.into_bytes(),
        report,
    })
}
