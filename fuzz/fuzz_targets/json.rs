//! The JSON layer: parsing never panics; whatever parses writes back to the
//! same value (from the owned value, and from every value's raw span), a
//! lossless object decode re-encodes to the same value, and no getter
//! panics. See `checks::json`.
#![no_main]

#[path = "../../tests/fuzz_checks/mod.rs"]
mod checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| checks::json(data));
