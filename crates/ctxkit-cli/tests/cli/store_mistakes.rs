//! What the store commands do with a user's mistakes: a mistyped store URL, a password on the
//! command line, a batch of files of which some cannot be imported.

use super::Run;

fn names_in(folder: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A store URL with a typo (one slash, none) was taken for a directory: `store import` wrote the
/// session into a folder named after the URL, password included, and said "Imported". It is a
/// usage error naming the form, the password hidden, and nothing is written.
#[test]
fn a_mistyped_store_url_is_a_usage_error_and_writes_nothing() {
    let run = Run::new();
    let session = run.copy("good-branches.jsonl");
    let before = names_in(run.home.path());
    for url in [
        "postgres:/user:PW-s3cret@127.0.0.1:1/ctxkit",
        "postgresql:user:PW-s3cret@127.0.0.1/ctxkit",
        "Postgres:/user:PW-s3cret@127.0.0.1:1/ctxkit",
        "mysql://user:PW-s3cret@127.0.0.1/ctxkit",
    ] {
        let output = run.ctxkit(&["--store", url, "store", "import", session.to_str().unwrap()]);
        assert!(output.starts_with("exit: 2\n"), "{url}: {output}");
        assert!(
            output.contains("hint: ") && output.contains("postgres://USER@HOST:PORT/DB"),
            "{output}"
        );
        assert!(!output.contains("PW-s3cret"), "{output}");
        assert!(!output.contains("Imported"), "{output}");
        assert_eq!(names_in(run.home.path()), before, "{url}");
    }
}

/// Schemes are case-insensitive: `POSTGRES://` names a database (here one that does not answer:
/// an I/O error, not a refused URL).
#[test]
fn a_database_url_in_upper_case_is_a_database() {
    let run = Run::new();
    let output = run.ctxkit(&[
        "--store",
        "POSTGRES://nobody@127.0.0.1:1/ctxkit",
        "sessions",
    ]);
    assert!(output.starts_with("exit: 4\n"), "{output}");
    assert!(output.contains("cannot connect"), "{output}");
}

/// A password in `--store` is in `/proc/PID/cmdline` for every local user while ctxkit runs: one
/// warning naming `CTXKIT_STORE`; none for the variable, or a URL without a password.
#[test]
fn a_password_on_the_command_line_is_warned_of() {
    let run = Run::new();
    let warning = "warning: the password in `--store`";
    let with_password = "postgres://alice:PW-s3cret@127.0.0.1:1/ctxkit";
    let output = run.ctxkit(&["--store", with_password, "sessions"]);
    assert_eq!(output.matches(warning).count(), 1, "{output}");
    assert!(output.contains("`CTXKIT_STORE`"), "{output}");
    assert!(!output.contains("PW-s3cret"), "{output}");
    let output = run.ctxkit_with_env(&["sessions"], &[("CTXKIT_STORE", with_password)]);
    assert!(!output.contains(warning), "{output}");
    let output = run.ctxkit(&["--store", "postgres://alice@127.0.0.1:1/ctxkit", "sessions"]);
    assert!(!output.contains(warning), "{output}");
}
