//! What the model saw at an entry: the session's own context builder (`ctxkit_session::build_context`,
//! compaction included) followed by the per-call transforms of `ctxkit_transform::transform_context`
//! (pruned results, dropped thinking, the sliding window). Each message of the view is matched back
//! to the entry it came from, so the page can show the raw entry beside what was sent.

use std::borrow::Cow;

use ctxkit_protocol::{AgentMessage, ContentBlock};
use ctxkit_session::{
    ContextMessage, ContextMessageKind, EntryIndex, Session, build_context, reaches_model,
};
use ctxkit_settings::TransformSettings;
use ctxkit_transform::{sent_form, transform_measured};
use serde_json::{Map, Value, json};

use crate::blocks::Renderer;
use crate::error::WebError;
use crate::parsed::ParsedMessages;
use crate::sent_table::{Added, SentTable};

/// The page's name for how a context message is made from its entry.
fn kind_name(kind: ContextMessageKind) -> &'static str {
    match kind {
        ContextMessageKind::Stored => "stored",
        ContextMessageKind::Custom => "custom",
        ContextMessageKind::BranchSummary => "branchSummary",
        ContextMessageKind::CompactionSummary => "compactionSummary",
        ContextMessageKind::CompactionSystem => "compactionSystem",
    }
}

/// Whether `sent` is `message` without its thinking blocks (what the thinking transform sends of
/// an older assistant), and `message` had some. Compared in place: a copy of each assistant of
/// each view was a tenth of an export's time.
fn sent_without_thinking(message: &AgentMessage, sent: &AgentMessage) -> bool {
    let (Some(stored), Some(sent)) = (message.as_assistant(), sent.as_assistant()) else {
        return false;
    };
    let is_thinking = |block: &&ContentBlock| matches!(block, ContentBlock::Thinking(_));
    // Every field but the content, named so a new field is not left out unseen.
    let ctxkit_protocol::AssistantMessage {
        content,
        api,
        provider,
        model,
        usage,
        stop_reason,
        error_message,
        timestamp,
        extra,
    } = stored;
    content.iter().any(|block| is_thinking(&block))
        && content
            .iter()
            .filter(|block| !is_thinking(block))
            .eq(sent.content.iter())
        && *api == sent.api
        && *provider == sent.provider
        && *model == sent.model
        && *usage == sent.usage
        && *stop_reason == sent.stop_reason
        && *error_message == sent.error_message
        && *timestamp == sent.timestamp
        && *extra == sent.extra
}

/// For each of `inputs` input messages, the output message it became (`None`: dropped), from each
/// output message's origin. The first output of an origin is the input's own: the error result
/// answering a reply's call left without a result has the reply's origin and follows it.
fn matched(inputs: usize, origins: &[usize]) -> Vec<Option<usize>> {
    let mut matched = vec![None; inputs];
    for (output, origin) in origins.iter().enumerate() {
        if let Some(input @ None) = matched.get_mut(*origin) {
            *input = Some(output);
        }
    }
    matched
}

/// The model's view at entry `at` as page data: one record per context message with the entry it
/// came from, how, and what the transforms did to it (`changed`: the blocks sent instead;
/// `dropped`: not sent), and the transforms' report; `None` when the context holds more than
/// `max_messages` messages (its messages are not read then). The messages are taken from `parsed`
/// when another view holding them parsed them (`ctxkit view`'s builds of one version share them).
pub(crate) fn context_record_within(
    session: &Session,
    parsed: &ParsedMessages,
    at: EntryIndex,
    settings: &TransformSettings,
    context_window: u64,
    renderer: &Renderer<'_>,
    max_messages: usize,
) -> Result<Option<Value>, WebError> {
    let view = View::build(session, parsed, at, settings, context_window, max_messages)?;
    Ok(view.map(|view| view.record(renderer)))
}

/// The model's view at an entry before it is rendered: built from the session alone, so views
/// are built on several threads and rendered in order (the page's image budget is spent in order).
pub(crate) struct View {
    at: EntryIndex,
    messages: Vec<ViewMessage>,
    thinking_level: String,
    model: Option<String>,
    report: ctxkit_transform::TransformReport,
    context_window: u64,
}

