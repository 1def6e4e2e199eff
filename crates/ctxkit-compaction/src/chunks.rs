//! A history span longer than the summary model reads, summarized in order in chunks that fit:
//! the first chunk as a first summary (or as an update of the previous compaction's summary), each
//! later chunk as an update of the summary so far, so that every message of the span is read and
//! the user's first words (the goal) reach the summary. The chunks are sized by the summarizer's
//! own limit (`Summarizer::max_request_chars`); only one message longer than that limit on its own
//! is left for the summarizer to cut (`ctxkit-llm`'s `summary_fit`, the last resort).

use ctxkit_summarizer::SummaryRequest;
use ctxkit_tokens::utf16_len;

use crate::continuation::RequestMode;
use crate::error::CompactionError;
use crate::prepare::SourcedMessage;
use crate::runner::{APPEND_NOTE, HistoryPart, Run, Written, append_messages, history_request_of};
use crate::span_window::SpanGap;

/// Between two serialized messages (`crate::serialize::append_message`).
const SEPARATOR: &str = "\n\n";

impl Run<'_> {
    /// Sends the history request, or, when it is longer than a fresh request to the summarizer
    /// may be, the span in chunks; the summary's text.
    pub(crate) async fn send_history(
        &self,
        written: &mut Written,
        history: SummaryRequest,
        mode: &RequestMode<'_>,
    ) -> Result<String, CompactionError> {
        let limit = match mode {
            // A request continuing the conversation carries no span of its own.
            RequestMode::Continue(_) => None,
            RequestMode::Fresh | RequestMode::FreshBecause(_) => {
                self.summarizer.max_request_chars(&history.system_prompt)
            }
        };
        match limit {
            Some(limit)
                if utf16_len(&history.user_text) > limit
                    && self.preparation.messages_to_summarize.len() > 1 =>
            {
                self.send_in_chunks(written, limit, mode).await
            }
            _ => {
                written
                    .send(self.summarizer, history, mode, self.cancel)
                    .await
            }
        }
    }

    /// The span in chunks of at most `limit` characters of request each, in order, each an update
    /// of the summary the chunks before it wrote; the last chunk's summary.
    async fn send_in_chunks(
        &self,
        written: &mut Written,
        limit: usize,
        mode: &RequestMode<'_>,
    ) -> Result<String, CompactionError> {
        let messages = &self.preparation.messages_to_summarize;
        let pieces = serialized_pieces(messages, self.preparation.history_gap);
        let mut summary = self.preparation.previous_summary.clone();
        let mut start = 0;
        while start < pieces.len() {
            let overhead = utf16_len(
                &self
                    .chunk_request("", &[], summary.as_deref(), start == 0)
                    .user_text,
            );
            let end = chunk_end(&pieces, start, limit.saturating_sub(overhead));
            let conversation = joined(&pieces[start..end]);
            let request = self.chunk_request(
                &conversation,
                &messages[start..end],
                summary.as_deref(),
                start == 0,
            );
            summary = Some(
                written
                    .send(self.summarizer, request, mode, self.cancel)
                    .await?,
            );
            start = end;
        }
        Ok(summary.unwrap_or_default())
    }

    /// The request of one chunk: an update of `previous` when there is one. The first chunk of a
    /// summary added after the previous one (`appended`) says so; later chunks update the part
    /// the chunks before them wrote.
    fn chunk_request(
        &self,
        conversation: &str,
        messages: &[SourcedMessage],
        previous: Option<&str>,
        first: bool,
    ) -> SummaryRequest {
        let part = HistoryPart {
            conversation,
            messages,
            gap: None,
            previous_summary: previous,
        };
        let mut request = history_request_of(
            &part,
            self.preparation,
            self.prompts,
            self.summarizer,
            self.options,
        );
        if first && self.appended.is_some() {
            request.user_text.push_str(SEPARATOR);
            request.user_text.push_str(APPEND_NOTE);
            request.source.continues_summary = true;
        }
        request
    }
}

/// Each message of the span serialized on its own (empty for one a summarizer does not read), the
/// line about messages left out of a span too long to carry (`gap`) before the message after it.
fn serialized_pieces(messages: &[SourcedMessage], gap: Option<SpanGap>) -> Vec<String> {
    let mut pieces: Vec<String> = messages
        .iter()
        .map(|message| {
            let mut text = String::new();
            append_messages(&mut text, std::slice::from_ref(message));
            text
        })
        .collect();
    if let Some(gap) = gap {
        let line = format!(
            "[{} messages left out here: the span is longer than a summary request carries]",
            gap.messages
        );
        match pieces.get_mut(gap.at) {
            Some(piece) if piece.is_empty() => *piece = line,
            Some(piece) => *piece = format!("{line}{SEPARATOR}{piece}"),
            None => {
                if let Some(last) = pieces.last_mut() {
                    last.push_str(SEPARATOR);
                    last.push_str(&line);
                }
            }
        }
    }
    pieces
}

/// Where the chunk starting at `start` ends: as many pieces as fit `budget` characters, at least
/// one.
fn chunk_end(pieces: &[String], start: usize, budget: usize) -> usize {
    let mut used = 0;
    let mut end = start;
    while let Some(piece) = pieces.get(end) {
        let length = match (used, utf16_len(piece)) {
            (_, 0) => 0,
            (0, length) => length,
            (_, length) => length + SEPARATOR.len(),
        };
        if end > start && used + length > budget {
            break;
        }
        used += length;
        end += 1;
    }
    end
}

/// The non-empty pieces joined as one serialized conversation.
fn joined(pieces: &[String]) -> String {
    pieces
        .iter()
        .filter(|piece| !piece.is_empty())
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(SEPARATOR)
}
