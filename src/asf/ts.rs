//! The one accepted spelling of an entry's `ts` (RFC 0001, "Entry
//! envelope"): `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, UTC, uppercase `T` and
//! `Z`, seconds `00` to `59`, a fraction only when non-zero, without
//! trailing zeros and of at most nine digits.

/// Whether `ts` is spelled the one way the format accepts.
pub fn is_canonical_ts(ts: &str) -> bool {
    let b = ts.as_bytes();
    if b.len() < 20 || b[b.len() - 1] != b'Z' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if !(digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19))
    {
        return false;
    }
    let num = |r: std::ops::Range<usize>| -> u32 {
        b[r].iter().fold(0, |a, &d| a * 10 + u32::from(d - b'0'))
    };
    let (year, month, day) = (num(0..4), num(5..7), num(8..10));
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return false;
    }
    if num(11..13) > 23 || num(14..16) > 59 || num(17..19) > 59 {
        return false;
    }
    let rest = &b[19..b.len() - 1];
    if rest.is_empty() {
        return true;
    }
    let Some(frac) = rest.strip_prefix(b".") else {
        return false;
    };
    !frac.is_empty()
        && frac.len() <= 9
        && frac.iter().all(u8::is_ascii_digit)
        && frac.last() != Some(&b'0')
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The canonical `ts` of an instant given as seconds and nanoseconds since
/// the Unix epoch (UTC), the spelling a writer must use.
pub fn ts_from_unix(secs: i64, nanos: u32) -> String {
    let days = secs.div_euclid(86_400);
    let tod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let mut out = format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        tod / 3600,
        (tod / 60) % 60,
        tod % 60
    );
    let nanos = nanos.min(999_999_999);
    if nanos != 0 {
        let frac = format!("{nanos:09}");
        out.push('.');
        out.push_str(frac.trim_end_matches('0'));
    }
    out.push('Z');
    out
}

/// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's
/// algorithm).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelling() {
        for ok in [
            "2026-09-17T12:00:02.5Z",
            "2026-09-17T12:00:00Z",
            "2024-02-29T23:59:59.123456789Z",
        ] {
            assert!(is_canonical_ts(ok), "{ok}");
        }
        for bad in [
            "2026-09-17T12:00:02.50Z",
            "2026-09-17T12:00:02.0Z",
            "2026-09-17t12:00:02Z",
            "2026-09-17T12:00:02+00:00",
            "2026-09-17T12:00:60Z",
            "2026-09-17T12:00:02.1234567891Z",
            "2026-09-17 12:00:02Z",
            "2025-02-29T00:00:00Z",
            "2026-09-17T12:00:02.Z",
            "2026-09-17T12:00:02z",
        ] {
            assert!(!is_canonical_ts(bad), "{bad}");
        }
    }

    #[test]
    fn from_unix() {
        assert_eq!(ts_from_unix(0, 0), "1970-01-01T00:00:00Z");
        assert_eq!(
            ts_from_unix(1_789_646_402, 500_000_000),
            "2026-09-17T12:00:02.5Z"
        );
        assert!(is_canonical_ts(&ts_from_unix(951_782_400, 1)));
    }
}
