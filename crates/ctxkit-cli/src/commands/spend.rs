//! What a session cost, as `ctxkit info`, the chat's `/cost` and its status line show it: dollars
//! as recorded with each model call, split into requests, tools' own calls (Pi 1.6's `usage` on a
//! tool result), summaries and cache warming, and the share
//! of the requests' input read from the prompt cache. A call of unknown price (a model with no
//! price known to ctxkit records $0 although it used tokens) is never shown as free: the spend
//! says "price unknown" with the tokens used, and `llm.models[].cost` prices the model's calls
//! from then on (a call recorded at $0 stays of unknown price: it is never repriced). A model
//! given a `cost` of zeros is free: its calls count $0, known ([`free_models`]).

use ctxkit_session::{FreeModels, SessionSpend, SpendPart};
use ctxkit_settings::{SettingsManager, SettingsScope, UserModel};

/// The prices and cache lifetimes of the `llm.models` entries (`cost`, `cacheRetention`), a price
/// taken only from the user's own settings. A project may declare models (their windows; a
/// project's settings that hold nothing else need no trust), but a `cost` it gives is not read: a
/// cloned project's made the user's paid Claude show as free in `ctxkit models`, its calls were
/// recorded at $0, and `/cost`, `info` and the page showed them as spent free. A project's entry is
/// priced as the user's own entry for the same model prices it, else as the built-in table does.
/// Every surface that prices a call or judges one free reads this.
pub(crate) fn configured_model_costs(settings: &SettingsManager) -> Vec<ctxkit_llm::ModelCost> {
    let declared = settings.settings().llm.models.clone().unwrap_or_default();
    let mut costs = super::summary_setup::user_model_costs(&declared);
    let project_declares = matches!(
        settings.get_in(SettingsScope::Project, "llm.models"),
        Ok(Some(_))
    );
    if !project_declares {
        return costs;
    }
    let own: Vec<UserModel> = settings
        .get_in(SettingsScope::Global, "llm.models")
        .ok()
        .flatten()
        .and_then(|value| serde_json::from_str(&value.display_text()).ok())
        .unwrap_or_default();
    let own_costs = super::summary_setup::user_model_costs(&own);
    for cost in &mut costs {
        cost.prices = own_costs
            .iter()
            .find(|mine| mine.provider == cost.provider && mine.id == cost.id)
            .and_then(|mine| mine.prices.clone());
    }
    costs
}

/// The models `llm.models` declares free: a `cost` given with every price zero. Their calls,
/// recorded at $0, show as $0 spent; a model with no `cost` (and no built-in price) stays of
/// unknown price.
pub(crate) fn free_models(costs: &[ctxkit_llm::ModelCost]) -> FreeModels {
    FreeModels::new(
        costs
            .iter()
            .filter(|cost| {
                cost.prices
                    .as_ref()
                    .is_some_and(ctxkit_models::ModelPrices::is_free)
            })
            .map(|cost| (cost.provider.clone(), cost.id.clone())),
    )
}

/// [`free_models`] of the settings files; none when they cannot be read (the command that reads a
/// session still shows it).
pub(crate) fn configured_free_models(process: &super::settings::ProcessSettings<'_>) -> FreeModels {
    process
        .settings()
        .ok()
        .map(|settings| free_models(&configured_model_costs(settings)))
        .unwrap_or_default()
}

/// Dollars with four decimals below one dollar (a request often costs a fraction of a cent), two
/// above.
pub(crate) fn dollars(amount: f64) -> String {
    if amount < 1.0 {
        format!("${amount:.4}")
    } else {
        format!("${amount:.2}")
    }
}

/// The status line's part in two: what was spent (`$0.0421 spent`; `tokens 12.3k in / 1.1k out,
/// price unknown` when no call's price is known) and the cache share (`81% cache reads`), which a
/// narrow terminal's status line gives up; `None` before any model call.
pub(crate) fn status_parts(spend: &SessionSpend) -> Option<(String, Option<String>)> {
    if spend.total_calls() == 0 {
        return None;
    }
    // Calls that used nothing (failed, interrupted) neither price the session nor make it free.
    let counted = spend.counted_calls();
    let text = match spend.unpriced_calls() {
        _ if counted == 0 => tokens_used(spend),
        0 => format!("{} spent", dollars(spend.total_dollars())),
        unpriced if unpriced == counted => {
            format!("{}, price unknown", tokens_used(spend))
        }
        unpriced => format!(
            "{} spent + {unpriced} call{} of unknown price",
            dollars(spend.total_dollars()),
            plural(unpriced)
        ),
    };
    // Over every call, as `/session` counts it: summaries that read the conversation's cache
    // count too (QA r106: the status line said 91% where `/session` said 92.0%).
    let (input, _) = spend.total_tokens();
    let (cache_read, _) = spend.total_cache_tokens();
    let share = (input > 0).then(|| {
        format!(
            "{:.0}% cache reads",
            cache_read as f64 * 100.0 / input as f64
        )
    });
    Some((text, share))
}

