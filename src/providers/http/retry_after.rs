//! How long a response asks the client to wait before retrying.
//!
//! Anthropic sends `retry-after-ms` (milliseconds) next to `retry-after`; the standard
//! `retry-after` is either delta-seconds (Anthropic sends fractions too) or an HTTP date
//! (IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`). The adapter only reports the value; the
//! runtime's retry policy decides whether to honour it.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

/// Longest delay we pass on; anything longer is treated as "no usable hint".
const MAX_DELAY: Duration = Duration::from_secs(24 * 60 * 60);

/// The delay asked for by `headers`, measured from `now` for HTTP dates.
#[must_use]
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    header("retry-after-ms")
        .and_then(|ms| parse_seconds(ms).map(|d| d / 1000))
        .or_else(|| header("retry-after").and_then(|value| parse_retry_after(value, now)))
}

/// A `retry-after` value: seconds or an HTTP date.
#[must_use]
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    parse_seconds(value).or_else(|| {
        let at = parse_http_date(value)?;
        Some(at.duration_since(now).unwrap_or(Duration::ZERO))
    })
}

/// A non-negative decimal number of seconds (`1`, `0.5`), capped at [`MAX_DELAY`].
fn parse_seconds(value: &str) -> Option<Duration> {
    let value = value.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let seconds: f64 = value.parse().ok()?;
    let delay = Duration::try_from_secs_f64(seconds).ok()?;
    (delay <= MAX_DELAY).then_some(delay)
}

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the only form servers may send.
fn parse_http_date(value: &str) -> Option<SystemTime> {
    let mut parts = value.split_ascii_whitespace();
    let _weekday = parts.next().filter(|w| w.ends_with(','))?;
    let day: u32 = parts.next()?.parse().ok()?;
    let month = parts.next()?;
    let year: i64 = parts.next()?.parse().ok()?;
    let time = parts.next()?;
    if parts.next()? != "GMT" || parts.next().is_some() {
        return None;
    }
    let month = MONTHS.iter().position(|m| *m == month)? as u32 + 1;
    let mut hms = time.split(':').map(|part| part.parse::<u32>().ok());
    let (hour, minute, second) = (hms.next()??, hms.next()??, hms.next()??);
    if hms.next().is_some() || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second);
    let seconds = u64::try_from(seconds).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(seconds))
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn at(seconds: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(seconds)
    }

    #[test]
    fn seconds_and_fractions() {
        let now = at(0);
        assert_eq!(parse_retry_after("1", now), Some(Duration::from_secs(1)));
        assert_eq!(
            parse_retry_after(" 0.5 ", now),
            Some(Duration::from_millis(500))
        );
        assert_eq!(parse_retry_after("-1", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("999999999", now), None);
    }

    #[test]
    fn http_dates() {
        // 1994-11-06T08:49:37Z is 784111777 seconds after the epoch.
        let date = "Sun, 06 Nov 1994 08:49:37 GMT";
        assert_eq!(parse_http_date(date), Some(at(784_111_777)));
        assert_eq!(
            parse_retry_after(date, at(784_111_770)),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            parse_retry_after(date, at(784_111_800)),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse_http_date("Thu, 29 Feb 2024 00:00:00 GMT"),
            Some(at(1_709_164_800))
        );
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 PST"), None);
        assert_eq!(parse_http_date("Sun, 06 Foo 1994 08:49:37 GMT"), None);
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 25:49:37 GMT"), None);
    }

    #[test]
    fn milliseconds_header_wins() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("3"));
        assert_eq!(retry_after(&headers, at(0)), Some(Duration::from_secs(3)));
        headers.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(
            retry_after(&headers, at(0)),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(retry_after(&HeaderMap::new(), at(0)), None);
    }
}
