//! How glibc reads a `TZ` value, so that OC Chat's stamps here are the ones
//! Python's `datetime` prints under glibc: which TZif file a value names, and
//! how glibc's lenient POSIX rule reader (`__tzset_parse_tz` in glibc's
//! `time/tzset.c`) reads a rule string. jiff does the rest: it reads TZif
//! files and evaluates rules, and is strict where glibc is lenient, so a
//! rule string is read here as glibc reads it and written back in the
//! strict form jiff accepts, with glibc's values.
//!
//! What this module keeps of glibc, where jiff alone would answer
//! differently (each is checked against the machine's own glibc in
//! `tests/process/occhat_tz_glibc.rs`):
//! - an empty `TZ` is the zone file `Universal`, else UTC; `:` is dropped;
//! - a value is first a file (absolute, or under `TZDIR`, else
//!   `/usr/share/zoneinfo`, `..` allowed as glibc allows it outside
//!   set-user-ID programs), and only then a rule string; a value that is
//!   neither (an unknown name, a path to something else) is UTC;
//! - offsets: hours past 24 and minutes or seconds past 59 are clamped;
//! - a daylight-saving name without rules takes the US rules
//!   (`M3.2.0,M11.1.0`);
//! - a rule that does not parse leaves what glibc had read of it, and the
//!   fields it had not reached keep glibc's zero state (day `0`, time
//!   `00:00`): text right after a rule's date stops it there, so its time
//!   is midnight; text after a complete second rule is ignored.

use std::path::{Path, PathBuf};

use jiff::tz::TimeZone;

/// The largest zone file read (the largest in the tzdb is about 100 KiB).
const MAX_TZIF_LEN: u64 = 1 << 20;

/// The zone a `TZ` value names, as glibc's `tzset` finds it; `None` for
/// UTC.
pub(super) fn zone_of_tz_value(value: &str) -> Option<TimeZone> {
    // glibc: an empty value is the file `Universal` (UTC if absent), a
    // leading `:` is dropped, and an empty name (`TZ=:`) is UTC.
    let v = if value.is_empty() { "Universal" } else { value };
    let v = v.strip_prefix(':').unwrap_or(v);
    if v.is_empty() {
        return None;
    }
    let file = if v.starts_with('/') {
        PathBuf::from(v)
    } else {
        let dir = std::env::var_os("TZDIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| "/usr/share/zoneinfo".into());
        // glibc joins with a `/` and refuses nothing here (`..` is refused
        // only in set-user-ID programs); `Path::join` would replace the
        // directory by an absolute name, which cannot happen here.
        dir.join(v)
    };
    if let Some(tz) = tzif_file(&file) {
        return Some(tz);
    }
    if v == "/etc/localtime" {
        return None;
    }
    posix_rule(v)
}

/// A TZif file, if `path` is a regular file that parses as one.
pub(super) fn tzif_file(path: &Path) -> Option<TimeZone> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_TZIF_LEN {
        return None;
    }
    tzif(&std::fs::read(path).ok()?)
}

/// A zone from TZif bytes. Where jiff and glibc differ on files the tzdb
/// never holds, jiff's answer is kept: before the first transition jiff
/// takes time type 0, as RFC 8536 says, glibc the first non-DST type
/// (type 0 in every tzdb file); jiff refuses a file whose footer rule
/// disagrees with its last transition, which glibc reads (the zone is then
/// read from the name as a rule string, as glibc does with a file it
/// cannot read).
pub(super) fn tzif(bytes: &[u8]) -> Option<TimeZone> {
    TimeZone::tzif("", bytes).ok()
}

/// A rule string read as glibc reads it; `None` where glibc gives UTC.
pub(super) fn posix_rule(s: &str) -> Option<TimeZone> {
    // A C string ends at its first NUL.
    let s = s.split('\0').next().unwrap_or_default();
    let r = read_rule(s.as_bytes())?;
    let strict = r.strict();
    // `strict` is built to jiff's grammar; where a value lies outside it
    // (see `Rule::strict`), glibc's standard offset is the answer kept.
    match strict.and_then(|s| TimeZone::posix(&s).ok()) {
        Some(tz) => Some(tz),
        None => jiff::tz::Offset::from_seconds(r.std_offset)
            .ok()
            .map(TimeZone::fixed),
    }
}