/// The breakdown: a total line, then one line per part that had calls.
pub(crate) fn breakdown_lines(spend: &SessionSpend) -> Vec<String> {
    let calls = spend.total_calls();
    if calls == 0 {
        let mut lines = vec!["no model calls recorded".to_owned()];
        lines.extend(offline_line(spend));
        return lines;
    }
    let over = format!("over {calls} model call{}", plural(calls));
    let counted = spend.counted_calls();
    let total = match spend.unpriced_calls() {
        _ if counted == 0 => format!(
            "nothing spent {over} ({}: none answered)",
            tokens_used(spend)
        ),
        0 => format!("{} {over}", dollars(spend.total_dollars())),
        // A price given now prices the calls made from now on: these were recorded at $0, and
        // stay so (QA r104: the hint, followed, changed nothing it showed).
        unpriced if unpriced == counted => format!(
            "price unknown {over} ({}): recorded without a price; `llm.models[].cost` prices \
             the model's calls from now on",
            tokens_used(spend)
        ),
        unpriced => format!(
            "{} {over}, {unpriced} of them recorded without a price (not counted; \
             `llm.models[].cost` prices a model's calls from now on)",
            dollars(spend.total_dollars())
        ),
    };
    let mut lines = vec![total];
    let parts = [
        ("requests", &spend.requests),
        ("tools", &spend.tools),
        ("summaries", &spend.summaries),
        ("cache warming", &spend.cache_warming),
        ("other", &spend.other),
    ];
    for (name, part) in parts {
        if part.calls > 0 {
            lines.push(part_line(name, part));
        }
    }
    lines.extend(offline_line(spend));
    lines
}

/// `  offline summaries    2  free (no model call)`: summaries the offline summarizer wrote.
fn offline_line(spend: &SessionSpend) -> Option<String> {
    let count = spend.offline_summaries;
    (count > 0).then(|| {
        format!(
            "  {:<14} {count:>4} {:<5} {:>9} (written offline, no model call)",
            "summaries",
            if count == 1 { "entry" } else { "entries" },
            "free"
        )
    })
}

/// `tokens 12.3k in / 1.1k out`: the input (cache reads and writes included) and output tokens.
fn tokens_used(spend: &SessionSpend) -> String {
    let (input, output) = spend.total_tokens();
    format!(
        "tokens {} in / {} out",
        short_count(input),
        short_count(output)
    )
}

/// A token count as people read it: `850`, `12.3k`, `4.2M`.
pub(crate) fn short_count(count: u64) -> String {
    match count {
        0..1_000 => count.to_string(),
        1_000..1_000_000 => format!("{:.1}k", count as f64 / 1e3),
        _ => format!("{:.1}M", count as f64 / 1e6),
    }
}

