//! A session's recorded `cwd` is a record, not a grant: `agent.run` works only in a directory the
//! client chose (a `session.create`'s `cwd`, a run's `cwd`, the server's own directory).

use std::sync::Arc;

use serde_json::json;

use crate::agent::{Fixed, agent_config, attacker, tool_ends};
use crate::server::start_with;

/// A session file someone sent, recording `cwd`.
fn sent_session(path: &std::path::Path, cwd: &str) {
    let header = json!({"type": "session", "version": 3, "id": "sent",
        "timestamp": "2026-12-01T00:00:00.000Z", "cwd": cwd});
    std::fs::write(path, format!("{header}\n")).unwrap();
}

/// Attack: a session file recording the user's home (here a folder standing for it) or `/` made
/// everything there "in the project": `agent.run` read and wrote it without the
/// outside-the-project refusal. The run is refused until the client names a project, and a run
/// that names one works there.
#[tokio::test]
async fn a_sent_session_runs_only_in_a_project_the_client_names() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (victim, project, sessions) = (
        base.join("victim"),
        base.join("project"),
        base.join("sessions"),
    );
    for folder in [&victim, &project, &sessions] {
        std::fs::create_dir_all(folder).unwrap();
    }
    std::fs::write(victim.join("notes.txt"), "VICTIM-NOTES").unwrap();
    let model = attacker(vec![
        ("read", json!({"path": "notes.txt"})),
        ("write", json!({"path": "planted.sh", "content": "x"})),
    ]);
    let mut client = start_with(
        &sessions,
        Some(agent_config(Arc::new(Fixed(model.clone())))),
    );
    for recorded in [victim.display().to_string(), "/".to_owned()] {
        let file = sessions.join("sent.jsonl");
        sent_session(&file, &recorded);
        let opened = client.call("session.open", json!({"path": file})).await;
        assert_eq!(opened["result"]["cwd"], json!(recorded), "{opened}");
        let refused = client.call("agent.run", json!({"text": "go"})).await;
        assert_eq!(
            refused["error"]["data"]["kind"], "unconfirmed_cwd",
            "{refused}"
        );
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains(&format!("`{recorded}`")), "{message}");
        assert!(model.requests().is_empty(), "the model was asked");
    }

    // Naming the project: the tools work there, the recorded folder is outside.
    let named = project.display().to_string();
    let run = client
        .call("agent.run", json!({"text": "go", "cwd": named}))
        .await;
    assert_eq!(run["result"]["outcome"], "answered", "{run}");
    let ends = tool_ends(&client.notifications);
    assert!(ends[0].1, "{ends:?}");
    assert!(!ends[0].0.contains("VICTIM-NOTES"), "{ends:?}");
    assert!(!ends[1].1, "{ends:?}");
    assert!(project.join("planted.sh").exists());
    assert!(!victim.join("planted.sh").exists());
    assert!(!std::path::Path::new("/planted.sh").exists());
    // The session still records `/`: a later run without `cwd` is refused again.
    let again = client.call("agent.run", json!({"text": "again"})).await;
    assert_eq!(again["error"]["data"]["kind"], "unconfirmed_cwd", "{again}");
    let relative = client
        .call("agent.run", json!({"text": "go", "cwd": "project"}))
        .await;
    assert_eq!(relative["error"]["code"], -32602, "{relative}");
}

/// A client confirms a recorded `cwd` by naming it; a session recorded in a folder the client
/// created a session in runs there without a word, as before.
#[tokio::test]
async fn a_recorded_cwd_the_client_chose_or_confirms_is_the_project() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (theirs, mine, sessions) = (
        base.join("theirs"),
        base.join("mine"),
        base.join("sessions"),
    );
    for folder in [&theirs, &mine, &sessions] {
        std::fs::create_dir_all(folder).unwrap();
    }
    std::fs::write(theirs.join("notes.txt"), "THEIR-NOTES").unwrap();
    std::fs::write(mine.join("notes.txt"), "MY-NOTES").unwrap();
    let model = attacker(vec![("read", json!({"path": "notes.txt"}))]);
    let mut client = start_with(&sessions, Some(agent_config(Arc::new(Fixed(model)))));

    let file = sessions.join("theirs.jsonl");
    sent_session(&file, &theirs.display().to_string());
    client.call("session.open", json!({"path": file})).await;
    let confirmed = client
        .call(
            "agent.run",
            json!({"text": "go", "cwd": theirs.display().to_string()}),
        )
        .await;
    assert_eq!(confirmed["result"]["outcome"], "answered", "{confirmed}");
    assert!(
        tool_ends(&client.notifications)[0]
            .0
            .contains("THEIR-NOTES")
    );

    client.notifications.clear();
    let created = client
        .call("session.create", json!({"cwd": mine.display().to_string()}))
        .await;
    assert!(created.get("result").is_some(), "{created}");
    let mine_file = sessions.join("mine.jsonl");
    sent_session(&mine_file, &mine.display().to_string());
    client
        .call("session.open", json!({"path": mine_file}))
        .await;
    let run = client.call("agent.run", json!({"text": "go"})).await;
    assert_eq!(run["result"]["outcome"], "answered", "{run}");
    let ends = tool_ends(&client.notifications);
    assert!(ends[0].0.contains("MY-NOTES"), "{ends:?}");
}

/// Attack, held: a sent session recording a name that passes through a folder the client chose
/// (`mine/../theirs`), or a link to it, is not that folder: the names are compared as written,
/// so each is refused before the model is asked.
#[tokio::test]
async fn a_recorded_cwd_through_a_chosen_folder_is_not_that_folder() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (theirs, mine, sessions) = (
        base.join("theirs"),
        base.join("mine"),
        base.join("sessions"),
    );
    for folder in [&theirs, &mine, &sessions] {
        std::fs::create_dir_all(folder).unwrap();
    }
    std::os::unix::fs::symlink(&theirs, base.join("link")).unwrap();
    let model = attacker(vec![("read", json!({"path": "notes.txt"}))]);
    let mut client = start_with(
        &sessions,
        Some(agent_config(Arc::new(Fixed(model.clone())))),
    );
    let created = client
        .call("session.create", json!({"cwd": mine.display().to_string()}))
        .await;
    assert!(created.get("result").is_some(), "{created}");
    for recorded in [
        format!("{}/../theirs", mine.display()),
        base.join("link").display().to_string(),
        base.join("mine/../..").display().to_string(),
    ] {
        let file = sessions.join("sent.jsonl");
        sent_session(&file, &recorded);
        client.call("session.open", json!({"path": file})).await;
        let refused = client.call("agent.run", json!({"text": "go"})).await;
        assert_eq!(
            refused["error"]["data"]["kind"], "unconfirmed_cwd",
            "{recorded}: {refused}"
        );
    }
    assert!(model.requests().is_empty(), "the model was asked");
}
