//! OC Chat's crash recovery on arbitrary message lists: the report is
//! well formed, and every recovery choice keeps exactly what it says
//! (`checks::tail`).
#![no_main]

#[path = "../../tests/fuzz_checks/mod.rs"]
mod checks;
mod common;

use agentlog::json::{Map, OwnedValue};
use agentlog::occhat::VARIABLE_CONTEXT_SENTINEL;
use arbitrary::{Arbitrary, Unstructured};
use checks::{Manifest, TailCase};
use common::{Id, Leaf, Slot, Text};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Content {
    Empty,
    Blank(u8),
    Sentinel(Text),
    Text(Text),
    Odd(Leaf),
}

#[derive(Arbitrary, Debug)]
enum Msg {
    Obj {
        role: Slot<Text>,
        content: Slot<Content>,
        tool_calls: Slot<Vec<Slot<Id>>>,
        tool_call_id: Slot<Id>,
        extra: Vec<(Text, Leaf)>,
    },
    Other(Leaf),
}

fn slot<T>(m: &mut Map, k: &str, s: &Slot<T>, f: impl FnOnce(&T) -> OwnedValue) {
    match s {
        Slot::Absent => {}
        Slot::Good(x) => m.entries_mut().push((k.into(), f(x))),
        Slot::Wrong(l) => m.entries_mut().push((k.into(), l.get())),
    }
}

fn role_word(t: &Text) -> OwnedValue {
    match t {
        Text::Word(i) => {
            ["user", "assistant", "system", "tool", "", "User"][*i as usize % 6].into()
        }
        Text::Any(s) => s.as_str().into(),
    }
}

impl Msg {
    fn get(&self) -> OwnedValue {
        match self {
            Msg::Other(l) => l.get(),
            Msg::Obj {
                role,
                content,
                tool_calls,
                tool_call_id,
                extra,
            } => {
                let mut m = Map::new();
                slot(&mut m, "role", role, role_word);
                slot(&mut m, "content", content, |c| match c {
                    Content::Empty => "".into(),
                    Content::Blank(n) => " \n\t\u{a0}".repeat(1 + *n as usize % 3).into(),
                    Content::Sentinel(t) => {
                        format!("{VARIABLE_CONTEXT_SENTINEL}{}", t.get()).into()
                    }
                    Content::Text(t) => t.get().into(),
                    Content::Odd(l) => l.get(),
                });
                slot(&mut m, "tool_calls", tool_calls, |calls| {
                    OwnedValue::Array(
                        calls
                            .iter()
                            .map(|c| {
                                let mut cm = Map::new();
                                slot(&mut cm, "id", c, |i| i.get().into());
                                OwnedValue::Object(cm)
                            })
                            .collect(),
                    )
                });
                slot(&mut m, "tool_call_id", tool_call_id, |i| i.get().into());
                for (k, v) in extra {
                    m.entries_mut().push((k.get(), v.get()));
                }
                OwnedValue::Object(m)
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    // A JSON array is taken as the messages themselves (the hand-made
    // seeds are such arrays); anything else describes messages through
    // `arbitrary`.
    let messages: Vec<OwnedValue> = if data.first() == Some(&b'[') {
        match OwnedValue::parse(data) {
            Ok(OwnedValue::Array(a)) => a,
            _ => return,
        }
    } else {
        let Ok(ms) = Vec::<Msg>::arbitrary_take_rest(Unstructured::new(data)) else {
            return;
        };
        ms.iter().map(Msg::get).collect()
    };
    let case = TailCase(messages);
    case.dump_if_asked();
    checks::tail(&case.0);
});
