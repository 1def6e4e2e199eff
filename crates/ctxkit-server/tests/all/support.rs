//! A fixed summarizer, settings and message builders for the server tests.

use std::time::Duration;

use ctxkit_engine::EngineSettings;
use ctxkit_protocol::AgentMessage;
use ctxkit_settings::CompactionConfig;
use ctxkit_summarizer::{Summarizer, SummarizerError, SummaryRequest, SummaryResponse};
use futures::future::BoxFuture;
use serde_json::json;
use tokio_util::sync::CancellationToken;

pub const PROVIDER: &str = "faux";
pub const MODEL: &str = "faux-1";

/// Answers every request with `SUMMARY`.
#[derive(Debug, Clone, Copy)]
pub struct Fixed;

impl Summarizer for Fixed {
    fn name(&self) -> String {
        "fixed".to_owned()
    }

    fn supports_reasoning(&self) -> bool {
        false
    }

    fn summarize(
        &self,
        _request: SummaryRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        Box::pin(async {
            Ok(SummaryResponse {
                text: "SUMMARY".to_owned(),
                usage: None,
            })
        })
    }
}

/// Fails every request, as a provider that is down does.
#[derive(Debug, Clone, Copy)]
pub struct Failing;

impl Summarizer for Failing {
    fn name(&self) -> String {
        "failing".to_owned()
    }

    fn supports_reasoning(&self) -> bool {
        false
    }

    fn summarize(
        &self,
        _request: SummaryRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        Box::pin(async { Err(SummarizerError::new("overloaded".to_owned())) })
    }
}

/// Settings with a reserve of `reserve` and a tiny keep budget.
pub fn settings(reserve: u64) -> EngineSettings {
    EngineSettings {
        compaction: CompactionConfig {
            reserve_tokens: reserve,
            keep_recent_tokens: 1,
            ..CompactionConfig::default()
        },
        ..EngineSettings::default()
    }
}

/// Now in epoch ms, after a short sleep so consecutive calls differ.
pub fn now_ms() -> i64 {
    std::thread::sleep(Duration::from_millis(3));
    chrono_now()
}

fn chrono_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

pub fn user(text: &str) -> AgentMessage {
    serde_json::from_value(json!({"role": "user", "content": text, "timestamp": now_ms()})).unwrap()
}

pub fn reply(text: &str, total: u64) -> AgentMessage {
    serde_json::from_value(json!({
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "provider": PROVIDER, "model": MODEL, "api": "faux",
        "usage": {"input": total, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total},
        "stopReason": "stop",
        "timestamp": now_ms(),
    }))
    .unwrap()
}

/// Never answers: each request waits until it is cancelled.
#[derive(Debug, Clone, Copy)]
pub struct UntilCancelled;

impl Summarizer for UntilCancelled {
    fn name(&self) -> String {
        "until-cancelled".to_owned()
    }

    fn supports_reasoning(&self) -> bool {
        false
    }

    fn summarize(
        &self,
        _request: SummaryRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        Box::pin(async move {
            cancel.cancelled().await;
            Err(SummarizerError::new("cancelled".to_owned()))
        })
    }
}
