//! Bad input never panics and loses nothing: arbitrary bytes and arbitrary
//! JSON as metas and chat logs go through listing, loading, tail detection,
//! both exports and a save; a saved session reloads to the same values.

use crate::common::occhat as occhat_support;

use std::fs;

use agentlog::json::OwnedValue;
use agentlog::occhat::{
    ChatSession, RecoveryChoice, apply_tail_recovery, detect_incomplete_tail, export_markdown_text,
    render_html,
};
use proptest::prelude::*;

fn json_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("NaN".to_owned()),
        Just("-0".to_owned()),
        Just("1E400".to_owned()),
        any::<i64>().prop_map(|v| v.to_string()),
        any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(|v| format!("{v:e}")),
        "[a-z\u{e9}\u{3000} \\\\\"\n\t\u{1}<>*`#\\[\\]()-]{0,16}"
            .prop_map(|s| { OwnedValue::String(s).to_string() }),
        prop_oneof![
            Just("\"user\""),
            Just("\"assistant\""),
            Just("\"tool\""),
            Just("\"system\""),
            Just("\"[OC_CHAT_VARIABLE_CONTEXT] x\"")
        ]
        .prop_map(str::to_owned),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let key = prop_oneof![
            Just("role"),
            Just("content"),
            Just("tool_calls"),
            Just("id"),
            Just("tool_call_id"),
            Just("usage"),
            Just("total_tokens"),
            Just("messages"),
            Just("session_name"),
            Just("stats"),
            Just("ui"),
            Just("x"),
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec((key, inner), 0..6).prop_map(|v| {
                let members: Vec<String> = v
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\": {v}"))
                    .collect();
                format!("{{{}}}", members.join(", "))
            }),
        ]
    })
}

fn record_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => json_text().prop_map(String::into_bytes),
        2 => json_text().prop_map(|t| format!("{{\"session_name\": \"s\", \"messages\": {t}, \"stats\": {t}}}").into_bytes()),
        1 => prop::collection::vec(any::<u8>(), 0..64),
        1 => json_text().prop_map(|t| { let mut b = b"\xef\xbb\xbf".to_vec(); b.extend(t.into_bytes()); b }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_records_never_panic(meta in record_bytes(), log in record_bytes()) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("sessions");
        let dir = root.join("s");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("s_2025-01-01--00-00-00_meta.json"), &meta).unwrap();
        fs::write(dir.join("s_2025-01-01--00-00-00_chat_log.json"), &log).unwrap();
        let (store, _) = occhat_support::store_at(&root, 1_744_016_143_000_000_000);
        let list = store.list_sessions();
        prop_assert_eq!(list.sessions.len() + list.skipped.len(), 1);
        let _ = list.to_value();
        let _ = store.read_crash_signal();
        prop_assert_eq!(store.session_exists("s"), true);
        let meta_v = store.load_session_metadata("s");
        let log_v = store.load_chat_log("s");
        if let Ok(l) = &log_v {
            let msgs = l.messages();
            let report = detect_incomplete_tail(msgs);
            for c in [RecoveryChoice::Drop, RecoveryChoice::Keep, RecoveryChoice::Fresh] {
                let kept = apply_tail_recovery(msgs, c);
                prop_assert!(kept.len() <= msgs.len());
            }
            if let Some(r) = report {
                prop_assert!(r.tail_indexes.iter().all(|&i| i < msgs.len()));
            }
        }
        if let Ok(m) = &meta_v {
            let mut s = ChatSession::from_records(&m.metadata, log_v.as_ref().ok().map(|l| &l.chat_log));
            let _ = export_markdown_text(&s, "20250101_000000");
            let html = render_html(&s);
            prop_assert!(!html.contains("<script"));
            // Save into a fresh store and load back: the same values.
            let out = tmp.path().join("out");
            let (st2, _) = occhat_support::store_at(&out, 1_744_016_143_000_000_000);
            let saved = st2.save_all(&mut s).unwrap();
            let back = st2.load_session(&saved.meta.to_string_lossy()).unwrap();
            prop_assert_eq!(&back.messages, &s.messages);
            prop_assert_eq!(&back.meta_extra, &s.meta_extra);
            prop_assert_eq!(&back.chat_log_extra, &s.chat_log_extra);
            prop_assert_eq!(back.stats, s.stats);
        }
    }
}
