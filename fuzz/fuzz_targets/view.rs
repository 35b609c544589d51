//! The view over arbitrary event sets: the event tree (parents from a small
//! pool of IDs, so cycles, forks, dangling parents and duplicate IDs are
//! common), condensations with any offsets, batches, tool calls and
//! observations, under every view algorithm and a forced or detected
//! version. It must terminate without a panic, and what it reports must be
//! consistent (`checks::view`).
#![no_main]

#[path = "../../tests/fuzz_checks/mod.rs"]
mod checks;
mod common;

use agentlog::openhands::view::SdkVersion;
use arbitrary::Arbitrary;
use checks::{Manifest, ViewCase};
use common::{Body, EventSpec, Id, StateSpec};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Ev {
    /// The file ID: from the pool (so parents find it) or the event's own.
    file_id: Id,
    body: Body<EventSpec>,
}

#[derive(Arbitrary, Debug)]
struct Input {
    events: Vec<Ev>,
    state: Option<Body<StateSpec>>,
    sidecars: Option<(bool, bool)>,
    version: Option<(u8, u8, u8)>,
    head: Option<Id>,
}

fuzz_target!(|input: Input| {
    let case = ViewCase {
        events: input
            .events
            .iter()
            .map(|e| (e.file_id.get(), e.body.bytes()))
            .collect(),
        state: input.state.as_ref().map(|s| s.bytes()),
        sidecars: input.sidecars,
        version: input.version.map(|(a, b, c)| {
            SdkVersion::new(u16::from(a % 3), u16::from(b % 64), u16::from(c % 8))
        }),
        head: input.head.as_ref().map(Id::get),
    };
    case.dump_if_asked();
    checks::view(&case);
});
