//! Hooks: cancel, replace, order, errors; command hooks run as real child processes.

use std::sync::{Arc, Mutex};

use ctxkit_engine::{
    AfterCompact, BeforeCompact, BeforeCompactResult, EngineEvent, HookCompaction, HookError,
    HookFuture, HookSet, Hooks,
};
use ctxkit_settings::CommandHookConfig;
use tokio_util::sync::CancellationToken;

use crate::support::*;

/// In a configured answer, the entry the engine's plan keeps from.
const PLANNED: &str = "<planned>";

/// Records calls into a shared log; answers as configured.
struct Recorder {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
    answer: Option<BeforeCompactResult>,
    fail: bool,
}

impl Hooks for Recorder {
    fn name(&self) -> String {
        self.name.to_owned()
    }

    fn before_compact<'a>(
        &'a self,
        event: &'a BeforeCompact,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<BeforeCompactResult>> {
        self.log
            .lock()
            .unwrap()
            .push(format!("{}-before", self.name));
        let mut answer = self.answer.clone();
        // `PLANNED` stands for the entry the engine's own plan keeps from.
        if let Some(compaction) = answer
            .as_mut()
            .and_then(|answer| answer.compaction.as_mut())
            && compaction.first_kept_entry_id == PLANNED
        {
            compaction.first_kept_entry_id = event.preparation.first_kept_entry_id.clone();
        }
        let fail = self.fail;
        Box::pin(async move {
            if fail {
                return Err(HookError::new("hook exploded"));
            }
            Ok(answer)
        })
    }

    fn after_compact<'a>(&'a self, _event: &'a AfterCompact) -> HookFuture<'a, ()> {
        self.log
            .lock()
            .unwrap()
            .push(format!("{}-after", self.name));
        Box::pin(async { Ok(()) })
    }
}

fn recorder(
    name: &'static str,
    log: &Arc<Mutex<Vec<String>>>,
    answer: Option<BeforeCompactResult>,
    fail: bool,
) -> Arc<Recorder> {
    Arc::new(Recorder {
        name,
        log: log.clone(),
        answer,
        fail,
    })
}

#[tokio::test]
async fn a_cancelling_hook_stops_an_automatic_compaction() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut hooks = HookSet::new();
    let cancel = BeforeCompactResult {
        cancel: true,
        compaction: None,
    };
    hooks.push(recorder("one", &log, Some(cancel), false));
    let mut harness = Harness::with(settings(2_000), Some(model(10_000)), hooks, []);
    harness.turn("first", 100).await;
    harness.turn("second", 9_000).await;
    let report = harness.engine.after_run().await.unwrap();
    let end = report.compaction.unwrap();
    assert!(end.aborted && end.error.is_none() && !end.will_retry);
    assert_eq!(harness.compactions().await, 0);
    assert_eq!(*log.lock().unwrap(), ["one-before"]);
    harness.drain();
}

#[tokio::test]
async fn a_hook_can_supply_the_compaction() {
    // stored as given, fromHook true, no model call.
    let log = Arc::new(Mutex::new(Vec::new()));
    let supplied = BeforeCompactResult {
        cancel: false,
        compaction: Some(HookCompaction {
            summary: "FROM HOOK".to_owned(),
            first_kept_entry_id: PLANNED.to_owned(),
            tokens_before: 999,
            details: Some(serde_json::json!({"mine": true})),
        }),
    };
    // Two hooks; the last answer wins.
    let mut hooks = HookSet::new();
    hooks.push(recorder("one", &log, None, false));
    hooks.push(recorder("two", &log, Some(supplied), false));
    let mut harness = Harness::with(settings(2_000), Some(model(100_000)), hooks, []);
    harness.turn("first", 100).await;
    let end = harness.engine.compact(None).await.unwrap();
    // The entry keeps the hook's number; the event reports estimates on both sides.
    assert!(end.tokens_before.is_some() && end.tokens_after.is_some());
    assert!(end.from_hook);
    assert_eq!(harness.summarizer.request_count(), 0);
    let raw = harness
        .engine
        .with_session(|session| {
            session
                .entry(end.entry_id.as_deref().unwrap())
                .unwrap()
                .raw()
                .unwrap()
                .to_string()
        })
        .await;
    assert!(
        raw.contains("\"fromHook\":true")
            && raw.contains("FROM HOOK")
            && raw.contains("\"mine\":true"),
        "{raw}"
    );
    harness.drain();
}

