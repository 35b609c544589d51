//! The OpenHands reader: any file names and contents read without a panic;
//! every event, the state and the meta that read as objects decode, with
//! every decoder, and encode back to the same JSON value.
#![no_main]

use agentlog::json::{OwnedValue, Parser};
use agentlog::openhands::{self, NamePattern, Reader, UtcOffset};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
struct Input {
    legacy: bool,
    state: Option<Vec<u8>>,
    meta: Option<Vec<u8>>,
    /// Event files: an index, an ID and contents, or a raw name.
    events: Vec<(Option<(u32, String)>, String, Vec<u8>)>,
}

fn same(out: &[u8], raw: &[u8]) {
    let a = OwnedValue::parse(out).expect("our own output parses");
    let b = OwnedValue::parse(raw).expect("the input parsed once");
    assert!(a == b, "decode then encode changed the value");
}

fuzz_target!(|input: Input| {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    if let Some(s) = input.state {
        files.push(("base_state.json".into(), s));
    }
    if let Some(m) = input.meta {
        files.push(("meta.json".into(), m));
    }
    for (named, raw_name, bytes) in input.events {
        let name = match named {
            Some((i, id)) => format!("event-{i:05}-{id}.json"),
            None => raw_name,
        };
        let _ = openhands::parse_event_name(&name, NamePattern::FiveDigits);
        let _ = openhands::parse_time(&name, UtcOffset::UTC);
        files.push((format!("events/{name}"), bytes));
    }
    let pattern = if input.legacy {
        NamePattern::FiveDigits
    } else {
        NamePattern::FiveOrMoreDigits
    };
    let conv = Reader::with_pattern(pattern).parse("c", &files);
    assert_eq!(conv.units() >= conv.len(), true);
    for f in conv.files() {
        let _ = f.reason().map(|r| r.to_string());
    }
    let mut parser = Parser::new();
    for e in conv.events() {
        let _ = (e.kind(), e.id(), e.timestamp(), e.source(), e.parent_id(), e.file_id());
        if let Some(t) = e.timestamp() {
            let _ = openhands::parse_time(t, UtcOffset::UTC);
        }
        let Ok(doc) = e.open(&mut parser) else {
            assert!(e.error().is_some());
            continue;
        };
        same(&doc.message().to_json(), e.raw());
        let a = doc.action();
        same(&a.to_json(), e.raw());
        if let (Some(act), Some(v)) = (a.action_object(), a.action) {
            same(&act.to_json(), v.raw());
        }
        let o = doc.observation();
        same(&o.to_json(), e.raw());
        if let Some(obs) = &o.observation {
            let _ = obs.terminal();
        }
        same(&doc.agent_error().to_json(), e.raw());
        let c = doc.condensation();
        same(&c.to_json(), e.raw());
        let _ = (c.forgotten(), c.offset());
        same(&doc.system_prompt().to_json(), e.raw());
        same(&doc.user_reject().to_json(), e.raw());
    }
    if let Some(Ok(doc)) = conv.open_state(&mut parser) {
        let st = doc.state();
        same(&st.to_json(), conv.state_raw().unwrap_or_default());
        let _ = (st.agent_info(), st.working_dir());
        if let Some(m) = st.stats.as_ref().and_then(|s| s.usage_to_metrics.as_ref()) {
            let _ = m.keys();
        }
    }
    if let Some(Ok(doc)) = conv.open_meta(&mut parser) {
        same(&doc.meta().to_json(), conv.meta_raw().unwrap_or_default());
    }
});
