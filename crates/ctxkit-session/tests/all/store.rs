//! Behaviour of the store beyond what the reference vectors cover: deferred and crash-safe writes,
//! locking, branching into new files, forking and migration.

use ctxkit_protocol::{AgentMessage, AssistantMessage, ContentBlock, MessageContent, UserMessage};
use ctxkit_session::{LeafSelector, NewCompaction, Session, SessionError, SummarySource};
use serde_json::{Value, json};

pub(crate) fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage {
        content: MessageContent::Text(text.into()),
        timestamp: Some(1),
        extra: Default::default(),
    })
}

pub(crate) fn assistant(text: &str) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content: vec![ContentBlock::text(text)],
        api: Some("anthropic-messages".into()),
        provider: Some("anthropic".into()),
        model: Some("claude-sonnet-4-5".into()),
        usage: None,
        stop_reason: Some("stop".into()),
        error_message: None,
        timestamp: Some(2),
        extra: Default::default(),
    })
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn setup_entries_stay_in_memory_until_the_first_user_message_then_everything_is_written_once() {
    let home = tempfile::tempdir().unwrap();
    let mut session = Session::create("/project", home.path());
    let path = session.path().unwrap().to_owned();
    session.append_model_change("anthropic", "claude").unwrap();
    session.append_thinking_level_change("high").unwrap();
    // Setup alone leaves no file (Pi 1.6: starting and quitting without typing writes nothing).
    assert!(!path.exists());
    // The first user message writes the header, the setup and itself (Pi 0.87 waited for a reply).
    session.append_message(user("hi")).unwrap();
    assert_eq!(lines(&path).len(), 4);
    session.append_message(assistant("hello")).unwrap();
    session.append_message(user("more")).unwrap();
    let written = lines(&path);
    assert_eq!(written.len(), 6);
    assert_eq!(written[0]["type"], "session");
    assert_eq!(
        written
            .iter()
            .filter(|line| line["type"] == "session")
            .count(),
        1
    );
    assert_eq!(written[5]["parentId"], written[4]["id"]);
}

/// QA r101 serve D1: a reply appended without a `cost`, or without a `usage`, was written as is
/// and Pi 1.6.0 crashed opening the file (`reading 'total'`, `reading 'input'`). Both appends
/// write it with a complete usage, the counts it had kept.
#[test]
fn every_appended_reply_is_written_with_a_complete_usage() {
    let home = tempfile::tempdir().unwrap();
    let mut session = Session::create("/project", home.path());
    let path = session.path().unwrap().to_owned();
    session.append_message(user("hi")).unwrap();
    session.append_message(assistant("no usage")).unwrap();
    let mut counted = assistant("counted, no cost");
    if let AgentMessage::Assistant(reply) = &mut counted {
        reply.usage = Some(ctxkit_protocol::Usage::from_parts(10, 5, 0, 0));
    }
    session
        .append_messages(vec![user("more"), counted, assistant("again")])
        .unwrap();
    let zero_cost = json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0});
    let usages: Vec<Value> = lines(&path)
        .iter()
        .filter(|line| line["message"]["role"] == "assistant")
        .map(|line| line["message"]["usage"].clone())
        .collect();
    let empty = json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": zero_cost});
    let counts = json!({"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15, "cost": zero_cost});
    assert_eq!(usages, vec![empty.clone(), counts, empty]);
}

#[test]
fn a_loaded_file_is_appended_to_whatever_its_entries_are() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("s.jsonl");
    // Only a header and a setup entry on disk: Pi 1.6 appends to a file that exists.
    std::fs::write(
        &path,
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n\
         {\"type\":\"model_change\",\"id\":\"aaaaaaaa\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"provider\":\"p\",\"modelId\":\"m\"}\n",
    )
    .unwrap();
    let mut session = Session::open(&path).unwrap();
    session.append_thinking_level_change("low").unwrap();
    assert_eq!(lines(&path).len(), 3, "appended at once");
    session.append_message(user("again")).unwrap();
    let written = lines(&path);
    assert_eq!(written.len(), 4);
    assert_eq!(
        written
            .iter()
            .filter(|line| line["type"] == "session")
            .count(),
        1
    );
}

#[test]
fn an_append_after_a_torn_last_line_starts_on_a_new_line() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("s.jsonl");
    let intact = "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n\
         {\"type\":\"message\",\"id\":\"bbbbbbbb\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n";
    std::fs::write(&path, format!("{intact}{{\"type\":\"message\",\"id\":\"cc")).unwrap();
    let mut session = Session::open(&path).unwrap();
    assert_eq!(session.diagnostics().len(), 1);
    session.append_message(user("after the crash")).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with(intact),
        "existing bytes are never rewritten"
    );
    let reopened = Session::open(&path).unwrap();
    assert_eq!(reopened.entries().len(), 2);
    assert_eq!(reopened.leaf_entry().unwrap().role(), Some("user"));
    assert_eq!(reopened.entries()[1].parent_id(), Some("bbbbbbbb"));
}

