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

/// The status line's part: `$0.0421 spent, 81% cache reads`; `None` before any model call. A
/// session whose calls recorded no dollars (a model declared without prices, a local server) shows
/// the cache share only: `$0.0000 spent` would claim a price nobody gave.
pub(crate) fn status_fragment(spend: &SessionSpend) -> Option<String> {
    if spend.total_calls() == 0 {
        return None;
    }
    let dollars_spent = spend.total_dollars();
    let spent = (dollars_spent > 0.0).then(|| format!("{} spent", dollars(dollars_spent)));
    let share = spend
        .requests
        .cache_read_share()
        .map(|share| format!("{:.0}% cache reads", share * 100.0));
    let parts: Vec<String> = spent.into_iter().chain(share).collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The breakdown: a total line, then one line per part that had calls.
pub(crate) fn breakdown_lines(spend: &SessionSpend) -> Vec<String> {
    if spend.total_calls() == 0 {
        return vec!["no model calls recorded".to_owned()];
    }
    // Calls that recorded no dollars at all (an imported session, a model declared without prices)
    // cost something nobody priced: "unknown", as the exported page says, never `$0.0000`.
    let priced = spend.total_dollars() > 0.0;
    let total = if priced {
        dollars(spend.total_dollars())
    } else {
        "cost unknown (no prices recorded)".to_owned()
    };
    let mut lines = vec![format!(
        "{total} over {} model call{}",
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
            lines.push(part_line(name, part, priced));
        }
    }
    lines
}

fn part_line(name: &str, part: &SpendPart, priced: bool) -> String {
    let cost = if priced {
        dollars(part.dollars)
    } else {
        "unknown".to_owned()
    };
    let mut line = format!(
        "  {name:<14} {:>4} call{:<2} {cost:>9}   input {} · cache read {}",
        part.calls,
        plural(part.calls),
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

    #[test]
    fn the_status_claims_no_dollars_for_a_model_without_prices() {
        let mut spend = SessionSpend {
            requests: SpendPart {
                calls: 3,
                dollars: 0.0,
                input_tokens: 900,
                cache_read_tokens: 100,
                cache_write_tokens: 0,
                output_tokens: 10,
            },
            ..SessionSpend::default()
        };
        assert_eq!(status_fragment(&spend).as_deref(), Some("10% cache reads"));
        spend.requests.cache_read_tokens = 0;
        spend.requests.input_tokens = 0;
        let fragment = status_fragment(&spend);
        assert!(
            fragment.as_deref().is_none_or(|text| !text.contains('$')),
            "{fragment:?}"
        );
        let lines = breakdown_lines(&spend);
        assert_eq!(
            lines[0],
            "cost unknown (no prices recorded) over 3 model calls"
        );
        assert!(lines[1].contains(" unknown "), "{lines:?}");
        assert!(!lines.concat().contains('$'), "{lines:?}");
    }
}
