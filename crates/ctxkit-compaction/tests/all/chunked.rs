//! A history span longer than the summary model reads is summarized in order in chunks that fit,
//! each an update of the summary so far: the goal in the first user message reaches the summary
//! (the long-workday QA: the first automatic compaction cut it out).

use std::sync::Mutex;

use ctxkit_compaction::{
    CompactOptions, CompactionError, CompactionSettings, Prompts, compact, prepare_compaction,
};
use ctxkit_session::Session;
use ctxkit_summarizer::{Summarizer, SummarizerError, SummaryRequest, SummaryResponse};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::fixtures::{assistant_text, tool_call, tool_result, user};

/// A summary model that reads at most `limit` characters of request; records each request and
/// answers the n-th with `SUMMARY n`, and cancels the run after `cancel_after` answers.
struct SmallWindow {
    limit: usize,
    requests: Mutex<Vec<SummaryRequest>>,
    cancel_after: Option<(usize, CancellationToken)>,
}

impl SmallWindow {
    fn new(limit: usize) -> Self {
        Self {
            limit,
            requests: Mutex::new(Vec::new()),
            cancel_after: None,
        }
    }

    fn requests(&self) -> Vec<SummaryRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl Summarizer for SmallWindow {
    fn name(&self) -> String {
        "small-window".to_owned()
    }

    fn supports_reasoning(&self) -> bool {
        false
    }

    fn max_request_chars(&self, _system_prompt: &str) -> Option<usize> {
        Some(self.limit)
    }

    fn summarize(
        &self,
        request: SummaryRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        let count = {
            let mut requests = self.requests.lock().unwrap();
            requests.push(request);
            requests.len()
        };
        if let Some((after, token)) = &self.cancel_after
            && count >= *after
        {
            token.cancel();
        }
        Box::pin(async move {
            Ok(SummaryResponse {
                text: format!("SUMMARY {count}"),
                usage: None,
            })
        })
    }
}

const GOAL: &str = "GOAL-ALPHA: we refactor click and must keep its public API stable";

/// The goal, then 40 turns of a read and its long result (far more than 8,000 characters), then
/// a last turn.
fn long_session() -> Session {
    let mut session = Session::in_memory("/project");
    session.append_message(user(GOAL)).unwrap();
    for turn in 0..40 {
        let path = format!("src/module_{turn}.py");
        session
            .append_message(user(&format!("TASK-{turn:04} read {path}")))
            .unwrap();
        session.append_message(tool_call("read", &path)).unwrap();
        session
            .append_message(tool_result(&path, &"def f(): pass\n".repeat(200)))
            .unwrap();
        session
            .append_message(assistant_text(&format!("Read {path}: it defines f.")))
            .unwrap();
    }
    // A last turn of its own, longer than the kept budget: the cut is at its request.
    session
        .append_message(user(&format!("TASK-LAST {}", "sum up ".repeat(40))))
        .unwrap();
    session
        .append_message(assistant_text(&"Summed up. ".repeat(90)))
        .unwrap();
    session
}

fn settings() -> CompactionSettings {
    CompactionSettings {
        enabled: true,
        reserve_tokens: 1000,
        keep_recent_tokens: 300,
    }
}

#[tokio::test]
async fn a_span_longer_than_the_summary_model_reads_is_summarized_in_chunks_in_order() {
    let session = long_session();
    let preparation = prepare_compaction(&session, None, settings())
        .unwrap()
        .unwrap();
    let summarizer = SmallWindow::new(8_000);
    let prompts = Prompts::default();
    let result = compact(
        &preparation,
        &summarizer,
        &prompts,
        &CompactOptions::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert!(!preparation.is_split_turn);
    let requests = summarizer.requests();
    assert!(requests.len() > 3, "{} requests", requests.len());
    for request in &requests {
        let length = request.user_text.encode_utf16().count();
        assert!(length <= 8_000, "a chunk of {length} characters");
        assert!(!request.user_text.contains("were left out"));
    }
    // The first chunk holds the goal and asks for a first summary.
    assert!(requests[0].user_text.contains(GOAL));
    assert!(!requests[0].user_text.contains("<previous-summary>"));
    // Each later one updates the summary the one before it wrote.
    for (index, request) in requests.iter().enumerate().skip(1) {
        let previous = format!("<previous-summary>\nSUMMARY {index}\n</previous-summary>");
        assert!(request.user_text.contains(&previous), "chunk {index}");
        assert!(request.user_text.contains(&prompts.update));
    }
    // Every message of the span is sent once, in order.
    let sent: String = requests
        .iter()
        .map(|request| request.user_text.as_str())
        .collect();
    let mut from = 0;
    for turn in 0..preparation.messages_to_summarize.len() / 4 {
        let task = format!("[User]: TASK-{turn:04} read");
        let at = sent[from..].find(&task).map(|at| from + at);
        assert!(at.is_some(), "{task} missing or out of order");
        from = at.unwrap();
        assert_eq!(sent.matches(&task).count(), 1, "{task}");
    }
    // The summary is the last chunk's, with the file lists after it.
    assert!(
        result
            .summary
            .starts_with(&format!("SUMMARY {}", requests.len()))
    );
    assert_eq!(result.requests.len(), requests.len());
    // A summarizer that reads any length gets the span in one request, as before.
    let whole = SmallWindow::new(usize::MAX);
    compact(
        &preparation,
        &whole,
        &prompts,
        &CompactOptions::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(whole.requests().len(), 1);
}

#[tokio::test]
async fn cancelling_between_chunks_stops_the_run_and_writes_nothing() {
    let session = long_session();
    let preparation = prepare_compaction(&session, None, settings())
        .unwrap()
        .unwrap();
    let cancel = CancellationToken::new();
    let summarizer = SmallWindow {
        cancel_after: Some((2, cancel.clone())),
        ..SmallWindow::new(8_000)
    };
    let outcome = compact(
        &preparation,
        &summarizer,
        &Prompts::default(),
        &CompactOptions::default(),
        &cancel,
    )
    .await;
    assert!(matches!(outcome, Err(CompactionError::Cancelled)));
    assert_eq!(summarizer.requests().len(), 2, "no chunk after the cancel");
}
