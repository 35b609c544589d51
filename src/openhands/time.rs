//! Timestamps as OpenHands writes them.
//!
//! An event's `timestamp` is `datetime.now().isoformat()`: the writing
//! process's local time with no zone (`2026-05-04T16:30:28.123456`, the
//! fraction left out when the microsecond is 0). `meta.json`'s
//! `created_at`/`updated_at` are UTC with a `Z`. [`parse_time`] reads both.
//!
//! The grammar is the reference package's (a subset of Python's
//! `datetime.fromisoformat`), read here; the calendar (which dates exist,
//! seconds since the epoch) is the `jiff` crate's. jiff's own ISO 8601
//! parser is not used: it accepts what this contract refuses (the basic
//! format without dashes and colons, bracketed zone annotations) and limits
//! fractions to nine digits, where this contract keeps the first nine of
//! any number.

use std::fmt;

/// A fixed offset from UTC, strictly between −24 h and +24 h (Python's
/// `timezone` range).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct UtcOffset(i32);

impl UtcOffset {
    /// UTC.
    pub const UTC: UtcOffset = UtcOffset(0);

    /// An offset of `seconds` east of UTC; `None` unless strictly within a
    /// day.
    pub const fn from_seconds(seconds: i32) -> Option<UtcOffset> {
        if seconds > -86_400 && seconds < 86_400 {
            Some(UtcOffset(seconds))
        } else {
            None
        }
    }

    /// An offset of `hours` and `minutes` (both with the offset's sign, as
    /// in `from_hm(-5, -30)`).
    pub const fn from_hm(hours: i32, minutes: i32) -> Option<UtcOffset> {
        if hours.abs() > 23 || minutes.abs() > 59 {
            return None;
        }
        Self::from_seconds(hours * 3600 + minutes * 60)
    }

    /// The offset in seconds east of UTC.
    pub const fn seconds(self) -> i32 {
        self.0
    }
}

impl fmt::Display for UtcOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        let sign = if s < 0 { '-' } else { '+' };
        let a = s.unsigned_abs();
        write!(f, "{sign}{:02}:{:02}", a / 3600, a / 60 % 60)?;
        if !a.is_multiple_of(60) {
            write!(f, ":{:02}", a % 60)?;
        }
        Ok(())
    }
}

/// A point in time with the local date and time it was written in: the civil
/// fields (years 1 to 9999, as Python's `datetime`) and their UTC offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Timestamp {
    year: u16,
    month: u8,
    day: u8,
    hour: u8,
    minute: u8,
    second: u8,
    nanosecond: u32,
    offset: UtcOffset,
}

impl Timestamp {
    /// A timestamp from civil fields; `None` when a field is out of range
    /// (year 1 to 9999, a real day of the month, hour 0 to 23, minute and
    /// second 0 to 59, nanosecond below 10⁹).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        year: u16,
        month: u8,
        day: u8,
        hour: u8,
        minute: u8,
        second: u8,
        nanosecond: u32,
        offset: UtcOffset,
    ) -> Option<Timestamp> {
        if !(1..=9999).contains(&year) {
            return None;
        }
        // jiff checks the rest: a real day of the month, the time of day.
        jiff::civil::DateTime::new(
            i16::try_from(year).ok()?,
            i8::try_from(month).ok()?,
            i8::try_from(day).ok()?,
            i8::try_from(hour).ok()?,
            i8::try_from(minute).ok()?,
            i8::try_from(second).ok()?,
            i32::try_from(nanosecond).ok()?,
        )
        .ok()?;
        Some(Timestamp {
            year,
            month,
            day,
            hour,
            minute,
            second,
            nanosecond,
            offset,
        })
    }

    /// The year (1 to 9999).
    pub fn year(&self) -> u16 {
        self.year
    }
    /// The month (1 to 12).
    pub fn month(&self) -> u8 {
        self.month
    }
    /// The day of the month (1 to 31).
    pub fn day(&self) -> u8 {
        self.day
    }
    /// The hour (0 to 23).
    pub fn hour(&self) -> u8 {
        self.hour
    }
    /// The minute (0 to 59).
    pub fn minute(&self) -> u8 {
        self.minute
    }
    /// The second (0 to 59).
    pub fn second(&self) -> u8 {
        self.second
    }
    /// The fraction of the second, in nanoseconds.
    pub fn nanosecond(&self) -> u32 {
        self.nanosecond
    }
    /// The UTC offset of the civil fields.
    pub fn offset(&self) -> UtcOffset {
        self.offset
    }

    /// Whole seconds since 1970-01-01T00:00:00Z (negative before).
    pub fn unix_seconds(&self) -> i64 {
        // Civil arithmetic (jiff's `Timestamp` stops short of 9999-12-31
        // in some offsets; its civil range holds every year here).
        const EPOCH: jiff::civil::DateTime = jiff::civil::date(1970, 1, 1).at(0, 0, 0, 0);
        // The fields were checked by `new`.
        let civil = jiff::civil::date(self.year as i16, self.month as i8, self.day as i8).at(
            self.hour as i8,
            self.minute as i8,
            self.second as i8,
            0,
        );
        civil.duration_since(EPOCH).as_secs() - i64::from(self.offset.0)
    }

    /// Nanoseconds since 1970-01-01T00:00:00Z.
    pub fn unix_nanos(&self) -> i128 {
        i128::from(self.unix_seconds()) * 1_000_000_000 + i128::from(self.nanosecond)
    }
}

