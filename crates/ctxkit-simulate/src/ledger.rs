//! The simulated clock and the summary calls of one replay: when each summary was asked for, what
//! its input was at that moment, what it cost and how long the user waited for it.

use ctxkit_engine::CompactionEnd;
use ctxkit_protocol::EntryKind;
use ctxkit_session::Session;
use ctxkit_tokens::estimate_tokens;

use super::cost::PriceTable;
use super::summary::{
    SummaryCosts, SummaryInput, SummaryRequest, TOOL_SECONDS, latency_seconds, summary_call,
};

/// A background summary asked for and not yet taken or dropped.
#[derive(Debug, Clone, Copy)]
struct Pending {
    started_at: f64,
    input: SummaryInput,
}

/// The clock and summary bills of one strategy.
#[derive(Debug)]
pub(crate) struct Ledger {
    request: SummaryRequest,
    prices: PriceTable,
    /// `keepRecentTokens`: a background fresh prompt is taken to summarize the last request
    /// less this.
    keep_recent_tokens: u64,
    /// Seconds since the session started: model calls and tool runs.
    clock: f64,
    last_request_tokens: u64,
    tail_tokens: u64,
    background_seen: u64,
    pending: Option<Pending>,
    /// When the last request was sent, on a real session's clock (epoch ms), and the cache
    /// lifetime it asked for (ms).
    last_request_at: Option<(i64, i64)>,
    pub(crate) costs: SummaryCosts,
}

impl Ledger {
    pub(crate) fn new(
        request: SummaryRequest,
        prices: PriceTable,
        keep_recent_tokens: u64,
    ) -> Self {
        Self {
            request,
            prices,
            keep_recent_tokens,
            clock: 0.0,
            last_request_tokens: 0,
            tail_tokens: 0,
            background_seen: 0,
            pending: None,
            last_request_at: None,
            costs: SummaryCosts::default(),
        }
    }

    /// A model call was answered: the clock moves by its latency and its tools' run.
    pub(crate) fn answered(&mut self, input: u64, cache_read: u64, output: u64) {
        self.clock +=
            latency_seconds(cache_read, input - cache_read.min(input), output) + TOOL_SECONDS;
        self.last_request_tokens = input;
        self.tail_tokens = 0;
    }

    /// The last request was sent at `at` with a cache lifetime (a real session's clock and ms;
    /// `None` for a generated one).
    pub(crate) fn sent_at(&mut self, at: Option<(i64, i64)>) {
        self.last_request_at = at;
    }

    /// Tokens appended after the last request (its reply, tool results, the next prompt).
    pub(crate) fn appended(&mut self, tokens: u64) {
        self.tail_tokens += tokens;
    }

    fn input_now(&self, span_tokens: u64) -> SummaryInput {
        SummaryInput {
            span_tokens,
            last_request_tokens: self.last_request_tokens,
            tail_tokens: self.tail_tokens,
        }
    }

    /// After an append: a background summary started since the last look is asked for now; one it
    /// replaced was cancelled and costs its input only.
    pub(crate) fn background_started(&mut self, started_total: u64) {
        let span_tokens = self
            .last_request_tokens
            .saturating_sub(self.keep_recent_tokens);
        while self.background_seen < started_total {
            self.background_seen += 1;
            if let Some(replaced) = self.pending.take() {
                self.costs.background_dropped += 1;
                self.bill(replaced.input, 0);
            }
            self.pending = Some(Pending {
                started_at: self.clock,
                input: self.input_now(span_tokens),
            });
        }
    }

    fn bill(&mut self, input: SummaryInput, output: u64) -> f64 {
        let call = summary_call(self.request, input, output, &self.prices);
        self.costs.add(&call);
        self.costs.on_demand_cost += super::native::on_demand_call(input, output, &self.prices).0;
        call.seconds
    }

    /// A compaction was written at `now` (a real session's clock) with a summary of `output`
    /// tokens over a span of `span_tokens`. When the provider's cache has expired since the last
    /// request (a compaction before a prompt that came after a pause), a cache-prefix summary
    /// reads nothing from the cache: the last request is written again with the rest.
    pub(crate) fn compacted(
        &mut self,
        end: &CompactionEnd,
        span_tokens: u64,
        output: u64,
        now: Option<i64>,
    ) {
        if end.from_background
            && let Some(pending) = self.pending.take()
        {
            self.costs.background_used += 1;
            let seconds = self.bill(pending.input, output);
            let wait = (pending.started_at + seconds - self.clock).max(0.0);
            self.costs.waits_seconds.push(wait);
            self.clock += wait;
            return;
        }
        if end.reason == ctxkit_engine::CompactionReason::Threshold
            && let Some(dropped) = self.pending.take()
        {
            // The threshold compaction took the background summary's slot and dropped it: it ran
            // to the end, so it is billed in full (its output taken as this summary's size).
            self.costs.background_dropped += 1;
            self.bill(dropped.input, output);
        }
        let mut input = self.input_now(span_tokens);
        let expired = matches!((self.last_request_at, now),
            (Some((then, lifetime)), Some(now)) if now.saturating_sub(then) > lifetime);
        if expired {
            input.tail_tokens += input.last_request_tokens;
            input.last_request_tokens = 0;
        }
        let seconds = self.bill(input, output);
        self.costs.waits_seconds.push(seconds);
        self.clock += seconds;
    }

