//! The private copies ctxkit works on (a database session's, an imported transcript's) in the
//! temporary folder: removed when `view` is stopped by a signal, readable by their user only, the
//! ones a killed process left removed by the next command that makes one, and never named to the
//! user in place of the session.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::Run;

/// The private folders of process `pid` in `temporary`.
fn folders_of(temporary: &Path, pid: u32) -> Vec<PathBuf> {
    let start = format!("ctxkit-view-{pid}-");
    std::fs::read_dir(temporary)
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(&start))
        .map(|entry| entry.path())
        .collect()
}

/// `ctxkit view SESSION` with `TMPDIR` at `temporary`, once it serves the page, and the page's
/// address.
fn start_view(
    run: &Run,
    temporary: &Path,
    session: &str,
    store: Option<&str>,
) -> (std::process::Child, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ctxkit"));
    command
        .args(["view", session])
        .env("CTXKIT_HOME", run.home.path())
        .env("TMPDIR", temporary)
        .current_dir(run.home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(store) = store {
        command.env("CTXKIT_STORE", store);
    }
    let mut view = command.spawn().unwrap();
    let mut url = String::new();
    std::io::BufReader::new(view.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url:?}");
    (view, url.trim().to_owned())
}

fn signal(child: &std::process::Child, name: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// `view` stopped by `kill` or a closed terminal left its private copy in the temporary folder
/// (only Ctrl-C stopped it cleanly): now SIGTERM and SIGHUP stop it as Ctrl-C does.
#[test]
fn view_removes_its_private_folder_on_sigterm_and_sighup() {
    let run = Run::new();
    let temporary = tempfile::tempdir().unwrap();
    let session = run.copy("good-branches.jsonl");
    for name in ["TERM", "HUP"] {
        let (mut view, _) = start_view(&run, temporary.path(), session.to_str().unwrap(), None);
        let folders = folders_of(temporary.path(), view.id());
        assert_eq!(folders.len(), 1, "{folders:?}");
        signal(&view, name);
        let status = view.wait().unwrap();
        assert!(status.success(), "SIG{name}: {status}");
        assert!(!folders[0].exists(), "SIG{name}: {}", folders[0].display());
    }
}

/// A database session's copy is `0600` (its folder `0700`); one a killed `view` left is removed
/// by the next command that makes a private copy, whatever its kind.
#[test]
fn a_killed_views_copy_is_private_and_removed_by_the_next_command() {
    use std::os::unix::fs::PermissionsExt as _;
    let Some(url) = super::store::database() else {
        return;
    };
    let run = Run::new();
    let temporary = tempfile::tempdir().unwrap();
    let (file, id) = super::store::fresh_copy(&run, "good-branches.jsonl");
    let imported = run.ctxkit_with_env(
        &["store", "import", file.to_str().unwrap()],
        &[("CTXKIT_STORE", &url)],
    );
    assert!(imported.starts_with("exit: 0\n"), "{imported}");
    let (mut view, _) = start_view(&run, temporary.path(), &id, Some(&url));
    let folder = folders_of(temporary.path(), view.id()).pop().unwrap();
    let copy = folder.join(format!("{id}.jsonl"));
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&folder), 0o700);
    assert_eq!(mode(&copy), 0o600, "{}", copy.display());
    view.kill().unwrap();
    view.wait().unwrap();
    assert!(copy.exists(), "a killed view cannot remove its copy");

    let tree = run.ctxkit_with_env(
        &["tree", &id],
        &[
            ("CTXKIT_STORE", &url),
            ("TMPDIR", temporary.path().to_str().unwrap()),
        ],
    );
    assert!(tree.starts_with("exit: 0\n"), "{tree}");
    assert!(!folder.exists(), "{}", folder.display());
}