/// One message of a [`View`]: where it came from and what was sent of it.
struct ViewMessage {
    entry: EntryIndex,
    kind: ContextMessageKind,
    edit: Option<usize>,
    sent: Sent,
}

enum Sent {
    Dropped,
    AsStored,
    WithoutThinking,
    /// What was sent instead, as JSON (`changed`: it differs from the entry's own message).
    Instead {
        message: String,
        changed: bool,
    },
}

impl View {
    /// The view at `at`; `None` when its context holds more than `max_messages` messages.
    pub(crate) fn build(
        session: &Session,
        parsed: &ParsedMessages,
        at: EntryIndex,
        settings: &TransformSettings,
        context_window: u64,
        max_messages: usize,
    ) -> Result<Option<Self>, WebError> {
        if session.index().get(at).is_none() {
            return Err(WebError::UnknownEntry {
                id: format!("#{at}"),
            });
        }
        let context = build_context(session.index(), Some(at));
        if context.messages.len() > max_messages {
            return Ok(None);
        }
        // What could be read: a message of the wrong type is left out, as the page says. What
        // the model never sees (a `!!` shell run, an unknown role) is left out by the rule
        // `ctxkit context --llm` follows, so it is neither listed nor counted.
        let (sources, input): (Vec<ContextMessage>, Vec<_>) = parsed
            .get(session, &context.messages)?
            .into_iter()
            .filter(|(_, message)| reaches_model(message.message()))
            .unzip();
        // The pruning rule weighs the cache of the model the view was sent to, as the engine does.
        let cache = context.model.as_ref().and_then(|model| {
            ctxkit_models::model_cache_terms(model.provider.as_deref()?, model.model_id.as_deref()?)
        });
        let settings = settings.with_cache_terms(cache.as_ref());
        let output = transform_measured(&input, &settings, context_window);
        let input: Vec<&AgentMessage> = input.iter().map(|message| message.message()).collect();
        let matched = matched(input.len(), &output.origins);
        let messages = sources
            .iter()
            .zip(&input)
            .zip(&matched)
            .map(|((source, message), result)| {
                let derived =
                    !matches!(source.kind, ContextMessageKind::Stored) || source.edit.is_some();
                let sent = match result {
                    None => Sent::Dropped,
                    Some(position) => {
                        let shown = &output.messages[*position];
                        if matches!(shown, Cow::Borrowed(_)) && !derived {
                            // The input's own message: sent as it is stored.
                            Sent::AsStored
                        } else {
                            sent(message, &sent_form(shown), derived)
                        }
                    }
                };
                ViewMessage {
                    entry: source.entry,
                    kind: source.kind,
                    edit: source.edit,
                    sent,
                }
            })
            .collect();
        Ok(Some(Self {
            at,
            messages,
            thinking_level: context.thinking_level,
            model: context.model.and_then(|model| model.model_id),
            report: output.report,
            context_window,
        }))
    }

    /// The view as page data, its strings and images through `renderer`.
    pub(crate) fn record(self, renderer: &Renderer<'_>) -> Value {
        self.record_sharing(renderer, None)
    }

    /// [`View::record`] with each large sent message named by its place in `table` (`msgRef`),
    /// and the messages the view adds to the table.
    pub(crate) fn record_shared(
        self,
        renderer: &Renderer<'_>,
        table: &SentTable,
    ) -> (Value, Added) {
        let mut added = Added::default();
        let record = self.record_sharing(renderer, Some((table, &mut added)));
        (record, added)
    }

