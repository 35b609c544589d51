//! The sessions root: an explicit directory wins over `OC_CHAT_SESSIONS_DIR`,
//! which wins over the default. In `tests/process/` because it sets environment
//! variables.

use std::path::{Path, PathBuf};

use agentlog::occhat::{DEFAULT_SESSIONS_DIR, SESSIONS_DIR_ENV, SessionStore, sessions_dir};

#[test]
fn explicit_then_env_then_default() {
    let _g = crate::process_lock();
    // SAFETY: every test of this binary holds the process lock; no other
    // thread reads the environment meanwhile.
    unsafe { std::env::remove_var(SESSIONS_DIR_ENV) };
    assert_eq!(sessions_dir(None), PathBuf::from(DEFAULT_SESSIONS_DIR));
    assert_eq!(DEFAULT_SESSIONS_DIR, "oc_chat/sessions");
    unsafe { std::env::set_var(SESSIONS_DIR_ENV, "/srv/oc/sessions") };
    assert_eq!(sessions_dir(None), PathBuf::from("/srv/oc/sessions"));
    assert_eq!(
        SessionStore::locate(None).dir(),
        Path::new("/srv/oc/sessions")
    );
    let explicit = Path::new("elsewhere");
    assert_eq!(sessions_dir(Some(explicit)), explicit);
    assert_eq!(SessionStore::locate(Some(explicit)).dir(), explicit);
    // Set but empty is taken as given (Python's os.environ.get), the
    // current directory.
    unsafe { std::env::set_var(SESSIONS_DIR_ENV, "") };
    assert_eq!(sessions_dir(None), PathBuf::from(""));
    unsafe { std::env::remove_var(SESSIONS_DIR_ENV) };

    // Time zones by `TZ` value, read from `TZDIR`: the test ships the zone
    // file it needs (tests/data/zoneinfo/Europe/Paris, the IANA tz database's
    // TZif file), so it never depends on the machine's zoneinfo. In this
    // same test so no other thread touches the environment meanwhile.
    let tzdir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/zoneinfo");
    assert!(
        tzdir.join("Europe/Paris").is_file(),
        "{}: the shipped zone file is missing",
        tzdir.display()
    );
    unsafe { std::env::set_var("TZDIR", &tzdir) };
    let tz = agentlog::occhat::TimeZone::from_tz_value("UTC");
    assert_eq!(tz.offset_at(1_700_000_000), 0);
    let paris = agentlog::occhat::TimeZone::from_tz_value("Europe/Paris");
    // 2025-07-01 is summer time; 2025-01-15 is winter time.
    assert_eq!(paris.offset_at(1_751_328_000), 7200);
    assert_eq!(paris.offset_at(1_736_899_200), 3600);
    // Far past the file's last transition: the footer rule.
    assert_eq!(paris.offset_at(4_102_444_800 + 180 * 86_400), 7200);
    // The same file by absolute path.
    let by_path = tzdir.join("Europe/Paris");
    let by_path = agentlog::occhat::TimeZone::from_tz_value(by_path.to_str().expect("UTF-8"));
    assert_eq!(by_path.offset_at(1_751_328_000), 7200);
    unsafe { std::env::remove_var("TZDIR") };
    let rule = agentlog::occhat::TimeZone::from_tz_value("EST5EDT,M3.2.0,M11.1.0");
    assert_eq!(rule.offset_at(1_736_899_200), -5 * 3600);
}
