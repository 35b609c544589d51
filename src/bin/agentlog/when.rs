//! Dates in human output: one format, `YYYY-MM-DD HH:MM`, in local time.
//!
//! OpenHands (`2026-12-01T03:20:04.241157`) and OC Chat (`20250408_140000`,
//! `2025-04-08 14:12`) record local times without a zone: they are shown as
//! recorded (the writer's local time). A time with an offset (ASF's
//! RFC 3339 stamps) is converted to this machine's local zone, found as C's
//! `localtime` finds it (`TZ`, else `/etc/localtime`).

use agentlog::occhat::{LocalDateTime, TimeZone};

/// `s` as `YYYY-MM-DD HH:MM` local time; as written when it is none of the
/// formats above.
pub fn minute(s: &str, tz: &TimeZone) -> String {
    match local(s, tz) {
        Some(dt) => format!(
            "{:04}-{:02}-{:02} {:02}:{:02}",
            dt.year(),
            dt.month(),
            dt.day(),
            dt.hour(),
            dt.minute()
        ),
        None => s.trim().to_owned(),
    }
}

/// `s` as a local date and time (to the nanosecond written), for sorting
/// and comparing: any of the formats above, or a date alone (its
/// midnight); `None` for anything else.
pub fn local(s: &str, tz: &TimeZone) -> Option<jiff::civil::DateTime> {
    let s = s.trim();
    if let Ok(ts) = s.parse::<jiff::Timestamp>() {
        let secs = ts.as_second();
        let l = LocalDateTime::from_unix(secs.saturating_add(i64::from(tz.offset_at(secs))));
        let dt = jiff::civil::DateTime::new(
            i16::try_from(l.year).ok()?,
            i8::try_from(l.month).ok()?,
            i8::try_from(l.day).ok()?,
            i8::try_from(l.hour).ok()?,
            i8::try_from(l.minute).ok()?,
            i8::try_from(l.second).ok()?,
            ts.subsec_nanosecond(),
        );
        return dt.ok();
    }
    if let Ok(dt) = s.parse::<jiff::civil::DateTime>() {
        return Some(dt);
    }
    // OC Chat's list time, `YYYY-MM-DD HH:MM`.
    if s.len() == 16
        && let Ok(dt) = format!("{s}:00").parse::<jiff::civil::DateTime>()
    {
        return Some(dt);
    }
    if let Ok(d) = s.parse::<jiff::civil::Date>() {
        return Some(d.to_datetime(jiff::civil::Time::midnight()));
    }
    // OC Chat's compact stamp, `YYYYMMDD_HHMMSS`.
    let b = s.as_bytes();
    if b.len() == 15
        && b[8] == b'_'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 8 || c.is_ascii_digit())
    {
        return format!(
            "{}-{}-{}T{}:{}:{}",
            &s[..4],
            &s[4..6],
            &s[6..8],
            &s[9..11],
            &s[11..13],
            &s[13..15]
        )
        .parse()
        .ok();
    }
    None
}

/// `s` as `YYYY-MM-DD HH:MM:SS` (a stamp as [`local`] reads it), as
/// written when it is none of those formats.
pub fn second(s: &str, tz: &TimeZone) -> String {
    match local(s, tz) {
        Some(dt) => format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            dt.year(),
            dt.month(),
            dt.day(),
            dt.hour(),
            dt.minute(),
            dt.second()
        ),
        None => s.trim().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_store_format_in_one() {
        let tz = TimeZone::fixed(3600);
        assert_eq!(
            minute("2026-12-01T03:20:04.241157", &tz),
            "2026-12-01 03:20"
        );
        assert_eq!(minute("20250408_140000", &tz), "2025-04-08 14:00");
        assert_eq!(minute("2025-04-08 14:12", &tz), "2025-04-08 14:12");
        assert_eq!(minute("2025-04-08T14:12:00Z", &tz), "2025-04-08 15:12");
        assert_eq!(minute("soon", &tz), "soon");
        assert_eq!(second("20250408_140005", &tz), "2025-04-08 14:00:05");
        assert!(local("2025-04-08", &tz) < local("2025-04-08 00:01", &tz));
        assert!(local("2025-04-08T14:12:00Z", &tz) > local("2025-04-08T14:12:00", &tz));
    }
}
