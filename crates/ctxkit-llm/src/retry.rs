//! Retries with exponential backoff: 429, 5xx, network errors and timeouts are tried again after
//! `base × 2^(attempt−1)` or the delay the provider asks for (`Retry-After`, Google's `RetryInfo`
//! in the body); other errors and overflows are not.
//! Every retry is logged (`tracing`) and announced to the caller ([`RetryNotice`]) before the wait.

use std::future::Future;
use std::time::Duration;

use reqwest::header::HeaderMap;
use tokio_util::sync::CancellationToken;

use crate::error::{LlmError, Retried};

/// How often and how long to wait before trying a request again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (the reference's `retry.maxRetries`, 3).
    pub max_retries: u32,
    /// The first delay, doubled on each retry (`retry.baseDelayMs`, 2 s).
    pub base_delay: Duration,
    /// The longest of those doubled delays (`retry.maxAgentDelayMs`, 60 s), as Pi 1.6's
    /// `retryDelayMs` caps its own backoff.
    pub max_agent_delay: Duration,
    /// The longest wait a provider may ask for (`Retry-After`); asking for more fails at once.
    /// `None` waits as long as asked (`retry.provider.maxRetryDelayMs`, 60 s; 0 there means
    /// `None`). It never lengthens or removes the cap on the backoff.
    pub max_delay: Option<Duration>,
    /// Whether a reply whose stream broke off after it began is sent again (within the same
    /// `max_retries`): Pi's agent retries of a turn, which `retry.enabled: false` turns off
    /// while the provider client's own retries stay.
    pub restart_broken_replies: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_secs(2),
            max_agent_delay: Duration::from_secs(60),
            max_delay: Some(Duration::from_secs(60)),
            restart_broken_replies: true,
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            restart_broken_replies: false,
            ..Self::default()
        }
    }

    /// The backoff before retry `attempt` (1-based), without a `Retry-After`, capped at
    /// `max_agent_delay`.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        let delay = self.base_delay.saturating_mul(factor);
        delay.min(self.max_agent_delay)
    }
}

/// A request failed and will be sent again after `delay`: what a UI shows while it waits
/// (`Retrying in 6 s (1 of 3): 429 Rate limit reached`).
#[derive(Debug, Clone, PartialEq)]
pub struct RetryNotice {
    /// The provider the request went to.
    pub provider: String,
    /// Which retry this is, from 1.
    pub attempt: u32,
    /// How many retries are allowed in all.
    pub max_retries: u32,
    /// The wait before the retry (the provider's `Retry-After`, or the backoff).
    pub delay: Duration,
    /// The HTTP status of the failure, when it was one.
    pub status: Option<u16>,
    /// What went wrong, in a few words ([`LlmError::brief`]).
    pub reason: String,
    /// The reply had begun when its stream broke off: what was shown of it is dropped, and the
    /// request is sent again whole (a UI ends the shown part and starts the reply anew).
    pub restarted: bool,
    /// What the dropped attempt of a restart used, as its provider reported it (priced): paid
    /// for, and in no reply the session keeps, so the caller records it (`usage` of kind
    /// `retry`).
    pub dropped_usage: Option<Box<ctxkit_protocol::Usage>>,
}

impl RetryNotice {
    /// One line for a spinner or a log: `Retrying in 6 s (1 of 3): 429 Rate limit reached`.
    pub fn describe(&self) -> String {
        let what = if self.restarted {
            "The reply broke off; sending the request again"
        } else {
            "Retrying"
        };
        format!(
            "{what} in {} s ({} of {}): {}",
            crate::error::seconds(round_to_tenths(self.delay)),
            self.attempt,
            self.max_retries,
            self.reason
        )
    }
}

/// `delay` rounded to a tenth of a second (a `Retry-After` date gives odd milliseconds).
pub(crate) fn round_to_tenths(delay: Duration) -> Duration {
    let tenths = (delay.as_millis() + 50) / 100;
    Duration::from_millis(u64::try_from(tenths * 100).unwrap_or(u64::MAX))
}

/// Where retry notices go; `&mut |_| {}` when nobody is told.
pub(crate) type RetryObserver<'a> = dyn FnMut(RetryNotice) + Send + 'a;

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

/// The delay an error body asks for: Google's `google.rpc.RetryInfo` detail (Gemini's 429:
/// `{"error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay":
/// "5s"}]}}`, the body sometimes a one-element array), a protobuf duration in seconds.
pub(crate) fn retry_delay_in_body(body: &str) -> Option<Duration> {
    let value: serde_json::Value = serde_json::from_str(body.trim()).ok()?;
    let value = value
        .as_array()
        .and_then(|all| all.first())
        .unwrap_or(&value);
    value
        .pointer("/error/details")?
        .as_array()?
        .iter()
        .filter(|detail| {
            detail
                .get("@type")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|kind| kind.ends_with("google.rpc.RetryInfo"))
        })
        .find_map(|detail| detail.get("retryDelay")?.as_str()?.strip_suffix('s'))
        .and_then(|seconds| seconds.parse::<f64>().ok())
        .and_then(duration_from_secs)
}