/// QA (2026-12-05): a hook's compaction keeping from a missing entry was stored as given: the
/// view lost every message and `ctxkit check` flagged the file.
#[tokio::test]
async fn a_hook_compaction_keeping_from_no_entry_of_the_branch_is_its_error() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let supplied = BeforeCompactResult {
        cancel: false,
        compaction: Some(HookCompaction {
            summary: "FROM HOOK".to_owned(),
            first_kept_entry_id: "nonexistent".to_owned(),
            tokens_before: 123,
            details: None,
        }),
    };
    let mut hooks = HookSet::new();
    hooks.push(recorder("bad", &log, Some(supplied), false));
    let mut harness = Harness::with(settings(2_000), Some(model(100_000)), hooks, []);
    harness.turn("first", 100).await;
    let end = harness.engine.compact(None).await.unwrap();
    assert!(!end.from_hook);
    assert_eq!(harness.summarizer.request_count(), 1);
    let errors: Vec<String> = harness
        .drain()
        .into_iter()
        .filter_map(|event| {
            if let EngineEvent::HookError { error, .. } = event {
                Some(error)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("`nonexistent`"), "{errors:?}");
}

#[tokio::test]
async fn a_failing_hook_is_reported_and_the_default_runs_in_order() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut hooks = HookSet::new();
    hooks.push(recorder("ext1", &log, None, true));
    hooks.push(recorder("ext2", &log, None, false));
    let mut harness = Harness::with(settings(2_000), Some(model(100_000)), hooks, []);
    harness.turn("first", 100).await;
    let end = harness.engine.compact(None).await.unwrap();
    assert!(!end.from_hook);
    assert_eq!(harness.summarizer.request_count(), 1);
    assert_eq!(
        *log.lock().unwrap(),
        ["ext1-before", "ext2-before", "ext1-after", "ext2-after"]
    );
    let errors: Vec<_> = harness
        .drain()
        .into_iter()
        .filter(|event| matches!(event, EngineEvent::HookError { .. }))
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let EngineEvent::HookError { hook, event, error } = &errors[0] else {
        unreachable!()
    };
    assert_eq!(
        (hook.as_str(), event.as_str(), error.as_str()),
        ("ext1", "before_compact", "hook exploded")
    );
}

fn shell_hook(script: &str, timeout_ms: u64) -> CommandHookConfig {
    CommandHookConfig {
        command: vec!["sh".to_owned(), "-c".to_owned(), script.to_owned()],
        events: vec!["before_compact".to_owned()],
        timeout_ms,
        pass_env: Vec::new(),
        pinned_scripts: Vec::new(),
    }
}

/// The `hook_error` messages emitted so far.
fn hook_errors(harness: &mut Harness) -> Vec<String> {
    harness
        .drain()
        .into_iter()
        .filter_map(|event| {
            if let EngineEvent::HookError { error, .. } = event {
                Some(error)
            } else {
                None
            }
        })
        .collect()
}

fn with_command_hooks(hooks: Vec<CommandHookConfig>) -> Harness {
    let mut settings = settings(2_000);
    settings.hooks = hooks;
    Harness::with(settings, Some(model(100_000)), HookSet::new(), [])
}

#[tokio::test]
async fn a_command_hook_gets_the_event_on_stdin_and_can_cancel() {
    let harness = with_command_hooks(vec![shell_hook(
        // Cancel only when the event names the reason; save the input for inspection.
        "cat > event.json; grep -q '\"event\":\"before_compact\"' event.json && echo '{\"cancel\": true}'",
        10_000,
    )]);
    harness.turn("first", 100).await;
    let error = harness
        .engine
        .compact(Some("my focus".into()))
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "Compaction cancelled");
    let saved = std::fs::read_to_string(harness.dir.path().join("event.json")).unwrap();
    let event: serde_json::Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(event["payload"]["reason"], "manual");
    assert_eq!(event["payload"]["custom_instructions"], "my focus");
    assert!(event["payload"]["preparation"]["messages_to_summarize"].is_array());
}

