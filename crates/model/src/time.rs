use chrono::{DateTime, SecondsFormat, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A point in time exactly as a format wrote it.
///
/// Formats disagree on how to write time (ISO 8601 strings with or without
/// milliseconds, epoch milliseconds as numbers), and a lossless round-trip
/// must give back the same representation, so the original is kept and parsed
/// on demand.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Timestamp {
    /// An ISO 8601 / RFC 3339 string (or anything a format wrote as a string).
    Text(String),
    /// Milliseconds since the Unix epoch.
    Millis(i64),
}

impl Timestamp {
    /// Returns the timestamp a JSON value holds as formats write them: a
    /// string as text, an integer as epoch milliseconds; `None` otherwise.
    pub fn from_json(v: &serde_json::Value) -> Option<Timestamp> {
        match v {
            serde_json::Value::String(s) => Some(Timestamp::Text(s.clone())),
            serde_json::Value::Number(n) => n.as_i64().map(Timestamp::Millis),
            _ => None,
        }
    }

    /// Returns the timestamp of `dt` in RFC 3339 with milliseconds and `Z`.
    pub fn from_datetime(dt: DateTime<Utc>) -> Self {
        Timestamp::Text(dt.to_rfc3339_opts(SecondsFormat::Millis, true))
    }

    /// Returns `ms` (milliseconds since the epoch) in RFC 3339 with
    /// milliseconds and `Z`, as [`Timestamp::from_datetime`] writes it;
    /// `None` out of chrono's range. Written without chrono's formatter for
    /// the years 1970 to 9999 (a listing writes two for every session).
    pub fn rfc3339_millis(ms: i64) -> Option<String> {
        const UNTIL_10000: i64 = 253_402_300_800_000;
        if !(0..UNTIL_10000).contains(&ms) {
            return Utc
                .timestamp_millis_opt(ms)
                .single()
                .map(|t| t.to_rfc3339_opts(SecondsFormat::Millis, true));
        }
        let days = ms / 86_400_000;
        let in_day = ms % 86_400_000;
        let (y, m, d) = civil_from_days(days);
        let (h, min, sec, milli) = (
            in_day / 3_600_000,
            in_day / 60_000 % 60,
            in_day / 1000 % 60,
            in_day % 1000,
        );
        let mut b = *b"0000-00-00T00:00:00.000Z";
        let mut put = |at: usize, n: i64, width: usize| {
            let mut n = n;
            for i in (at..at + width).rev() {
                b[i] = b'0' + (n % 10) as u8;
                n /= 10;
            }
        };
        put(0, y, 4);
        put(5, m, 2);
        put(8, d, 2);
        put(11, h, 2);
        put(14, min, 2);
        put(17, sec, 2);
        put(20, milli, 3);
        Some(String::from_utf8_lossy(&b).into_owned())
    }

    /// Returns the current time in RFC 3339 with milliseconds and `Z`.
    pub fn now() -> Self {
        Self::from_datetime(Utc::now())
    }

    /// Parses the timestamp; `None` when a string is not a recognizable time.
    pub fn to_utc(&self) -> Option<DateTime<Utc>> {
        match self {
            Timestamp::Millis(ms) => Utc.timestamp_millis_opt(*ms).single(),
            Timestamp::Text(s) => parse_text(s),
        }
    }

    /// Returns milliseconds since the epoch, when the time can be parsed.
    pub fn millis(&self) -> Option<i64> {
        self.to_utc().map(|t| t.timestamp_millis())
    }

    /// Returns the timestamp as RFC 3339 text with milliseconds when it can be
    /// parsed, or the original text otherwise.
    pub fn to_rfc3339(&self) -> String {
        match self.to_utc() {
            Some(t) => t.to_rfc3339_opts(SecondsFormat::Millis, true),
            None => self.to_string(),
        }
    }
}

/// The proleptic Gregorian (year, month, day) of a day counted from
/// 1970-01-01, for days from 0 on (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn parse_text(s: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    // Some writers omit the offset; read those as UTC.
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S",
    ] {
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(s, fmt) {
            return Some(t.and_utc());
        }
    }
    // Digits only: epoch seconds or milliseconds written as a string.
    if let Ok(n) = s.parse::<i64>() {
        let ms = if n.abs() < 100_000_000_000 {
            n * 1000
        } else {
            n
        };
        return Utc.timestamp_millis_opt(ms).single();
    }
    None
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Timestamp::Text(s) => f.write_str(s),
            Timestamp::Millis(ms) => write!(f, "{ms}"),
        }
    }
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(dt: DateTime<Utc>) -> Self {
        Self::from_datetime(dt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_timestamps_are_text_or_integer_milliseconds() {
        use serde_json::json;
        assert_eq!(
            Timestamp::from_json(&json!("2025-01-01T00:00:00Z")),
            Some(Timestamp::Text("2025-01-01T00:00:00Z".into()))
        );
        assert_eq!(
            Timestamp::from_json(&json!(1700000000000_i64)),
            Some(Timestamp::Millis(1700000000000))
        );
        for v in [
            json!(1.5),
            json!(u64::MAX),
            json!(null),
            json!(true),
            json!([1]),
            json!({}),
        ] {
            assert_eq!(Timestamp::from_json(&v), None, "{v}");
        }
    }

    proptest::proptest! {
        #[test]
        fn rfc3339_millis_writes_what_chrono_writes(ms in -100_000_000_000_000i64..300_000_000_000_000) {
            let chrono = Utc
                .timestamp_millis_opt(ms)
                .single()
                .map(|t| t.to_rfc3339_opts(SecondsFormat::Millis, true));
            proptest::prop_assert_eq!(Timestamp::rfc3339_millis(ms), chrono);
        }
    }

    #[test]
    fn rfc3339_millis_at_the_edges() {
        for ms in [
            0,
            951_782_400_000,
            4_107_542_399_999,
            253_402_300_799_999,
            253_402_300_800_000,
            -1,
        ] {
            assert_eq!(
                Timestamp::rfc3339_millis(ms),
                Utc.timestamp_millis_opt(ms)
                    .single()
                    .map(|t| t.to_rfc3339_opts(SecondsFormat::Millis, true)),
                "{ms}"
            );
        }
    }

    #[test]
    fn parses_the_shapes_formats_write() {
        let iso = Timestamp::Text("2024-12-03T14:00:01.000Z".into());
        let ms = Timestamp::Millis(1_733_234_401_000);
        assert_eq!(iso.millis(), ms.millis());
        assert_eq!(
            Timestamp::Text("2025-12-16T10:30:00+02:00".into()).to_rfc3339(),
            "2025-12-16T08:30:00.000Z"
        );
        assert!(Timestamp::Text("yesterday".into()).to_utc().is_none());
        assert_eq!(
            Timestamp::Text("yesterday".into()).to_rfc3339(),
            "yesterday"
        );
    }

    #[test]
    fn keeps_the_written_representation() {
        let v: Timestamp = serde_json::from_str("1733234401000").unwrap_or(Timestamp::Millis(0));
        assert_eq!(
            serde_json::to_string(&v).ok().as_deref(),
            Some("1733234401000")
        );
        let t: Timestamp =
            serde_json::from_str("\"2024-12-03T14:00:01Z\"").unwrap_or(Timestamp::Millis(0));
        assert_eq!(
            serde_json::to_string(&t).ok().as_deref(),
            Some("\"2024-12-03T14:00:01Z\"")
        );
    }
}