#[test]
fn a_second_writer_is_refused_clearly() {
    let home = tempfile::tempdir().unwrap();
    let mut first = Session::create("/p", home.path());
    first.append_message(assistant("one")).unwrap();
    let path = first.path().unwrap().to_owned();
    let mut second = Session::open(&path).unwrap();
    let error = second.append_message(user("two")).unwrap_err();
    assert!(matches!(error, SessionError::Locked { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains(&format!("in use by PID {}", std::process::id())),
        "{error}"
    );
    drop(first);
    second.append_message(user("two")).unwrap();
}

#[test]
fn branches_labels_and_branched_sessions() {
    let home = tempfile::tempdir().unwrap();
    let mut session = Session::create("/p", home.path());
    let first = session.append_message(user("start")).unwrap();
    let reply = session.append_message(assistant("plan")).unwrap();
    session.append_message(user("path A")).unwrap();
    session
        .append_label_change(&reply, Some("checkpoint"))
        .unwrap();
    session.branch(&reply).unwrap();
    let b = session.append_message(user("path B")).unwrap();
    assert_eq!(session.children(&reply).len(), 2);
    assert_eq!(session.label(&reply), Some("checkpoint"));
    let texts = |session: &Session| -> Vec<Value> {
        let context = session.build_context();
        context
            .messages
            .iter()
            .map(|message| session.message_value(message).unwrap()["content"].clone())
            .collect()
    };
    assert_eq!(
        texts(&session),
        vec![
            json!("start"),
            json!([{"type": "text", "text": "plan"}]),
            json!("path B")
        ]
    );

    let old_path = session.path().unwrap().to_owned();
    let new_path = session.create_branched_session(&b).unwrap().unwrap();
    let written = lines(&new_path);
    assert_eq!(written[0]["parentSession"], old_path.display().to_string());
    assert_eq!(written.len(), 1 + 3 + 1, "header, path, re-created label");
    assert_eq!(written[4]["targetId"], reply);
    assert_eq!(written[4]["parentId"], b);
    let reopened = Session::open(&new_path).unwrap();
    assert_eq!(reopened.label(&reply), Some("checkpoint"));
    assert_eq!(
        reopened.entry(&first).unwrap().raw().unwrap(),
        Session::open(&old_path)
            .unwrap()
            .entry(&first)
            .unwrap()
            .raw()
            .unwrap()
    );

    session.append_label_change(&reply, None).unwrap();
    assert_eq!(session.label(&reply), None);
    assert!(matches!(
        session.append_label_change("nope", Some("x")),
        Err(SessionError::EntryNotFound { .. })
    ));
}

#[test]
fn a_compaction_is_stamped_after_the_reply_it_follows() {
    // A reply stamped in this millisecond or a little later: the compaction written right after
    // it must still be later, or the reply's usage (measured before the compaction) would look
    // current. A reply stamped an hour ahead (another clock) does not move it into the future.
    let compacted_after = |ahead_ms: i64| {
        let mut session = Session::in_memory("/p");
        let kept = session.append_message(user("one")).unwrap();
        let AgentMessage::Assistant(mut reply) = assistant("two") else {
            unreachable!()
        };
        let stamp = chrono::Utc::now().timestamp_millis() + ahead_ms;
        reply.timestamp = Some(stamp);
        session
            .append_message(AgentMessage::Assistant(reply))
            .unwrap();
        let compaction = session
            .append_compaction(NewCompaction {
                summary: "S".into(),
                first_kept_entry_id: kept,
                tokens_before: 100,
                details: None,
                source: SummarySource::Ctxkit,
            })
            .unwrap();
        let stamped = session.entry(&compaction).unwrap().timestamp().to_owned();
        (stamp, ctxkit_session::parse_timestamp_ms(&stamped).unwrap())
    };
    let (reply, compaction) = compacted_after(300);
    assert_eq!(compaction, reply + 1);
    let (reply, compaction) = compacted_after(0);
    assert!(compaction > reply);
    let (reply, compaction) = compacted_after(3_600_000);
    assert!(compaction < reply - 3_000_000);
}

#[test]
fn branch_with_summary_and_compaction_shape_the_context() {
    let mut session = Session::in_memory("/p");
    let first = session.append_message(user("one")).unwrap();
    session.append_message(assistant("two")).unwrap();
    let kept = session.append_message(user("three")).unwrap();
    session.append_message(assistant("four")).unwrap();
    session
        .append_compaction(NewCompaction {
            summary: "S".into(),
            first_kept_entry_id: kept.clone(),
            tokens_before: 100,
            details: Some(json!({"readFiles": [], "modifiedFiles": []})),
            source: SummarySource::Ctxkit,
        })
        .unwrap();
    let roles: Vec<String> = session
        .build_context()
        .messages
        .iter()
        .map(|m| session.message(m).unwrap().role().to_owned())
        .collect();
    assert_eq!(roles, ["compactionSummary", "user", "assistant"]);
    session
        .branch_with_summary(Some(&first), "left B", None, SummarySource::Hook)
        .unwrap();
    let leaf = session.leaf_entry().unwrap();
    assert_eq!(leaf.parse().unwrap().kind.type_name(), "branch_summary");
    assert!(leaf.raw().unwrap().contains("\"fromHook\":true"));
    let roles: Vec<String> = session
        .build_context()
        .messages
        .iter()
        .map(|m| session.message(m).unwrap().role().to_owned())
        .collect();
    assert_eq!(roles, ["user", "branchSummary"]);
    assert!(
        session
            .context_at(LeafSelector::BeforeFirst)
            .messages
            .is_empty()
    );
    session.reset_leaf();
    let root = session.append_message(user("new root")).unwrap();
    assert_eq!(session.entry(&root).unwrap().parent_id(), None);
}

#[test]
fn fork_from_copies_entries_into_the_target_directory() {
    let home = tempfile::tempdir().unwrap();
    let mut source = Session::create("/a", &home.path().join("a"));
    source.append_message(user("x")).unwrap();
    source.append_message(assistant("y")).unwrap();
    let source_path = source.path().unwrap().to_owned();
    let fork = Session::fork_from(&source_path, "/b", &home.path().join("b")).unwrap();
    assert_eq!(fork.cwd(), "/b");
    assert_eq!(
        fork.header().parent_session.as_deref(),
        Some(source_path.to_str().unwrap())
    );
    assert_eq!(fork.entries().len(), 2);
    assert!(fork.path().unwrap().starts_with(home.path().join("b")));
}

#[test]
fn legacy_files_are_rewritten_atomically_on_first_write_only() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("old.jsonl");
    let v1 = "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n\
              {\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"a\"}}\n\
              {\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n";
    std::fs::write(&path, v1).unwrap();
    let mut session = Session::open(&path).unwrap();
    assert!(session.needs_migration());
    assert_eq!(session.migrated_from(), Some(1));
    // Ids of an unmigrated file are derived from it: the same on every run.
    let ids = |session: &Session| -> Vec<String> {
        session
            .entries()
            .iter()
            .map(|entry| entry.id().to_owned())
            .collect()
    };
    let first_run = ids(&session);
    assert_eq!(ids(&Session::open(&path).unwrap()), first_run);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        v1,
        "reading never rewrites"
    );
    session.append_message(user("b")).unwrap();
    let written = lines(&path);
    assert_eq!(written[0]["version"], 3);
    assert_eq!(written.len(), 4);
    assert_eq!(written[3]["parentId"], written[2]["id"]);
    assert_eq!(written[2]["parentId"], written[1]["id"]);
    // The rewrite keeps the ids the file was read with.
    assert_eq!(written[1]["id"], first_run[0].as_str());
    assert_eq!(written[2]["id"], first_run[1].as_str());
    assert_eq!(Session::open(&path).unwrap().migrated_from(), None);
}