#[tokio::test]
async fn a_command_hook_can_supply_the_summary() {
    let harness = with_command_hooks(vec![shell_hook(
        // Keeps from the entry the engine's plan keeps from, read from the event.
        r#"kept=$(grep -o '"first_kept_entry_id":"[^"]*"' | head -n 1 | cut -d '"' -f 4); printf '{"compaction": {"summary": "SHELL SUMMARY", "first_kept_entry_id": "%s", "tokens_before": 7}}' "$kept""#,
        10_000,
    )]);
    harness.turn("first", 100).await;
    let end = harness.engine.compact(None).await.unwrap();
    assert!(end.from_hook);
    let entry = harness
        .engine
        .with_session(|session| {
            session
                .entry(end.entry_id.as_deref().unwrap())
                .unwrap()
                .raw()
                .unwrap()
                .to_string()
        })
        .await;
    assert!(entry.contains(r#""tokensBefore":7"#), "{entry}");
    assert_eq!(harness.summarizer.request_count(), 0);
}

#[tokio::test]
async fn failing_slow_and_garbled_command_hooks_are_reported_and_ignored() {
    let mut harness = with_command_hooks(vec![
        shell_hook("echo 'no such thing' >&2; exit 3", 10_000),
        shell_hook("sleep 60", 200),
        shell_hook("cat > /dev/null; echo 'not json'", 10_000),
        CommandHookConfig {
            command: vec!["/nonexistent/hook".to_owned()],
            events: Vec::new(),
            timeout_ms: 1_000,
            pass_env: Vec::new(),
            pinned_scripts: Vec::new(),
        },
    ]);
    harness.turn("first", 100).await;
    let started = std::time::Instant::now();
    let end = harness.engine.compact(None).await.unwrap();
    // The slow hook sleeps a minute: a compaction done within 30 s (a loaded machine's margin
    // over the 0.2 s limit) did not wait for it.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "the slow hook was killed"
    );
    assert!(!end.from_hook);
    assert_eq!(harness.summarizer.request_count(), 1);
    let errors = hook_errors(&mut harness);
    assert_eq!(errors.len(), 5, "{errors:#?}");
    assert!(
        errors[0].contains("exited with exit status: 3: no such thing"),
        "{}",
        errors[0]
    );
    assert!(
        errors[1].contains("timed out after 200 ms"),
        "{}",
        errors[1]
    );
    assert!(
        errors[2].contains("not a `before_compact` result"),
        "{}",
        errors[2]
    );
    assert!(
        errors[3].contains("cannot start `/nonexistent/hook`"),
        "{}",
        errors[3]
    );
    // The unfiltered hook also got after_compact and failed to start again.
    assert!(errors[4].contains("cannot start"), "{}", errors[4]);
}

/// Hostile command-hook answers: each is reported as one `hook_error` naming what was wrong, the
/// compaction goes on with the default summarizer, and memory stays bounded (a hook that never stops
/// writing is killed at the answer limit, not read to the end).
#[tokio::test]
async fn hostile_hook_outputs_are_reported_and_the_compaction_goes_on() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "truncated JSON",
            r#"printf '{"cancel": tr'"#,
            "EOF while parsing",
        ),
        (
            "wrong type",
            r#"printf '{"cancel": "yes"}'"#,
            "invalid type: string",
        ),
        (
            "wrong nested type",
            r#"printf '{"compaction": {"summary": 5}}'"#,
            "invalid type: integer",
        ),
        (
            "an array",
            "printf '[1, 2]'",
            "not a `before_compact` result",
        ),
        ("null", "printf 'null'", "not a `before_compact` result"),
        ("two documents", "printf '{}{}'", "trailing characters"),
        (
            "invalid UTF-8",
            r"printf '\377\376{'",
            "not a `before_compact` result",
        ),
        (
            "deep nesting",
            "head -c 100000 /dev/zero | tr '\\0' '['",
            "not a `before_compact` result",
        ),
        ("plain text", "echo 'sure, go ahead'", "expected value"),
        (
            "endless output",
            "yes",
            "answered more than 16777216 bytes and was killed",
        ),
        (
            "a flood on stderr, then failure",
            "head -c 20000000 /dev/zero | tr '\\0' 'e' >&2; exit 9",
            "exited with exit status: 9: eeee",
        ),
        ("killed by a signal", "kill -9 $$", "exited with signal: 9"),
    ];
    for (name, script, expected) in cases {
        let script = format!("cat > /dev/null; {script}");
        let mut harness = with_command_hooks(vec![shell_hook(&script, 20_000)]);
        harness.turn("first", 100).await;
        let end = harness.engine.compact(None).await.unwrap();
        assert!(!end.from_hook, "{name}");
        assert_eq!(harness.summarizer.request_count(), 1, "{name}");
        let errors = hook_errors(&mut harness);
        assert_eq!(errors.len(), 1, "{name}: {errors:?}");
        assert!(errors[0].contains(expected), "{name}: {}", errors[0]);
        assert!(
            errors[0].len() < 9_000,
            "{name}: the error is one bounded line"
        );
        assert!(!errors[0].contains('\n'), "{name}: {}", errors[0]);
        assert_eq!(harness.compactions().await, 1, "{name}");
    }
}

