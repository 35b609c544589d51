//! Clocks and local time, as OC Chat's stamps need them.
//!
//! `persistence.py` formats local time (`datetime.now()`, `datetime.fromtimestamp`),
//! which C's `localtime` computes from the `TZ` environment variable or
//! `/etc/localtime`. [`TimeZone::local`] does the same by itself, without a
//! date crate: it reads `TZ` as glibc does (unset: `/etc/localtime`; empty:
//! UTC; `:name` or `name`: a TZif file under `/usr/share/zoneinfo` (or
//! `TZDIR`), else a POSIX rule string such as `CET-1CEST,M3.5.0,M10.5.0/3`),
//! and reads TZif files (RFC 8536, versions 1 to 4, with the footer rule for
//! times past the last transition). A zone that cannot be read is UTC, as
//! glibc makes it.
//!
//! Limitations: leap-second tables (`right/` zones) are ignored (the
//! offsets are those of the `posix/` zones); years are written with at least
//! four digits.
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
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        LocalDateTime {
            year,
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem % 3600 / 60) as u32,
            second: (rem % 60) as u32,
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

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) to days since 1970-01-01.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

/// A time zone: how far local time is from UTC at any instant.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeZone {
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Fixed(i32),
    Rule(PosixTz),
    Table(Table),
}

/// A TZif file's content: transitions, their offsets, and the footer rule.
#[derive(Debug, Clone, PartialEq)]
struct Table {
    times: Vec<i64>,
    /// Offset (seconds east of UTC) after each transition.
    offsets: Vec<i32>,
    /// Offset before the first transition.
    initial: i32,
    footer: Option<PosixTz>,
}

/// A POSIX `TZ` rule: standard offset and optional daylight-saving rule.
#[derive(Debug, Clone, PartialEq)]
struct PosixTz {
    /// Standard offset, seconds east of UTC.
    std: i32,
    dst: Option<Dst>,
}

