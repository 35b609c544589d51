//! `base_state.json` and `meta.json`: the reader records them as it should,
//! and `State`, `Meta` and the stats' parts decode and re-encode to the same
//! JSON value. See `checks::state`.
#![no_main]

#[path = "../../tests/fuzz_checks/mod.rs"]
mod checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| checks::state(data));