#[tokio::test]
async fn a_cancel_while_a_hook_supplies_the_compaction_writes_nothing() {
    let harness = with_command_hooks(vec![shell_hook(
        r#"cat > /dev/null; echo $$ > hook.pid; sleep 120; printf '{"compaction": {"summary": "LATE", "first_kept_entry_id": "none", "tokens_before": 7}}'"#,
        600_000,
    )]);
    harness.turn("first", 100).await;
    let before = harness.entry_types().await;
    let engine = harness.engine.clone();
    let running = tokio::spawn(async move { engine.compact(None).await });
    // The cancel comes while the hook runs (it has said so), not after a sleep that hopes.
    written_pid(&harness.dir.path().join("hook.pid")).await;
    assert!(harness.engine.is_compacting());
    harness.engine.cancel_compaction();
    let error = running.await.unwrap().unwrap_err();
    assert_eq!(error.to_string(), "Compaction cancelled");
    assert_eq!(harness.entry_types().await, before);
    assert!(!harness.engine.is_compacting());
}

/// Whether `pid` runs (a zombie has ended).
#[cfg(target_os = "linux")]
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            != Some("Z")
    })
}

/// The pid a hook writes to `file`, once written whole (the shell creates the file before it
/// writes the number): polled, with a generous deadline, instead of a sleep that hopes.
async fn written_pid(file: &std::path::Path) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        if text.ends_with('\n') && text.trim().parse::<u32>().is_ok() {
            return text.trim().to_owned();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} never written",
            file.display()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// A cancel kills a slow command hook's process group (the hook and the `sleep` it started) and
