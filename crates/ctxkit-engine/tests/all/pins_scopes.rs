//! Pinned context across compactions, scopes and forgetting.

use ctxkit_engine::EngineError;
use ctxkit_protocol::MessageContent;
use ctxkit_session::Session;

use crate::support::*;

fn view_text(view: &ctxkit_engine::ModelView) -> String {
    serde_json::to_string(&view.messages).unwrap()
}

#[tokio::test]
async fn a_pinned_text_survives_every_compaction_once() {
    let harness = Harness::new(100_000, 2_000, []);
    harness.turn("first", 100).await;
    let pin = harness
        .engine
        .pin_text("RULE: never touch prod.db")
        .await
        .unwrap();
    harness.turn("second", 100).await;
    assert!(view_text(&harness.engine.model_view().await.unwrap()).contains("never touch prod.db"));
    for round in 0..3 {
        harness.turn(&format!("more {round}"), 100).await;
        harness.engine.compact(None).await.unwrap();
        let text = view_text(&harness.engine.model_view().await.unwrap());
        assert_eq!(
            text.matches("never touch prod.db").count(),
            1,
            "round {round}: {text}"
        );
    }
    assert_eq!(harness.engine.pins().await.len(), 1);
    harness.engine.unpin(&pin.id).await.unwrap();
    harness.turn("after unpin", 100).await;
    harness.engine.compact(None).await.unwrap();
    let text = view_text(&harness.engine.model_view().await.unwrap());
    assert!(!text.contains("never touch prod.db"), "{text}");
    assert!(matches!(
        harness.engine.unpin(&pin.id).await.unwrap_err(),
        EngineError::PinNotFound(_)
    ));
}

/// QA (2026-12-06, an embedder): `pin_text("   ")` stored a blank pin, and every later request
/// carried an empty `<pinned>` message; `serve` refused it, the library did not.
#[tokio::test]
async fn a_blank_pin_is_refused_and_nothing_is_written() {
    let harness = Harness::new(100_000, 2_000, []);
    harness.turn("first", 100).await;
    let before = harness
        .engine
        .with_session(|session| session.entries().len())
        .await;
    for blank in ["", " \n\t"] {
        let refused = harness.engine.pin_text(blank).await.unwrap_err();
        assert!(
            matches!(refused, EngineError::EmptyPin),
            "{blank:?}: {refused}"
        );
    }
    let after = harness
        .engine
        .with_session(|session| session.entries().len())
        .await;
    assert_eq!(before, after);
    assert!(harness.engine.pins().await.is_empty());
}

/// QA (2026-12-05): a compaction during a run (an overflow retried, a threshold crossed between
/// tool calls) comes after the prompt, and the pins it added back were appended after it: the
/// retried request ended with the pinned text and the model answered that, not the prompt. The
/// view places them right after the summary; the file keeps them where they were written.
#[tokio::test]
async fn pins_added_back_mid_run_come_before_the_prompt_they_interrupt() {
    let harness = Harness::new(100_000, 2_000, []);
    harness.turn("first", 100).await;
    harness.engine.pin_text("RULE: use tabs").await.unwrap();
    harness.turn("second", 100).await;
    harness.turn("third", 100).await;
    harness.engine.append(user("what now")).await.unwrap();
    harness.engine.compact(None).await.unwrap();
    let view = harness.engine.model_view().await.unwrap();
    // The summary (sent as a user message), the pins, what the compaction kept, the prompt.
    let first = serde_json::to_string(&view.messages[0]).unwrap();
    assert!(first.contains("summary"), "{first}");
    let last = serde_json::to_string(view.messages.last().unwrap()).unwrap();
    assert!(last.contains("what now"), "{last}");
    let second = serde_json::to_string(&view.messages[1]).unwrap();
    assert!(second.contains("RULE: use tabs"), "{second}");
    // Stored as written: the pinned text is the branch's last entry.
    let entries = harness.entry_types().await;
    assert_eq!(
        entries.last().map(String::as_str),
        Some("custom_message"),
        "{entries:?}"
    );
}

