//! What a session cost, as `ctxkit info`, the chat's `/cost` and its status line show it: dollars
//! as recorded with each model call, split into requests, summaries and cache warming, and the share
//! of the requests' input read from the prompt cache.

use ctxkit_session::{SessionSpend, SpendPart};

/// Dollars with four decimals below one dollar (a request often costs a fraction of a cent), two
/// above.
pub(crate) fn dollars(amount: f64) -> String {
    if amount < 1.0 {
        format!("${amount:.4}")
    } else {
        format!("${amount:.2}")
    }
}

/// The status line's part: `$0.0421 spent, 81% cache reads`; `None` before any model call.
pub(crate) fn status_fragment(spend: &SessionSpend) -> Option<String> {
    if spend.total_calls() == 0 {
        return None;
    }
    let mut text = format!("{} spent", dollars(spend.total_dollars()));
    if let Some(share) = spend.requests.cache_read_share() {
        text.push_str(&format!(", {:.0}% cache reads", share * 100.0));
    }
    Some(text)
}

/// The breakdown: a total line, then one line per part that had calls.
pub(crate) fn breakdown_lines(spend: &SessionSpend) -> Vec<String> {
    if spend.total_calls() == 0 {
        return vec!["no model calls recorded".to_owned()];
    }
    let mut lines = vec![format!(
        "{} over {} model call{}",
        dollars(spend.total_dollars()),
        spend.total_calls(),
        plural(spend.total_calls())
    )];
    let parts = [
        ("requests", &spend.requests),
        ("summaries", &spend.summaries),
        ("cache warming", &spend.cache_warming),
        ("other", &spend.other),
    ];
    for (name, part) in parts {
        if part.calls > 0 {
            lines.push(part_line(name, part));
        }
    }
    lines
}

fn part_line(name: &str, part: &SpendPart) -> String {
    let mut line = format!(
        "  {name:<14} {:>4} call{:<2} {:>9}   input {} · cache read {}",
        part.calls,
        plural(part.calls),
        dollars(part.dollars),
        part.input_tokens,
        part.cache_read_tokens,
    );
    if let Some(share) = part.cache_read_share() {
        line.push_str(&format!(" ({:.0}%)", share * 100.0));
    }
    line.push_str(&format!(
        " · cache write {} · output {}",
        part.cache_write_tokens, part.output_tokens
    ));
    line
}

fn plural(count: u64) -> &'static str {
    if count == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_shows_spend_and_cache_share() {
        let mut spend = SessionSpend::default();
        assert_eq!(status_fragment(&spend), None);
        spend.requests = SpendPart {
            calls: 2,
            dollars: 0.0421,
            input_tokens: 100,
            cache_read_tokens: 900,
            cache_write_tokens: 0,
            output_tokens: 10,
        };
        spend.cache_warming.calls = 1;
        spend.cache_warming.dollars = 0.075;
        assert_eq!(
            status_fragment(&spend).as_deref(),
            Some("$0.1171 spent, 90% cache reads")
        );
        let lines = breakdown_lines(&spend);
        assert_eq!(lines[0], "$0.1171 over 3 model calls");
        assert!(lines[1].starts_with("  requests"), "{lines:?}");
        assert!(lines[2].starts_with("  cache warming"), "{lines:?}");
    }
}