#[test]
fn context_edits_usage_and_compactions_write_what_pi_087_reads() {
    let mut session = Session::in_memory("/p");
    let system: AgentMessage = serde_json::from_value(json!({
        "role": "system", "content": "base", "toolsAdded": [{"name": "read"}], "timestamp": 5
    }))
    .unwrap();
    session.append_message(system).unwrap();
    let question = session.append_message(user("long question")).unwrap();
    let reply = session.append_message(assistant("long reply")).unwrap();
    let fork = session.leaf_id().unwrap().to_owned();
    session
        .append_context_edit(&reply, Some(MessageContent::Text("short reply".into())))
        .unwrap();
    session.append_context_edit(&question, None).unwrap();
    session
        .append_usage(
            "cache_warm",
            "anthropic",
            "m",
            ctxkit_protocol::Usage::default(),
            None,
        )
        .unwrap();
    let context =
        session.context_record(LeafSelector::Current, ctxkit_session::ContextForm::Session);
    let messages = context.unwrap().messages;
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0]["role"], "system");
    // A string replacement of a reply becomes one text block.
    assert_eq!(
        messages[1]["content"],
        json!([{"type": "text", "text": "short reply"}])
    );
    let usage = session.entries().last().unwrap().parse().unwrap();
    let ctxkit_protocol::EntryKind::Usage(usage) = usage.kind else {
        panic!("not a usage entry");
    };
    assert_eq!(
        usage.usage.cost.unwrap().total,
        0.0,
        "a cost is always written"
    );

    // Edits only exist on their branch, and only editable entries on the branch can be edited.
    session.branch(&fork).unwrap();
    let here = session.context_record(LeafSelector::Current, ctxkit_session::ContextForm::Session);
    assert_eq!(here.unwrap().messages.len(), 3);
    let edit = session.entries()[3].id().to_owned();
    assert!(matches!(
        session.append_context_edit(&edit, None),
        Err(SessionError::NotEditable { .. })
    ));
    let system_id = session.entries()[0].id().to_owned();
    assert!(matches!(
        session.append_context_edit(&system_id, None),
        Err(SessionError::NotEditable { .. })
    ));

    // A compaction records the replayed prompt state, which then leads the context.
    let compaction = session
        .append_compaction(NewCompaction {
            summary: "S".into(),
            first_kept_entry_id: reply.clone(),
            tokens_before: 10,
            details: None,
            source: SummarySource::Ctxkit,
        })
        .unwrap();
    let stored = session.entry(&compaction).unwrap();
    let fields: Value = serde_json::from_str(&stored.raw().unwrap()).unwrap();
    let stamped = ctxkit_session::parse_timestamp_ms(stored.timestamp()).unwrap();
    assert_eq!(
        fields["systemMessage"],
        json!({"role": "system", "content": "base", "toolsAdded": [{"name": "read"}], "timestamp": stamped})
    );
    let context =
        session.context_record(LeafSelector::Current, ctxkit_session::ContextForm::Session);
    let roles: Vec<Value> = context
        .unwrap()
        .messages
        .iter()
        .map(|message| message["role"].clone())
        .collect();
    assert_eq!(
        roles,
        [
            json!("system"),
            json!("compactionSummary"),
            json!("assistant")
        ]
    );

    // A branch summary names the leaf it leaves.
    let left = session.leaf_id().unwrap().to_owned();
    let summary = session
        .branch_with_summary(Some(&question), "B", None, SummarySource::Ctxkit)
        .unwrap();
    let fields: Value =
        serde_json::from_str(&session.entry(&summary).unwrap().raw().unwrap()).unwrap();
    assert_eq!(fields["fromId"], json!(left));
}