/// Timestamps order by the instant they name (then by offset, so that the
/// order agrees with equality).
impl Ord for Timestamp {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.unix_nanos()
            .cmp(&other.unix_nanos())
            .then(self.offset.0.cmp(&other.offset.0))
    }
}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Written as ISO 8601 with the offset (`2026-05-04T16:30:28.123456+02:00`),
/// the fraction with as many digits as it needs (none when zero).
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )?;
        if self.nanosecond != 0 {
            let mut frac = format!("{:09}", self.nanosecond);
            while frac.ends_with('0') {
                frac.pop();
            }
            write!(f, ".{frac}")?;
        }
        write!(f, "{}", self.offset)
    }
}

/// A parsed timestamp, and whether it was written without a zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParsedTime {
    /// The time; a naive one takes the offset [`parse_time`] was given.
    pub time: Timestamp,
    /// Whether the text had no zone.
    pub naive: bool,
}

/// Reads a timestamp as OpenHands writes it: `datetime.now().isoformat()`,
/// local time with no zone, which takes `offset`; or with a zone (`Z`,
/// `±HH:MM`), as `meta.json` has. `None` for anything else, and for a time
/// outside the years 1 to 9999.
///
/// Accepted, as Python's `datetime.fromisoformat` accepts them:
/// `YYYY-MM-DD`, then optionally `T` or a space and `HH:MM`, `HH:MM:SS`, or
/// `HH:MM:SS` with a fraction after `.` or `,` (any number of digits; the
/// first nine are kept), then optionally `Z`/`z` or an offset `±HH`,
/// `±HHMM`, `±HH:MM`, `±HHMMSS` or `±HH:MM:SS`. Not accepted: ISO 8601's
/// basic format without dashes and colons, week and ordinal dates,
/// fractional offsets, and a leap second.
pub fn parse_time(s: &str, offset: UtcOffset) -> Option<ParsedTime> {
    let b = s.as_bytes();
    let mut p = TimeCursor { b, i: 0 };
    let year = p.digits(4)?;
    p.expect(b'-')?;
    let month = p.digits(2)?;
    p.expect(b'-')?;
    let day = p.digits(2)?;
    let (mut hour, mut minute, mut second, mut nano) = (0, 0, 0, 0u32);
    if p.peek().is_some() {
        match p.next()? {
            b'T' | b' ' => {}
            _ => return None,
        }
        hour = p.digits(2)?;
        p.expect(b':')?;
        minute = p.digits(2)?;
        if p.peek() == Some(b':') {
            p.i += 1;
            second = p.digits(2)?;
            if matches!(p.peek(), Some(b'.' | b',')) {
                p.i += 1;
                nano = p.fraction()?;
            }
        }
    }
    let (zone, naive) = match p.peek() {
        None => (offset, true),
        Some(b'Z' | b'z') => {
            p.i += 1;
            (UtcOffset::UTC, false)
        }
        Some(sign @ (b'+' | b'-')) => {
            p.i += 1;
            let h = p.digits(2)?;
            let mut m = 0;
            let mut sec = 0;
            if p.peek().is_some() {
                let colon = p.peek() == Some(b':');
                if colon {
                    p.i += 1;
                }
                m = p.digits(2)?;
                if p.peek().is_some() {
                    if colon {
                        p.expect(b':')?;
                    }
                    sec = p.digits(2)?;
                }
            }
            if m > 59 || sec > 59 {
                return None;
            }
            let total = (h * 3600 + m * 60 + sec) as i32;
            let total = if sign == b'-' { -total } else { total };
            (UtcOffset::from_seconds(total)?, false)
        }
        Some(_) => return None,
    };
    if p.i != b.len() {
        return None;
    }
    let time = Timestamp::new(
        u16::try_from(year).ok()?,
        u8::try_from(month).ok()?,
        u8::try_from(day).ok()?,
        u8::try_from(hour).ok()?,
        u8::try_from(minute).ok()?,
        u8::try_from(second).ok()?,
        nano,
        zone,
    )?;
    Some(ParsedTime { time, naive })
}