    fn record_sharing(
        self,
        renderer: &Renderer<'_>,
        mut sharing: Option<(&SentTable, &mut Added)>,
    ) -> Value {
        let messages: Vec<Value> = self
            .messages
            .into_iter()
            .map(|message| message.record(renderer, sharing.as_mut()))
            .collect();
        let report = self.report;
        json!({
            "at": self.at,
            "messages": messages,
            "thinkingLevel": renderer.short(&self.thinking_level),
            "model": self.model.map(|model| renderer.short(&model)),
            "report": {
                "toolResultsPruned": report.tool_results_pruned,
                "toolCallsCut": report.tool_calls_cut,
                "charsSaved": report.chars_saved,
                "thinkingBlocksDropped": report.thinking_blocks_dropped,
                "emptyAssistantsDropped": report.empty_assistants_dropped,
                "messagesDroppedByWindow": report.messages_dropped_by_window,
                "orphansRepaired": report.orphans_repaired,
                "tokensBefore": report.estimated_tokens_before,
                "tokensAfter": report.estimated_tokens_after,
            },
            "contextWindow": self.context_window,
        })
    }
}

/// What was sent of `message` (`derived`: made from its entry, not stored as it is).
fn sent(message: &AgentMessage, sent: &AgentMessage, derived: bool) -> Sent {
    if !derived && sent_unchanged(message, sent) {
        Sent::AsStored
    } else if !derived && sent_without_thinking(message, sent) {
        // Only its thinking was dropped: the page shows the entry without it (no copy).
        Sent::WithoutThinking
    } else {
        Sent::Instead {
            message: serde_json::to_string(sent).unwrap_or_else(|_| "null".to_owned()),
            changed: !derived || !sent_unchanged(message, sent),
        }
    }
}

/// Whether `sent` is `message` as the model is sent it: the view leaves a tool result's `details`
/// out (they are for a user interface), and that is no change.
fn sent_unchanged(message: &AgentMessage, sent: &AgentMessage) -> bool {
    match (message, sent) {
        (AgentMessage::ToolResult(stored), AgentMessage::ToolResult(sent)) => {
            // Every field but the details, named so a new field is not left out unseen.
            let ctxkit_protocol::ToolResultMessage {
                tool_call_id,
                tool_name,
                content,
                details: _,
                is_error,
                timestamp,
                extra,
            } = stored;
            sent.details.is_none()
                && *tool_call_id == sent.tool_call_id
                && *tool_name == sent.tool_name
                && *content == sent.content
                && *is_error == sent.is_error
                && *timestamp == sent.timestamp
                && *extra == sent.extra
        }
        (message, sent) => message == sent,
    }
}