#[test]
fn branched_sessions_re_chain_around_labels() {
    let mut session = Session::in_memory("/p");
    let first = session.append_message(user("a")).unwrap();
    let reply = session.append_message(assistant("b")).unwrap();
    session.append_label_change(&first, Some("start")).unwrap();
    let label = session.leaf_id().unwrap().to_owned();
    let after = session.append_message(user("c")).unwrap();
    let compaction = session
        .append_compaction(NewCompaction {
            summary: "S".into(),
            first_kept_entry_id: label.clone(),
            tokens_before: 1,
            details: None,
            source: SummarySource::Ctxkit,
        })
        .unwrap();
    let last = session.append_message(assistant("d")).unwrap();
    let before =
        session.context_record(LeafSelector::Current, ctxkit_session::ContextForm::Session);
    session.create_branched_session(&last).unwrap();
    let parents: Vec<(String, Option<String>)> = session
        .entries()
        .iter()
        .map(|entry| (entry.id().to_owned(), entry.parent_id().map(str::to_owned)))
        .collect();
    // The message that hung under the label now hangs under the label's parent.
    assert_eq!(parents[0], (first.clone(), None));
    assert_eq!(parents[1], (reply.clone(), Some(first.clone())));
    assert_eq!(parents[2], (after.clone(), Some(reply)));
    assert_eq!(parents[3], (compaction.clone(), Some(after.clone())));
    let fields: Value =
        serde_json::from_str(&session.entry(&compaction).unwrap().raw().unwrap()).unwrap();
    assert_eq!(
        fields["firstKeptEntryId"],
        json!(after),
        "moved off the label"
    );
    assert!(session.entry(&label).is_none());
    assert_eq!(session.label(&first), Some("start"));
    let after_branch = session.context_record(
        LeafSelector::Entry(&last),
        ctxkit_session::ContextForm::Session,
    );
    assert_eq!(after_branch.unwrap().messages, before.unwrap().messages);
}