struct TimeCursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl TimeCursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }
    fn expect(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }
    /// Exactly `n` ASCII digits.
    fn digits(&mut self, n: usize) -> Option<u32> {
        let mut v = 0u32;
        for _ in 0..n {
            let c = self.next()?;
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + u32::from(c - b'0');
        }
        Some(v)
    }
    /// One or more digits of a fraction, as nanoseconds (digits past the
    /// ninth dropped).
    fn fraction(&mut self) -> Option<u32> {
        let start = self.i;
        let mut v = 0u32;
        let mut n = 0;
        while let Some(c) = self.peek().filter(u8::is_ascii_digit) {
            self.i += 1;
            if n < 9 {
                v = v * 10 + u32::from(c - b'0');
                n += 1;
            }
        }
        if self.i == start {
            return None;
        }
        while n < 9 {
            v *= 10;
            n += 1;
        }
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_days() {
        let days = |y, m, d| {
            Timestamp::new(y, m, d, 0, 0, 0, 0, UtcOffset::UTC)
                .unwrap()
                .unix_seconds()
                / 86_400
        };
        assert_eq!(days(1970, 1, 1), 0);
        assert_eq!(days(2000, 3, 1), 11_017);
        assert_eq!(days(1, 1, 1), -719_162);
        assert_eq!(days(9999, 12, 31), 2_932_896);
        let t = Timestamp::new(1969, 12, 31, 23, 59, 59, 0, UtcOffset::UTC).unwrap();
        assert_eq!(t.unix_seconds(), -1);
        let t = Timestamp::new(
            9999,
            12,
            31,
            23,
            59,
            59,
            0,
            UtcOffset::from_hm(-23, -59).unwrap(),
        );
        assert_eq!(
            t.unwrap().unix_seconds(),
            253_402_300_799 + 23 * 3600 + 59 * 60
        );
        assert!(Timestamp::new(2023, 2, 29, 0, 0, 0, 0, UtcOffset::UTC).is_none());
        assert!(Timestamp::new(2024, 2, 29, 0, 0, 0, 0, UtcOffset::UTC).is_some());
        assert!(Timestamp::new(0, 1, 1, 0, 0, 0, 0, UtcOffset::UTC).is_none());
        assert!(Timestamp::new(2024, 1, 1, 24, 0, 0, 0, UtcOffset::UTC).is_none());
        assert!(Timestamp::new(2024, 1, 1, 0, 0, 60, 0, UtcOffset::UTC).is_none());
        assert!(Timestamp::new(2024, 1, 1, 0, 0, 0, 1_000_000_000, UtcOffset::UTC).is_none());
    }
}
