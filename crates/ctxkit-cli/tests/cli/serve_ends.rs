//! `ctxkit serve --stdio` when a request is cut short: the client's end (stdin closed, SIGTERM)
//! and `compact.cancel` stop a compaction waiting on a slow `before_compact` hook at once, killing
//! the hook and what it started; two servers writing one session get the documented error kinds.
//! Linux only: whether a process still lives is read from `/proc`.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::serve::{Server, reply, user};

/// A home whose `before_compact` hook records its pid and that of the `sleep 120` it starts, then
/// waits for it; the session's project is the home.
fn home_with_slow_hook() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let marks = home.path().display().to_string();
    let script = format!(
        "echo $$ > {marks}/hook.pid; cat > /dev/null; sleep 120 & echo $! > {marks}/sleep.pid; wait"
    );
    let settings = json!({
        "compaction": {"keepRecentTokens": 500},
        "hooks": [{"command": ["sh", "-c", script], "events": ["before_compact"], "timeoutMs": 600_000}],
    });
    std::fs::write(home.path().join("settings.json"), settings.to_string()).unwrap();
    home
}

/// A session with a first turn to summarize; returns its file.
fn session_to_compact(server: &mut Server, home: &Path) -> PathBuf {
    let created = server.call("session.create", json!({"cwd": home}));
    let file = PathBuf::from(created["result"]["session_file"].as_str().unwrap());
    server.call(
        "model.set",
        json!({"model": {"provider": "faux", "id": "faux-1", "context_window": 20_000}}),
    );
    let long_answer = "I rewrote the tokenizer loop and the error recovery. ".repeat(80);
    for (text, answer, total) in [
        ("fix the parser", long_answer.as_str(), 2_000),
        ("now run the tests", "done", 3_000),
    ] {
        server.call("message.append", json!({"message": user(text)}));
        server.call("message.append", json!({"message": reply(answer, total)}));
    }
    file
}

/// Sends `compact` and waits until its hook has started the `sleep`; returns the request's id and
/// the hook's and the sleep's pids.
fn compact_into_the_hook(server: &mut Server, home: &Path) -> (u64, [String; 2]) {
    let id = server.send("compact", Value::Null);
    (
        id,
        [
            started_sleep(&home.join("hook.pid")),
            started_sleep(&home.join("sleep.pid")),
        ],
    )
}

/// Whether `pid` runs (a zombie has ended).
pub(crate) fn alive(pid: &str) -> bool {
    pid.parse::<u32>()
        .is_ok_and(|pid| !crate::chat::process_ended(pid))
}

/// Asserts that the command `pid` (it sleeps minutes) has ended within `within` of `since`: its
/// end is the stop under test. One that outlives it is killed first, so a failure leaves nothing
/// running.
pub(crate) fn assert_command_ends(pid: &str, since: Instant, within: Duration, message: &str) {
    while alive(pid) && since.elapsed() < within {
        std::thread::sleep(Duration::from_millis(20));
    }
    let orphaned = alive(pid);
    if orphaned {
        let _ = Command::new("kill").args(["-KILL", pid]).status();
    }
    assert!(!orphaned, "{message}");
}

