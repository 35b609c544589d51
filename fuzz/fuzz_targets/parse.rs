//! `openhands::parse` over an arbitrary set of files, described with
//! `arbitrary`: `base_state.json`, `meta.json`, event files named like the
//! SDK names them (any index padding, pooled or odd IDs), odd names,
//! sidecars, sub-agents and deeper paths, with contents made from event
//! and state descriptions, raw bytes, or torn prefixes of either.
//!
//! Checked (`checks::parse`): the conversation is consistent with itself
//! (sequence, statuses, envelope against a direct parse, unit count); the
//! view builds over it; and, whenever the paths can exist on a file system,
//! reading the same files from a directory gives the same conversation
//! (`parse` promises that).
#![no_main]

#[path = "../../tests/fuzz_checks/mod.rs"]
mod checks;
mod common;

use arbitrary::Arbitrary;
use checks::{Manifest, ParseCase};
use common::{Body, EventSpec, Id, StateSpec, Text, pool_id};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum PathSpec {
    BaseState,
    Meta,
    Event { index: u8, pad: u8, id: Id },
    EventsName(Text),
    Sidecar(Text),
    Top(Text),
    Sub { sub: u8, inner: SubPath },
    Deep(Vec<Text>),
}

#[derive(Arbitrary, Debug)]
enum SubPath {
    BaseState,
    Event { index: u8, pad: u8, id: Id },
    Other(Text),
}

#[derive(Arbitrary, Debug)]
enum Contents {
    Event(Box<Body<EventSpec>>),
    State(Box<Body<StateSpec>>),
}

#[derive(Arbitrary, Debug)]
struct FileSpec {
    path: PathSpec,
    contents: Contents,
}

#[derive(Arbitrary, Debug)]
struct Input {
    odd_name: Option<Text>,
    five_digits: bool,
    files: Vec<FileSpec>,
}

fn event_name(index: u8, pad: u8, id: &Id) -> String {
    let width = 5 + usize::from(pad % 3);
    format!("event-{index:0width$}-{}.json", id.get())
}

impl PathSpec {
    fn get(&self) -> String {
        match self {
            PathSpec::BaseState => "base_state.json".into(),
            PathSpec::Meta => "meta.json".into(),
            PathSpec::Event { index, pad, id } => {
                format!("events/{}", event_name(*index, *pad, id))
            }
            PathSpec::EventsName(t) => format!("events/{}", t.get()),
            PathSpec::Sidecar(t) => format!("events/.{}", t.get()),
            PathSpec::Top(t) => t.get(),
            PathSpec::Sub { sub, inner } => {
                let hex = format!("{:032x}", u128::from(*sub % 4));
                match inner {
                    SubPath::BaseState => format!("subagents/{hex}/base_state.json"),
                    SubPath::Event { index, pad, id } => {
                        format!("subagents/{hex}/events/{}", event_name(*index, *pad, id))
                    }
                    SubPath::Other(t) => format!("subagents/{hex}/{}", t.get()),
                }
            }
            PathSpec::Deep(parts) => parts.iter().map(Text::get).collect::<Vec<_>>().join("/"),
        }
    }
}

fuzz_target!(|input: Input| {
    let name = match &input.odd_name {
        Some(t) => t.get(),
        None => pool_id(0).repeat(3).replace('-', ""),
    };
    let case = ParseCase {
        name,
        five_digits: input.five_digits,
        files: input
            .files
            .iter()
            .map(|f| {
                let bytes = match &f.contents {
                    Contents::Event(b) => b.bytes(),
                    Contents::State(b) => b.bytes(),
                };
                (f.path.get(), bytes)
            })
            .collect(),
    };
    case.dump_if_asked();
    checks::parse(&case);
});