#[derive(Debug, Clone, PartialEq)]
struct Dst {
    offset: i32,
    start: Rule,
    end: Rule,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Rule {
    date: RuleDate,
    /// Local time of day of the change, seconds (may be negative or > 24 h).
    time: i32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum RuleDate {
    /// `Jn`: day 1..=365, February 29 never counted.
    Julian1(u16),
    /// `n`: day 0..=365, February 29 counted.
    Julian0(u16),
    /// `Mm.w.d`: weekday d (0 = Sunday) of week w (5 = last) of month m.
    Month { m: u32, w: u32, d: u32 },
}

impl TimeZone {
    /// UTC.
    pub fn utc() -> Self {
        TimeZone {
            kind: Kind::Fixed(0),
        }
    }

    /// A fixed offset, in seconds east of UTC.
    pub fn fixed(seconds_east: i32) -> Self {
        TimeZone {
            kind: Kind::Fixed(seconds_east),
        }
    }

    /// The system's local time zone, found as C's `localtime` finds it:
    /// the `TZ` environment variable, else `/etc/localtime`; UTC when
    /// neither can be read.
    pub fn local() -> Self {
        match std::env::var_os("TZ") {
            None => Self::from_tzif_file(Path::new("/etc/localtime")).unwrap_or_else(Self::utc),
            Some(v) => Self::from_tz_value(&v.to_string_lossy()),
        }
    }

    /// The zone a `TZ` value names, as glibc reads it: empty is UTC; a
    /// leading `:` is dropped; a name is looked up as a TZif file (an
    /// absolute path, or under `TZDIR` / `/usr/share/zoneinfo`), then read as
    /// a POSIX rule string; anything else is UTC.
    pub fn from_tz_value(value: &str) -> Self {
        let v = value.strip_prefix(':').unwrap_or(value);
        if v.is_empty() {
            return Self::utc();
        }
        let file = if v.starts_with('/') {
            Some(std::path::PathBuf::from(v))
        } else if !v.split('/').any(|c| c == "..") {
            let dir = std::env::var_os("TZDIR")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| "/usr/share/zoneinfo".into());
            Some(dir.join(v))
        } else {
            None
        };
        if let Some(tz) = file.and_then(|f| Self::from_tzif_file(&f)) {
            return tz;
        }
        Self::from_posix(v).unwrap_or_else(Self::utc)
    }

    /// A zone from a POSIX `TZ` rule string (`EST5EDT,M3.2.0,M11.1.0`,
    /// `<+0330>-3:30`); `None` if it does not parse.
    pub fn from_posix(rule: &str) -> Option<Self> {
        parse_posix(rule).map(|p| TimeZone {
            kind: Kind::Rule(p),
        })
    }

    /// A zone from the bytes of a TZif file; `None` if they are not one.
    pub fn from_tzif(bytes: &[u8]) -> Option<Self> {
        parse_tzif(bytes).map(|t| TimeZone {
            kind: Kind::Table(t),
        })
    }

    fn from_tzif_file(path: &Path) -> Option<Self> {
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_file() || meta.len() > 1 << 20 {
            return None;
        }
        Self::from_tzif(&std::fs::read(path).ok()?)
    }

    /// The offset from UTC, in seconds east, at `secs` after the epoch.
    pub fn offset_at(&self, secs: i64) -> i32 {
        match &self.kind {
            Kind::Fixed(o) => *o,
            Kind::Rule(p) => p.offset_at(secs),
            Kind::Table(t) => t.offset_at(secs),
        }
    }

    /// The local date and time of `secs` after the epoch.
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

impl Table {
    fn offset_at(&self, secs: i64) -> i32 {
        let n = self.times.partition_point(|&t| t <= secs);
        if n == 0 {
            return self.initial;
        }
        if n == self.times.len()
            && let Some(f) = &self.footer
        {
            return f.offset_at(secs);
        }
        self.offsets.get(n - 1).copied().unwrap_or(self.initial)
    }
}

impl PosixTz {
    fn offset_at(&self, secs: i64) -> i32 {
        let Some(dst) = &self.dst else {
            return self.std;
        };
        let year = LocalDateTime::from_unix(secs.saturating_add(i64::from(self.std))).year;
        // Check the year before and after as well: a rule time past 24 h or
        // a southern-hemisphere span can cross the year boundary.
        for y in [year - 1, year, year + 1] {
            let start = dst.start.instant(y).saturating_sub(i64::from(self.std));
            let end = dst.end.instant(y).saturating_sub(i64::from(dst.offset));
            if start < end {
                if start <= secs && secs < end {
                    return dst.offset;
                }
            } else {
                // DST spans the new year: it is on from `start` of year y
                // to `end` of year y + 1.
                let end_next = dst.end.instant(y + 1).saturating_sub(i64::from(dst.offset));
                if start <= secs && secs < end_next {
                    return dst.offset;
                }
            }
        }
        self.std
    }
}

impl Rule {
    /// Seconds from the epoch to the rule's local wall time in year `y`,
    /// as if local time were UTC.
    fn instant(&self, y: i64) -> i64 {
        let jan1 = days_from_civil(y, 1, 1);
        let day = match self.date {
            RuleDate::Julian1(n) => {
                let n = i64::from(n.clamp(1, 365));
                // Days 60.. are after February 28 and skip February 29.
                jan1 + n - 1 + i64::from(is_leap(y) && n >= 60)
            }
            RuleDate::Julian0(n) => jan1 + i64::from(n.min(365)),
            RuleDate::Month { m, w, d } => {
                let m = m.clamp(1, 12);
                let first = days_from_civil(y, m, 1);
                // 1970-01-01 was a Thursday (4).
                let wd_first = (first + 4).rem_euclid(7);
                let mut day = first + (i64::from(d) - wd_first).rem_euclid(7);
                let days_in_month = if m == 12 {
                    days_from_civil(y + 1, 1, 1) - first
                } else {
                    days_from_civil(y, m + 1, 1) - first
                };
                let weeks = i64::from(w.clamp(1, 5)) - 1;
                day += 7 * weeks;
                while day >= first + days_in_month {
                    day -= 7;
                }
                day
            }
        };
        // Saturating: a time far outside any calendar still maps to an
        // instant (the rule then never or always applies), never overflows.
        day.saturating_mul(86_400)
            .saturating_add(i64::from(self.time))
    }
}

/// Parses a POSIX TZ string.
fn parse_posix(s: &str) -> Option<PosixTz> {
    let mut p = Cursor {
        s: s.as_bytes(),
        i: 0,
    };
    p.name()?;
    let std = -p.offset()?;
    if p.done() {
        return Some(PosixTz { std, dst: None });
    }
    p.name()?;
    let dst_offset = if p.peek().is_some_and(|c| c == b',') || p.done() {
        std + 3600
    } else {
        -p.offset()?
    };
    let (start, end) = if p.done() {
        // glibc's default when no rule is given: the US rules.
        (
            Rule {
                date: RuleDate::Month { m: 3, w: 2, d: 0 },
                time: 7200,
            },
            Rule {
                date: RuleDate::Month { m: 11, w: 1, d: 0 },
                time: 7200,
            },
        )
    } else {
        p.eat(b',')?;
        let start = p.rule()?;
        p.eat(b',')?;
        let end = p.rule()?;
        (start, end)
    };
    if !p.done() {
        return None;
    }
    Some(PosixTz {
        std,
        dst: Some(Dst {
            offset: dst_offset,
            start,
            end,
        }),
    })
}

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn done(&self) -> bool {
        self.i >= self.s.len()
    }
    fn eat(&mut self, c: u8) -> Option<()> {
        if self.peek() == Some(c) {
            self.i += 1;
            Some(())
        } else {
            None
        }
    }
    fn name(&mut self) -> Option<()> {
        if self.peek() == Some(b'<') {
            self.i += 1;
            while let Some(c) = self.peek() {
                self.i += 1;
                if c == b'>' {
                    return Some(());
                }
            }
            return None;
        }
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
            self.i += 1;
        }
        (self.i - start >= 3).then_some(())
    }
    fn number(&mut self, max_digits: usize) -> Option<i32> {
        let start = self.i;
        let mut v: i32 = 0;
        while let Some(c) = self.peek().filter(u8::is_ascii_digit) {
            if self.i - start >= max_digits {
                return None;
            }
            v = v * 10 + i32::from(c - b'0');
            self.i += 1;
        }
        (self.i > start).then_some(v)
    }
    /// `[+-]hh[:mm[:ss]]` in seconds, as written (positive = west).
    fn offset(&mut self) -> Option<i32> {
        let sign = match self.peek() {
            Some(b'-') => {
                self.i += 1;
                -1
            }
            Some(b'+') => {
                self.i += 1;
                1
            }
            _ => 1,
        };
        let h = self.number(3)?;
        let mut secs = h * 3600;
        if self.eat(b':').is_some() {
            secs += self.number(2)? * 60;
            if self.eat(b':').is_some() {
                secs += self.number(2)?;
            }
        }
        (h <= 167).then_some(sign * secs)
    }
    fn rule(&mut self) -> Option<Rule> {
        let date = match self.peek()? {
            b'J' => {
                self.i += 1;
                let n = self.number(3)?;
                if !(1..=365).contains(&n) {
                    return None;
                }
                RuleDate::Julian1(n as u16)
            }
            b'M' => {
                self.i += 1;
                let m = self.number(2)?;
                self.eat(b'.')?;
                let w = self.number(1)?;
                self.eat(b'.')?;
                let d = self.number(1)?;
                if !(1..=12).contains(&m) || !(1..=5).contains(&w) || d > 6 {
                    return None;
                }
                RuleDate::Month {
                    m: m as u32,
                    w: w as u32,
                    d: d as u32,
                }
            }
            _ => {
                let n = self.number(3)?;
                if n > 365 {
                    return None;
                }
                RuleDate::Julian0(n as u16)
            }
        };
        let time = if self.eat(b'/').is_some() {
            self.offset()?
        } else {
            7200
        };
        Some(Rule { date, time })
    }
}

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

