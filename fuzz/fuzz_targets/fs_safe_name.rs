//! `fs_safe_name`: idempotent (`f(f(x)) == f(x)`), and its output is always
//! one usable path component (non-empty, no separator, not `.` or `..`, no
//! trailing dot or space, no control character). See `checks::fs_safe`.
#![no_main]

#[path = "../../tests/fuzz_checks/mod.rs"]
mod checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| checks::fs_safe(data));
