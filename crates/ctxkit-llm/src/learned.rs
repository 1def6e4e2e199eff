//! The real context limit an endpoint stated in an overflow error, per endpoint and model, for the
//! life of the process: output limits are fitted into it instead of the configured window, so a
//! provider whose real limit is below the window refuses at most one request.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

static LIMITS: LazyLock<Mutex<HashMap<String, u64>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

fn key(base_url: &str, model: &str) -> String {
    format!("{base_url} {model}")
}

/// Notes the limit `error_text` states, when it is an overflow that names one below `window`.
pub(crate) fn learn(base_url: &str, model: &str, window: u64, error_text: &str) {
    if !ctxkit_overflow::is_overflow_error_text(error_text) {
        return;
    }
    let Some(limit) = ctxkit_overflow::stated_limit(error_text) else {
        return;
    };
    if window > 0 && limit >= window {
        return;
    }
    if let Ok(mut limits) = LIMITS.lock() {
        let entry = limits.entry(key(base_url, model)).or_insert(limit);
        if limit < *entry {
            *entry = limit;
        }
        tracing::info!(
            limit,
            window,
            "the provider stated a context limit below the configured window"
        );
    }
}

/// The window to plan with: the configured one, or the learned limit when lower.
pub(crate) fn window(base_url: &str, model: &str, configured: u64) -> u64 {
    let learned = LIMITS
        .lock()
        .ok()
        .and_then(|limits| limits.get(&key(base_url, model)).copied());
    match learned {
        Some(limit) if configured == 0 || limit < configured => limit,
        Some(_) | None => configured,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stated_limit_below_the_window_is_planned_with() {
        let url = "http://127.0.0.1:9/learned";
        assert_eq!(window(url, "m", 16_384), 16_384);
        learn(
            url,
            "m",
            16_384,
            "rate limit: maximum context length is 100 tokens",
        );
        assert_eq!(window(url, "m", 16_384), 16_384);
        learn(
            url,
            "m",
            16_384,
            "input length and `max_tokens` exceed context limit: 12000 + 2048 > 12288, decrease input length",
        );
        assert_eq!(window(url, "m", 16_384), 12_288);
        assert_eq!(window(url, "other", 16_384), 16_384);
    }
}