/// A session large enough to be read in chunks, whose tool outputs are left on disk.
fn large_session(dir: &std::path::Path) -> (std::path::PathBuf, Vec<String>) {
    let path = dir.join("large.jsonl");
    let mut text = String::from(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}"#,
    );
    text.push('\n');
    let mut outputs = Vec::new();
    let mut parent = "null".to_owned();
    for index in 0..40 {
        let output = format!("{index}: é日\\\"{}", "line of output\\n".repeat(20_000));
        text.push_str(&format!(
            r#"{{"type":"message","id":"m{index}","parentId":{parent},"timestamp":"2024-01-01T00:00:00.000Z","message":{{"role":"toolResult","toolCallId":"c{index}","toolName":"bash","content":[{{"type":"text","text":"{output}"}}],"isError":false,"timestamp":1}}}}"#
        ));
        text.push('\n');
        parent = format!("\"m{index}\"");
        outputs.push(serde_json::from_str::<String>(&format!("\"{output}\"")).unwrap());
    }
    std::fs::write(&path, text).unwrap();
    (path, outputs)
}

#[test]
fn lines_left_on_disk_read_back_identical_and_a_file_changed_in_place_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (path, outputs) = large_session(dir.path());
    let original = std::fs::read_to_string(&path).unwrap();
    let session = Session::open(&path).unwrap();
    let entries = session.entries();
    let lines: Vec<&str> = original.lines().skip(1).collect();
    // The first half: byte-identical lines, and messages as written.
    for (entry, line) in entries.iter().zip(&lines).take(20) {
        assert_eq!(entry.raw().unwrap(), *line);
    }
    let context = session.build_context();
    assert_eq!(context.messages.len(), 40);
    for (message, output) in context.messages.iter().zip(&outputs).take(20) {
        let value = session.message_value(message).unwrap();
        assert_eq!(value["content"][0]["text"], *output);
    }
    // Another program rewrites the file in place (same inode, same length): lines not read yet are
    // an error, not the new bytes; lines read before come from the cache as they were indexed.
    let rewritten = original.replace("line of output", "LINE OF OUTPUT");
    assert_eq!(rewritten.len(), original.len());
    std::fs::write(&path, &rewritten).unwrap();
    let error = entries[30].raw().unwrap_err();
    assert!(
        matches!(error, SessionError::LineChanged { line: 32, .. }),
        "{error}"
    );
    // Read all at once (on several threads), the first changed line in context order is reported.
    let error = session.message_values(&context.messages).unwrap_err();
    assert!(
        matches!(error, SessionError::LineChanged { line: 22, .. }),
        "{error}"
    );
    let error = session.message_value(&context.messages[31]).unwrap_err();
    assert!(
        matches!(error, SessionError::LineChanged { line: 33, .. }),
        "{error}"
    );
    assert_eq!(entries[5].raw().unwrap(), lines[5]);
    // Truncated: the same.
    std::fs::write(&path, "").unwrap();
    let error = entries[35].raw().unwrap_err();
    assert!(
        matches!(error, SessionError::LineChanged { line: 37, .. }),
        "{error}"
    );
    assert_eq!(entries[6].raw().unwrap(), lines[6]);
}