/// Asserts that each of `pids` has ended within 20 s: the hook's `sleep` takes two minutes, so
/// that is the kill, with a margin a loaded machine keeps.
fn assert_ended(pids: &[String]) {
    let waited = Instant::now();
    while pids.iter().any(|pid| alive(pid)) {
        assert!(
            waited.elapsed() < Duration::from_secs(20),
            "still running: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How the client ends.
#[derive(Debug, Clone, Copy)]
enum End {
    CloseStdin,
    Sigterm,
}

/// The client's end cancels a compaction waiting on its hook as `shutdown` does: the server exits
/// at once, the hook and its `sleep` are killed and no compaction is written. Before, the server
/// waited for the hook (two minutes) and wrote the compaction.
fn the_end_cancels_a_compaction_in_its_hook(end: End) {
    let home = home_with_slow_hook();
    let mut server = Server::start(home.path());
    let file = session_to_compact(&mut server, home.path());
    let (compact, pids) = compact_into_the_hook(&mut server, home.path());
    let ended = Instant::now();
    match end {
        End::CloseStdin => server.close_stdin(),
        End::Sigterm => {
            let signalled = Command::new("kill")
                .args(["-TERM", &server.child.id().to_string()])
                .status()
                .unwrap();
            assert!(signalled.success());
        }
    }
    // SIGTERM ends it as the signal would have (128 + 15), as `serve --listen` does.
    let expected = match end {
        End::CloseStdin => Some(0),
        End::Sigterm => Some(143),
    };
    assert_eq!(server.child.wait().unwrap().code(), expected, "{end:?}");
    let took = ended.elapsed();
    // The hook waits two minutes: ended within 30 s (a loaded machine's margin) did not wait.
    assert!(
        took < Duration::from_secs(30),
        "{end:?}: the server took {took:?} to end"
    );
    let answer = server.answer(compact);
    assert_eq!(answer["error"]["data"]["kind"], "cancelled", "{answer}");
    assert_ended(&pids);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("\"type\":\"compaction\""), "{end:?}: {text}");
}

#[test]
fn a_closed_stdin_cancels_a_compaction_in_its_hook() {
    the_end_cancels_a_compaction_in_its_hook(End::CloseStdin);
}

#[test]
fn serve_sigterm_cancels_a_compaction_in_its_hook() {
    the_end_cancels_a_compaction_in_its_hook(End::Sigterm);
}

/// `compact.cancel` kills a running `before_compact` hook (its process group) and ends the
/// compaction at once. Before, the cancel was acknowledged but the compaction ended only when the
/// hook exited by itself.
#[test]
fn compact_cancel_kills_the_running_hook() {
    let home = home_with_slow_hook();
    let mut server = Server::start(home.path());
    let file = session_to_compact(&mut server, home.path());
    let (compact, pids) = compact_into_the_hook(&mut server, home.path());
    let cancelled = Instant::now();
    let cancel = server.call("compact.cancel", Value::Null);
    assert_eq!(cancel["result"], json!({}), "{cancel}");
    let answer = server.answer(compact);
    let took = cancelled.elapsed();
    assert!(
        took < Duration::from_secs(30),
        "the compaction ended {took:?} after its cancel (the hook waits two minutes)"
    );
    assert_eq!(answer["error"]["data"]["kind"], "cancelled", "{answer}");
    assert_ended(&pids);
    // Events are sent on their own: the `compaction_end` may follow the answer.
    let waited = Instant::now();
    while waited.elapsed() < Duration::from_secs(60) {
        if !server.events_of("compaction_end").is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        server.call("session.info", Value::Null);
    }
    let ends = server.events_of("compaction_end");
    assert_eq!(ends.last().unwrap()["aborted"], true, "{ends:?}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("\"type\":\"compaction\""), "{text}");
    let done = server.call("shutdown", Value::Null);
    assert_eq!(done["result"], json!({}), "{done}");
}

/// Two servers writing one session file: the second is refused while the first holds the file
/// (`session_in_use`, naming the process), and once the first wrote more and ended, the second's
/// view is stale (`session_file_changed`). Both were `session` before.
#[test]
fn two_servers_on_one_session_get_the_documented_kinds() {
    let home = tempfile::tempdir().unwrap();
    let mut first = Server::start(home.path());
    let created = first.call("session.create", json!({"cwd": home.path()}));
    let file = created["result"]["session_file"]
        .as_str()
        .unwrap()
        .to_owned();
    first.call("message.append", json!({"message": user("one")}));
    first.call("message.append", json!({"message": reply("one done", 10)}));

    let mut second = Server::start(home.path());
    let opened = second.call("session.open", json!({"path": file}));
    assert_eq!(opened["result"]["entries"], 2, "{opened}");
    let refused = second.call("message.append", json!({"message": user("two")}));
    assert_eq!(
        refused["error"]["data"]["kind"], "session_in_use",
        "{refused}"
    );
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        !message.contains("another client of this server"),
        "another process, not a client of this one: {message}"
    );

    first.call("message.append", json!({"message": user("three")}));
    first.call(
        "message.append",
        json!({"message": reply("three done", 20)}),
    );
    first.call("shutdown", Value::Null);
    assert!(first.child.wait().unwrap().success());
    let stale = second.call("message.append", json!({"message": user("two")}));
    assert_eq!(
        stale["error"]["data"]["kind"], "session_file_changed",
        "{stale}"
    );
    second.call("shutdown", Value::Null);
}

/// QA (third round): a `bash` command runs in a process group of its own, which a hangup sent to
/// the server does not reach: SIGHUP (the client's terminal or pipe went away) ended
/// `serve --stdio` on the spot and left the agent's `sleep 600` running, orphaned, and the run's
/// prompt unwritten. Now SIGHUP ends the server as SIGTERM does (the run cancelled, its command's
/// group killed, the session's entries written, a database session's private copy removed) and it
/// exits with 129, as for the signal.
#[test]
fn serve_sighup_stops_the_running_command_and_writes_the_session() {
    stop_during_a_command(None, Stop::Signal("-HUP", 129));
}

