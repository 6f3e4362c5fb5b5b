//! `duration` format: the ISO 8601 duration grammar of RFC 3339 appendix A.
//!
//! ```text
//! duration = "P" (dur-date / dur-time / dur-week)
//! dur-date = (dur-day / dur-month / dur-year) [dur-time]
//! dur-time = "T" (dur-hour / dur-minute / dur-second)
//! dur-year = 1*DIGIT "Y" [dur-month]   dur-month = 1*DIGIT "M" [dur-day]   dur-day = 1*DIGIT "D"
//! dur-hour = 1*DIGIT "H" [dur-minute]
//! dur-minute = 1*DIGIT "M" [dur-second]  dur-second = 1*DIGIT "S"
//! dur-week = 1*DIGIT "W"
//! ```
//!
//! So the date units form a gap-free run of `Y M D`, the time units a gap-free run of
//! `H M S`, and weeks stand alone. Only ASCII digits, no fractions or signs.

/// Whether `s` matches the RFC 3339 appendix A `duration` rule.
pub(super) fn is_duration(s: &str) -> bool {
    let Some(rest) = s.as_bytes().strip_prefix(b"P") else {
        return false;
    };
    let (date, time) = match rest.iter().position(|&c| c == b'T') {
        Some(t) => (&rest[..t], Some(&rest[t + 1..])),
        None => (rest, None),
    };
    if time.is_none() && date.len() >= 2 && date.ends_with(b"W") {
        return all_digits(&date[..date.len() - 1]);
    }
    let date_ok = units_in_run(date, b"YMD");
    let time_ok = time.map_or(Some(0), |t| units_in_run(t, b"HMS").filter(|&n| n > 0));
    matches!((date_ok, time_ok), (Some(d), Some(t)) if d + t > 0)
}

fn all_digits(b: &[u8]) -> bool {
    !b.is_empty() && b.iter().all(u8::is_ascii_digit)
}

/// Parses `1*DIGIT unit` components whose units are consecutive letters of `order`.
/// Returns how many components there were, or None if the run is malformed.
fn units_in_run(mut b: &[u8], order: &[u8]) -> Option<usize> {
    let mut next_unit: Option<usize> = None; // index in `order` the next unit must have
    let mut count = 0;
    while !b.is_empty() {
        let n = b.iter().take_while(|d| d.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        let unit = *b.get(n)?;
        let index = order.iter().position(|&u| u == unit)?;
        if next_unit.is_some_and(|want| want != index) {
            return None;
        }
        next_unit = Some(index + 1);
        count += 1;
        b = &b[n + 1..];
    }
    Some(count)
}

#[cfg(test)]
mod tests {
    use super::is_duration;

    #[test]
    fn accepts_the_grammar() {
        for ok in [
            "P1Y",
            "P1Y2M",
            "P1Y2M3D",
            "P2M3D",
            "P3D",
            "PT1H",
            "PT1H2M",
            "PT1H2M3S",
            "PT2M3S",
            "PT3S",
            "P1DT1S",
            "P1W",
            "P0W",
            "P12345678901234567890D",
        ] {
            assert!(is_duration(ok), "{ok}");
        }
    }

    #[test]
    fn rejects_the_rest() {
        for bad in [
            "", "P", "PT", "P1YT", "P1D1D", "P1M1Y", "PT1S1M", "PT1H1S", "P1Y1D", "P1W1D", "P1DW",
            "PW", "PT1W", "P1.5D", "P1DT", "p1D", "P1d", "P1D T1H", "PT1HT1M", "P1ＤT",
        ] {
            assert!(!is_duration(bad), "{bad}");
        }
    }
}
