//! One event file: the reader's envelope agrees with a direct parse, and
//! every decoder of the OpenHands kinds (and of their parts, tried on every
//! value of the document) decodes and re-encodes to the same JSON value.
//! See `checks::event`.
#![no_main]

#[path = "../../tests/fuzz_checks/mod.rs"]
mod checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| checks::event(data));
