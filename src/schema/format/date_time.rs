//! `date-time`, `date` and `time` formats: RFC 3339 section 5.6 `date-time`,
//! `full-date` and `full-time`, with the calendar rules of section 5.7 (days per month,
//! Gregorian leap years) and leap seconds: second 60 is accepted only when the time,
//! moved to UTC by its offset, is 23:59. `T` and `Z` may be lowercase (section 5.6 NOTE).

/// `full-date`: `YYYY-MM-DD`.
pub(super) fn is_date(s: &str) -> bool {
    full_date(s.as_bytes())
}

/// `full-time`: `HH:MM:SS[.frac](Z|+HH:MM|-HH:MM)`.
pub(super) fn is_time(s: &str) -> bool {
    full_time(s.as_bytes())
}

/// `date-time`: `full-date "T" full-time`.
pub(super) fn is_date_time(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.get(..10), b.get(10), b.get(11..)) {
        (Some(date), Some(b'T' | b't'), Some(time)) => full_date(date) && full_time(time),
        _ => false,
    }
}

/// The value of exactly `n` ASCII digits at `b[at..at + n]`.
fn digits(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let run = b.get(at..at + n)?;
    run.iter().try_fold(0u32, |acc, &d| {
        d.is_ascii_digit().then(|| acc * 10 + u32::from(d - b'0'))
    })
}

fn is_leap_year(year: u32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn full_date(b: &[u8]) -> bool {
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(year), Some(month), Some(day)) = (digits(b, 0, 4), digits(b, 5, 2), digits(b, 8, 2))
    else {
        return false;
    };
    (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month)
}

fn full_time(b: &[u8]) -> bool {
    if b.len() < 9 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let (Some(hour), Some(minute), Some(second)) =
        (digits(b, 0, 2), digits(b, 3, 2), digits(b, 6, 2))
    else {
        return false;
    };
    if hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    let mut at = 8;
    if b.get(at) == Some(&b'.') {
        let frac = b[at + 1..]
            .iter()
            .take_while(|d| d.is_ascii_digit())
            .count();
        if frac == 0 {
            return false;
        }
        at += 1 + frac;
    }
    // Offset from UTC in minutes, to be subtracted from the local time.
    let offset: i64 = match b.get(at..) {
        Some([b'Z' | b'z']) => 0,
        Some([sign @ (b'+' | b'-'), rest @ ..]) => {
            if rest.len() != 5 || rest[2] != b':' {
                return false;
            }
            let (Some(oh), Some(om)) = (digits(rest, 0, 2), digits(rest, 3, 2)) else {
                return false;
            };
            if oh > 23 || om > 59 {
                return false;
            }
            let minutes = i64::from(oh * 60 + om);
            if *sign == b'+' {
                minutes
            } else {
                -minutes
            }
        }
        _ => return false,
    };
    if second == 60 {
        let local = i64::from(hour * 60 + minute);
        if (local - offset).rem_euclid(24 * 60) != 23 * 60 + 59 {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{is_date, is_date_time, is_time};

    #[test]
    fn dates() {
        for ok in [
            "2000-02-29",
            "0000-02-29",
            "1900-02-28",
            "9999-12-31",
            "0001-01-01",
        ] {
            assert!(is_date(ok), "{ok}");
        }
        for bad in [
            "1900-02-29",
            "2001-02-29",
            "2000-13-01",
            "2000-00-01",
            "2000-01-00",
            "2000-1-01",
            "２０００-01-01",
            "2000-01-01T",
        ] {
            assert!(!is_date(bad), "{bad}");
        }
    }

    #[test]
    fn times_and_leap_seconds() {
        for ok in [
            "00:00:00Z",
            "23:59:60Z",
            "23:59:60.999z",
            "00:59:60+01:00",
            "12:14:60+12:15",
            "10:29:60-13:30",
            "08:00:00.0-00:00",
        ] {
            assert!(is_time(ok), "{ok}");
        }
        for bad in [
            "23:59:60+00:01",
            "00:00:60Z",
            "12:00:00.Z",
            "12:00:00",
            "12:00:00+1:00",
            "12:00:00+01:00:00",
            "12:00:00+01",
            "12:00:00ZZ",
            "1:00:00Z",
        ] {
            assert!(!is_time(bad), "{bad}");
        }
    }

    #[test]
    fn date_times() {
        assert!(is_date_time("2016-12-31T23:59:60Z"));
        assert!(is_date_time("2017-01-01t00:59:60+01:00"));
        assert!(!is_date_time("2016-12-31 23:59:59Z"));
        assert!(!is_date_time("2016-12-31T"));
        assert!(!is_date_time("2016-12-31"));
        assert!(!is_date_time("2016-12-31Té3:59:59Z"));
    }
}