impl ViewMessage {
    fn record(
        self,
        renderer: &Renderer<'_>,
        sharing: Option<&mut (&SentTable, &mut Added)>,
    ) -> Value {
        let mut record = Map::new();
        record.insert("e".to_owned(), json!(self.entry));
        record.insert("kind".to_owned(), json!(kind_name(self.kind)));
        if let Some(edit) = self.edit {
            record.insert("edit".to_owned(), json!(edit));
        }
        match self.sent {
            Sent::AsStored => {}
            Sent::Dropped => {
                record.insert("dropped".to_owned(), json!(true));
            }
            Sent::WithoutThinking => {
                record.insert("thinkingDropped".to_owned(), json!(true));
            }
            Sent::Instead { message, changed } => {
                record.insert("changed".to_owned(), json!(changed));
                let sent = renderer.sent_message(&message);
                match sharing {
                    Some((table, added)) if SentTable::shares(&sent.text) => {
                        record.insert("msgRef".to_owned(), json!(table.place(&sent.text, added)));
                    }
                    Some(_) | None => {
                        record.insert("msg".to_owned(), Value::Object(sent.shown.clone()));
                    }
                }
            }
        }
        Value::Object(record)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn message(value: Value) -> AgentMessage {
        serde_json::from_value(value).unwrap()
    }

    /// Two replies of one millisecond (a Codex rollout's parallel calls), the first, aborted,
    /// dropped (its call has no result, and no request sends a failed reply): the page shows the
    /// second as sent, not the first in its place.
    #[test]
    fn a_dropped_reply_does_not_take_the_place_of_its_twin() {
        let mut session = Session::in_memory("/work");
        let mut append = |value: Value| session.append_message(message(value)).unwrap();
        append(json!({"role": "user", "content": "go", "timestamp": 1}));
        for (id, stop) in [("lost", "aborted"), ("kept", "toolUse")] {
            append(
                json!({"role": "assistant", "timestamp": 5, "stopReason": stop,
                "content": [{"type": "toolCall", "id": id, "name": "bash", "arguments": {}}]}),
            );
        }
        append(
            json!({"role": "toolResult", "toolCallId": "kept", "toolName": "bash",
            "isError": false, "timestamp": 6, "content": [{"type": "text", "text": "ok"}]}),
        );
        let leaf = session.index().entries().len() - 1;
        let settings = TransformSettings::default();
        let parsed = ParsedMessages::default();
        let view = View::build(&session, &parsed, leaf, &settings, 0, usize::MAX)
            .unwrap()
            .unwrap();
        let sent: Vec<&str> = view
            .messages
            .iter()
            .map(|message| match message.sent {
                Sent::Dropped => "dropped",
                Sent::AsStored => "stored",
                Sent::WithoutThinking | Sent::Instead { .. } => "other",
            })
            .collect();
        assert_eq!(sent, ["stored", "dropped", "stored", "stored"]);
        assert_eq!(matched(3, &[0, 2]), [Some(0), None, Some(1)]);
        // A reply answered by an error result after it (same origin) is matched to itself.
        assert_eq!(matched(3, &[0, 1, 1, 2]), [Some(0), Some(1), Some(3)]);
    }

    /// A reply the session went on from before its tool ran: the model is sent the reply whole,
    /// its call answered by an error result the view adds after it, and the page shows the reply's
    /// entry as sent as it is stored (not the added result in its place).
    #[test]
    fn a_reply_whose_call_got_no_result_is_shown_as_sent() {
        let mut session = Session::in_memory("/work");
        let mut append = |value: Value| session.append_message(message(value)).unwrap();
        append(json!({"role": "user", "content": "go", "timestamp": 1}));
        append(
            json!({"role": "assistant", "timestamp": 5, "stopReason": "toolUse",
            "content": [{"type": "text", "text": "reading"},
                {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a"}}]}),
        );
        append(json!({"role": "user", "content": "next", "timestamp": 7}));
        let leaf = session.index().entries().len() - 1;
        let parsed = ParsedMessages::default();
        let view = View::build(
            &session,
            &parsed,
            leaf,
            &TransformSettings::default(),
            0,
            usize::MAX,
        )
        .unwrap()
        .unwrap();
        assert!(
            view.messages
                .iter()
                .all(|message| matches!(message.sent, Sent::AsStored))
        );
        assert_eq!(view.messages.len(), 3);
        assert_eq!(view.report.orphans_repaired, 1);
    }

    /// A `!!` shell run (`excludeFromContext`) is not among what the model saw, as
    /// `ctxkit context --llm` leaves it out; a `!` run is.
    #[test]
    fn a_shell_run_kept_from_the_model_is_not_in_its_view() {
        let mut session = Session::in_memory("/work");
        let mut append = |value: Value| session.append_message(message(value)).unwrap();
        append(json!({"role": "user", "content": "hi", "timestamp": 1}));
        for (command, excluded) in [("echo kept", false), ("echo EXCLUDED", true)] {
            append(
                json!({"role": "bashExecution", "command": command, "output": "out",
                "exitCode": 0, "cancelled": false, "truncated": false,
                "excludeFromContext": excluded, "timestamp": 2}),
            );
        }
        append(json!({"role": "user", "content": "next", "timestamp": 3}));
        let leaf = session.index().entries().len() - 1;
        let view = View::build(
            &session,
            &ParsedMessages::default(),
            leaf,
            &TransformSettings::default(),
            0,
            usize::MAX,
        )
        .unwrap()
        .unwrap();
        let entries: Vec<usize> = view.messages.iter().map(|message| message.entry).collect();
        assert_eq!(entries, [0, 1, 3]);
    }

    #[test]
    fn a_result_sent_without_its_details_is_sent_as_stored() {
        let stored = message(
            json!({"role": "toolResult", "toolCallId": "c1", "toolName": "read",
            "isError": false, "timestamp": 3, "details": {"file": "the whole file"},
            "content": [{"type": "text", "text": "line"}]}),
        );
        let mut without = stored.clone();
        if let AgentMessage::ToolResult(result) = &mut without {
            result.details = None;
        }
        assert!(matches!(sent(&stored, &without, false), Sent::AsStored));
        let mut cut = without.clone();
        if let AgentMessage::ToolResult(result) = &mut cut {
            result.content = ctxkit_protocol::MessageContent::Text("[cut]".to_owned());
        }
        assert!(matches!(
            sent(&stored, &cut, false),
            Sent::Instead { changed: true, .. }
        ));
    }

    /// An assistant sent without its thinking is shown as its entry without it; one sent with
    /// anything else changed, or one that had no thinking to drop, is not.
    #[test]
    fn only_a_reply_that_lost_just_its_thinking_is_sent_without_thinking() {
        let stored = message(json!({"role": "assistant", "model": "m", "timestamp": 2,
            "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "done"},
                        {"type": "thinking", "thinking": "again"}]}));
        let stripped = message(json!({"role": "assistant", "model": "m", "timestamp": 2,
            "content": [{"type": "text", "text": "done"}]}));
        assert!(matches!(
            sent(&stored, &stripped, false),
            Sent::WithoutThinking
        ));
        assert!(matches!(
            sent(&stored, &stripped, true),
            Sent::Instead { .. }
        ));
        let other_model = message(json!({"role": "assistant", "model": "n", "timestamp": 2,
            "content": [{"type": "text", "text": "done"}]}));
        assert!(matches!(
            sent(&stored, &other_model, false),
            Sent::Instead { .. }
        ));
        let other_text = message(json!({"role": "assistant", "model": "m", "timestamp": 2,
            "content": [{"type": "text", "text": "done!"}]}));
        assert!(matches!(
            sent(&stored, &other_text, false),
            Sent::Instead { .. }
        ));
        assert!(matches!(sent(&stripped, &stripped, false), Sent::AsStored));
        assert!(!sent_without_thinking(&stripped, &stripped));
    }

    /// A session on `provider`/`model` of `calls` tool calls, each reading 300 lines.
    pub(crate) fn long_run(provider: &str, model: &str, calls: usize) -> Session {
        let mut session = Session::in_memory("/work");
        session.append_model_change(provider, model).unwrap();
        session
            .append_message(message(
                json!({"role": "user", "content": "read it all", "timestamp": 1}),
            ))
            .unwrap();
        let output: String = (0..300).map(|line| format!("log line {line}\n")).collect();
        for index in 0..calls {
            let id = format!("c{index}");
            session
                .append_message(message(json!({"role": "assistant", "provider": provider,
                    "model": model, "stopReason": "toolUse", "timestamp": 2,
                    "content": [{"type": "toolCall", "id": id, "name": "bash",
                                 "arguments": {"command": "cat log"}}]})))
                .unwrap();
            session
                .append_message(message(json!({"role": "toolResult", "toolCallId": id,
                    "toolName": "bash", "isError": false, "timestamp": 3,
                    "content": [{"type": "text", "text": output}]})))
                .unwrap();
        }
        session
    }

    fn pruned_at_leaf(session: &Session) -> usize {
        let leaf = session.index().entries().len() - 1;
        let view = View::build(
            session,
            &ParsedMessages::default(),
            leaf,
            &TransformSettings::default(),
            0,
            usize::MAX,
        )
        .unwrap()
        .unwrap();
        view.report.tool_results_pruned
    }

    #[test]
    fn a_view_weighs_the_cache_of_the_model_it_was_sent_to() {
        // GPT-5's cache writes at the input price and serves any shared prefix, so cutting pays
        // sooner than under Claude's write fee and lookback, the terms of an unknown model too.
        // At 30 calls of 300 lines a cut pays under GPT-5's terms and not yet under Claude's.
        let calls = 30;
        let gpt = pruned_at_leaf(&long_run("openai", "gpt-5", calls));
        let claude = pruned_at_leaf(&long_run("anthropic", "claude-sonnet-4-5", calls));
        let unknown = pruned_at_leaf(&long_run("somebody", "own-model", calls));
        assert!(gpt > 0 && claude == 0, "{gpt} {claude}");
        assert_eq!(claude, unknown);
    }
}