/// QA (fifth round): `serve --stdio` exited 0 on SIGTERM while `serve --listen` exits 143. A
/// SIGTERM during a run cancels it as docs/protocol.md says (its command's group killed, the
/// session written) and the server exits with 143.
#[test]
fn serve_sigterm_stops_the_running_command_writes_the_session_and_exits_143() {
    stop_during_a_command(None, Stop::Signal("-TERM", 143));
}

/// [`serve_sighup_stops_the_running_command_and_writes_the_session`] on a database session.
#[test]
fn serve_sighup_commits_a_database_session_and_removes_its_private_copy() {
    if let Some(database) = crate::store::database() {
        stop_during_a_command(Some(&database), Stop::Signal("-HUP", 129));
    }
}

/// QA (fifth round): a command cancelled because the server stopped read "Command cancelled by
/// the user" in the session, so the model and the user later read that the user did it. A client
/// that closes its input (disconnects) during a run: the result says so.
#[test]
fn a_client_gone_during_a_command_is_said_in_its_result() {
    stop_during_a_command(None, Stop::CloseStdin);
}

/// How a server running a command is stopped.
#[derive(Debug, Clone, Copy)]
enum Stop {
    /// The signal `kill` is given, and the exit status it must lead to.
    Signal(&'static str, i32),
    /// The client closes the server's stdin (status 0).
    CloseStdin,
}

/// `agent.run` runs `sleep 600` in a server on `store` (or files), which `stop` then ends: the
/// command is killed, the session written, its result saying why.
fn stop_during_a_command(store: Option<&str>, stop: Stop) {
    use crate::chat::{World, text, tool_call};
    let world = World::new(100_000, json!({}));
    world.answer(tool_call(
        "call_1",
        "bash",
        json!({"command": "sleep 600 & echo $! > sleep.pid; wait", "timeout": 900}),
    ));
    world.answer(text("done", 400));
    let temporary = tempfile::tempdir().unwrap();
    let temporary_text = temporary.path().display().to_string();
    let mut env = vec![("TMPDIR", temporary_text.as_str())];
    env.extend(store.map(|store| ("CTXKIT_STORE", store)));
    let mut server = Server::start_with(world.home.path(), &world.project, &env);
    let created = server.call("session.create", json!({"cwd": world.project}));
    let session = created["result"]["session_id"].as_str().unwrap().to_owned();
    let file = PathBuf::from(created["result"]["session_file"].as_str().unwrap());
    server.send(
        "agent.run",
        json!({"text": "sleep-for-a-while", "approve": "all"}),
    );
    let pid = started_sleep(&world.project.join("sleep.pid"));
    assert!(alive(&pid));
    let copies = std::fs::read_dir(temporary.path()).unwrap().count();
    assert_eq!(copies, usize::from(store.is_some()), "the private copy");
    let (code, cause) = match stop {
        Stop::Signal(signal, code) => {
            let signalled = Command::new("kill")
                .args([signal, &server.child.id().to_string()])
                .status()
                .unwrap();
            assert!(signalled.success());
            (code, "Command cancelled: the server is stopping")
        }
        Stop::CloseStdin => {
            server.close_stdin();
            (0, "Command cancelled: the client disconnected")
        }
    };
    let status = server.child.wait().unwrap();
    let ended = Instant::now();
    // The command sleeps ten minutes: gone within 20 s (a loaded machine's margin) is the stop.
    assert_command_ends(
        &pid,
        ended,
        Duration::from_secs(20),
        "the command outlived the server",
    );
    assert_eq!(status.code(), Some(code), "{status:?}");
    let left: Vec<_> = std::fs::read_dir(temporary.path())
        .unwrap()
        .flatten()
        .collect();
    assert!(left.is_empty(), "private copies left: {left:?}");
    let text = match store {
        None => std::fs::read_to_string(&file).unwrap(),
        Some(store) => {
            let exported = world.home.path().join("exported.jsonl");
            let output = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
                .args(["--store", store, "store", "export", &session, "-o"])
                .arg(&exported)
                .env("CTXKIT_HOME", world.home.path())
                .output()
                .unwrap();
            assert!(output.status.success(), "{output:?}");
            std::fs::read_to_string(&exported).unwrap()
        }
    };
    assert!(text.contains("sleep-for-a-while"), "{text}");
    assert!(text.contains(cause), "{stop:?}: {text}");
    assert!(!text.contains("cancelled by the user"), "{stop:?}: {text}");
}

/// The pid a command (the agent's, a hook's) wrote to `pid_file`, once it did: waited for, not
/// slept on.
pub(crate) fn started_sleep(pid_file: &Path) -> String {
    let waited = Instant::now();
    loop {
        let read = std::fs::read_to_string(pid_file).unwrap_or_default();
        if let Ok(pid) = read.trim().parse::<u32>() {
            return pid.to_string();
        }
        assert!(
            waited.elapsed() < Duration::from_secs(30),
            "the command did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// [`serve_sighup_stops_the_running_command_and_writes_the_session`] when the server's stdin and
/// stdout are a terminal that closes: the hangup comes with writes that fail, which must not cut
/// the server's end short.
#[test]
fn closing_the_servers_terminal_stops_the_running_command() {
    use crate::chat::{Tmux, World, text, tmux_missing, tool_call};
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    world.answer(tool_call(
        "call_1",
        "bash",
        json!({"command": "sleep 600 & echo $! > sleep.pid; wait", "timeout": 900}),
    ));
    world.answer(text("done", 400));
    let mut command = format!("cd '{}' && exec env", world.project.display());
    for name in crate::PROVIDER_VARIABLES
        .into_iter()
        .chain(["CTXKIT_SESSIONS_DIR", "CTXKIT_OFFLINE"])
    {
        command.push_str(&format!(" -u {name}"));
    }
    command.push_str(&format!(
        " CTXKIT_HOME='{}' '{}' serve --stdio",
        world.home.path().display(),
        env!("CARGO_BIN_EXE_ctxkit"),
    ));
    let tmux = Tmux::start(&command);
    let create = json!({"jsonrpc": "2.0", "id": 1, "method": "session.create",
                        "params": {"cwd": world.project}});
    tmux.line(&create.to_string());
    tmux.wait_for("session_file");
    let run = json!({"jsonrpc": "2.0", "id": 2, "method": "agent.run",
                     "params": {"text": "sleep-for-a-while", "approve": "all"}});
    tmux.line(&run.to_string());
    let pid = started_sleep(&world.project.join("sleep.pid"));
    // The terminal closes (tmux's server ends); the server is gone once this returns.
    drop(tmux);
    let ended = Instant::now();
    // The command sleeps ten minutes: gone within 20 s (a loaded machine's margin) is the stop.
    assert_command_ends(
        &pid,
        ended,
        Duration::from_secs(20),
        "the command outlived the server",
    );
    let file = world.session_files().remove(0);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("sleep-for-a-while"), "{text}");
}

/// QA (fourth round): a client that closed its end of the server's stdout but kept stdin open
/// (a crashed reader thread, a half-closed pipe) left `serve --stdio` running for good: the failed
/// write ended the output copy, the process then waited on stdin forever, the agent's `sleep 600`
/// ran on and the run's reply was never written. Now the first write that fails (EPIPE) ends the
/// server as a closed stdin does: the run cancelled, its command's group killed, the session
/// written, exit 0 (a broken pipe, as for any command's output).
#[test]
fn a_client_that_closes_stdout_ends_the_server_at_the_next_write() {
    use crate::chat::{World, text, tool_call};
    use std::io::{BufRead as _, Write as _};
    let world = World::new(100_000, json!({}));
    world.answer(tool_call(
        "call_1",
        "bash",
        json!({"command": "sleep 600 & echo $! > sleep.pid; wait", "timeout": 900}),
    ));
    world.answer(text("done", 400));
    let mut command = Command::new(env!("CARGO_BIN_EXE_ctxkit"));
    for name in crate::PROVIDER_VARIABLES {
        command.env_remove(name);
    }
    let mut child = command
        .args(["serve", "--stdio"])
        .env("CTXKIT_HOME", world.home.path())
        .env_remove("CTXKIT_SESSIONS_DIR")
        .current_dir(&world.project)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let create = json!({"jsonrpc": "2.0", "id": 1, "method": "session.create",
                        "params": {"cwd": world.project}});
    writeln!(stdin, "{create}").unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let file = serde_json::from_str::<Value>(&line).unwrap()["result"]["session_file"]
        .as_str()
        .unwrap()
        .to_owned();
    let run = json!({"jsonrpc": "2.0", "id": 2, "method": "agent.run",
                     "params": {"text": "sleep-for-a-while", "approve": "all"}});
    writeln!(stdin, "{run}").unwrap();
    let pid = started_sleep(&world.project.join("sleep.pid"));
    // The client stops reading: its end of stdout closes; stdin stays open. The answer to the
    // next request is the write that fails.
    drop(stdout);
    let initialize = json!({"jsonrpc": "2.0", "id": 3, "method": "initialize"});
    writeln!(stdin, "{initialize}").unwrap();
    let asked = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if asked.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_command_ends(
        &pid,
        asked,
        Duration::from_secs(12),
        "the command outlived the server",
    );
    let status = status.expect("the server still ran 10 s after its stdout was closed");
    assert!(status.success(), "{status:?}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("sleep-for-a-while"), "{text}");
    assert!(text.contains("Command cancelled"), "{text}");
    drop(stdin);
}
