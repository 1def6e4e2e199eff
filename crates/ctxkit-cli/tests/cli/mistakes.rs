//! A new user's wrong inputs, each answered as `ctxkit info` answers its own: one line naming the
//! mistake, a hint where there is one, and the exit code `ctxkit --help` lists for it.

use std::path::Path;

use super::Run;

/// A Codex rollout of `ctxkit-import`'s fixtures.
fn rollout() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ctxkit-import/tests/fixtures/codex-rollout.jsonl")
}

/// A folder named where a session file belongs: `view`, `simulate` and `checkpoints` said
/// `cannot reload`, `Cannot replay … Is a directory (os error 21)` or `No session file`; `import`
/// failed with an I/O error (exit 4), and `--out FOLDER` with `cannot write X: cannot read X`
/// (`compact --out FOLDER`: `already exists`, as if a file were there).
#[test]
fn a_folder_in_place_of_a_session_file_is_named_as_one() {
    let run = Run::new();
    let folder = run.home.path().join("work");
    std::fs::create_dir(&folder).unwrap();
    let folder = folder.to_str().unwrap();
    snapshot!(run.ctxkit(&["view", folder, "--port", "0"]));
    snapshot!(run.ctxkit(&["simulate", folder]));
    snapshot!(run.ctxkit(&["checkpoints", folder]));
    snapshot!(run.ctxkit(&["import", folder, "--from", "codex"]));
    snapshot!(run.ctxkit(&["import", rollout().to_str().unwrap(), "--out", folder]));
    let session = run.copy("good-branches.jsonl");
    let output = run.ctxkit(&["compact", session.to_str().unwrap(), "--out", folder]);
    assert_eq!(
        output,
        "exit: 3\n--- stderr\nerror: `[HOME]/work` is a folder; name the new session file for \
         --out (e.g. `[HOME]/work/compacted.jsonl`)\n"
    );
    assert_eq!(
        std::fs::read_dir(folder).unwrap().count(),
        0,
        "nothing written"
    );
}

/// `sessions --from AGENT --dir FOLDER` with a folder that is not there said `No codex sessions
/// in …` (exit 0), as if the user had none; `sessions --dir` without `--from` fails (exit 4).
#[test]
fn listing_another_agents_sessions_in_a_missing_folder_fails() {
    let run = Run::new();
    for from in ["claude-code", "codex", "opencode"] {
        let output = run.ctxkit(&["sessions", "--from", from, "--dir", "missing-folder"]);
        assert_eq!(
            output,
            "exit: 4\n--- stderr\nerror: cannot read directory `missing-folder`: No such file or \
             directory (os error 2)\n",
            "{from}"
        );
    }
    let native = run.ctxkit(&["sessions", "--dir", "missing-folder"]);
    assert!(native.starts_with("exit: 4\n"), "{native}");
    // An existing folder with no sessions is still an empty list.
    let empty = run.ctxkit(&["sessions", "--from", "codex", "--dir", "."]);
    assert_eq!(empty, "exit: 0\nNo codex sessions in `.`.\n");
}

/// Sweep 9: `sessions --dir` given a project (not its sessions folder) said "No sessions." and no
/// more. It says what `--dir` names and what lists the project's sessions.
#[test]
fn sessions_of_a_project_folder_say_what_dir_names() {
    let run = Run::new();
    let project = run.home.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let listed = run.ctxkit(&["sessions", "--dir", project.to_str().unwrap()]);
    assert!(
        listed.contains("No sessions.")
            && listed.contains("hint: `--dir` names a sessions folder")
            && listed.contains("not a project: run `ctxkit sessions` in"),
        "{listed}"
    );
}

/// QA (r106 migrate): in a folder whose sessions Pi made, `ctxkit sessions` said "No sessions."
/// and `chat -c` started a new session without a word about them. The list says where Pi's are
/// and the flag that lists them.
#[test]
fn an_empty_list_points_at_pis_sessions_for_the_folder() {
    let run = Run::new();
    let project = run.home.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let cwd = project.canonicalize().unwrap();
    let pi_root = run.home.path().join(".pi/agent/sessions");
    let pi_folder = ctxkit_session::default_session_dir(&pi_root, &cwd.display().to_string());
    std::fs::create_dir_all(&pi_folder).unwrap();
    std::fs::write(pi_folder.join("2026-12-01T10-00-00-000Z_x.jsonl"), "").unwrap();
    let home = run.home.path().display().to_string();
    let listed = run.ctxkit_piped_in(&cwd, &["sessions"], &[("HOME", home.as_str())], "");
    assert!(
        listed.contains("No sessions.") && listed.contains("hint: Pi's sessions for this folder"),
        "{listed}"
    );
    assert!(listed.contains("--sessions-dir"), "{listed}");
}

/// Sweep 9: `config unset` of a mistyped key said it "was not set", exit 0, and the typo went
/// unnoticed; it is named as `config get` names it. An unknown key that is set is still removed.
#[test]
fn unsetting_a_mistyped_key_names_the_key_meant() {
    let run = Run::new();
    let typo = run.ctxkit(&["config", "unset", "compaction.keepRecentTokns"]);
    assert!(
        typo.starts_with("exit: 3") && typo.contains("did you mean `compaction.keepRecentTokens`?"),
        "{typo}"
    );
    let set = run.ctxkit(&["config", "set", "myTeam.tool", "on", "--force"]);
    assert!(set.starts_with("exit: 0"), "{set}");
    let removed = run.ctxkit(&["config", "unset", "myTeam.tool"]);
    assert!(
        removed.starts_with("exit: 0") && removed.contains("Removed `myTeam.tool`"),
        "{removed}"
    );
}