/// What glibc knows after reading a rule string: the offsets (seconds
/// east) and, if anything followed the standard part, the two changes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct GlibcRule {
    std_offset: i32,
    dst: Option<(i32, TzRule, TzRule)>,
}

/// One change rule as glibc's `tz_rule` holds it (all zero to start).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct TzRule {
    kind: DayKind,
    /// `J0`/`J1`: the day; `M`: the weekday.
    d: u16,
    m: u16,
    n: u16,
    /// Seconds after local midnight.
    secs: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
enum DayKind {
    /// `n`: day of the year from 0, February 29 counted.
    #[default]
    J0,
    /// `Jn`: day of the year from 1, February 29 never counted.
    J1,
    /// `Mm.n.d`.
    M,
}

impl GlibcRule {
    /// The rule in jiff's strict grammar; `None` where a value glibc keeps
    /// has no strict spelling (a DST offset past 24:59:59, or a change
    /// glibc evaluates with undefined values).
    fn strict(&self) -> Option<String> {
        let Some((dst, start, end)) = self.dst else {
            return Some(format!("STD{}", posix_offset(self.std_offset)?));
        };
        Some(format!(
            "STD{}DST{},{},{}",
            posix_offset(self.std_offset)?,
            posix_offset(dst)?,
            start.strict()?,
            end.strict()?
        ))
    }
}

impl TzRule {
    fn strict(&self) -> Option<String> {
        let date = match self.kind {
            DayKind::J0 => format!("{}", self.d),
            // glibc's `J0` (day before January 1) has no strict spelling.
            DayKind::J1 if self.d == 0 => return None,
            DayKind::J1 => format!("J{}", self.d),
            DayKind::M => {
                // Month 0 or past 12: glibc reads outside its month table.
                // A weekday past 6 lands past the month. Week 0 counts as
                // week 1, past 5 as the last, as glibc's loop makes them.
                if !(1..=12).contains(&self.m) || self.d > 6 {
                    return None;
                }
                format!("M{}.{}.{}", self.m, self.n.clamp(1, 5), self.d)
            }
        };
        let a = self.secs.unsigned_abs();
        if a > 167 * 3600 + 59 * 60 + 59 {
            return None;
        }
        let sign = if self.secs < 0 { "-" } else { "" };
        Some(format!(
            "{date}/{sign}{}:{:02}:{:02}",
            a / 3600,
            a / 60 % 60,
            a % 60
        ))
    }
}

/// An offset (seconds east) as POSIX writes it (west positive); `None`
/// past jiff's ±24:59:59.
fn posix_offset(east: i32) -> Option<String> {
    let a = east.unsigned_abs();
    if a > 24 * 3600 + 59 * 60 + 59 {
        return None;
    }
    let sign = if east > 0 { "-" } else { "+" };
    Some(format!(
        "{sign}{}:{:02}:{:02}",
        a / 3600,
        a / 60 % 60,
        a % 60
    ))
}

/// glibc's reader, step by step (`__tzset_parse_tz`, `parse_tzname`,
/// `parse_offset`, `parse_rule`); `None` where it leaves UTC.
fn read_rule(s: &[u8]) -> Option<GlibcRule> {
    let mut p = TzStringReader { s, i: 0 };
    if !p.name() {
        return None;
    }
    let std_offset = p.offset(true)?;
    if p.done() {
        return Some(GlibcRule {
            std_offset,
            dst: None,
        });
    }
    let mut dst_offset = 0;
    let mut start = TzRule::default();
    let mut end = TzRule::default();
    if p.name() {
        dst_offset = p.offset(false).unwrap_or(std_offset + 3600);
        if p.done() || p.rest() == b"," {
            // glibc takes the `posixrules` file here when there is one
            // (the US rules, with their history); the US rules since 2007.
            p.i = s.len();
        }
    }
    if p.change(0, &mut start) {
        p.change(1, &mut end);
    }
    Some(GlibcRule {
        std_offset,
        dst: Some((dst_offset, start, end)),
    })
}

struct TzStringReader<'a> {
    s: &'a [u8],
    i: usize,
}