fn be_i64(b: &[u8], at: usize) -> Option<i64> {
    let s: [u8; 8] = b.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(i64::from_be_bytes(s))
}

/// Parses a TZif file (RFC 8536).
fn parse_tzif(b: &[u8]) -> Option<Table> {
    if b.get(..4)? != b"TZif" {
        return None;
    }
    let version = *b.get(4)?;
    let counts = |at: usize| -> Option<[usize; 6]> {
        let mut c = [0usize; 6];
        for (k, slot) in c.iter_mut().enumerate() {
            *slot = be_u32(b, at + 20 + 4 * k)? as usize;
        }
        Some(c)
    };
    let [isut, isstd, leap, timecnt, typecnt, charcnt] = counts(0)?;
    let (base, time_size, c) = if version >= b'2' {
        let v1_len = timecnt
            .checked_mul(5)?
            .checked_add(typecnt.checked_mul(6)?)?
            .checked_add(charcnt)?
            .checked_add(leap.checked_mul(8)?)?
            .checked_add(isstd)?
            .checked_add(isut)?;
        let h2 = 44usize.checked_add(v1_len)?;
        if b.get(h2..h2 + 4)? != b"TZif" {
            return None;
        }
        (h2 + 44, 8usize, counts(h2)?)
    } else {
        (
            44usize,
            4usize,
            [isut, isstd, leap, timecnt, typecnt, charcnt],
        )
    };
    let [isut, isstd, leap, timecnt, typecnt, charcnt] = c;
    if typecnt == 0 {
        return None;
    }
    let times_at = base;
    let idx_at = times_at.checked_add(timecnt.checked_mul(time_size)?)?;
    let types_at = idx_at.checked_add(timecnt)?;
    let chars_at = types_at.checked_add(typecnt.checked_mul(6)?)?;
    let leap_at = chars_at.checked_add(charcnt)?;
    let end = leap_at
        .checked_add(leap.checked_mul(time_size + 4)?)?
        .checked_add(isstd)?
        .checked_add(isut)?;
    if b.len() < end {
        return None;
    }
    let mut type_offsets = Vec::with_capacity(typecnt);
    for k in 0..typecnt {
        type_offsets.push(be_u32(b, types_at + 6 * k)? as i32);
    }
    let mut times = Vec::with_capacity(timecnt);
    let mut offsets = Vec::with_capacity(timecnt);
    for k in 0..timecnt {
        let t = if time_size == 8 {
            be_i64(b, times_at + 8 * k)?
        } else {
            i64::from(be_u32(b, times_at + 4 * k)? as i32)
        };
        let ti = *b.get(idx_at + k)? as usize;
        times.push(t);
        offsets.push(*type_offsets.get(ti)?);
    }
    let initial = *type_offsets.first()?;
    let footer = if version >= b'2' {
        b.get(end..).and_then(|rest| {
            let rest = rest.strip_prefix(b"\n")?;
            let nl = rest.iter().position(|&c| c == b'\n')?;
            let s = std::str::from_utf8(rest.get(..nl)?).ok()?;
            if s.is_empty() { None } else { parse_posix(s) }
        })
    } else {
        None
    };
    Some(Table {
        times,
        offsets,
        initial,
        footer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        for days in [-719_468i64, -1, 0, 1, 10_957, 20_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
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
        assert_eq!(TimeZone::from_tz_value(""), TimeZone::utc());
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
        b.extend_from_slice(b"ABC\0");
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
    fn system_zone_file_if_present() {
        // The machine's own UTC zone file parses to offset 0.
        if let Ok(b) = std::fs::read("/usr/share/zoneinfo/Etc/UTC") {
            assert_eq!(TimeZone::from_tzif(&b).unwrap().offset_at(1_700_000_000), 0);
        }
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
