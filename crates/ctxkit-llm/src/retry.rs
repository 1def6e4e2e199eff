//! Retries with exponential backoff: 429, 5xx, network errors and timeouts are tried again after
//! `base × 2^(attempt−1)` or the provider's `Retry-After`; other errors and overflows are not.

use std::future::Future;
use std::time::Duration;

use reqwest::header::HeaderMap;
use tokio_util::sync::CancellationToken;

use crate::error::LlmError;

/// How often and how long to wait before trying a request again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (the reference's `retry.maxRetries`, 3).
    pub max_retries: u32,
    /// The first delay, doubled on each retry (`retry.baseDelayMs`, 2 s).
    pub base_delay: Duration,
    /// The longest wait; a provider asking for more fails at once. `None` waits as long as asked
    /// (`retry.provider.maxRetryDelayMs`, 60 s; 0 there means `None`).
    pub max_delay: Option<Duration>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_secs(2),
            max_delay: Some(Duration::from_secs(60)),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// The backoff before retry `attempt` (1-based), without a `Retry-After`, capped at
    /// `max_delay`.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        let delay = self.base_delay.saturating_mul(factor);
        self.max_delay.map_or(delay, |max| delay.min(max))
    }
}

/// The delay a response asks for: `retry-after-ms` (OpenAI), else `Retry-After` in seconds or as
/// an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return duration_from_secs(ms / 1000.0);
    }
    let value = text("retry-after")?;
    if let Ok(seconds) = value.parse::<f64>() {
        return duration_from_secs(seconds);
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let millis = date.timestamp_millis() - chrono::Utc::now().timestamp_millis();
    Some(Duration::from_millis(u64::try_from(millis).unwrap_or(0)))
}

fn duration_from_secs(seconds: f64) -> Option<Duration> {
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds.min(86_400.0)))
}

/// Runs `attempt` until it succeeds, fails with an error that is not retryable, or retries are
/// exhausted. Waits are cut short by `cancel`.
pub(crate) async fn with_retries<T, F, Fut>(
    policy: &RetryPolicy,
    provider: &str,
    cancel: &CancellationToken,
    mut attempt: F,
) -> Result<T, LlmError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, LlmError>>,
{
    let mut retries = 0;
    loop {
        let error = match attempt().await {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        if !error.is_retryable() || retries >= policy.max_retries {
            return Err(error);
        }
        retries += 1;
        let delay = if let LlmError::Http {
            retry_after: Some(asked),
            body,
            ..
        } = &error
        {
            match policy.max_delay {
                Some(max) if *asked > max => {
                    return Err(LlmError::RetryDelayTooLong {
                        provider: provider.to_owned(),
                        retry_after: *asked,
                        max_delay: max,
                        body: body.clone(),
                    });
                }
                Some(_) | None => *asked,
            }
        } else {
            policy.backoff(retries)
        };
        tokio::select! {
            () = cancel.cancelled() => {
                return Err(LlmError::Cancelled { provider: provider.to_owned() });
            }
            () = tokio::time::sleep(delay) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn backoff_doubles_from_the_base_and_is_capped() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.backoff(1), Duration::from_secs(2));
        assert_eq!(policy.backoff(2), Duration::from_secs(4));
        assert_eq!(policy.backoff(3), Duration::from_secs(8));
        assert_eq!(policy.backoff(10), Duration::from_secs(60));
        let uncapped = RetryPolicy {
            max_delay: None,
            ..policy
        };
        assert_eq!(uncapped.backoff(10), Duration::from_secs(1024));
    }

    #[test]
    fn retry_after_reads_seconds_milliseconds_and_dates() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
        headers.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        let mut dated = HeaderMap::new();
        dated.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&dated), Some(Duration::ZERO));
        dated.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&dated), None);
    }

    fn http(status: u16, body: &str) -> LlmError {
        LlmError::Http {
            provider: "p".into(),
            status,
            body: body.into(),
            retry_after: None,
        }
    }

    #[test]
    fn only_transient_errors_are_retryable() {
        assert!(http(429, "slow down").is_retryable());
        assert!(http(500, "oops").is_retryable());
        assert!(http(529, "overloaded").is_retryable());
        assert!(!http(400, "bad").is_retryable());
        assert!(!http(401, "no").is_retryable());
        assert!(!http(500, "prompt is too long").is_retryable());
        // A body-less 400 is an overflow from Cerebras only (Pi 0.87).
        assert!(!http(400, "").is_context_overflow());
        let cerebras = LlmError::Http {
            provider: "cerebras".into(),
            status: 400,
            body: String::new(),
            retry_after: None,
        };
        assert!(cerebras.is_context_overflow());
        assert!(!http(429, "").is_context_overflow());
        assert!(
            LlmError::Network {
                provider: "p".into(),
                message: "reset".into()
            }
            .is_retryable()
        );
    }

    #[tokio::test]
    async fn retries_transient_errors_then_gives_up() {
        let policy = RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(1),
            max_delay: None,
        };
        let mut calls = 0;
        let result: Result<(), _> = with_retries(&policy, "p", &CancellationToken::new(), || {
            calls += 1;
            async { Err(http(503, "busy")) }
        })
        .await;
        assert!(matches!(result, Err(LlmError::Http { status: 503, .. })));
        assert_eq!(calls, 3);

        let mut calls = 0;
        let result: Result<(), _> = with_retries(&policy, "p", &CancellationToken::new(), || {
            calls += 1;
            async { Err(http(400, "bad")) }
        })
        .await;
        assert!(result.is_err());
        assert_eq!(calls, 1);
    }

    #[tokio::test]
    async fn a_retry_after_above_the_cap_fails_at_once() {
        let policy = RetryPolicy {
            max_delay: Some(Duration::from_secs(1)),
            ..RetryPolicy::default()
        };
        let result: Result<(), _> =
            with_retries(&policy, "p", &CancellationToken::new(), || async {
                Err(LlmError::Http {
                    provider: "p".into(),
                    status: 429,
                    body: "later".into(),
                    retry_after: Some(Duration::from_secs(120)),
                })
            })
            .await;
        assert!(matches!(result, Err(LlmError::RetryDelayTooLong { .. })));
    }

    #[tokio::test]
    async fn cancellation_interrupts_the_wait() {
        let policy = RetryPolicy {
            base_delay: Duration::from_secs(30),
            ..RetryPolicy::default()
        };
        let cancel = CancellationToken::new();
        cancel.cancel();
        let result: Result<(), _> =
            with_retries(&policy, "p", &cancel, || async { Err(http(500, "x")) }).await;
        assert!(matches!(result, Err(LlmError::Cancelled { .. })));
    }
}
