//! The runner with a recording fake summarizer: request text and order, split turns (history first,
//! then the prefix, as Pi 0.87), cancellation, merging.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ctxkit_compaction::{
    APPEND_NOTE, APPEND_SEPARATOR, CachePrefix, CompactOptions, CompactionError,
    CompactionSettings, NoPlanReason, Prompts, TURN_CONTEXT_SEPARATOR, compact, prepare_compaction,
};
use ctxkit_summarizer::{
    ConversationPrefix, Summarizer, SummarizerError, SummaryPurpose, SummaryRequest,
    SummaryResponse,
};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use ctxkit_session::Session;

use crate::fixtures::{assistant_text, split_turn_session, user};

/// Records requests; answers after every expected request has arrived (so sequential calls would
/// time out), or never when `hang` is set.
struct Recording {
    requests: Mutex<Vec<SummaryRequest>>,
    barrier: Arc<tokio::sync::Barrier>,
    hang: bool,
    /// Continues conversations of this provider and model.
    continues: Option<(String, String)>,
    /// The conversation each request continued, `None` for a fresh one.
    continued: Mutex<Vec<Option<ConversationPrefix>>>,
    /// Continued requests fail with this kind of failure: something else than a summary
    /// (`Request`), or a provider failing whatever it is sent (`Provider`).
    fails_continuing: Option<ctxkit_summarizer::FailureKind>,
    /// Continued requests are answered by carrying on with the conversation, not by a summary.
    prose_continuing: bool,
}

impl Recording {
    fn new(expected_concurrent: usize) -> Self {
        Self {
            requests: Mutex::new(Vec::new()),
            barrier: Arc::new(tokio::sync::Barrier::new(expected_concurrent)),
            hang: false,
            continues: None,
            continued: Mutex::new(Vec::new()),
            fails_continuing: None,
            prose_continuing: false,
        }
    }
}

impl Summarizer for Recording {
    fn name(&self) -> String {
        "recording".to_owned()
    }

    fn supports_reasoning(&self) -> bool {
        true
    }

    fn can_continue(&self, prefix: &ConversationPrefix) -> bool {
        self.continues
            .as_ref()
            .is_some_and(|(provider, model)| *provider == prefix.provider && *model == prefix.model)
    }

    fn summarize(
        &self,
        request: SummaryRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        self.requests.lock().unwrap().push(request.clone());
        let barrier = self.barrier.clone();
        let hang = self.hang;
        Box::pin(async move {
            if hang {
                futures::future::pending::<()>().await;
            }
            barrier.wait().await;
            let text = match request.purpose {
                SummaryPurpose::History => "HISTORY",
                SummaryPurpose::TurnPrefix => "PREFIX",
                SummaryPurpose::Branch => "BRANCH",
            };
            Ok(SummaryResponse {
                text: text.to_owned(),
                usage: None,
            })
        })
    }
    fn summarize_continuing(
        &self,
        request: SummaryRequest,
        prefix: ConversationPrefix,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        self.continued.lock().unwrap().push(Some(prefix));
        match self.fails_continuing {
            Some(ctxkit_summarizer::FailureKind::Request) => {
                return Box::pin(async {
                    Err(SummarizerError::new("the summarizer tried to call a tool"))
                });
            }
            Some(ctxkit_summarizer::FailureKind::Provider) => {
                return Box::pin(async {
                    Err(SummarizerError::of_provider(
                        "Provider `mock` returned HTTP 500: summary backend down; tried 4 times over 14.1 s",
                    ))
                });
            }
            None => {}
        }
        if self.prose_continuing {
            return Box::pin(async {
                Ok(SummaryResponse {
                    text: "Sure! Next I will run the test suite and fix the failing test.".into(),
                    usage: None,
                })
            });
        }
        // A model asked in the conversation answers in the instruction's format.
        let heading = match request.purpose {
            SummaryPurpose::TurnPrefix => "## Original Request",
            SummaryPurpose::History | SummaryPurpose::Branch => "## Goal",
        };
        let answer = self.summarize(request, cancel);
        Box::pin(async move {
            let mut response = answer.await?;
            response.text = format!("{heading}\n{}", response.text);
            Ok(response)
        })
    }
}

