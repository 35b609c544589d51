//! The OC Chat module's text producers and time readers on arbitrary
//! input: any JSON taken as a session's meta, chat log and messages goes
//! through both exports (the HTML one never carries a script), and any
//! bytes as a TZif file or a POSIX `TZ` rule give a zone whose offset stays
//! within ±25:59:59 and whose local time minus the offset is the instant,
//! at every instant checked, the ends of time included. See
//! `checks::occhat_text`. (Names, tails and the store itself have their own
//! targets.)
#![no_main]

#[path = "../../tests/fuzz_checks/mod.rs"]
mod checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    checks::occhat_text(data);
});
