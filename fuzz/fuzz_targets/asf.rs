//! The ASF reader on arbitrary bytes (see `tests/fuzz_checks/asf.rs`):
//! no panic, no hang, problems instead.
#![no_main]

#[path = "../../tests/fuzz_checks/asf.rs"]
mod fuzz_check;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_check::check(data));
