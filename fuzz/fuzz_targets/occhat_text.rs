//! The OC Chat module's text producers and time readers on arbitrary
//! input: any JSON taken as a session's meta, chat log and messages goes
//! through both exports (the HTML one never carries a script), and any
//! bytes as a TZif file or a POSIX `TZ` rule give a zone that converts
//! every instant, the ends of time included, without a panic. (Names,
//! tails and the store itself have their own targets.)
#![no_main]

use agentlog::json::OwnedValue;
use agentlog::occhat::{ChatSession, TimeZone, export_markdown_text, render_html};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Some(tz) = TimeZone::from_tzif(data) {
        for t in [i64::MIN, -1, 0, 1_700_000_000, i64::MAX] {
            let _ = tz.local_time(t);
        }
    }
    if let Some(tz) = TimeZone::from_posix(&text) {
        for t in [i64::MIN, 0, 1_700_000_000, 4_102_444_800, i64::MAX] {
            let _ = tz.local_time(t);
        }
    }
    let Ok(value) = OwnedValue::parse(data) else { return };
    let mut session = ChatSession::from_records(&value, Some(&value));
    if let Some(messages) = value.as_array() {
        session.messages = messages.clone();
    }
    let _ = export_markdown_text(&session, "20250101_000000");
    let html = render_html(&session);
    assert!(!html.contains("<script"));
});