fn small_keep() -> CompactionSettings {
    CompactionSettings {
        enabled: true,
        reserve_tokens: 1000,
        keep_recent_tokens: 300,
    }
}

/// A split turn cut right after its short request: the request is its own checkpoint, and only
/// the history is summarized (Pi asks for the prefix too).
#[tokio::test]
async fn a_short_request_alone_before_the_cut_is_kept_word_for_word_without_a_request() {
    let mut session = Session::in_memory("/project");
    session
        .append_message(user("Add a cache to src/store.rs"))
        .unwrap();
    session
        .append_message(assistant_text(&"Earlier work. ".repeat(100)))
        .unwrap();
    session.append_message(user("explain part 4")).unwrap();
    session
        .append_message(assistant_text(&"Part 4 explained at length. ".repeat(80)))
        .unwrap();
    let preparation = prepare_compaction(&session, None, small_keep())
        .unwrap()
        .unwrap();
    assert!(preparation.is_split_turn);
    assert_eq!(preparation.turn_prefix_messages.len(), 1);
    let summarizer = Recording::new(1);
    let result = compact(
        &preparation,
        &summarizer,
        &Prompts::default(),
        &CompactOptions::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let requests = summarizer.requests.lock().unwrap().clone();
    let purposes: Vec<_> = requests.iter().map(|request| request.purpose).collect();
    assert_eq!(purposes, [SummaryPurpose::History]);
    assert!(
        result.summary.starts_with(&format!(
            "HISTORY{TURN_CONTEXT_SEPARATOR}## Original Request\nexplain part 4\n"
        )),
        "{}",
        result.summary
    );
}

#[tokio::test]
async fn split_turn_summaries_run_history_first_then_the_prefix_and_merge() {
    let session = split_turn_session();
    let preparation = prepare_compaction(&session, None, small_keep())
        .unwrap()
        .unwrap();
    assert!(preparation.is_split_turn);
    assert!(!preparation.turn_prefix_messages.is_empty());
    // One request at a time: the prefix is asked for only once the history answered.
    let summarizer = Recording::new(1);
    let options = CompactOptions {
        focus: Some("the tests".into()),
        thinking_level: Some("high".into()),
        file_context: String::new(),
        cache_prefix: CachePrefix::Off,
        append_below_tokens: 0,
    };
    let result = tokio::time::timeout(
        Duration::from_secs(5),
        compact(
            &preparation,
            &summarizer,
            &Prompts::default(),
            &options,
            &CancellationToken::new(),
        ),
    )
    .await
    .expect("the requests answer one by one")
    .unwrap();

    let requests = summarizer.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].purpose, SummaryPurpose::History);
    assert_eq!(requests[1].purpose, SummaryPurpose::TurnPrefix);
    let history = requests
        .iter()
        .find(|request| request.purpose == SummaryPurpose::History)
        .unwrap();
    let prefix = requests
        .iter()
        .find(|request| request.purpose == SummaryPurpose::TurnPrefix)
        .unwrap();
    let prompts = Prompts::default();
    assert!(
        history
            .user_text
            .starts_with("<conversation>\n[User]: Add a cache to src/store.rs")
    );
    assert!(history.user_text.contains("\n</conversation>\n\n"));
    assert!(history.user_text.ends_with(&format!(
        "{}\n\nAdditional focus: the tests",
        prompts.initial
    )));
    assert!(!history.user_text.contains("<previous-summary>"));
    // Pi 1.6: no output limit of its own; the provider fits the model's.
    assert_eq!(history.max_tokens, None);
    assert_eq!(history.reasoning.as_deref(), Some("high"));
    assert_eq!(history.system_prompt, prompts.system);
    assert!(
        prefix
            .user_text
            .starts_with("# Conversation\n[User]: Now make the tests pass")
    );
    // Pi 1.6: the focus ends the turn-prefix request too.
    assert!(prefix.user_text.ends_with(&format!(
        "\n\n# Instructions\n{}\n\nAdditional focus: the tests",
        prompts.turn_prefix
    )));
    assert_eq!(prefix.max_tokens, None);

    assert!(
        result
            .summary
            .starts_with(&format!("HISTORY{TURN_CONTEXT_SEPARATOR}PREFIX"))
    );
    assert!(
        result
            .summary
            .contains("<read-files>\nsrc/store.rs\n</read-files>")
    );
    assert!(result.summary.contains("<modified-files>\ntests/case0.rs"));
    assert_eq!(result.first_kept_entry_id, preparation.first_kept_entry_id);
    assert_eq!(result.details["readFiles"][0], "src/store.rs");
    assert_eq!(result.details["summarizer"], "recording");
}