fn part_line(name: &str, part: &SpendPart) -> String {
    let mut line = format!(
        "  {name:<14} {:>4} call{:<2} {:>9}   input {} · cache read {}",
        part.calls,
        plural(part.calls),
        part_dollars(part),
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

/// A part's dollars; `unknown` when none of its calls has a price.
fn part_dollars(part: &SpendPart) -> String {
    if part.unpriced_calls == part.calls.saturating_sub(part.empty_calls) && part.unpriced_calls > 0
    {
        "unknown".to_owned()
    } else {
        dollars(part.dollars)
    }
}

fn plural(count: u64) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// The spend as `info --json` gives it: the total, then each part.
pub(crate) fn spend_json(spend: &SessionSpend) -> serde_json::Value {
    let part = |part: &SpendPart| {
        serde_json::json!({
            "calls": part.calls,
            "dollars": part.dollars,
            "unpricedCalls": part.unpriced_calls,
            "emptyCalls": part.empty_calls,
            "inputTokens": part.input_tokens,
            "cacheReadTokens": part.cache_read_tokens,
            "cacheWriteTokens": part.cache_write_tokens,
            "outputTokens": part.output_tokens,
        })
    };
    serde_json::json!({
        "dollars": spend.total_dollars(),
        "calls": spend.counted_calls(),
        "unpricedCalls": spend.unpriced_calls(),
        "requests": part(&spend.requests),
        "tools": part(&spend.tools),
        "summaries": part(&spend.summaries),
        "cacheWarming": part(&spend.cache_warming),
        "other": part(&spend.other),
        "offlineSummaries": spend.offline_summaries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The status line's part as the chat shows it whole: `$0.0421 spent, 81% cache reads`.
    fn status_fragment(spend: &SessionSpend) -> Option<String> {
        let (mut text, share) = status_parts(spend)?;
        if let Some(share) = share {
            text.push_str(&format!(", {share}"));
        }
        Some(text)
    }

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
            unpriced_calls: 0,
            empty_calls: 0,
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
        // A summary that read the conversation's cache counts, as `/session` counts it.
        spend.summaries = SpendPart {
            calls: 1,
            input_tokens: 0,
            cache_read_tokens: 1_000,
            ..SpendPart::default()
        };
        assert_eq!(
            status_fragment(&spend).as_deref(),
            Some("$0.1171 spent, 95% cache reads")
        );
    }

    /// QA (fourth round): a custom model with no known price showed "$0.0000 spent" in the chat's
    /// status line and `info`, which reads as free.
    #[test]
    fn a_model_of_unknown_price_is_never_shown_as_free() {
        let mut spend = SessionSpend {
            requests: SpendPart {
                calls: 3,
                dollars: 0.0,
                input_tokens: 12_300,
                cache_read_tokens: 0,
                cache_write_tokens: 0,
                output_tokens: 1_100,
                unpriced_calls: 3,
                empty_calls: 0,
            },
            ..SessionSpend::default()
        };
        assert_eq!(
            status_fragment(&spend).as_deref(),
            Some("tokens 12.3k in / 1.1k out, price unknown, 0% cache reads")
        );
        let lines = breakdown_lines(&spend);
        assert_eq!(
            lines[0],
            "price unknown over 3 model calls (tokens 12.3k in / 1.1k out): recorded without a \
             price; `llm.models[].cost` prices the model's calls from now on"
        );
        assert!(lines[1].contains("  unknown "), "{lines:?}");
        assert!(!lines.join("\n").contains("$0.0000"), "{lines:?}");
        spend.summaries = SpendPart {
            calls: 1,
            dollars: 0.0125,
            input_tokens: 900,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            output_tokens: 90,
            unpriced_calls: 0,
            empty_calls: 0,
        };
        assert_eq!(
            status_fragment(&spend).as_deref(),
            Some("$0.0125 spent + 3 calls of unknown price, 0% cache reads")
        );
        assert!(
            breakdown_lines(&spend)[0]
                .starts_with("$0.0125 over 4 model calls, 3 of them recorded without a price"),
            "{:?}",
            breakdown_lines(&spend)
        );
    }

    /// The offline summarizer's summaries cost nothing, and the breakdown says so.
    #[test]
    fn offline_summaries_are_shown_as_free() {
        let mut spend = SessionSpend {
            offline_summaries: 2,
            ..SessionSpend::default()
        };
        assert_eq!(
            breakdown_lines(&spend),
            [
                "no model calls recorded",
                "  summaries         2 entries      free (written offline, no model call)"
            ]
        );
        spend.requests.calls = 1;
        spend.requests.dollars = 0.5;
        let lines = breakdown_lines(&spend);
        assert_eq!(lines[0], "$0.5000 over 1 model call");
        assert!(lines[2].contains("free (written offline"), "{lines:?}");
    }

    /// Found by a chat sweep: a failed or interrupted call (no tokens, $0) of a model of unknown
    /// price was counted as a priced call, and the status line said "$0.0000 spent".
    #[test]
    fn calls_that_used_nothing_make_the_session_neither_priced_nor_free() {
        let mut spend = SessionSpend {
            requests: SpendPart {
                calls: 1,
                empty_calls: 1,
                ..SpendPart::default()
            },
            ..SessionSpend::default()
        };
        assert_eq!(
            status_fragment(&spend).as_deref(),
            Some("tokens 0 in / 0 out")
        );
        assert!(breakdown_lines(&spend)[0].starts_with("nothing spent over 1 model call"));
        spend.requests = SpendPart {
            calls: 3,
            empty_calls: 1,
            unpriced_calls: 2,
            input_tokens: 1_200,
            output_tokens: 300,
            ..SpendPart::default()
        };
        let status = status_fragment(&spend).unwrap_or_default();
        assert!(
            status.starts_with("tokens 1.2k in / 300 out, price unknown"),
            "{status}"
        );
        assert!(!breakdown_lines(&spend).join("\n").contains("$0.0000"));
    }
}
