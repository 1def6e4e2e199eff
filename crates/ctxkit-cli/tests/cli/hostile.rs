//! Hostile and malformed input, data-driven: session files, settings files, command-line arguments,
//! resource directories and provider responses. Every case runs the real binary in a fresh home and
//! must end with its exit code and its one-line message, never panic, and leave every file that was
//! there byte for byte as it was. (No hook runner exists yet, so hook outputs have no cases.)

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

fn user(id: &str, parent: Option<&str>) -> String {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2025-01-01T00:00:01.000Z",
           "message": {"role": "user", "content": format!("message {id}"), "timestamp": 1}})
    .to_string()
}

fn session(lines: &[String]) -> Vec<u8> {
    let mut text = format!("{HEADER}\n");
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    text.into_bytes()
}

fn write(home: &Path, name: &str, bytes: &[u8]) {
    let path = home.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

#[cfg(unix)]
fn symlink(home: &Path, target: &str, link: &str) {
    let link = home.join(link);
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// One hostile input: files put in the home, the arguments (`{home}` is replaced), the exit code
/// and a text the message must contain.
struct Case {
    name: &'static str,
    setup: fn(&Path),
    args: &'static [&'static str],
    code: i32,
    expect: &'static str,
}

fn session_file(home: &Path, lines: &[String]) {
    write(home, "s.jsonl", &session(lines));
}

fn cases() -> Vec<Case> {
    vec![
        // ----- session files -----
        Case {
            name: "empty session file",
            setup: |h| write(h, "s.jsonl", b""),
            args: &["context", "s.jsonl"],
            code: 3,
            expect: "the file holds no JSON lines",
        },
        Case {
            name: "whitespace-only session file",
            setup: |h| write(h, "s.jsonl", b" \n\t\n\r\n"),
            args: &["tree", "s.jsonl"],
            code: 3,
            expect: "the file holds no JSON lines",
        },
        Case {
            name: "binary garbage",
            setup: |h| write(h, "s.jsonl", b"\xff\xfe\x00\x80garbage\x9f\n\x00\x00"),
            args: &["info", "s.jsonl"],
            code: 3,
            expect: "is not a session file",
        },
        Case {
            name: "truncated header",
            setup: |h| write(h, "s.jsonl", br#"{"type":"sess"#),
            args: &["tree", "s.jsonl"],
            code: 3,
            expect: "the file holds no JSON lines",
        },
        Case {
            name: "first line is not a header",
            setup: |h| write(h, "s.jsonl", format!("{}\n", user("a", None)).as_bytes()),
            args: &["tree", "s.jsonl"],
            code: 3,
            expect: "the first line is not a `session` header",
        },
        Case {
            name: "header id of the wrong type",
            setup: |h| write(h, "s.jsonl", b"{\"type\":\"session\",\"id\":5}\n"),
            args: &["context", "s.jsonl"],
            code: 3,
            expect: "the header `id` is not a string",
        },
        Case {
            name: "deeply nested header",
            setup: |h| {
                write(
                    h,
                    "s.jsonl",
                    format!("{}{}\n", "[".repeat(200_000), "]".repeat(200_000)).as_bytes(),
                )
            },
            args: &["tree", "s.jsonl"],
            code: 3,
            expect: "is not a session file",
        },
        Case {
            name: "deeply nested entry",
            setup: |h| {
                session_file(
                    h,
                    &[format!(
                        r#"{{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{{"role":"user","content":{}{}}}}}"#,
                        "[".repeat(100_000),
                        "]".repeat(100_000)
                    )],
                )
            },
            args: &["check", "s.jsonl"],
            code: 1,
            expect: "objects and arrays nest deeper than 127 levels",
        },
        Case {
            name: "invalid UTF-8 in an entry",
            setup: |h| {
                let mut bytes = session(&[]);
                bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":\"\xc3\x28\xff\"}}\n");
                write(h, "s.jsonl", &bytes)
            },
            args: &["check", "s.jsonl"],
            code: 1,
            expect: "invalid UTF-8 replaced by U+FFFD",
        },
        Case {
            name: "torn last line",
            setup: |h| {
                let mut bytes = session(&[user("a", None)]);
                bytes.extend_from_slice(br#"{"type":"message","id":"b","parentId":"a","mess"#);
                write(h, "s.jsonl", &bytes)
            },
            args: &["check", "s.jsonl"],
            code: 1,
            expect: "last line is cut off",
        },
        Case {
            name: "huge line (16 MiB message)",
            setup: |h| {
                session_file(h, &[json!({"type": "message", "id": "a", "parentId": null, "timestamp": "t", "message": {"role": "user", "content": "x".repeat(16 << 20)}}).to_string()])
            },
            args: &["tokens", "s.jsonl"],
            code: 0,
            expect: "4194304 tokens in 1 message",
        },
        Case {
            name: "NUL bytes in a line",
            setup: |h| {
                let mut bytes = session(&[]);
                bytes.extend_from_slice(b"\x00\x00{\"type\"\x00}\n");
                write(h, "s.jsonl", &bytes)
            },
            args: &["check", "s.jsonl"],
            code: 1,
            expect: "not valid JSON",
        },
        Case {
            name: "parent cycle is reported",
            setup: |h| session_file(h, &[user("a", Some("b")), user("b", Some("a"))]),
            args: &["check", "s.jsonl"],
            code: 1,
            expect: "parent cycle",
        },
        Case {
            name: "parent cycle still gives a context",
            setup: |h| session_file(h, &[user("a", Some("b")), user("b", Some("a"))]),
            args: &["context", "s.jsonl"],
            code: 0,
            expect: "messages at b",
        },
        Case {
            name: "self parent",
            setup: |h| session_file(h, &[user("a", Some("a"))]),
            args: &["check", "s.jsonl"],
            code: 1,
            expect: "is its own ancestor",
        },
        Case {
            name: "duplicate ids",
            setup: |h| session_file(h, &[user("a", None), user("a", None)]),
            args: &["check", "s.jsonl"],
            code: 1,
            expect: "duplicate entry id `a`",
        },
        Case {
            name: "missing parent",
            setup: |h| session_file(h, &[user("a", Some("zz"))]),
            args: &["check", "s.jsonl"],
            code: 1,
            expect: "missing parent `zz`",
        },
        Case {
            name: "parentId of the wrong type",
            setup: |h| {
                session_file(h, &[r#"{"type":"message","id":"a","parentId":5,"timestamp":"t","message":{"role":"user","content":"x"}}"#.to_owned()])
            },
            args: &["check", "s.jsonl"],
            code: 1,
            expect: "`parentId` is neither a string nor null",
        },
        Case {
            name: "content of the wrong type (check)",
            setup: |h| {
                session_file(h, &[r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":5}}"#.to_owned()])
            },
            args: &["check", "s.jsonl"],
            code: 1,
            expect: "has a field of the wrong type",
        },
        Case {
            name: "content of the wrong type (compact)",
            setup: |h| {
                session_file(h, &[r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":5}}"#.to_owned()])
            },
            args: &["compact", "s.jsonl", "--dry-run"],
            code: 3,
            expect: "line 2: data did not match",
        },
        Case {
            name: "message that is not an object",
            setup: |h| {
                session_file(h, &[r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":"text"}"#.to_owned()])
            },
            args: &["tokens", "s.jsonl"],
            code: 3,
            expect: "expected a JSON object",
        },
        Case {
            name: "out-of-range numbers in usage",
            setup: |h| {
                session_file(h, &[r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[],"usage":{"input":1e999}}}"#.to_owned()])
            },
            args: &["context", "s.jsonl"],
            code: 3,
            expect: "number out of range",
        },
        Case {
            name: "entry that is an array",
            setup: |h| session_file(h, &["[1,2,3]".to_owned(), "null".to_owned()]),
            args: &["check", "s.jsonl"],
            code: 1,
            expect: "not a JSON object",
        },
        Case {
            name: "entry without a type",
            setup: |h| session_file(h, &[r#"{"id":"a"}"#.to_owned()]),
            args: &["check", "s.jsonl"],
            code: 1,
            expect: "no string `type`",
        },
        Case {
            name: "entry without an id",
            setup: |h| {
                session_file(
                    h,
                    &[r#"{"type":"message","message":{"role":"user","content":"x"}}"#.to_owned()],
                )
            },
            args: &["check", "s.jsonl"],
            code: 1,
            expect: "no string `id`",
        },
        Case {
            name: "compaction keeping from a missing entry",
            setup: |h| {
                session_file(h, &[user("a", None), r#"{"type":"compaction","id":"c","parentId":"a","timestamp":"t","summary":"s","firstKeptEntryId":"zz","tokensBefore":1}"#.to_owned()])
            },
            args: &["check", "s.jsonl"],
            code: 1,
            expect: "keeps from a missing entry `zz`",
        },
        Case {
            name: "compaction fields of the wrong type",
            setup: |h| {
                session_file(h, &[user("a", None), r#"{"type":"compaction","id":"c","parentId":"a","timestamp":"t","summary":5,"firstKeptEntryId":"a","tokensBefore":"many"}"#.to_owned()])
            },
            // Listed as unreadable, as the context passes over it (QA 2026-12-07: it failed the
            // listing with exit 3).
            args: &["compactions", "s.jsonl"],
            code: 0,
            expect: "c  t  unreadable (line 3: invalid type",
        },
        Case {
            name: "a second header",
            setup: |h| session_file(h, &[HEADER.to_owned(), user("a", None)]),
            args: &["check", "s.jsonl"],
            code: 1,
            expect: "a second session header",
        },
        Case {
            name: "label on a file that is not a session",
            setup: |h| write(h, "s.jsonl", b"not a session\n"),
            args: &["label", "s.jsonl", "a", "text"],
            code: 3,
            expect: "is not a session file",
        },
        Case {
            name: "label on an unknown entry",
            setup: |h| session_file(h, &[user("a", None)]),
            args: &["label", "s.jsonl", "nope", "text"],
            code: 3,
            expect: "entry `nope` not found",
        },
        Case {
            name: "migrate a file that is not a session",
            setup: |h| write(h, "s.jsonl", b"{}\n"),
            args: &["migrate", "s.jsonl"],
            code: 3,
            expect: "is not a session file",
        },
        Case {
            name: "migrate a file of a newer format (r101: said \"already in session format v3\", exit 0)",
            setup: |h| {
                let text = String::from_utf8(session(&[user("a", None)])).unwrap();
                write(
                    h,
                    "s.jsonl",
                    text.replacen("\"version\":3", "\"version\":4", 1)
                        .as_bytes(),
                );
            },
            args: &["migrate", "s.jsonl"],
            code: 3,
            expect: "was written by a newer version (session format v4; this ctxkit writes v3); nothing was written",
        },
        Case {
            name: "session path is a directory",
            setup: |h| std::fs::create_dir_all(h.join("dir.jsonl")).unwrap(),
            args: &["tree", "dir.jsonl"],
            code: 3,
            expect: "is not a regular file (a directory)",
        },
        Case {
            name: "--sessions-dir names a file (issue 17: listed as \"No sessions.\")",
            setup: |h| std::fs::write(h.join("plain.txt"), "x").unwrap(),
            args: &["--sessions-dir", "plain.txt", "sessions"],
            code: 3,
            expect: "is not a directory",
        },
        Case {
            name: "session path is a FIFO (issue 17: hung every command)",
            setup: |h| {
                let status = std::process::Command::new("mkfifo")
                    .arg(h.join("fifo.jsonl"))
                    .status()
                    .unwrap();
                assert!(status.success());
            },
            args: &["context", "fifo.jsonl"],
            code: 3,
            expect: "is not a regular file (a FIFO)",
        },
        Case {
            name: "import of /dev/zero (issue 17: hung)",
            setup: |_| {},
            args: &["import", "/dev/zero"],
            code: 4,
            expect: "not a regular file",
        },
        Case {
            name: "session path is /dev/zero (issue 17: filled memory)",
            setup: |_| {},
            args: &["info", "/dev/zero"],
            code: 3,
            expect: "is not a regular file (a character device)",
        },
        Case {
            name: "missing session file",
            setup: |_| {},
            args: &["tree", "missing.jsonl"],
            code: 4,
            expect: "No such file or directory",
        },
        Case {
            name: "empty leaf id",
            setup: |h| session_file(h, &[user("a", None)]),
            args: &["context", "s.jsonl", "--leaf", ""],
            code: 3,
            expect: "entry `` not found",
        },
        Case {
            name: "fork at an unknown entry",
            setup: |h| session_file(h, &[user("a", None)]),
            args: &["fork", "s.jsonl", "--at", "../../etc"],
            code: 3,
            expect: "entry `../../etc` not found",
        },
        Case {
            name: "lone surrogates are read",
            setup: |h| {
                session_file(h, &[r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"\ud800 x \udfff"}}"#.to_owned()])
            },
            args: &["context", "s.jsonl"],
            code: 0,
            expect: "1 message at a",
        },
        // ----- settings files -----
        Case {
            name: "settings: truncated JSON",
            setup: |h| write(h, "settings.json", br#"{"theme": "dark","#),
            args: &["config", "set", "theme", "light"],
            code: 3,
            expect: "could not be loaded, so it was not modified",
        },
        Case {
            name: "settings: an array",
            setup: |h| write(h, "settings.json", b"[1, 2]"),
            args: &["config", "set", "theme", "light"],
            code: 3,
            expect: "could not be loaded, so it was not modified",
        },
        Case {
            name: "settings: invalid UTF-8",
            setup: |h| write(h, "settings.json", b"\xff\xfe{}"),
            args: &["config", "set", "theme", "light"],
            code: 3,
            expect: "is not UTF-8 text",
        },
        Case {
            name: "settings: deep nesting",
            setup: |h| {
                write(
                    h,
                    "settings.json",
                    format!("{}1{}", "{\"a\":".repeat(10_000), "}".repeat(10_000)).as_bytes(),
                )
            },
            args: &["config", "set", "theme", "light"],
            code: 3,
            expect: "could not be loaded, so it was not modified",
        },
        Case {
            name: "settings: a directory",
            setup: |h| std::fs::create_dir_all(h.join("settings.json")).unwrap(),
            args: &["config", "set", "theme", "light"],
            code: 3,
            expect: "is not a regular file",
        },
        Case {
            name: "settings: truncated, read",
            setup: |h| write(h, "settings.json", br#"{"theme": "#),
            args: &["config", "get", "theme"],
            code: 1,
            expect: "`theme` is not set",
        },
        Case {
            name: "settings: out-of-range number",
            setup: |h| {
                write(
                    h,
                    "settings.json",
                    br#"{"compaction": {"reserveTokens": 1e999}}"#,
                )
            },
            args: &["config", "list"],
            code: 0,
            expect: "number out of range",
        },
        Case {
            name: "settings: value of the wrong type",
            setup: |_| {},
            args: &["config", "set", "compaction.keepRecentTokens", "notanumber"],
            code: 3,
            expect: "expected an integer",
        },
        Case {
            name: "settings: empty key segment",
            setup: |_| {},
            args: &["config", "set", "a..b", "1"],
            code: 3,
            expect: "none of them empty",
        },
        Case {
            name: "settings: key below a scalar",
            setup: |_| {},
            args: &["config", "set", "theme.x", "1"],
            code: 3,
            expect: "`theme` is not an object",
        },
        Case {
            name: "settings: home is a file",
            setup: |h| write(h, "afile", b"x"),
            args: &["--home", "{home}/afile", "config", "set", "theme", "dark"],
            code: 3,
            expect: "could not be loaded, so it was not modified",
        },
        // ----- command-line arguments -----
        Case {
            name: "unknown command",
            setup: |_| {},
            args: &["frobnicate"],
            code: 2,
            expect: "unrecognized subcommand 'frobnicate'",
        },
        Case {
            name: "negative number",
            setup: |_| {},
            args: &["compact", "s.jsonl", "--keep-recent-tokens", "-5"],
            code: 2,
            expect: "unexpected argument '-5'",
        },
        Case {
            name: "number too large",
            setup: |_| {},
            args: &[
                "compact",
                "s.jsonl",
                "--keep-recent-tokens",
                "99999999999999999999999",
            ],
            code: 2,
            expect: "number too large",
        },
        Case {
            name: "unknown estimator",
            setup: |_| {},
            args: &["tokens", "s.jsonl", "--estimator", "nope"],
            code: 2,
            expect: "invalid value 'nope'",
        },
        Case {
            name: "option-like source",
            setup: |_| {},
            args: &["install", "--", "-rf"],
            code: 3,
            expect: "must not start with `-`",
        },
        Case {
            name: "option-like npm name",
            setup: |_| {},
            args: &["install", "npm:--global"],
            code: 3,
            expect: "must not start with `-`",
        },
        Case {
            name: "option-like git ref",
            setup: |_| {},
            args: &["install", "https://github.com/user/repo@--exec"],
            code: 3,
            expect: "must not start with `-`",
        },
        Case {
            name: "option-like git host",
            setup: |_| {},
            args: &["install", "git:-oProxyCommand=x/repo"],
            code: 3,
            expect: "must not start with `-`",
        },
        Case {
            name: "`..` in an npm source",
            setup: |_| {},
            args: &["install", "npm:../escape"],
            code: 3,
            expect: "must not contain `..` path components",
        },
        Case {
            name: "`..` in a git source",
            setup: |_| {},
            args: &["install", "git:github.com/../etc"],
            code: 3,
            expect: "must not contain `..` path components",
        },
        Case {
            name: "control character in a source",
            setup: |_| {},
            args: &["install", "npm:a\nb"],
            code: 3,
            expect: "contains a control character",
        },
        Case {
            name: "empty source",
            setup: |_| {},
            args: &["install", ""],
            code: 3,
            expect: "Package source is empty",
        },
        Case {
            name: "missing local source",
            setup: |_| {},
            args: &["install", "./does-not-exist"],
            code: 3,
            expect: "Path does not exist",
        },
        // QA (2026-12-07): both were written to the settings, and every later command warned.
        Case {
            name: "a device as a local source",
            setup: |_| {},
            args: &["install", "/dev/zero"],
            code: 3,
            expect: "`/dev/zero` is neither a file nor a folder",
        },
        Case {
            name: "option-like source to remove",
            setup: |_| {},
            args: &["remove", "npm:--x"],
            code: 3,
            expect: "must not start with `-`",
        },
        Case {
            name: "unknown provider",
            setup: |h| session_file(h, &[user("a", None)]),
            args: &["compact", "s.jsonl", "--model", "nonsense/x"],
            code: 3,
            expect: "Unknown provider `nonsense`",
        },
        Case {
            name: "provider without a key",
            setup: |h| session_file(h, &[user("a", None)]),
            args: &["compact", "s.jsonl", "--model", "openai/gpt-4o-mini"],
            code: 3,
            expect: "No API key for provider `openai`",
        },
        // ----- resource directories -----
        Case {
            name: "hostile package entries in settings",
            setup: |h| {
                write(
                    h,
                    "settings.json",
                    br#"{"packages": ["-rf", "npm:../x", "npm:ok\u0000"]}"#,
                )
            },
            args: &["resources"],
            code: 0,
            expect: "Package source `-rf` must not start with `-`",
        },
        Case {
            name: "symlink loops in skill directories",
            setup: |h| {
                write(
                    h,
                    "skills/a/SKILL.md",
                    b"---\nname: a\ndescription: A skill\n---\nbody\n",
                );
                #[cfg(unix)]
                {
                    symlink(h, "..", "skills/loop/up");
                    symlink(h, "../loop", "skills/loop/self");
                    symlink(h, "self2", "skills/self1");
                    symlink(h, "self1", "skills/self2");
                    symlink(h, "AGENTS.md", "AGENTS.md");
                }
            },
            args: &["resources"],
            code: 0,
            expect: "Skills (1)",
        },
        Case {
            name: "deeply nested skill frontmatter",
            setup: |h| {
                write(
                    h,
                    "skills/deep/SKILL.md",
                    format!(
                        "---\nname: deep\ndescription: x\nitems:\n  {}1\n---\nbody\n",
                        "- ".repeat(100_000)
                    )
                    .as_bytes(),
                )
            },
            args: &["resources"],
            code: 0,
            expect: "nested deeper than 128 levels",
        },
        Case {
            name: "invalid YAML in a skill",
            setup: |h| write(h, "skills/bad/SKILL.md", b"---\nname: [unclosed\n---\n"),
            args: &["resources"],
            code: 0,
            expect: "expected ',' or ']'",
        },
        Case {
            name: "invalid UTF-8 in a skill",
            setup: |h| write(h, "skills/u/SKILL.md", b"---\nname: u\xff\n---\n"),
            args: &["prompt"],
            code: 0,
            expect: "is not UTF-8 text",
        },
    ]
}

/// Every file below `root` (symlinks not followed) and a hash of its content or link target.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, u64> {
    let mut files = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(directory) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&directory) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            if kind.is_dir() {
                pending.push(path);
                continue;
            } else if kind.is_symlink() {
                std::fs::read_link(&path).ok().hash(&mut hasher);
            } else if !kind.is_file() {
                // FIFOs and devices: reading would block or never end.
                format!("{kind:?}").hash(&mut hasher);
            } else {
                std::fs::read(&path).ok().hash(&mut hasher);
            }
            files.insert(path, hasher.finish());
        }
    }
    files
}

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(home: &Path, args: &[String], variables: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ctxkit"));
    for name in crate::PROVIDER_VARIABLES {
        command.env_remove(name);
    }
    let output = command
        .args(args)
        .envs(variables.iter().copied())
        .env("CTXKIT_HOME", home)
        .env("CTXKIT_OFFLINE", "1")
        .env_remove("CTXKIT_SESSIONS_DIR")
        .current_dir(home)
        .output()
        .unwrap();
    Output {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Checks one run: the exit code, the message, no panic, one error line, nothing changed.
fn check(name: &str, output: &Output, code: i32, expect: &str) -> Vec<String> {
    let mut failures = Vec::new();
    let both = format!("{}{}", output.stdout, output.stderr);
    if output.code != code {
        failures.push(format!(
            "{name}: exit {} (expected {code}): {both}",
            output.code
        ));
    }
    if output.stderr.contains("panicked") || output.code == 101 {
        failures.push(format!("{name}: panicked: {}", output.stderr));
    }
    let haystack = if code >= 2 { &output.stderr } else { &both };
    if !haystack.contains(expect) {
        failures.push(format!("{name}: `{expect}` not in: {both}"));
    }
    if code >= 2 {
        let errors: Vec<&str> = output
            .stderr
            .lines()
            .filter(|line| line.starts_with("error:"))
            .collect();
        if errors.len() != 1 || !errors[0].contains(expect) {
            failures.push(format!(
                "{name}: expected one error line holding `{expect}`: {}",
                output.stderr
            ));
        }
    }
    failures
}

#[test]
fn hostile_inputs_end_with_their_message_and_change_nothing() {
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let home = tempfile::tempdir().unwrap();
        (case.setup)(home.path());
        let before = snapshot(home.path());
        let home_text = home.path().display().to_string();
        let args: Vec<String> = case
            .args
            .iter()
            .map(|arg| arg.replace("{home}", &home_text))
            .collect();
        let output = run(home.path(), &args, &[]);
        failures.extend(check(case.name, &output, case.code, case.expect));
        let after = snapshot(home.path());
        for (path, hash) in &before {
            if after.get(path) != Some(hash) {
                failures.push(format!("{}: `{}` was changed", case.name, path.display()));
            }
        }
        let created: Vec<_> = after
            .keys()
            .filter(|path| !before.contains_key(*path))
            .filter(|path| path.extension().is_none_or(|extension| extension != "lock"))
            .collect();
        if !created.is_empty() {
            failures.push(format!("{}: files were created: {created:?}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Malformed provider replies to a `compact`: each ends with exit 7 and a one-line error naming the
/// provider, and the session is not changed.
#[tokio::test(flavor = "multi_thread")]
async fn hostile_provider_responses_change_nothing() {
    let server = MockServer::start().await;
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let replies: Vec<(&str, ResponseTemplate, &str)> = vec![
        (
            "truncated-json",
            ResponseTemplate::new(200)
                .set_body_raw(r#"{"id":"r","output":[{"type":"mess"#, "application/json"),
            "openai",
        ),
        (
            "wrong-types",
            ResponseTemplate::new(200)
                .set_body_json(json!({"id": 5, "output": "text", "usage": "many"})),
            "openai",
        ),
        (
            "empty-body",
            ResponseTemplate::new(200).set_body_raw("", "application/json"),
            "openai",
        ),
        (
            "html-error",
            ResponseTemplate::new(502)
                .set_body_raw("<html><body>Bad gateway</body></html>", "text/html"),
            "502",
        ),
        (
            "deep-nesting",
            ResponseTemplate::new(200).set_body_raw(deep, "application/json"),
            "openai",
        ),
        (
            "invalid-utf8",
            ResponseTemplate::new(200)
                .set_body_raw(b"{\"id\":\"\xff\xfe\"}".to_vec(), "application/json"),
            "openai",
        ),
        (
            "no-output-text",
            ResponseTemplate::new(200)
                .set_body_json(json!({"id": "r", "status": "completed", "output": []})),
            "openai/gpt-4o-mini returned an empty summary",
        ),
        ("error-without-body", ResponseTemplate::new(500), "500"),
        (
            "json-error-object",
            ResponseTemplate::new(400)
                .set_body_json(json!({"error": {"message": ["not", "a", "string"]}})),
            "400",
        ),
    ];
    for (name, reply, _) in &replies {
        Mock::given(method("POST"))
            .and(path_regex(format!("^/{name}/v1/responses$")))
            .respond_with(reply.clone())
            .mount(&server)
            .await;
    }
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/corpus");
    let mut failures = Vec::new();
    for (name, _, expect) in &replies {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join("s.jsonl");
        std::fs::copy(corpus.join("good-large-realistic.jsonl"), &file).unwrap();
        // Errors that would be retried fail at once.
        write(
            home.path(),
            "settings.json",
            br#"{"retry": {"enabled": false}}"#,
        );
        let before = snapshot(home.path());
        let base = format!("{}/{name}/v1", server.uri());
        let args: Vec<String> = [
            "compact",
            "s.jsonl",
            "--keep-recent-tokens",
            "1",
            "--model",
            "openai/gpt-4o-mini",
        ]
        .iter()
        .map(|arg| (*arg).to_owned())
        .collect();
        let variables = [("OPENAI_API_KEY", "k"), ("OPENAI_BASE_URL", base.as_str())];
        let output = tokio::task::block_in_place(|| run(home.path(), &args, &variables));
        failures.extend(check(name, &output, 7, expect));
        if snapshot(home.path()) != before {
            failures.push(format!("{name}: the session changed"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
