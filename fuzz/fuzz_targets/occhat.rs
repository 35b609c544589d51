//! OC Chat's meta and chat log: a session directory holding arbitrary
//! records (made from descriptions, raw bytes, torn prefixes, with or
//! without a byte-order mark) lists, loads and validates without a panic,
//! consistently; and a session that loads saves and loads back to the same
//! session (every member kept, the write-back round trip); see
//! `checks::occhat`.
#![no_main]

#[path = "../../tests/fuzz_checks/mod.rs"]
mod checks;
mod common;

use agentlog::json::{Map, OwnedValue};
use arbitrary::Arbitrary;
use checks::{Manifest, OcChatCase};
use common::{Body, Leaf, Make, Slot, Text, write};
use libfuzzer_sys::fuzz_target;

const KEYS: &[&str] = &[
    "session_name",
    "session_id",
    "created",
    "last_modified",
    "model",
    "reasoning_effort",
    "system_prompt",
    "stats",
    "chat_logs",
    "ui",
    "last_turn_max_prompt_tokens",
    "rollover_hint_shown",
    "token_profile",
    "max_react_iterations",
    "cache_turn_snapshots",
    "active_plan_id",
    "generation_options",
    "endpoint_name",
    "sandbox_root_override",
    "legacy_event_slugs",
    "superseded_by",
    "timestamp",
    "messages",
    "usage",
    "total_tokens",
    "total_prompt_tokens",
    "total_completion_tokens",
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "id",
];

#[derive(Arbitrary, Debug, Clone)]
enum Key {
    Word(u8),
    Any(Text),
}

impl Key {
    fn get(&self) -> String {
        match self {
            Key::Word(i) => KEYS[*i as usize % KEYS.len()].to_owned(),
            Key::Any(t) => t.get(),
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
enum Val {
    Leaf(Leaf),
    Object(Vec<(Key, Leaf)>),
    Objects(Vec<Vec<(Key, Leaf)>>),
}

fn object(ms: &[(Key, Leaf)]) -> OwnedValue {
    let mut m = Map::new();
    for (k, v) in ms {
        m.entries_mut().push((k.get(), v.get()));
    }
    OwnedValue::Object(m)
}

impl Val {
    fn get(&self) -> OwnedValue {
        match self {
            Val::Leaf(l) => l.get(),
            Val::Object(ms) => object(ms),
            Val::Objects(os) => OwnedValue::Array(os.iter().map(|o| object(o)).collect()),
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
struct Record {
    session_name: Slot<Text>,
    members: Vec<(Key, Val)>,
    style: u8,
}

impl Make for Record {
    fn make(&self) -> Vec<u8> {
        let mut m = Map::new();
        match &self.session_name {
            Slot::Absent => {}
            Slot::Good(t) => m
                .entries_mut()
                .push(("session_name".into(), t.get().into())),
            Slot::Wrong(l) => m.entries_mut().push(("session_name".into(), l.get())),
        }
        for (k, v) in &self.members {
            m.entries_mut().push((k.get(), v.get()));
        }
        write(&OwnedValue::Object(m), self.style)
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    meta: Body<Record>,
    log: Option<Body<Record>>,
    bom: bool,
}

fuzz_target!(|input: Input| {
    let bom = |mut b: Vec<u8>| {
        if input.bom {
            b.splice(0..0, *b"\xef\xbb\xbf");
        }
        b
    };
    let case = OcChatCase {
        meta: bom(input.meta.bytes()),
        log: input.log.as_ref().map(|l| bom(l.bytes())),
    };
    case.dump_if_asked();
    checks::occhat(&case);
});