    /// The replay ended: a background summary still pending is billed for its input.
    pub(crate) fn finish(mut self) -> SummaryCosts {
        if let Some(pending) = self.pending.take() {
            self.costs.background_dropped += 1;
            self.bill(pending.input, 0);
        }
        self.costs
    }
}

/// The tokens a fresh summary prompt of compaction `entry_id` holds, and its summary's tokens:
/// the messages from the previous compaction's first kept entry (or the start) up to this one's
/// first kept entry, plus the previous summary. Zero when the entry is not on the branch.
pub(crate) fn compaction_tokens(session: &Session, entry_id: &str) -> (u64, u64) {
    let path = session.branch_path(None);
    let Some(position) = path.iter().position(|entry| entry.id() == entry_id) else {
        return (0, 0);
    };
    let compaction = |index: usize| match path[index].parse().map(|entry| entry.kind) {
        Ok(EntryKind::Compaction(compaction)) => Some(compaction),
        Ok(_) | Err(_) => None,
    };
    let Some(current) = compaction(position) else {
        return (0, 0);
    };
    let previous = (0..position).rev().find_map(compaction);
    let start = previous
        .as_ref()
        .and_then(|previous| {
            path.iter()
                .position(|entry| entry.id() == previous.first_kept_entry_id)
        })
        .unwrap_or(0);
    let end = path
        .iter()
        .position(|entry| entry.id() == current.first_kept_entry_id)
        .unwrap_or(position)
        .max(start);
    let text_tokens = |text: &str| (text.chars().count() as u64).div_ceil(4);
    let span: u64 = path[start..end]
        .iter()
        .filter_map(|entry| entry.parse_message())
        .filter_map(Result::ok)
        .map(|message| estimate_tokens(&message))
        .sum::<u64>()
        + previous.map_or(0, |previous| text_tokens(&previous.summary));
    // A summary added after the previous one (`compaction.appendSummaryTokens`) starts with the
    // previous one, copied by the engine: only the rest is the summarizer's output.
    let kept_chars = current
        .details
        .as_ref()
        .and_then(|details| details.get("appended")?.get("keptChars")?.as_u64())
        .unwrap_or(0);
    // The carried line and the file blocks are appended by ctxkit, not written by the summarizer.
    let appended = ctxkit_engine::appended_chars(&current.summary) as u64;
    let written = (current.summary.chars().count() as u64)
        .saturating_sub(kept_chars)
        .saturating_sub(appended);
    (span, written.div_ceil(4))
}

#[cfg(test)]
mod tests {
    use ctxkit_protocol::{AgentMessage, JsonObject, MessageContent, UserMessage};
    use ctxkit_session::{NewCompaction, Session, SummarySource};

    use super::compaction_tokens;

    fn user(text: &str) -> AgentMessage {
        AgentMessage::User(UserMessage {
            content: MessageContent::Text(text.to_owned()),
            timestamp: None,
            extra: JsonObject::new(),
        })
    }

    /// A summary added after the previous one (`compaction.appendSummaryTokens`) is billed for
    /// what follows the characters the engine copied, a re-written one for all of it.
    #[test]
    fn an_appended_summary_bills_only_what_the_summarizer_wrote() {
        let mut session = Session::in_memory("/tmp");
        let compact = |session: &mut Session, summary: String, kept: Option<usize>| {
            let first = session.append_message(user("first")).unwrap();
            session.append_message(user("kept")).unwrap();
            let details = kept.map(|kept| serde_json::json!({"appended": {"keptChars": kept}}));
            session
                .append_compaction(NewCompaction {
                    summary,
                    first_kept_entry_id: first,
                    tokens_before: 100,
                    details,
                    source: SummarySource::Ctxkit,
                })
                .unwrap()
        };
        let previous = "p".repeat(400);
        let first = compact(&mut session, previous.clone(), None);
        assert_eq!(compaction_tokens(&session, &first).1, 100);
        let appended = compact(
            &mut session,
            format!("{previous}{}", "n".repeat(80)),
            Some(400),
        );
        assert_eq!(compaction_tokens(&session, &appended).1, 20);
        let rewritten = compact(&mut session, "r".repeat(480), None);
        assert_eq!(compaction_tokens(&session, &rewritten).1, 120);
        // The carried line and the file blocks ctxkit appends are not the summarizer's output.
        let with_lines = format!(
            "{}\n\nNamed in the tool results this summary replaces: `a_b`, `c_d`\n\n<read-files>\nsrc/a.rs\n</read-files>",
            "w".repeat(400)
        );
        let carried = compact(&mut session, with_lines, None);
        assert_eq!(compaction_tokens(&session, &carried).1, 100);
    }
}