/// The text a compaction added back belongs to that compaction: after undoing it, the restored path
/// shows the pin where it was, once, and later work stays.
#[tokio::test]
async fn undoing_a_compaction_leaves_its_pinned_text_behind() {
    let harness = Harness::new(100_000, 2_000, []);
    harness.turn("first", 100).await;
    harness
        .engine
        .pin_text("RULE: never touch prod.db")
        .await
        .unwrap();
    harness.turn("second", 100).await;
    harness.engine.compact(None).await.unwrap();
    harness.turn("after the compaction", 100).await;
    let undone = harness.engine.undo_compaction().await.unwrap().unwrap();
    assert_eq!(undone.reappended_messages(), 2, "{undone:?}");
    let text = view_text(&harness.engine.model_view().await.unwrap());
    assert_eq!(text.matches("never touch prod.db").count(), 1, "{text}");
    assert!(text.contains("after the compaction"), "{text}");
    // Compacting again adds the pin back once more.
    harness.engine.compact(None).await.unwrap();
    let text = view_text(&harness.engine.model_view().await.unwrap());
    assert_eq!(text.matches("never touch prod.db").count(), 1, "{text}");
}

#[tokio::test]
async fn a_pinned_entry_is_carried_once_compaction_cuts_it_away() {
    let harness = Harness::new(100_000, 2_000, []);
    let (rules, _) = harness.turn("ACCEPTANCE: all tests green", 100).await;
    harness.engine.pin_entry(&rules).await.unwrap();
    let text = view_text(&harness.engine.model_view().await.unwrap());
    assert_eq!(text.matches("all tests green").count(), 1, "{text}");
    harness.turn("second", 100).await;
    harness.engine.compact(None).await.unwrap();
    let text = view_text(&harness.engine.model_view().await.unwrap());
    assert!(text.contains("all tests green"), "{text}");
}

#[tokio::test]
async fn pins_are_capped() {
    let mut settings = settings(2_000);
    settings.pinned.max_tokens = 10;
    let harness = Harness::with(settings, Some(model(100_000)), Default::default(), []);
    harness.engine.pin_text("short").await.unwrap();
    let error = harness
        .engine
        .pin_text(&"long ".repeat(20))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("over the cap of 10"), "{error}");
}

#[tokio::test]
async fn a_scope_injects_only_its_result() {
    let harness = Harness::new(100_000, 2_000, []);
    harness.turn("find the config loader", 100).await;
    let scope = harness.engine.scope("search").await;
    for index in 0..20 {
        scope
            .engine()
            .append(user(&format!(
                "grep output {index} {}",
                "noise ".repeat(50)
            )))
            .await
            .unwrap();
    }
    let id = scope
        .finish("config is loaded in src/config.rs:42")
        .await
        .unwrap();
    let text = view_text(&harness.engine.model_view().await.unwrap());
    assert!(text.contains("src/config.rs:42"));
    assert!(!text.contains("grep output"));
    let raw = harness
        .engine
        .with_session(|session| session.entry(&id).unwrap().raw().unwrap().to_string())
        .await;
    assert!(raw.contains("\"messages\":20"), "{raw}");
}