/// ends the compaction at once. Before, the hook's cancel token was ignored: the compaction ended
/// when the hook exited by itself (two minutes here).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_cancel_kills_a_slow_command_hook_and_what_it_started() {
    let harness = with_command_hooks(vec![shell_hook(
        "echo $$ > hook.pid; cat > /dev/null; sleep 120 & echo $! > sleep.pid; wait",
        60_000,
    )]);
    harness.turn("first", 100).await;
    let engine = harness.engine.clone();
    let running = tokio::spawn(async move { engine.compact(None).await });
    let pids: Vec<String> = [
        written_pid(&harness.dir.path().join("hook.pid")).await,
        written_pid(&harness.dir.path().join("sleep.pid")).await,
    ]
    .into();
    let cancelled = std::time::Instant::now();
    harness.engine.cancel_compaction();
    let error = tokio::time::timeout(std::time::Duration::from_secs(20), running)
        .await
        .expect("the compaction ends soon after its cancel")
        .unwrap()
        .unwrap_err();
    assert_eq!(error.to_string(), "Compaction cancelled");
    // The hook and its child sleep two minutes: gone within 20 s (a loaded machine's margin) is the kill.
    while pids.iter().any(|pid| alive(pid)) {
        assert!(
            cancelled.elapsed() < std::time::Duration::from_secs(20),
            "still running: {pids:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The same for a `before_tree` hook: `cancel_branch_summary` kills it and the navigation ends at
/// once, aborted, the leaf where it was (the hook's answer, which might have cancelled it, never
/// came).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_cancel_kills_a_slow_before_tree_hook_and_the_navigation_changes_nothing() {
    let mut hook = shell_hook("echo $$ > hook.pid; cat > /dev/null; sleep 120", 600_000);
    hook.events = vec!["before_tree".to_owned()];
    let harness = with_command_hooks(vec![hook]);
    let (first, _) = harness.turn("first", 100).await;
    harness.turn("second", 100).await;
    let leaf = || async {
        harness
            .engine
            .with_session(|session| session.leaf_id().map(str::to_owned))
            .await
    };
    let before = leaf().await;
    let engine = harness.engine.clone();
    let running = tokio::spawn(async move {
        engine
            .navigate(&first, ctxkit_engine::NavigateOptions::default())
            .await
    });
    let pid = written_pid(&harness.dir.path().join("hook.pid")).await;
    let cancelled = std::time::Instant::now();
    harness.engine.cancel_branch_summary();
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(20), running)
        .await
        .expect("the navigation ends soon after its cancel")
        .unwrap()
        .unwrap();
    assert!(outcome.cancelled && outcome.aborted, "{outcome:?}");
    assert_eq!(leaf().await, before);
    // The hook sleeps two minutes: gone within 20 s (a loaded machine's margin) is the kill.
    while alive(&pid) {
        assert!(cancelled.elapsed() < std::time::Duration::from_secs(20));
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// A trusted project's hook pins its scripts: rewritten during a session (by the model's `write`,
/// a pull), the script is not run, and the hook's error says why; as trusted, it runs.
#[tokio::test]
async fn a_trusted_hook_whose_script_changed_since_is_not_run() {
    let scripts = tempfile::tempdir().unwrap();
    let script = scripts.path().join("hook.sh");
    let marker = scripts.path().join("ran");
    std::fs::write(
        &script,
        format!("cat > /dev/null; echo trusted >> '{}'\n", marker.display()),
    )
    .unwrap();
    let mut hook = shell_hook("", 10_000);
    hook.command = vec!["sh".to_owned(), script.display().to_string()];
    hook.pinned_scripts = vec![ctxkit_settings::PinnedScript {
        path: script.clone(),
        named: script.clone(),
        digest: ctxkit_settings::script_digest(&script).unwrap(),
    }];
    let mut harness = with_command_hooks(vec![hook]);
    harness.turn("first", 100).await;
    harness.engine.compact(None).await.unwrap();
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "trusted\n");
    std::fs::write(
        &script,
        format!(
            "cat > /dev/null; echo rewritten >> '{}'\n",
            marker.display()
        ),
    )
    .unwrap();
    harness.turn("second", 100).await;
    harness.engine.compact(None).await.unwrap();
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "trusted\n");
    let errors = hook_errors(&mut harness);
    assert!(
        errors
            .iter()
            .any(|error| error.contains("changed since the project was trusted")),
        "{errors:?}"
    );
}

/// A trusted hook whose script did not exist when the project was trusted (pinned as absent, an
/// empty digest) does not run a script written there since: the model writes in the project
/// without a question, and would otherwise choose the code the next compaction runs.
#[tokio::test]
async fn a_trusted_hook_runs_no_script_written_after_trust() {
    let scripts = tempfile::tempdir().unwrap();
    let script = scripts.path().join("later.sh");
    let marker = scripts.path().join("ran");
    let mut hook = shell_hook("", 10_000);
    hook.command = vec!["sh".to_owned(), script.display().to_string()];
    hook.pinned_scripts = vec![ctxkit_settings::PinnedScript {
        path: script.clone(),
        named: script.clone(),
        digest: String::new(),
    }];
    let mut harness = with_command_hooks(vec![hook]);
    std::fs::write(
        &script,
        format!("cat > /dev/null; echo planted >> '{}'\n", marker.display()),
    )
    .unwrap();
    harness.turn("first", 100).await;
    harness.engine.compact(None).await.unwrap();
    assert!(!marker.exists(), "the script written after trust ran");
    let errors = hook_errors(&mut harness);
    assert!(
        errors
            .iter()
            .any(|error| error.contains("changed since the project was trusted")),
        "{errors:?}"
    );
}