#[tokio::test]
async fn cancelling_stops_the_run_and_writes_nothing() {
    let mut session = split_turn_session();
    let entries_before = session.entries().len();
    let preparation = prepare_compaction(&session, None, small_keep())
        .unwrap()
        .unwrap();
    let summarizer = Recording {
        hang: true,
        ..Recording::new(1)
    };
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        trigger.cancel();
    });
    let outcome = tokio::time::timeout(
        Duration::from_secs(5),
        compact(
            &preparation,
            &summarizer,
            &Prompts::default(),
            &CompactOptions::default(),
            &cancel,
        ),
    )
    .await
    .expect("cancellation must end the run promptly");
    assert!(matches!(outcome, Err(CompactionError::Cancelled)));
    assert_eq!(session.entries().len(), entries_before);
    // The session stays usable.
    session
        .append_message(crate::fixtures::user("go on"))
        .unwrap();
}

#[tokio::test]
async fn an_update_carries_the_previous_summary() {
    let mut session = split_turn_session();
    let settings = CompactionSettings {
        enabled: true,
        reserve_tokens: 1000,
        keep_recent_tokens: 100_000,
    };
    let first = prepare_compaction(
        &session,
        None,
        CompactionSettings {
            keep_recent_tokens: 10,
            ..settings
        },
    )
    .unwrap()
    .unwrap();
    session
        .append_compaction(ctxkit_session::NewCompaction {
            summary: "EARLIER".into(),
            first_kept_entry_id: first.first_kept_entry_id.clone(),
            tokens_before: first.tokens_before,
            details: Some(serde_json::json!({"readFiles": ["old.rs"], "modifiedFiles": []})),
            source: ctxkit_session::SummarySource::Ctxkit,
        })
        .unwrap();
    assert_eq!(
        prepare_compaction(&session, None, settings).unwrap(),
        Err(NoPlanReason::AlreadyCompacted)
    );
    session
        .append_message(crate::fixtures::user("and the docs"))
        .unwrap();
    session
        .append_message(crate::fixtures::assistant_text("docs done"))
        .unwrap();
    let preparation = prepare_compaction(
        &session,
        None,
        CompactionSettings {
            keep_recent_tokens: 5,
            ..settings
        },
    )
    .unwrap()
    .unwrap();
    assert_eq!(preparation.previous_summary.as_deref(), Some("EARLIER"));
    let summarizer = Recording::new(1);
    let result = compact(
        &preparation,
        &summarizer,
        &Prompts::default(),
        &CompactOptions::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let request = summarizer.requests.lock().unwrap()[0].clone();
    assert!(
        request
            .user_text
            .contains("\n</conversation>\n\n<previous-summary>\nEARLIER\n</previous-summary>\n\n")
    );
    assert!(request.user_text.ends_with(&Prompts::default().update));
    assert!(
        result.summary.contains("old.rs"),
        "file lists carry over: {}",
        result.summary
    );
}

#[tokio::test]
async fn a_split_turn_without_history_reuses_the_previous_summary_as_it_is() {
    let session = split_turn_session();
    let mut preparation = prepare_compaction(&session, None, small_keep())
        .unwrap()
        .unwrap();
    assert!(preparation.is_split_turn);
    preparation.messages_to_summarize.clear();
    preparation.previous_summary = Some("PREVIOUS".into());
    let summarizer = Recording::new(1);
    let result = compact(
        &preparation,
        &summarizer,
        &Prompts::default(),
        &CompactOptions::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let requests = summarizer.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 1, "only the prefix is asked for");
    assert_eq!(requests[0].purpose, SummaryPurpose::TurnPrefix);
    assert!(
        result
            .summary
            .starts_with(&format!("PREVIOUS{TURN_CONTEXT_SEPARATOR}PREFIX"))
    );
    preparation.previous_summary = None;
    let result = compact(
        &preparation,
        &Recording::new(1),
        &Prompts::default(),
        &CompactOptions::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert!(result.summary.starts_with("No prior history."));
}

fn conversation() -> ConversationPrefix {
    let session = split_turn_session();
    let messages: Vec<_> = session
        .build_context()
        .messages
        .iter()
        .map(|message| session.message(message).unwrap())
        .collect();
    ConversationPrefix {
        provider: "anthropic".into(),
        model: "claude-x".into(),
        system_prompt: "You are a coding agent.".into(),
        request_messages: messages.len(),
        messages,
        tools: vec![ctxkit_summarizer::ToolDefinition {
            name: "read".into(),
            description: "Reads a file".into(),
            parameters: serde_json::json!({"type": "object"}),
        }],
        reasoning: Some("high".into()),
        cache: ctxkit_summarizer::CacheHints::default(),
    }
}

async fn run_with(
    summarizer: &Recording,
    cache_prefix: CachePrefix,
) -> ctxkit_compaction::CompactionResult {
    try_run_with(summarizer, cache_prefix).await.unwrap()
}

async fn try_run_with(
    summarizer: &Recording,
    cache_prefix: CachePrefix,
) -> Result<ctxkit_compaction::CompactionResult, ctxkit_compaction::CompactionError> {
    let session = split_turn_session();
    let preparation = prepare_compaction(&session, None, small_keep())
        .unwrap()
        .unwrap();
    let options = CompactOptions {
        focus: Some("the tests".into()),
        cache_prefix,
        ..CompactOptions::default()
    };
    compact(
        &preparation,
        summarizer,
        &Prompts::default(),
        &options,
        &CancellationToken::new(),
    )
    .await
}

/// [`run_with`] continuing [`conversation`] in a window of `context_window` tokens.
async fn run_continuing(
    summarizer: &Recording,
    context_window: u64,
) -> ctxkit_compaction::CompactionResult {
    let prefix = conversation();
    run_with(
        summarizer,
        CachePrefix::Conversation {
            prefix,
            context_window,
        },
    )
    .await
}

#[tokio::test]
async fn cache_prefix_requests_carry_the_conversation_and_name_the_span() {
    let mut summarizer = Recording::new(1);
    summarizer.continues = Some(("anthropic".into(), "claude-x".into()));
    let prefix = conversation();
    let result = run_with(
        &summarizer,
        CachePrefix::Conversation {
            prefix: prefix.clone(),
            context_window: 200_000,
        },
    )
    .await;
    assert_eq!(
        result.details["cachePrefix"],
        serde_json::json!({"used": true})
    );
    let requests = summarizer.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    let continued = summarizer.continued.lock().unwrap().clone();
    assert_eq!(continued, vec![Some(prefix.clone()), Some(prefix.clone())]);
    for request in &requests {
        // The instruction alone: the span is in the conversation, not serialized again.
        assert!(!request.user_text.contains("<conversation>"));
        assert!(
            request
                .user_text
                .starts_with(&Prompts::default().continuation)
        );
    }
    let history = &requests[0];
    assert!(history.user_text.contains("<span-end>"));
    assert!(history.user_text.contains("## Goal"));
    assert!(history.user_text.ends_with("Additional focus: the tests"));
    let turn_prefix = &requests[1];
    assert_eq!(turn_prefix.purpose, SummaryPurpose::TurnPrefix);
    assert!(turn_prefix.user_text.contains("<span-start>"));
    assert!(turn_prefix.user_text.contains("## Original Request"));
}

#[tokio::test]
async fn a_continued_request_answered_without_a_summary_is_asked_again_fresh() {
    let mut summarizer = Recording::new(1);
    summarizer.continues = Some(("anthropic".into(), "claude-x".into()));
    summarizer.fails_continuing = Some(ctxkit_summarizer::FailureKind::Request);
    let result = run_continuing(&summarizer, 200_000).await;
    assert!(result.summary.starts_with("HISTORY"), "{}", result.summary);
    assert_eq!(result.details["cachePrefix"]["used"], false);
    let reason = result.details["cachePrefix"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("continuing the conversation failed")
            && reason.contains("tried to call a tool"),
        "{reason}"
    );
    // One continued attempt, then the fresh prompts, serialized as usual.
    assert_eq!(summarizer.continued.lock().unwrap().len(), 1);
    let requests = summarizer.requests.lock().unwrap().clone();
    assert!(requests[0].user_text.starts_with("<conversation>"));
}

/// A chat tester's model answered the continued summary request by carrying on with the task
/// ("Sure! Next I will run the test suite…"), and that prose was written as the summary: the goal
/// and the progress were gone from what the model saw. An answer without one of the instruction's
/// headings is now asked again as a fresh prompt, as a tool call is.
#[tokio::test]
async fn a_continued_request_answered_by_carrying_on_is_asked_again_fresh() {
    let mut summarizer = Recording::new(1);
    summarizer.continues = Some(("anthropic".into(), "claude-x".into()));
    summarizer.prose_continuing = true;
    let result = run_continuing(&summarizer, 200_000).await;
    assert!(result.summary.starts_with("HISTORY"), "{}", result.summary);
    assert!(!result.summary.contains("Sure!"), "{}", result.summary);
    assert_eq!(result.details["cachePrefix"]["used"], false);
    let reason = result.details["cachePrefix"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("answered without the summary's headings"),
        "{reason}"
    );
    assert_eq!(summarizer.continued.lock().unwrap().len(), 1);
}

/// Round 97: a summary model answering 500 was asked with the continued conversation (4 attempts),
/// then with a fresh prompt (4 more): 29 s, and the error gave the second series' count and time.
#[tokio::test]
async fn a_provider_failing_the_continued_request_is_not_asked_again_fresh() {
    let mut summarizer = Recording::new(1);
    summarizer.continues = Some(("anthropic".into(), "claude-x".into()));
    summarizer.fails_continuing = Some(ctxkit_summarizer::FailureKind::Provider);
    let error = try_run_with(
        &summarizer,
        CachePrefix::Conversation {
            prefix: conversation(),
            context_window: 200_000,
        },
    )
    .await
    .unwrap_err();
    assert!(
        error.to_string().contains("tried 4 times over 14.1 s"),
        "{error}"
    );
    assert_eq!(summarizer.continued.lock().unwrap().len(), 1);
    assert!(summarizer.requests.lock().unwrap().is_empty());
}

#[tokio::test]
async fn cache_prefix_falls_back_to_fresh_prompts_and_says_why() {
    // Another model writes summaries.
    let summarizer = Recording::new(1);
    let result = run_continuing(&summarizer, 200_000).await;
    assert_eq!(result.details["cachePrefix"]["used"], false);
    let reason = result.details["cachePrefix"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("recording") && reason.contains("anthropic/claude-x"),
        "{reason}"
    );
    let requests = summarizer.requests.lock().unwrap().clone();
    assert!(summarizer.continued.lock().unwrap().is_empty());
    assert!(requests[0].user_text.starts_with("<conversation>"));

    // The conversation would not fit the window with the summary.
    let mut summarizer = Recording::new(1);
    summarizer.continues = Some(("anthropic".into(), "claude-x".into()));
    let result = run_continuing(&summarizer, 1_000).await;
    let reason = result.details["cachePrefix"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("would not fit the window of 1000 tokens"),
        "{reason}"
    );
    assert!(summarizer.continued.lock().unwrap().is_empty());
    assert!(
        summarizer.requests.lock().unwrap()[0]
            .user_text
            .starts_with("<conversation>")
    );

    // No request to continue; and with the setting off nothing is recorded.
    let summarizer = Recording::new(1);
    let result = run_with(&summarizer, CachePrefix::Unavailable("no request".into())).await;
    assert_eq!(
        result.details["cachePrefix"],
        serde_json::json!({"used": false, "reason": "no request"})
    );
    let result = run_with(&Recording::new(1), CachePrefix::Off).await;
    assert!(result.details.get("cachePrefix").is_none());
}

#[tokio::test]
async fn a_reused_previous_summary_does_not_repeat_its_file_lists() {
    let session = split_turn_session();
    let mut preparation = prepare_compaction(&session, None, small_keep())
        .unwrap()
        .unwrap();
    preparation.messages_to_summarize.clear();
    preparation.file_operations.read.insert("src/old.rs".into());
    preparation
        .file_operations
        .edited
        .insert("src/lib.rs".into());
    preparation.previous_summary = Some(
        "PREVIOUS\n\n<read-files>\nsrc/old.rs\n</read-files>\n\n<modified-files>\nsrc/lib.rs\n</modified-files>"
            .into(),
    );
    let result = compact(
        &preparation,
        &Recording::new(1),
        &Prompts::default(),
        &CompactOptions::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let summary = &result.summary;
    assert!(
        summary.starts_with(&format!("PREVIOUS{TURN_CONTEXT_SEPARATOR}PREFIX")),
        "{summary}"
    );
    for block in [
        "<read-files>",
        "<modified-files>",
        "src/old.rs",
        "src/lib.rs",
    ] {
        assert_eq!(summary.matches(block).count(), 1, "{block} in {summary}");
    }
    assert!(summary.ends_with("</modified-files>"), "{summary}");
    // A summary that only mentions a tag, or ends in an unclosed one, is kept as it is.
    for kept in ["see <read-files> below", "x\n<read-files>\na.rs", "plain"] {
        assert_eq!(ctxkit_compaction::FileLists::strip_blocks(kept), kept);
    }
}

/// `compaction.appendSummaryTokens`: under the limit, the span is summarized as a first summary
/// (no previous summary in the request, the note that one exists) and added after the previous
/// one, kept word for word without its file blocks; the details say how many characters the
/// engine copied. At the limit, the update rewrites the whole summary as the reference does.
#[tokio::test]
async fn an_update_under_the_limit_is_added_after_the_previous_summary() {
    let session = split_turn_session();
    let mut preparation = prepare_compaction(&session, None, small_keep())
        .unwrap()
        .unwrap();
    preparation.is_split_turn = false;
    preparation.turn_prefix_messages.clear();
    preparation.file_operations.read.insert("src/new.rs".into());
    let previous = "## Goal\nEARLIER WORK";
    preparation.previous_summary = Some(format!(
        "{previous}\n\n<read-files>\nsrc/old.rs\n</read-files>"
    ));
    let run = |limit: u64| {
        let preparation = preparation.clone();
        async move {
            let summarizer = Recording::new(1);
            let options = CompactOptions {
                append_below_tokens: limit,
                ..CompactOptions::default()
            };
            let result = compact(
                &preparation,
                &summarizer,
                &Prompts::default(),
                &options,
                &CancellationToken::new(),
            )
            .await
            .unwrap();
            let request = summarizer.requests.lock().unwrap()[0].clone();
            (result, request)
        }
    };
    let (appended, request) = run(1_000).await;
    assert!(
        appended
            .summary
            .starts_with(&format!("{previous}{APPEND_SEPARATOR}HISTORY")),
        "{}",
        appended.summary
    );
    assert_eq!(appended.summary.matches("<read-files>").count(), 1);
    assert!(appended.summary.contains("src/new.rs"));
    assert!(request.user_text.ends_with(APPEND_NOTE));
    assert!(!request.user_text.contains("<previous-summary>"));
    assert_eq!(request.source.previous_summary, None);
    assert!(request.source.continues_summary);
    let kept = previous.chars().count() + APPEND_SEPARATOR.chars().count();
    assert_eq!(appended.details["appended"]["keptChars"], kept);
    // The previous summary is 5 tokens (20 characters / 4): a limit of 5 consolidates.
    let (consolidated, request) = run(5).await;
    assert!(consolidated.summary.starts_with("HISTORY"));
    assert!(request.user_text.contains("<previous-summary>"));
    assert!(!request.source.continues_summary);
    assert!(consolidated.details.get("appended").is_none());
    // Off (0), as by default.
    let (off, _) = run(0).await;
    assert_eq!(off.summary, consolidated.summary);
}