#[test]
fn a_group_commit_writes_a_chain_once_and_reads_back_as_single_appends_would() {
    let home = tempfile::tempdir().unwrap();
    let mut session = Session::create("/project", home.path());
    session.set_durability(ctxkit_session::Durability::SyncEach);
    let path = session.path().unwrap().to_owned();
    session.append_model_change("anthropic", "claude").unwrap();
    // Nothing is written before a user or assistant message, batch or not…
    session.append_messages(Vec::new()).unwrap();
    assert!(!path.exists());
    // …and a batch that brings one writes everything held back with it.
    let first = session.append_messages(vec![user("start")]).unwrap()[0].clone();
    session.append_messages(vec![user("a"), user("b")]).unwrap();
    assert_eq!(lines(&path).len(), 5);
    let ids = session
        .append_messages(vec![assistant("c"), user("d"), assistant("e")])
        .unwrap();
    assert_eq!(ids.len(), 3);
    assert_eq!(session.leaf_id(), Some(ids[2].as_str()));
    let written = lines(&path);
    assert_eq!(written.len(), 8);
    assert_eq!(written[2]["id"], first.as_str());
    for pair in written[1..].windows(2) {
        assert_eq!(pair[1]["parentId"], pair[0]["id"]);
    }
    let reopened = Session::open(&path).unwrap();
    let texts = |session: &Session| -> Vec<String> {
        session
            .entries()
            .iter()
            .map(|entry| entry.raw().unwrap().to_string())
            .collect()
    };
    assert_eq!(texts(&reopened), texts(&session));
    assert_eq!(reopened.build_context().messages.len(), 6);
    // An empty batch writes nothing; an in-memory session takes batches too.
    assert!(session.append_messages(Vec::new()).unwrap().is_empty());
    assert_eq!(lines(&path).len(), 8);
    let mut memory = Session::in_memory("/project");
    memory
        .append_messages(vec![user("x"), assistant("y")])
        .unwrap();
    assert_eq!(memory.build_context().messages.len(), 2);
}