impl TzStringReader<'_> {
    fn peek(&self) -> u8 {
        self.s.get(self.i).copied().unwrap_or(0)
    }

    fn done(&self) -> bool {
        self.i >= self.s.len()
    }

    fn rest(&self) -> &[u8] {
        self.s.get(self.i..).unwrap_or_default()
    }

    /// `parse_tzname`: three or more letters, or `<` three or more of
    /// `[A-Za-z0-9+-]` `>`.
    fn name(&mut self) -> bool {
        let rest = self.rest();
        let letters = rest.iter().take_while(|c| c.is_ascii_alphabetic()).count();
        if letters >= 3 {
            self.i += letters;
            return true;
        }
        if rest.first() != Some(&b'<') {
            return false;
        }
        let inner = rest[1..]
            .iter()
            .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'+' || c == b'-')
            .count();
        if rest.get(1 + inner) != Some(&b'>') || inner < 3 {
            return false;
        }
        self.i += inner + 2;
        true
    }

    /// `parse_offset`: `[+-]hh[:mm[:ss]]` in seconds east, hours clamped
    /// to 24 and minutes and seconds to 59. `None` when no number is read:
    /// for the standard part glibc then gives UTC, for the daylight part
    /// it takes one hour more than standard. The standard part must start
    /// with a sign or a digit; the daylight part is scanned as it is
    /// (`%hu` skips white space and takes a sign of its own).
    fn offset(&mut self, standard: bool) -> Option<i32> {
        let c = self.peek();
        if standard && (self.done() || !(c == b'+' || c == b'-' || c.is_ascii_digit())) {
            return None;
        }
        let sign: i64 = if c == b'-' { 1 } else { -1 };
        if c == b'-' || c == b'+' {
            self.i += 1;
        }
        let (h, m, sec, used) = scan_hms(self.rest());
        self.i += used;
        let h = h?;
        let total = i64::from(h.min(24)) * 3600
            + i64::from(m.unwrap_or(0).min(59)) * 60
            + i64::from(sec.unwrap_or(0).min(59));
        i32::try_from(sign * total).ok()
    }

    /// `parse_rule`: a change's date and time into `c`, `false` where glibc
    /// stops (what was read stays in `c`).
    fn change(&mut self, which: usize, c: &mut TzRule) -> bool {
        if self.peek() == b',' {
            self.i += 1;
        }
        let first = self.peek();
        if first == b'J' || first.is_ascii_digit() {
            c.kind = if first == b'J' {
                DayKind::J1
            } else {
                DayKind::J0
            };
            if first == b'J' {
                self.i += 1;
                if !self.peek().is_ascii_digit() {
                    return false;
                }
            }
            let digits = self
                .rest()
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            let d = std::str::from_utf8(&self.rest()[..digits])
                .ok()
                .and_then(|t| t.parse::<u64>().ok())
                .unwrap_or(u64::MAX);
            self.i += digits;
            if d > 365 || (c.kind == DayKind::J1 && d == 0) {
                return false;
            }
            c.d = d as u16;
        } else if first == b'M' {
            c.kind = DayKind::M;
            let rest = &self.rest()[1..];
            let (m, used_m) = scan_hu(rest);
            let Some(m) = m else { return false };
            c.m = m;
            let Some((n, used_n)) = dot_then_hu(&rest[used_m..]) else {
                return false;
            };
            c.n = n;
            let Some((d, used_d)) = dot_then_hu(&rest[used_m + used_n..]) else {
                return false;
            };
            c.d = d;
            if !(1..=12).contains(&c.m) || !(1..=5).contains(&c.n) || c.d > 6 {
                return false;
            }
            self.i += 1 + used_m + used_n + used_d;
        } else if self.done() {
            // glibc's default rules: the US ones.
            c.kind = DayKind::M;
            (c.m, c.n, c.d) = if which == 0 { (3, 2, 0) } else { (11, 1, 0) };
        } else {
            return false;
        }
        match self.peek() {
            0 if self.done() => c.secs = 7200,
            b',' => c.secs = 7200,
            b'/' => {
                self.i += 1;
                if self.done() {
                    return false;
                }
                let negative = self.peek() == b'-';
                if negative {
                    self.i += 1;
                }
                let (h, m, s, used) = scan_hms(self.rest());
                self.i += used;
                let secs = i64::from(h.unwrap_or(2)) * 3600
                    + i64::from(m.unwrap_or(0)) * 60
                    + i64::from(s.unwrap_or(0));
                c.secs = if negative { -secs } else { secs };
            }
            _ => return false,
        }
        true
    }
}

