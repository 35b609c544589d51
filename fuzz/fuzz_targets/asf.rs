//! The ASF reader on arbitrary bytes (see `tests/asf_support/fuzz_check.rs`):
//! no panic, no hang, problems instead.
#![no_main]

#[path = "../../tests/asf_support/fuzz_check.rs"]
mod fuzz_check;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_check::check(data));