#[test]
fn entries_naming_missing_or_themselves_are_reported_in_file_order() {
    let lines = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}"#,
        r#"{"type":"message","id":"b","parentId":"gone","timestamp":"t","message":{"role":"user","content":"x"}}"#,
        r#"{"type":"label","id":"c","parentId":"a","timestamp":"t","targetId":"a","label":"kept"}"#,
        r#"{"type":"label","id":"d","parentId":"self-less","timestamp":"t","targetId":"nowhere","label":"x"}"#,
        r#"{"type":"message","id":"e","parentId":"e","timestamp":"t","message":{"role":"user","content":"x"}}"#,
        r#"{"type":"compaction","id":"f","parentId":"a","timestamp":"t","summary":"s","firstKeptEntryId":"lost","tokensBefore":1}"#,
        r#"{"type":"compaction","id":"g","parentId":"f","timestamp":"t","summary":"s","firstKeptEntryId":"a","tokensBefore":1}"#,
    ];
    let (_dir, session) = open_lines(&lines);
    let reported: Vec<(Option<usize>, String)> = session
        .diagnostics()
        .iter()
        .map(|diagnostic| (diagnostic.line, format!("{:?}", diagnostic.kind)))
        .collect();
    let expected = [
        (3, r#"MissingParent { id: "b", parent_id: "gone" }"#),
        (5, r#"MissingParent { id: "d", parent_id: "self-less" }"#),
        (5, r#"DanglingLabelTarget { id: "d", target: "nowhere" }"#),
        (6, r#"ParentCycle { id: "e" }"#),
        (7, r#"DanglingFirstKept { id: "f", target: "lost" }"#),
    ];
    let expected: Vec<(Option<usize>, String)> = expected
        .iter()
        .map(|(line, kind)| (Some(*line), (*kind).to_owned()))
        .collect();
    assert_eq!(reported, expected);
}

#[test]
fn a_repeated_id_names_its_last_entry_as_a_parent() {
    let lines = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"message","id":"x","parentId":null,"timestamp":"t","message":{"role":"user","content":"first x"}}"#,
        r#"{"type":"message","id":"b","parentId":"x","timestamp":"t","message":{"role":"user","content":"b"}}"#,
        r#"{"type":"message","id":"x","parentId":null,"timestamp":"t","message":{"role":"user","content":"second x"}}"#,
    ];
    let (_dir, session) = open_lines(&lines);
    // As `JSON.parse` into a map by id: the last entry with the id is the one a parent names.
    assert_eq!(session.index().parent(1), Some(2));
    assert!(
        session
            .diagnostics()
            .iter()
            .any(|diagnostic| format!("{:?}", diagnostic.kind).starts_with("DuplicateId"))
    );
}

/// A session file of `lines` (one per line) in a fresh directory, opened.
fn open_lines(lines: &[&str]) -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let session = Session::open(&path).unwrap();
    (dir, session)
}

#[test]
fn a_branched_session_of_user_messages_only_is_written_at_once() {
    let home = tempfile::tempdir().unwrap();
    let mut session = Session::create("/project", home.path());
    session.append_model_change("anthropic", "claude").unwrap();
    let asked = session.append_message(user("first question")).unwrap();
    let branched = session
        .create_branched_session(&asked)
        .unwrap()
        .expect("a file session");
    // Pi 1.6: a path holding a user message is written at once, without a reply.
    let written = lines(&branched);
    assert_eq!(written.len(), 3, "{written:?}");
    assert_eq!(written[2]["id"], asked.as_str());
    // A path of setup entries alone is not.
    let mut setup_only = Session::create("/project", home.path());
    let model = setup_only.append_model_change("p", "m").unwrap();
    let path = setup_only
        .create_branched_session(&model)
        .unwrap()
        .expect("a file session");
    assert!(!path.exists());
}
