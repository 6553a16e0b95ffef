//! Times given on the command line: `--since 7d`, `--until 2025-06-01`.

use crate::IndexError;
use chrono::{DateTime, NaiveDate, Utc};

/// Parses a time as milliseconds since the epoch: a date (`2025-06-01`,
/// midnight UTC), an RFC 3339 time (`2025-06-01T12:00:00Z`), a time ago
/// (`45s`, `30m`, `12h`, `7d`, `2w`), `today` or `yesterday` (UTC). Every
/// command's `--since`/`--until` goes through here, so they agree.
pub fn parse_time(what: &'static str, s: &str, now_ms: i64) -> Result<i64, IndexError> {
    let t = s.trim();
    let err = || IndexError::Filter {
        what,
        value: s.to_string(),
        message: "expected a date (2025-06-01), a time (2025-06-01T12:00:00Z), a time ago \
                  (30m, 12h, 7d, 2w), today or yesterday"
            .to_string(),
    };
    const DAY: i64 = 86_400_000;
    match t {
        "today" => return Ok(now_ms - now_ms.rem_euclid(DAY)),
        "yesterday" => return Ok(now_ms - now_ms.rem_euclid(DAY) - DAY),
        _ => {}
    }
    if let Ok(d) = DateTime::parse_from_rfc3339(t) {
        return Ok(d.with_timezone(&Utc).timestamp_millis());
    }
    if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return d
            .and_hms_opt(0, 0, 0)
            .map(|dt| dt.and_utc().timestamp_millis())
            .ok_or_else(err);
    }
    let (num, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let n: i64 = num.parse().map_err(|_| err())?;
    let ms = match unit {
        "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        "d" => DAY,
        "w" => 7 * DAY,
        _ => return Err(err()),
    };
    Ok(now_ms - n.saturating_mul(ms))
}

/// Returns the current time in milliseconds since the epoch.
pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// Returns the UTC day (`2025-06-01`) of a time.
pub fn day(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .map(|d| d.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| "unknown".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_dates_and_ages() {
        let now = 1_750_000_000_000;
        assert_eq!(
            parse_time("--since", "7d", now).ok(),
            Some(now - 7 * 86_400_000)
        );
        assert_eq!(
            parse_time("--since", "2025-01-02", now).ok(),
            Some(1_735_776_000_000)
        );
        assert_eq!(
            parse_time("--until", "2025-01-02T00:00:01Z", now).ok(),
            Some(1_735_776_001_000)
        );
        assert!(parse_time("--since", "soon", now).is_err());
        assert_eq!(day(1_735_776_001_000), "2025-01-02");
    }
}
