//! Identifiers: 8-hex-character entry ids (collision-checked) and UUID v7 session ids, as Pi makes them.

/// A fresh entry id not accepted by `is_taken`: the first 8 hex characters of a random UUID, or a whole
/// UUID in the unlikely case that 100 tries collide.
pub fn new_entry_id(is_taken: impl Fn(&str) -> bool) -> String {
    for _ in 0..100 {
        let uuid = uuid::Uuid::new_v4().simple().to_string();
        let id = &uuid[..8];
        if !is_taken(id) {
            return id.to_owned();
        }
    }
    uuid::Uuid::new_v4().to_string()
}

/// A fresh, time-ordered session id.
pub fn new_session_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// JavaScript's `Date.prototype.toISOString` form: UTC, milliseconds, `Z`.
const JS_ISO_FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.3fZ";

/// The current time as JavaScript's `Date.prototype.toISOString` writes it.
pub fn now_iso() -> String {
    chrono::Utc::now().format(JS_ISO_FORMAT).to_string()
}

/// Epoch milliseconds as `now_iso` writes them; `None` out of chrono's range.
pub(crate) fn checked_iso_from_ms(ms: i64) -> Option<String> {
    chrono::DateTime::from_timestamp_millis(ms).map(|time| time.format(JS_ISO_FORMAT).to_string())
}

/// Epoch milliseconds of an ISO timestamp, as `new Date(text).getTime()` would give for the forms
/// sessions use; `None` where JavaScript gives `NaN`.
pub fn parse_timestamp_ms(text: &str) -> Option<i64> {
    if let Ok(time) = chrono::DateTime::parse_from_rfc3339(text) {
        return Some(time.timestamp_millis());
    }
    // Date-only forms are UTC in JavaScript.
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|date| date.and_hms_opt(0, 0, 0))
        .map(|time| time.and_utc().timestamp_millis())
}

/// An epoch-millisecond time as an ISO string (`toISOString`); empty out of chrono's range.
pub fn iso_from_ms(ms: i64) -> String {
    checked_iso_from_ms(ms).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_ids_are_eight_hex_and_avoid_taken() {
        let id = new_entry_id(|_| false);
        assert_eq!(id.len(), 8);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(new_entry_id(|_| true).len(), 36);
    }

    #[test]
    fn timestamps_parse_like_javascript() {
        assert_eq!(parse_timestamp_ms("1970-01-01T00:00:01.500Z"), Some(1500));
        assert_eq!(parse_timestamp_ms("1970-01-02"), Some(86_400_000));
        assert_eq!(parse_timestamp_ms("yesterday"), None);
        assert_eq!(iso_from_ms(1500), "1970-01-01T00:00:01.500Z");
        assert_eq!(now_iso().len(), 24);
    }
}