/// `compact` on a database session warned "`ctxkit undo-compact /tmp/ctxkit-session-…/ID.jsonl`
/// puts the earlier context back", naming its temporary copy: the warning names the session id.
#[test]
fn compact_on_a_database_session_names_the_session_not_its_copy() {
    let Some(url) = super::store::database() else {
        return;
    };
    let run = Run::new();
    // Four short messages: any summary outweighs what it replaces.
    let id = uuid::Uuid::new_v4().to_string();
    let header = serde_json::json!({"type": "session", "version": 3, "id": id,
        "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"});
    let mut text = format!("{header}\n");
    let mut parent = serde_json::Value::Null;
    for (entry, role, said) in [
        ("a", "user", "hi"),
        ("b", "assistant", "hello"),
        ("c", "user", "ok"),
        ("d", "assistant", "done"),
    ] {
        let line = serde_json::json!({"type": "message", "id": entry, "parentId": parent,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": role, "content": [{"type": "text", "text": said}], "timestamp": 0}});
        text.push_str(&format!("{line}\n"));
        parent = serde_json::json!(entry);
    }
    let file = run.home.path().join("short.jsonl");
    std::fs::write(&file, text).unwrap();
    let store = [("CTXKIT_STORE", url.as_str())];
    run.ctxkit_with_env(&["store", "import", file.to_str().unwrap()], &store);
    let output = run.ctxkit_with_env(&["compact", &id, "--keep-recent-tokens", "1"], &store);
    assert!(output.starts_with("exit: 0\n"), "{output}");
    assert!(
        output.contains(&format!(
            "`ctxkit undo-compact {id}` puts the earlier context back"
        )),
        "{output}"
    );
    assert!(!output.contains("ctxkit-session-"), "{output}");
}

/// The body of a GET of `path` from the view at `url` (`http://127.0.0.1:PORT/?token=…`).
fn get(url: &str, path: &str) -> String {
    use std::io::{Read as _, Write as _};
    let (address, query) = url["http://".len()..].split_once("/?").unwrap();
    let separator = if path.contains('?') { '&' } else { '?' };
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET {path}{separator}{query} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default()
}

/// The imported copies in `folder`.
fn imported_copies(folder: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(folder)
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.to_string_lossy().contains("imported-"))
        .collect()
}

/// `view` of a Claude Code session imported it anew for every request (the page's data, each
/// context built on demand): 90 context requests 30 at a time left 55 copies (184 MB) in the
/// private folder until the view exited, and 16 clicks on a 65 MB transcript took the view past a
/// gigabyte. It is now imported once per version of the source: the page's data and every context
/// read the one copy made as the view started, and a change of the source makes one more, which
/// replaces it.
#[test]
fn view_imports_a_transcript_once_per_version() {
    let run = Run::new();
    let temporary = tempfile::tempdir().unwrap();
    let source = run.home.path().join("claude.jsonl");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../ctxkit-import/tests/fixtures/claude-code-session.jsonl"),
        &source,
    )
    .unwrap();
    let (mut view, url) = start_view(&run, temporary.path(), source.to_str().unwrap(), None);
    let folder = folders_of(temporary.path(), view.id()).pop().unwrap();
    let data: serde_json::Value = serde_json::from_str(&get(&url, "/api/data")).unwrap();
    let entries = data["entries"].as_array().unwrap();
    let ids: Vec<String> = entries
        .iter()
        .map(|entry| entry["id"].as_str().unwrap().to_owned())
        .collect();
    for round in 0..3 {
        let requests: Vec<_> = (0..30)
            .map(|index| {
                let url = url.clone();
                let id = ids[(round * 30 + index) % ids.len()].clone();
                std::thread::spawn(move || get(&url, &format!("/api/context?id={id}")))
            })
            .collect();
        for request in requests {
            let answer = request.join().unwrap();
            assert!(answer.contains("\"messages\""), "{answer}");
        }
    }
    assert_eq!(imported_copies(&folder), [folder.join("imported-0.jsonl")]);
    // The source changes: the next request imports it again, and the older copy goes.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .append(true)
        .open(&source)
        .unwrap()
        .set_modified(later)
        .unwrap();
    for id in &ids[..2] {
        let answer = get(&url, &format!("/api/context?id={id}"));
        assert!(answer.contains("\"messages\""), "{answer}");
    }
    let left = imported_copies(&folder);
    view.kill().unwrap();
    view.wait().unwrap();
    assert_eq!(left, [folder.join("imported-1.jsonl")]);
}
