//! `TimeZone::from_tz_value` against the machine's own glibc: for hostile
//! `TZ` values (empty, `:name`, unknown names, paths with `..`, absolute
//! paths to other files, malformed and out-of-range rule strings) the
//! offset at every probed instant is the one glibc's `localtime_r` gives
//! (what Python's `datetime.now()` / `fromtimestamp()` print). Zone files
//! come from `tests/data/zoneinfo` through `TZDIR`, so the machine's tzdb
//! is not needed. In `tests/process/`: it sets `TZ` and `TZDIR`.
//! The divergences kept on purpose (see `TimeZone::from_tz_value`) are
//! listed in `KNOWN_DIFFERENT` and checked to still differ, so that the
//! list stays true.

use std::path::Path;

use agentlog::occhat::TimeZone;

unsafe extern "C" {
    fn tzset();
}

/// glibc's offset for `secs` under the current `TZ`.
fn glibc_offset(secs: i64) -> i64 {
    let t: libc::time_t = secs;
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::localtime_r(&t, &mut tm) };
    assert!(!r.is_null(), "localtime_r failed at {secs}");
    tm.tm_gmtoff
}

/// Instants from 1970 to 2100: every 5 days and 7 hours (all seasons and
/// hours of the day), plus the hours around 2025's US and EU changes.
fn instants() -> Vec<i64> {
    let mut v: Vec<i64> = (0..9_600).map(|k| k * (5 * 86_400 + 7 * 3600)).collect();
    for base in [
        1_741_500_000i64,
        1_762_059_600,
        1_743_296_400,
        1_761_440_400,
    ] {
        v.extend((-30..30).map(|h| base + h * 1800));
    }
    v
}

/// Values where this crate keeps a documented difference from glibc.
const KNOWN_DIFFERENT: &[&str] = &[
    // A half-read `M` rule glibc evaluates with month 0 (outside its
    // table): the standard offset all year here.
    "XST5XDT,M",
    // `J0` (glibc: the day before January 1): standard offset here.
    "XST5XDT,J0,J300",
    // A weekday past 6 (glibc: counted on past the week): standard offset.
    "XST5XDT,M3.2.7,M11.1.0",
];

#[test]
fn hostile_tz_values_match_glibc() {
    let _g = crate::process_lock();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/zoneinfo");
    let tmp = tempfile::tempdir().unwrap();
    let not_tzif = tmp.path().join("not-a-zone");
    std::fs::write(&not_tzif, b"TZif but not really").unwrap();
    let paris_abs = data.join("Europe/Paris");
    let mut values: Vec<String> = [
        "",
        ":",
        ":UTC",
        "Europe/Paris",
        ":Europe/Paris",
        "Europe/../Europe/Paris",
        "./Europe/Paris",
        "Europe/Paris/",
        "Europe",
        "Foo/Bar",
        "Nowhere",
        "/nonexistent",
        "EST5EDT",
        "XST5XDT",
        "XST5XDT4",
        "XST5XDT,",
        "XST5XDT,M3.2.0,M11.1.0",
        "XST5XDT,M3.2.0",
        "XST5XDT,M3.2.0,M11.1.0x",
        "XST5XDT,M3.2.0,M11.1.0,junk",
        "XST5XDT,garbage",
        "XST5,",
        "XST5",
        "XST",
        "XS5",
        "X100",
        "XST-25",
        "XST+5:30:99",
        "XST 5",
        "XST+ 5",
        "<+0330>-3:30",
        "<A1>5",
        "<ABC5",
        "CET-1CEST,M3.5.0,M10.5.0/3",
        "NZST-12NZDT,M9.5.0,M4.1.0/3",
        "XST5XDT,J60,J300",
        "XST5XDT,59/1,300/-1",
        "XST5XDT,M3.2.0/25,M11.1.0/-3",
        "XST5XDT,M3.2.0/26:99:99,M11.1.0/0:0:1",
        "XST5XDT,M3.2.0/,M11.1.0",
        "XST5XDT,M3.2.0/x,M11.1.0",
        "XST5XDT,M3.6.0,M11.1.0",
        "XST5XDT,M3.0.0,M11.1.0",
        "XST5XDT,M3.2.7,M11.1.0",
        "XST5XDT,M3.2,M11.1.0",
        "XST5XDT,M 3. 2. 0,M11.1.0",
        "XST5XDT,400,J300",
        "XST5XDT3:30,M3.2.0,M11.1.0",
        "XST5XDT-30,M3.2.0,M11.1.0",
        "XST-14XDT-15,M3.2.0,M11.1.0",
        "XST5:00:00:00",
        "XST5XDT,M",
        "XST5XDT,J0,J300",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    values.push(paris_abs.display().to_string());
    values.push(not_tzif.display().to_string());
    values.push(tmp.path().display().to_string());
    // `..` out of TZDIR and back in.
    values.push("../zoneinfo/Europe/Paris".to_string());

    // SAFETY: every test of this binary holds the process lock; no other
    // thread reads the environment meanwhile.
    unsafe { std::env::set_var("TZDIR", &data) };
    let times = instants();
    let mut failures = Vec::new();
    for v in &values {
        unsafe { std::env::set_var("TZ", v) };
        unsafe { tzset() };
        let ours = TimeZone::from_tz_value(v);
        let differing: Vec<(i64, i64, i32)> = times
            .iter()
            .map(|&t| (t, glibc_offset(t), ours.offset_at(t)))
            .filter(|&(_, g, o)| g != i64::from(o))
            .collect();
        let known = KNOWN_DIFFERENT.contains(&v.as_str());
        if known && differing.is_empty() {
            failures.push(format!(
                "{v:?}: listed as different but now agrees with glibc"
            ));
        }
        if !known && let Some(&(t, g, o)) = differing.first() {
            failures.push(format!(
                "{v:?}: {} instants differ, first at {t}: glibc {g}, ours {o}",
                differing.len()
            ));
        }
    }
    unsafe { std::env::remove_var("TZ") };
    unsafe { std::env::remove_var("TZDIR") };
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
