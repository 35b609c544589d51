//! Clocks and local time, as OC Chat's stamps need them.
//!
//! OC Chat formats local time (`datetime.now()`, `datetime.fromtimestamp`),
//! which C's `localtime` computes from the `TZ` environment variable or
//! `/etc/localtime`. [`TimeZone::local`] finds the zone as glibc does (see
//! [`TimeZone::from_tz_value`]: the lookup and glibc's reading of rule
//! strings are this crate's, in `glibc_tz.rs`), and the `jiff` crate reads
//! the TZif files (RFC 8536, versions 1 to 4, with the footer rule for
//! times past the last transition) and evaluates the rules. A zone that
//! cannot be read is UTC, as glibc makes it.
//!
//! Limitations: leap-second tables (`right/` zones) are ignored (the
//! offsets are those of the `posix/` zones); instants outside jiff's range
//! (years −9999 to 9999) take the offset at the nearest end of that range,
//! and dates past it are written as its ends (Python cannot format them at
//! all); the differences from glibc on hostile `TZ`
//! values that remain are listed at [`TimeZone::from_tz_value`].
//!
//! The time itself comes from a [`Clock`], so that tests and tools can pin
//! it ([`ManualClock`]); [`SystemClock`] is the default.

use std::fmt;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where the current time comes from.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current time.
    fn now(&self) -> SystemTime;
}

/// The system's real-time clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock that says what it is told: for tests and reproducible stores.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<SystemTime>,
}

impl ManualClock {
    /// A clock standing at `t`.
    pub fn new(t: SystemTime) -> Self {
        ManualClock { now: Mutex::new(t) }
    }

    /// A clock standing at `ns` nanoseconds after the Unix epoch.
    pub fn at_unix_nanos(ns: u64) -> Self {
        Self::new(UNIX_EPOCH + Duration::from_nanos(ns))
    }

    /// Sets the time.
    pub fn set(&self, t: SystemTime) {
        if let Ok(mut g) = self.now.lock() {
            *g = t;
        }
    }

    /// Moves the time forward.
    pub fn advance(&self, d: Duration) {
        if let Ok(mut g) = self.now.lock() {
            *g += d;
        }
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        self.now.lock().map(|g| *g).unwrap_or(UNIX_EPOCH)
    }
}

/// A time as seconds and nanoseconds since the Unix epoch (negative before).
pub(crate) fn unix_parts(t: SystemTime) -> (i64, u32) {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => (
            i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            d.subsec_nanos(),
        ),
        Err(e) => {
            let d = e.duration();
            let secs = i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
            if d.subsec_nanos() == 0 {
                (secs.saturating_neg(), 0)
            } else {
                (
                    secs.saturating_neg().saturating_sub(1),
                    1_000_000_000 - d.subsec_nanos(),
                )
            }
        }
    }
}

/// Nanoseconds since the epoch, as Python's `time.time_ns()` gives them.
pub(crate) fn unix_nanos(t: SystemTime) -> i128 {
    let (s, ns) = unix_parts(t);
    i128::from(s) * 1_000_000_000 + i128::from(ns)
}

/// A file time as Python's `os.stat().st_mtime` float: `sec + nsec * 1e-9`.
pub(crate) fn py_mtime(t: SystemTime) -> f64 {
    let (s, ns) = unix_parts(t);
    s as f64 + f64::from(ns) * 1e-9
}

/// The whole second `datetime.fromtimestamp(ts)` lands in: the float is
/// split into seconds and microseconds rounded half to even, as CPython does.
pub(crate) fn py_timestamp_secs(ts: f64) -> i64 {
    if !ts.is_finite() {
        return 0;
    }
    let int = ts.trunc();
    let frac = ((ts - int) * 1e6).round_ties_even();
    let mut secs = int;
    if frac >= 1e6 {
        secs += 1.0;
    } else if frac < 0.0 {
        secs -= 1.0;
    }
    secs as i64
}

/// A broken-down local date and time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalDateTime {
    /// The year.
    pub year: i64,
    /// The month, 1 to 12.
    pub month: u32,
    /// The day of the month, 1 to 31.
    pub day: u32,
    /// The hour, 0 to 23.
    pub hour: u32,
    /// The minute, 0 to 59.
    pub minute: u32,
    /// The second, 0 to 59.
    pub second: u32,
}

impl LocalDateTime {
    /// The UTC date and time of `secs` seconds after the Unix epoch.
    pub fn from_unix(secs: i64) -> Self {
        Self::from_civil(civil(secs))
    }