fn duration_from_secs(seconds: f64) -> Option<Duration> {
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds.min(86_400.0)))
}

/// Runs `attempt` until it succeeds, fails with an error that is not retryable, or retries are
/// exhausted (the error then says how many were made). Each retry is logged and announced to
/// `observer` before its wait; waits are cut short by `cancel`.
pub(crate) async fn with_retries<T, F, Fut>(
    policy: &RetryPolicy,
    provider: &str,
    cancel: &CancellationToken,
    observer: &mut RetryObserver<'_>,
    mut attempt: F,
) -> Result<T, LlmError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, LlmError>>,
{
    let mut retries = 0;
    let started = std::time::Instant::now();
    loop {
        let error = match attempt().await {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        if !error.is_retryable() {
            return Err(error);
        }
        if retries >= policy.max_retries {
            if retries > 0 {
                tracing::warn!(
                    provider,
                    retries,
                    status = error.status(),
                    error = %error.brief(),
                    "the model request failed after its retries"
                );
            }
            return Err(error.after_retries(Retried {
                retries,
                over: started.elapsed(),
            }));
        }
        retries += 1;
        let delay = if let LlmError::Http {
            status,
            retry_after: Some(asked),
            body,
            ..
        } = &error
        {
            match policy.max_delay {
                Some(max) if *asked > max => {
                    return Err(LlmError::RetryDelayTooLong {
                        provider: provider.to_owned(),
                        status: *status,
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
        let notice = RetryNotice {
            provider: provider.to_owned(),
            attempt: retries,
            max_retries: policy.max_retries,
            delay,
            status: error.status(),
            reason: error.brief(),
            restarted: false,
            dropped_usage: None,
        };
        tracing::warn!(
            provider,
            attempt = retries,
            max_retries = policy.max_retries,
            delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            status = notice.status,
            error = %notice.reason,
            "retrying the model request"
        );
        observer(notice);
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
        // The cap on server-requested delays neither removes nor moves the backoff's (QA
        // 2026-12-06: `maxRetryDelayMs: 0` made a 90 s base wait 90 s, 180 s, …; Pi waits 60 s).
        let no_server_cap = RetryPolicy {
            base_delay: Duration::from_secs(90),
            max_delay: None,
            ..policy
        };
        assert_eq!(no_server_cap.backoff(1), Duration::from_secs(60));
        assert_eq!(no_server_cap.backoff(8), Duration::from_secs(60));
        let own_cap = RetryPolicy {
            max_agent_delay: Duration::from_secs(10),
            max_delay: Some(Duration::from_secs(600)),
            ..policy
        };
        assert_eq!(own_cap.backoff(2), Duration::from_secs(4));
        assert_eq!(own_cap.backoff(4), Duration::from_secs(10));
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

    #[test]
    fn a_google_retry_info_in_the_body_is_a_delay() {
        let info = |delay: &str| {
            format!(
                r#"{{"error": {{"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [{{"@type": "type.googleapis.com/google.rpc.QuotaFailure"}}, {{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "{delay}"}}]}}}}"#
            )
        };
        assert_eq!(
            retry_delay_in_body(&info("5s")),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            retry_delay_in_body(&info("0.250s")),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            retry_delay_in_body(&format!("[{}]", info("37s"))),
            Some(Duration::from_secs(37))
        );
        assert_eq!(retry_delay_in_body(&info("soon")), None);
        assert_eq!(retry_delay_in_body(&info("-1s")), None);
        assert_eq!(
            retry_delay_in_body(r#"{"error":{"message":"Rate limit reached"}}"#),
            None
        );
        assert_eq!(retry_delay_in_body("not json"), None);
    }

    fn http(status: u16, body: &str) -> LlmError {
        LlmError::Http {
            provider: "p".into(),
            status,
            body: body.into(),
            retry_after: None,
            retried: Retried::NONE,
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
            retried: Retried::NONE,
        };
        assert!(cerebras.is_context_overflow());
        assert!(!http(429, "").is_context_overflow());
        assert!(
            LlmError::Network {
                provider: "p".into(),
                message: "reset".into(),
                retried: Retried::NONE,
            }
            .is_retryable()
        );
    }

    #[tokio::test]
    async fn retries_transient_errors_then_gives_up() {
        let policy = RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(1),
            max_agent_delay: Duration::from_secs(60),
            max_delay: None,
            restart_broken_replies: true,
        };
        let mut calls = 0;
        let result: Result<(), _> =
            with_retries(&policy, "p", &CancellationToken::new(), &mut |_| {}, || {
                calls += 1;
                async { Err(http(503, "busy")) }
            })
            .await;
        assert!(matches!(result, Err(LlmError::Http { status: 503, .. })));
        assert_eq!(calls, 3);

        let mut calls = 0;
        let result: Result<(), _> =
            with_retries(&policy, "p", &CancellationToken::new(), &mut |_| {}, || {
                calls += 1;
                async { Err(http(400, "bad")) }
            })
            .await;
        assert!(result.is_err());
        assert_eq!(calls, 1);
    }

    #[tokio::test]
    async fn each_retry_is_announced_with_its_delay_and_the_last_error_counts_them() {
        let policy = RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(1),
            max_agent_delay: Duration::from_secs(60),
            max_delay: None,
            restart_broken_replies: true,
        };
        let mut notices = Vec::new();
        let mut observer = |notice: RetryNotice| notices.push(notice);
        let mut calls = 0;
        let result: Result<(), _> = with_retries(
            &policy,
            "p",
            &CancellationToken::new(),
            &mut observer,
            || {
                calls += 1;
                let asked = (calls == 1).then_some(Duration::from_millis(6));
                async move {
                    if let Some(asked) = asked {
                        return Err(LlmError::Http {
                            provider: "p".into(),
                            status: 429,
                            body: r#"{"error":{"message":"Rate limit reached"}}"#.into(),
                            retry_after: Some(asked),
                            retried: Retried::NONE,
                        });
                    }
                    Err(LlmError::Network {
                        provider: "p".into(),
                        message: "error sending request: tcp connect error: Connection refused"
                            .into(),
                        retried: Retried::NONE,
                    })
                }
            },
        )
        .await;
        assert_eq!(notices.len(), 2);
        assert_eq!(notices[0].attempt, 1);
        assert_eq!(notices[0].max_retries, 2);
        assert_eq!(notices[0].delay, Duration::from_millis(6));
        assert_eq!(notices[0].status, Some(429));
        assert_eq!(notices[0].reason, "429 Rate limit reached");
        assert_eq!(notices[1].attempt, 2);
        assert_eq!(notices[1].delay, Duration::from_millis(2));
        assert_eq!(notices[1].reason, "connection refused");
        let error = result.unwrap_err();
        assert!(
            error
                .to_string()
                .contains("Connection refused; tried 3 times over "),
            "{error}"
        );
    }

    #[test]
    fn a_notice_reads_as_one_line() {
        let notice = RetryNotice {
            provider: "p".into(),
            attempt: 1,
            max_retries: 3,
            delay: Duration::from_millis(5_960),
            status: Some(429),
            reason: "429 rate limited".into(),
            restarted: false,
            dropped_usage: None,
        };
        assert_eq!(
            notice.describe(),
            "Retrying in 6 s (1 of 3): 429 rate limited"
        );
        let short = RetryNotice {
            delay: Duration::from_millis(250),
            ..notice
        };
        assert_eq!(
            short.describe(),
            "Retrying in 0.3 s (1 of 3): 429 rate limited"
        );
    }

    #[test]
    fn brief_reasons_name_the_status_and_the_provider_message() {
        assert_eq!(http(503, "").brief(), "503 service unavailable");
        assert_eq!(http(429, "rate limited").brief(), "429 rate limited");
        assert_eq!(
            http(
                529,
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            )
            .brief(),
            "529 Overloaded"
        );
        assert_eq!(
            http(500, r#"{"unrelated": 1}"#).brief(),
            "500 internal server error"
        );
        assert!(http(500, &"x".repeat(500)).brief().chars().count() < 90);
    }

    #[tokio::test]
    async fn a_retry_after_above_the_cap_fails_at_once() {
        let policy = RetryPolicy {
            max_delay: Some(Duration::from_secs(1)),
            ..RetryPolicy::default()
        };
        let result: Result<(), _> = with_retries(
            &policy,
            "p",
            &CancellationToken::new(),
            &mut |_| {},
            || async {
                Err(LlmError::Http {
                    provider: "p".into(),
                    status: 429,
                    body: "later".into(),
                    retry_after: Some(Duration::from_secs(120)),
                    retried: Retried::NONE,
                })
            },
        )
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
        let result: Result<(), _> = with_retries(&policy, "p", &cancel, &mut |_| {}, || async {
            Err(http(500, "x"))
        })
        .await;
        assert!(matches!(result, Err(LlmError::Cancelled { .. })));
    }
}
