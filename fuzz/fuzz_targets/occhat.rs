//! The OC Chat module's pure entry points on arbitrary input: session names
//! (`fs_safe_name` is idempotent and yields one legal component), records
//! as sessions (tail detection, recovery, both exports, from_records), and
//! the time-zone readers (TZif bytes, POSIX rule strings). Nothing panics.
#![no_main]

use agentlog::json::OwnedValue;
use agentlog::occhat::{
    ChatSession, RecoveryChoice, TimeZone, apply_tail_recovery, detect_incomplete_tail,
    export_markdown_text, fs_safe_name, render_html,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let safe = fs_safe_name(&text);
    assert_eq!(fs_safe_name(&safe), safe, "idempotent");
    assert!(!safe.is_empty() && !safe.contains(['/', '\\']));
    assert!(safe != "." && safe != "..");

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
    if let Some(messages) = value.as_array() {
        let report = detect_incomplete_tail(messages);
        if let Some(r) = &report {
            assert!(r.tail_indexes.iter().all(|&i| i < messages.len()));
        }
        for c in [RecoveryChoice::Drop, RecoveryChoice::Keep, RecoveryChoice::Fresh] {
            assert!(apply_tail_recovery(messages, c).len() <= messages.len());
        }
    }
    let mut session = ChatSession::from_records(&value, Some(&value));
    if let Some(messages) = value.as_array() {
        session.messages = messages.clone();
    }
    let _ = export_markdown_text(&session, "20250101_000000");
    let html = render_html(&session);
    assert!(!html.contains("<script"));
});