    fn from_civil(dt: jiff::civil::DateTime) -> Self {
        // jiff's fields are in range by construction (year -9999..=9999,
        // month 1..=12, ...), so the conversions never fail.
        let u = |v: i8| u32::try_from(v).unwrap_or(0);
        LocalDateTime {
            year: i64::from(dt.year()),
            month: u(dt.month()),
            day: u(dt.day()),
            hour: u(dt.hour()),
            minute: u(dt.minute()),
            second: u(dt.second()),
        }
    }

    /// `%Y-%m-%d--%H-%M-%S`: the stamp in OC Chat file names.
    pub fn file_stamp(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}--{:02}-{:02}-{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// `%Y%m%d_%H%M%S`: the stamp inside OC Chat records.
    pub fn compact_stamp(&self) -> String {
        format!(
            "{:04}{:02}{:02}_{:02}{:02}{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// `%Y-%m-%d %H:%M`: the listing's `last_modified`.
    pub fn minute_stamp(&self) -> String {
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute
        )
    }

    /// `isoformat(timespec="seconds")` of a naive datetime.
    pub fn iso_seconds(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// The civil date and time `secs` after 1970-01-01T00:00:00, taken at the
/// nearest end of jiff's civil range (years −9999 to 9999) when outside it.
fn civil(secs: i64) -> jiff::civil::DateTime {
    const EPOCH: jiff::civil::DateTime = jiff::civil::date(1970, 1, 1).at(0, 0, 0, 0);
    EPOCH
        .checked_add(jiff::SignedDuration::from_secs(secs))
        .unwrap_or(if secs < 0 {
            jiff::civil::DateTime::MIN
        } else {
            jiff::civil::DateTime::MAX
        })
}

/// `secs` after the epoch as a jiff timestamp, taken at the nearest end of
/// jiff's range when outside it.
fn timestamp(secs: i64) -> jiff::Timestamp {
    let secs = secs.clamp(
        jiff::Timestamp::MIN.as_second(),
        jiff::Timestamp::MAX.as_second(),
    );
    jiff::Timestamp::from_second(secs).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

/// A time zone: how far local time is from UTC at any instant.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeZone {
    inner: jiff::tz::TimeZone,
}

impl TimeZone {
    /// UTC.
    pub fn utc() -> Self {
        TimeZone {
            inner: jiff::tz::TimeZone::UTC,
        }
    }

    /// A fixed offset, in seconds east of UTC (clamped to jiff's range,
    /// ±25:59:59).
    pub fn fixed(seconds_east: i32) -> Self {
        let max = jiff::tz::Offset::MAX.seconds();
        let o = jiff::tz::Offset::from_seconds(seconds_east.clamp(-max, max))
            .unwrap_or(jiff::tz::Offset::UTC);
        TimeZone {
            inner: jiff::tz::TimeZone::fixed(o),
        }
    }

    fn from_jiff(inner: jiff::tz::TimeZone) -> Self {
        TimeZone { inner }
    }

    /// The system's local time zone, found as C's `localtime` finds it:
    /// the `TZ` environment variable, else `/etc/localtime`; UTC when
    /// neither can be read.
    pub fn local() -> Self {
        match std::env::var_os("TZ") {
            None => super::glibc_tz::tzif_file(Path::new("/etc/localtime"))
                .map(Self::from_jiff)
                .unwrap_or_else(Self::utc),
            Some(v) => Self::from_tz_value(&v.to_string_lossy()),
        }
    }

    /// The zone a `TZ` value names, as glibc reads it: empty is UTC; a
    /// leading `:` is dropped; a name is looked up as a TZif file (an
    /// absolute path, else relative to `TZDIR` or `/usr/share/zoneinfo`,
    /// `..` components included, as glibc allows them outside set-user-ID
    /// programs), then read as a POSIX rule string the way glibc reads one
    /// (see below); a name that is neither is UTC.
    ///
    /// glibc is lenient where jiff is strict, and this crate keeps glibc's
    /// answers (how: `glibc_tz.rs` reads the value as glibc does and hands
    /// jiff the rule in its strict form; `tests/process/occhat_tz_glibc.rs` checks
    /// the result against the machine's glibc): offsets past 24 hours,
    /// minutes or seconds past 59 are clamped; a daylight-saving name
    /// without rules takes the US rules; a rule that does not parse, or
    /// text right after a rule's date, leaves the half-read state glibc
    /// leaves (a missing rule time is midnight, a missing rule is day 0).
    ///
    /// Left different from glibc: a daylight-saving name without rules
    /// follows the US rules of 2007 for every year (glibc follows the
    /// `posixrules` file's history); a half-read rule glibc evaluates with
    /// values outside the rule grammar (month 0 or past 12, day `J0`, a
    /// weekday past 6) gives the standard offset all year; before 1970 and
    /// around the turn of a year, glibc computes a rule's dates in the
    /// wrong year, jiff in the right one; a zone file whose footer rule
    /// disagrees with its last transition (never in the tzdb) is refused by
    /// jiff, and the name is then read as a rule string.
    pub fn from_tz_value(value: &str) -> Self {
        super::glibc_tz::zone_of_tz_value(value).map_or_else(Self::utc, Self::from_jiff)
    }

    /// A zone from a POSIX `TZ` rule string (`EST5EDT,M3.2.0,M11.1.0`,
    /// `<+0330>-3:30`), read as glibc reads it; `None` if glibc would not
    /// read a zone from it (it then takes UTC).
    pub fn from_posix(rule: &str) -> Option<Self> {
        super::glibc_tz::posix_rule(rule).map(Self::from_jiff)
    }

    /// A zone from the bytes of a TZif file; `None` if they are not one.
    pub fn from_tzif(bytes: &[u8]) -> Option<Self> {
        super::glibc_tz::tzif(bytes).map(Self::from_jiff)
    }

    /// The offset from UTC, in seconds east, at `secs` after the epoch.
    pub fn offset_at(&self, secs: i64) -> i32 {
        self.inner.to_offset(timestamp(secs)).seconds()
    }

    /// The local date and time of `secs` after the epoch. (The offset of
    /// an instant past jiff's range is the offset at its end; the civil
    /// time is then computed from the instant itself, so that every instant
    /// Python can format, up to 9999-12-31T23:59:59 local, is exact.)
    pub fn local_time(&self, secs: i64) -> LocalDateTime {
        LocalDateTime::from_unix(secs.saturating_add(i64::from(self.offset_at(secs))))
    }

    /// The local date and time of `t`, truncated to the second, as
    /// `datetime.now()` gives it.
    pub fn local_of(&self, t: SystemTime) -> LocalDateTime {
        self.local_time(unix_parts(t).0)
    }

    /// The local date and time `datetime.fromtimestamp(st_mtime)` gives for
    /// a file time (Python's float seconds, rounded to microseconds).
    pub fn local_of_file_time(&self, t: SystemTime) -> LocalDateTime {
        self.local_time(py_timestamp_secs(py_mtime(t)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seconds since the epoch of a UTC civil date at midnight.
    fn days_from_civil(y: i16, m: i8, d: i8) -> i64 {
        jiff::tz::Offset::UTC
            .to_timestamp(jiff::civil::date(y, m, d).at(0, 0, 0, 0))
            .unwrap()
            .as_second()
            / 86_400
    }

    #[test]
    fn stamps() {
        assert_eq!(
            LocalDateTime::from_unix(-1).iso_seconds(),
            "1969-12-31T23:59:59"
        );
        assert_eq!(
            LocalDateTime::from_unix(253_402_300_799).iso_seconds(),
            "9999-12-31T23:59:59"
        );
        let t = LocalDateTime::from_unix(1_744_016_143);
        assert_eq!(t.file_stamp(), "2025-04-07--08-55-43");
        assert_eq!(t.compact_stamp(), "20250407_085543");
        assert_eq!(t.minute_stamp(), "2025-04-07 08:55");
        assert_eq!(t.iso_seconds(), "2025-04-07T08:55:43");
    }

    #[test]
    fn posix_rules() {
        let cet = TimeZone::from_posix("CET-1CEST,M3.5.0,M10.5.0/3").unwrap();
        // 2025-03-30 00:59:59 UTC: still CET; 01:00:00 UTC: CEST.
        let switch = days_from_civil(2025, 3, 30) * 86_400 + 3600;
        assert_eq!(cet.offset_at(switch - 1), 3600);
        assert_eq!(cet.offset_at(switch), 7200);
        // 2025-10-26 01:00 UTC ends CEST.
        let back = days_from_civil(2025, 10, 26) * 86_400 + 3600;
        assert_eq!(cet.offset_at(back - 1), 7200);
        assert_eq!(cet.offset_at(back), 3600);
        let ny = TimeZone::from_posix("EST5EDT,M3.2.0,M11.1.0").unwrap();
        // 2025-03-09 07:00 UTC = 02:00 EST.
        let s = days_from_civil(2025, 3, 9) * 86_400 + 7 * 3600;
        assert_eq!(ny.offset_at(s - 1), -5 * 3600);
        assert_eq!(ny.offset_at(s), -4 * 3600);
        // Southern hemisphere: DST spans the new year.
        let nz = TimeZone::from_posix("NZST-12NZDT,M9.5.0,M4.1.0/3").unwrap();
        let jan = days_from_civil(2025, 1, 15) * 86_400;
        let jul = days_from_civil(2025, 7, 15) * 86_400;
        assert_eq!(nz.offset_at(jan), 13 * 3600);
        assert_eq!(nz.offset_at(jul), 12 * 3600);
        let odd = TimeZone::from_posix("<+0330>-3:30").unwrap();
        assert_eq!(odd.offset_at(0), 3 * 3600 + 1800);
        assert!(TimeZone::from_posix("X").is_none());
        assert_eq!(TimeZone::from_tz_value("").offset_at(1_751_328_000), 0);
    }

    fn tzif_v2(times: &[i64], idx: &[u8], offs: &[i32], footer: &str) -> Vec<u8> {
        let mut b = Vec::new();
        let header = |b: &mut Vec<u8>, timecnt: usize, typecnt: usize| {
            b.extend_from_slice(b"TZif2");
            b.extend_from_slice(&[0u8; 15]);
            for c in [0, 0, 0, timecnt, typecnt, 4] {
                b.extend_from_slice(&(c as u32).to_be_bytes());
            }
        };
        // v1 block: no transitions, one type.
        header(&mut b, 0, 1);
        b.extend_from_slice(&0i32.to_be_bytes());
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(b"UTC\0");
        header(&mut b, times.len(), offs.len());
        for t in times {
            b.extend_from_slice(&t.to_be_bytes());
        }
        b.extend_from_slice(idx);
        for o in offs {
            b.extend_from_slice(&o.to_be_bytes());
            b.extend_from_slice(&[0, 0]);
        }
        // jiff checks the footer's abbreviation against the last type's.
        b.extend_from_slice(b"+01\0");
        b.push(b'\n');
        b.extend_from_slice(footer.as_bytes());
        b.push(b'\n');
        b
    }

    #[test]
    fn tzif_transitions_and_footer() {
        let bytes = tzif_v2(&[1000, 2000], &[1, 0], &[3600, 7200], "<+01>-1");
        let tz = TimeZone::from_tzif(&bytes).unwrap();
        assert_eq!(tz.offset_at(0), 3600, "before the first: type 0");
        assert_eq!(tz.offset_at(1000), 7200);
        assert_eq!(tz.offset_at(1999), 7200);
        assert_eq!(tz.offset_at(5000), 3600, "past the last: the footer");
        assert!(TimeZone::from_tzif(&bytes[..50]).is_none());
        assert!(TimeZone::from_tzif(b"nope").is_none());
    }

    #[test]
    fn shipped_zone_file() {
        // A real tzdb file (Europe/Paris, 2025b, shipped under
        // tests/data so that the test never depends on the machine's
        // zoneinfo): transitions, then its footer rule.
        let b = include_bytes!("../../tests/data/zoneinfo/Europe/Paris");
        let tz = TimeZone::from_tzif(b).unwrap();
        assert_eq!(tz.offset_at(1_751_328_000), 7200, "2025-07-01");
        assert_eq!(tz.offset_at(1_736_899_200), 3600, "2025-01-15");
        assert_eq!(
            tz.offset_at(4_102_444_800 + 180 * 86_400),
            7200,
            "2100, footer"
        );
        assert_eq!(tz.offset_at(-2_000_000_000), 561, "1906: local mean time");
    }

    #[test]
    fn extreme_times_do_not_overflow() {
        // Fuzz finds (the occhat target): rules evaluated at the ends of
        // time overflowed `day * 86_400`.
        for rule in [
            "com9Jprp",
            "fal2seJe",
            "EST5EDT,M3.2.0,M11.1.0",
            "X0Y,J365/167,0/-167",
        ] {
            if let Some(tz) = TimeZone::from_posix(rule) {
                for t in [i64::MIN, i64::MIN + 1, -1, 0, i64::MAX - 1, i64::MAX] {
                    let _ = tz.local_time(t);
                }
            }
        }
    }

    #[test]
    fn python_timestamp_rounding() {
        assert_eq!(py_timestamp_secs(1.9999999), 2, "rounds to the next µs");
        assert_eq!(py_timestamp_secs(1.5), 1);
        assert_eq!(py_timestamp_secs(-0.5), -1);
        assert_eq!(py_timestamp_secs(-1.0), -1);
    }
}
