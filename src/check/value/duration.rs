//! Durations: one or more `<digits><unit>` groups with units `d`, `h`, `m`, `s`, `ms` in
//! decreasing order: `"500ms"`, `"30s"`, `"10m"`, `"2h"`, `"1d"`, `"1m30s"`, `"1h30m"`.

use crate::ir::Duration;

/// Units with their length in milliseconds.
const UNITS: &[(&str, u64)] = &[
    ("d", 86_400_000),
    ("h", 3_600_000),
    ("m", 60_000),
    ("s", 1_000),
    ("ms", 1),
];

/// Rank of a unit for the "decreasing order" rule (`ms` is the smallest).
fn rank(unit: &str) -> u8 {
    match unit {
        "d" => 5,
        "h" => 4,
        "m" => 3,
        "s" => 2,
        _ => 1,
    }
}

/// Parses a duration, or says what is wrong with it (a label for the diagnostic).
pub(crate) fn parse_duration(text: &str) -> Result<Duration, &'static str> {
    if text.is_empty() {
        return Err("empty duration");
    }
    let mut rest = text;
    let mut total: u64 = 0;
    let mut last_rank = u8::MAX;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err("expected a number");
        }
        let (number, after) = rest.split_at(digits);
        let number: u64 = number.parse().map_err(|_| "number too large")?;
        let letters = after.bytes().take_while(u8::is_ascii_alphabetic).count();
        let unit = &after[..letters];
        let Some(&(unit, millis)) = UNITS.iter().find(|(name, _)| *name == unit) else {
            return Err(if unit.is_empty() && after.is_empty() {
                "missing unit"
            } else {
                "unknown unit"
            });
        };
        if rank(unit) >= last_rank {
            return Err("units must go from largest to smallest, each once");
        }
        last_rank = rank(unit);
        total = number
            .checked_mul(millis)
            .and_then(|ms| total.checked_add(ms))
            .ok_or("duration too large")?;
        rest = &after[unit.len()..];
    }
    Ok(Duration(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_combinations() {
        for (text, ms) in [
            ("500ms", 500),
            ("30s", 30_000),
            ("10m", 600_000),
            ("2h", 7_200_000),
            ("1d", 86_400_000),
            ("1m30s", 90_000),
            ("1h30m15s250ms", 5_415_250),
            ("0s", 0),
        ] {
            assert_eq!(parse_duration(text), Ok(Duration(ms)), "{text}");
        }
    }

    #[test]
    fn rejects_malformed() {
        for (text, reason) in [
            ("", "empty duration"),
            ("10", "missing unit"),
            ("10 m", "unknown unit"),
            ("5min", "unknown unit"),
            ("s", "expected a number"),
            ("30s1m", "units must go from largest to smallest, each once"),
            ("1s1s", "units must go from largest to smallest, each once"),
            ("1.5h", "unknown unit"),
            ("99999999999999999999s", "number too large"),
            ("999999999999999d", "duration too large"),
        ] {
            assert_eq!(parse_duration(text), Err(reason), "{text}");
        }
    }
}