#[tokio::test]
async fn forgetting_a_span_replaces_it_by_a_summary_and_keeps_what_came_after() {
    let harness = Harness::new(100_000, 2_000, []);
    harness.turn("keep this", 100).await;
    let (secret, _) = harness.turn("a detour about SECRET-TOPIC", 100).await;
    let (_, detour_end) = harness.turn("more SECRET-TOPIC", 100).await;
    harness.turn("after the detour", 100).await;
    let outcome = harness
        .engine
        .forget(
            &secret,
            Some(&detour_end),
            Some("a detour, abandoned".to_owned()),
        )
        .await
        .unwrap();
    assert_eq!(outcome.reappended, 2);
    let text = view_text(&harness.engine.model_view().await.unwrap());
    assert!(
        text.contains("keep this") && text.contains("after the detour"),
        "{text}"
    );
    assert!(text.contains("a detour, abandoned"));
    assert!(!text.contains("SECRET-TOPIC"), "{text}");
    // Nothing was deleted: the span is still in the file.
    let all = harness
        .engine
        .with_session(|session| {
            session
                .entries()
                .iter()
                .map(|entry| entry.raw().unwrap().to_string())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .await;
    assert!(all.contains("SECRET-TOPIC"));
    assert!(matches!(
        harness.engine.forget("nope", None, None).await.unwrap_err(),
        EngineError::NotOnBranch(_)
    ));
}

#[tokio::test]
async fn forgetting_keeps_later_pins_and_labels_and_refuses_spans_before_a_compaction() {
    let harness = Harness::new(100_000, 2_000, []);
    harness.turn("keep this", 100).await;
    let (detour, detour_end) = harness.turn("a detour", 100).await;
    let (later, _) = harness.turn("after the detour", 100).await;
    let pin = harness.engine.pin_text("Always use tabs").await.unwrap();
    harness
        .engine
        .set_label(&later, Some("checkpoint"))
        .await
        .unwrap();
    harness
        .engine
        .forget(&detour, Some(&detour_end), Some("gone".to_owned()))
        .await
        .unwrap();
    // The pin made after the span is still active (recorded again, under its own id, and it can
    // be unpinned), and the label followed its entry.
    let pins = harness.engine.pins().await;
    assert_eq!(pins.len(), 1, "{pins:?}");
    assert_eq!(pins[0].text, pin.text);
    let labelled = harness
        .engine
        .with_session(|session| {
            session
                .branch_path(None)
                .iter()
                .filter(|entry| session.index().label(entry.id()) == Some("checkpoint"))
                .count()
        })
        .await;
    assert_eq!(labelled, 1);
    harness.engine.unpin(&pins[0].id).await.unwrap();
    assert!(harness.engine.pins().await.is_empty());

    // A span before a compaction is refused, and nothing is written.
    harness.engine.compact(None).await.unwrap();
    harness.turn("one more", 100).await;
    let before = harness.entry_types().await;
    let first = harness
        .engine
        .with_session(|session| session.branch_path(None)[0].id().to_owned())
        .await;
    let error = harness
        .engine
        .forget(&first, Some(&first), Some("x".to_owned()))
        .await
        .unwrap_err();
    assert!(
        matches!(error, EngineError::ForgetBeforeCompaction(_)),
        "{error}"
    );
    assert_eq!(harness.entry_types().await, before);
}

/// Like an undone compaction, a forget once dropped the context edits after the span, so a
/// message the user had redacted came back in the model's view.
#[tokio::test]
async fn forgetting_keeps_the_redactions_made_after_the_span() {
    let mut session = Session::in_memory("/p");
    let early = session.append_message(user("EARLY-SECRET")).unwrap();
    session.append_message(reply("ok", 100)).unwrap();
    let detour = session.append_message(user("a detour")).unwrap();
    let detour_end = session.append_message(reply("ok", 100)).unwrap();
    let later = session.append_message(user("LATER-SECRET")).unwrap();
    session.append_message(reply("ok", 100)).unwrap();
    let redacted = |text: &str| Some(MessageContent::Text(text.to_owned()));
    session
        .append_context_edit(&early, redacted("[early, redacted]"))
        .unwrap();
    session
        .append_context_edit(&later, redacted("[later, redacted]"))
        .unwrap();
    // An edit of a message the forget summarizes has nothing left to edit.
    session.append_context_edit(&detour, None).unwrap();
    let harness = Harness::with_session(session);
    harness
        .engine
        .forget(&detour, Some(&detour_end), Some("gone".to_owned()))
        .await
        .unwrap();
    let text = view_text(&harness.engine.model_view().await.unwrap());
    assert!(!text.contains("SECRET"), "{text}");
    assert!(
        text.contains("[early, redacted]") && text.contains("[later, redacted]"),
        "{text}"
    );
    let edits = harness
        .engine
        .with_session(|session| {
            session
                .branch_path(None)
                .iter()
                .filter(|entry| entry.type_name() == "context_edit")
                .count()
        })
        .await;
    assert_eq!(edits, 2, "the edit of the forgotten message is not copied");
}

/// A compaction that does not add the pins back (Pi's, which knows nothing of them, or an older
/// ctxkit's) written on a branch with pins: `pins()` still lists them, and the view shows each once,
/// right after the summary, as a ctxkit compaction would have; a later ctxkit compaction does not
/// double them.
#[tokio::test]
async fn pins_cut_away_by_a_compaction_that_did_not_add_them_back_stay_in_the_view_once() {
    let harness = Harness::new(100_000, 2_000, []);
    let (first, _) = harness.turn("first", 100).await;
    let (rules, _) = harness.turn("ACCEPTANCE: all tests green", 100).await;
    harness.engine.pin_entry(&rules).await.unwrap();
    harness
        .engine
        .pin_text("RULE: never touch prod.db")
        .await
        .unwrap();
    harness.turn("second", 100).await;
    let (third, _) = harness.turn("third", 100).await;
    let path = harness
        .engine
        .with_session(|session| session.path().unwrap().to_path_buf())
        .await;
    let count = |view: &ctxkit_engine::ModelView| {
        let text = view_text(view);
        (
            text.matches("never touch prod.db").count(),
            text.matches("all tests green").count(),
        )
    };
    // A copy of the session compacted elsewhere, keeping from `keep` on, then a question.
    let compacted_elsewhere = |keep: &str, question: &str| {
        let copy = harness.dir.path().join(format!("{question}.jsonl"));
        std::fs::copy(&path, &copy).unwrap();
        let mut session = Session::open(&copy).unwrap();
        session
            .append_compaction(ctxkit_session::NewCompaction {
                summary: "## Goal\nShip it.".to_owned(),
                first_kept_entry_id: keep.to_owned(),
                tokens_before: 5_000,
                details: None,
                source: ctxkit_session::SummarySource::Ctxkit,
            })
            .unwrap();
        session.append_message(user(question)).unwrap();
        session
    };

    // The pins' texts were kept: nothing is added.
    let reopened = Harness::with_session(compacted_elsewhere(&first, "q1"));
    assert_eq!(count(&reopened.engine.model_view().await.unwrap()), (1, 1));

    // The pins' texts were cut away: they come back once, after the summary.
    let reopened = Harness::with_session(compacted_elsewhere(&third, "q2"));
    assert_eq!(reopened.engine.pins().await.len(), 2);
    let view = reopened.engine.model_view().await.unwrap();
    assert_eq!(count(&view), (1, 1), "{}", view_text(&view));
    let second = serde_json::to_string(&view.messages[1]).unwrap();
    assert!(
        second.contains("never touch prod.db") && second.contains("all tests green"),
        "{second}"
    );
    let last = serde_json::to_string(view.messages.last().unwrap()).unwrap();
    assert!(last.contains("q2"), "{last}");
    // Stored history is not changed by reading the view.
    let types = reopened.entry_types().await;
    assert_eq!(
        types.last().map(String::as_str),
        Some("message"),
        "{types:?}"
    );

    // ctxkit's own compaction now writes them back, and the view shows them once.
    reopened.turn("fourth", 100).await;
    reopened.engine.compact(None).await.unwrap();
    let view = reopened.engine.model_view().await.unwrap();
    assert_eq!(count(&view), (1, 1), "{}", view_text(&view));
    drop(harness);
}