/// `sscanf(s, "%hu%n:%hu%n:%hu%n")`: up to three numbers and the bytes
/// used up to the last one read.
fn scan_hms(s: &[u8]) -> (Option<u16>, Option<u16>, Option<u16>, usize) {
    let (h, mut used) = scan_hu(s);
    let Some(h) = h else {
        return (None, None, None, 0);
    };
    let next = |used: &mut usize| -> Option<u16> {
        if s.get(*used) != Some(&b':') {
            return None;
        }
        let (v, n) = scan_hu(&s[*used + 1..]);
        let v = v?;
        *used += 1 + n;
        Some(v)
    };
    let m = next(&mut used);
    let sec = if m.is_some() { next(&mut used) } else { None };
    (Some(h), m, sec, used)
}

/// `.` then `%hu`, as in glibc's `"M%hu.%hu.%hu"`.
fn dot_then_hu(s: &[u8]) -> Option<(u16, usize)> {
    if s.first() != Some(&b'.') {
        return None;
    }
    let (v, n) = scan_hu(&s[1..]);
    Some((v?, n + 1))
}

/// One `%hu` conversion: white space skipped, an optional sign, decimal
/// digits, the value as `strtoul` makes it (saturated on overflow, negated
/// modulo 2⁶⁴ after a `-`) cut to 16 bits; and the bytes used.
fn scan_hu(s: &[u8]) -> (Option<u16>, usize) {
    let mut i = s
        .iter()
        .take_while(|&&c| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
        .count();
    let negative = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let digits = s[i.min(s.len())..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits == 0 {
        return (None, 0);
    }
    let mut v: u64 = 0;
    let mut overflow = false;
    for &c in &s[i..i + digits] {
        match v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(c - b'0')))
        {
            Some(n) => v = n,
            None => overflow = true,
        }
    }
    let v = if overflow {
        u64::MAX
    } else if negative {
        v.wrapping_neg()
    } else {
        v
    };
    (Some(v as u16), i + digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict(s: &str) -> Option<String> {
        read_rule(s.as_bytes()).and_then(|r| r.strict())
    }

    #[test]
    fn glibc_reading_in_strict_form() {
        assert_eq!(strict("XST5").as_deref(), Some("STD+5:00:00"));
        assert_eq!(strict("XST-25").as_deref(), Some("STD-24:00:00"));
        assert_eq!(strict("XST+5:30:99").as_deref(), Some("STD+5:30:59"));
        assert_eq!(strict("<+0330>-3:30").as_deref(), Some("STD-3:30:00"));
        assert_eq!(
            strict("CET-1CEST,M3.5.0,M10.5.0/3").as_deref(),
            Some("STD-1:00:00DST-2:00:00,M3.5.0/2:00:00,M10.5.0/3:00:00")
        );
        // No rules: the US ones.
        assert_eq!(
            strict("XST5XDT").as_deref(),
            Some("STD+5:00:00DST+4:00:00,M3.2.0/2:00:00,M11.1.0/2:00:00")
        );
        // A second rule that stops at trailing text keeps its date but not
        // its time (glibc's zero state: midnight).
        assert_eq!(
            strict("XST5XDT,M3.2.0,M11.1.0x").as_deref(),
            Some("STD+5:00:00DST+4:00:00,M3.2.0/2:00:00,M11.1.0/0:00:00")
        );
        // No daylight name: its offset is glibc's zero.
        assert_eq!(
            strict("XST5,").as_deref(),
            Some("STD+5:00:00DST+0:00:00,M3.2.0/2:00:00,M11.1.0/2:00:00")
        );
        // UTC where glibc gives UTC.
        for s in ["", "XS5", "XST", "X100", "Foo/Bar", "XST 5"] {
            assert!(read_rule(s.as_bytes()).is_none(), "{s:?}");
        }
        assert_eq!(scan_hu(b" -1"), (Some(65535), 3));
        assert_eq!(scan_hu(b"99999999999999999999999"), (Some(65535), 23));
    }

    proptest::proptest! {
        #[test]
        fn any_rule_text_gives_a_zone_or_utc_without_panic(
            s in "[A-Z<>+\\-0-9:,./JM \t\0]{0,40}",
        ) {
            if let Some(tz) = posix_rule(&s) {
                for t in [i64::MIN, -1, 0, 1_700_000_000, 4_102_444_800, i64::MAX] {
                    let t = jiff::Timestamp::from_second(t.clamp(
                        jiff::Timestamp::MIN.as_second(),
                        jiff::Timestamp::MAX.as_second(),
                    ))
                    .unwrap();
                    let _ = tz.to_offset(t);
                }
            }
        }
    }
}
