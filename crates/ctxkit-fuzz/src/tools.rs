//! The chat's coding tools called as a model would call them, with arguments from the bytes, in a
//! project whose symlinks, hard links and `..` lead beside it and into ctxkit's home. Nothing is
//! approved, so whatever the calls: no result (nor its details, nor a full output saved for one) shows what lies
//! outside the project or a secret; nothing outside the project and nothing guarded in it changes;
//! a call that failed changed nothing. `bash` is left out: it runs what it is given, and its
//! boundary is the user's confirmation, not the jail.
//!
//! The input is JSON lines, `{"tool": "write", "arguments": {...}}`, at most [`MAX_CALLS`] of them;
//! `@ROOT@` stands for the world's folder, so absolute paths can be written.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ctxkit_agent::{ToolContext, ToolRegistry, Workspace};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::tree::{Snapshot, snapshot};

/// The placeholder for the world's absolute path.
const ROOT_PLACEHOLDER: &str = "@ROOT@";
/// The most calls one input makes.
const MAX_CALLS: usize = 8;
/// In every file outside the project: a result that shows it read outside.
const OUTSIDE_MARK: &str = "FAR-9d41c7";
/// In ctxkit's home.
const HOME_MARK: &str = "HOME-52be0a";
/// A name only a listing outside the project shows.
const OUTSIDE_NAME: &str = "far-only-3e8f";
/// A secret the workspace redacts, written in a project file.
const SECRET: &str = "sk-fuzz-0f6c1d2e8a7b4c5d";

/// Files of the world (relative to its root) and their text.
const FILES: &[(&str, &str)] = &[
    ("outside/secret.txt", "FAR-9d41c7 beside the project\n"),
    ("outside/far-only-3e8f/notes.md", "FAR-9d41c7 notes\n"),
    ("outside/shared.txt", "shared by two names\n"),
    ("home/.ctxkit/auth.json", r#"{"key": "HOME-52be0a"}"#),
    ("home/.ctxkit/settings.json", r#"{"note": "HOME-52be0a"}"#),
    ("project/a.txt", "alpha\nbeta\nalpha beta\n"),
    ("project/src/lib.rs", "fn main() {}\n// alpha\n"),
    (
        "project/win.txt",
        "first \u{2018}quoted\u{2019}  \r\nsecond \u{2013} dash\r\nthird café \rlone\r\n",
    ),
    ("project/env.txt", "TOKEN=sk-fuzz-0f6c1d2e8a7b4c5d\n"),
    ("project/.git/config", "[core]\n\tbare = false\n"),
    ("project/.ctxkit/settings.json", "{}\n"),
    ("project/.gitignore", "ignored/\n"),
    ("project/ignored/x.txt", "alpha ignored\n"),
];

/// Symlinks of the world: (link, target as written).
const LINKS: &[(&str, &str)] = &[
    ("project/link", "../outside"),
    ("project/secret-link.txt", "../outside/secret.txt"),
    ("project/home-link", "../home/.ctxkit"),
    ("project/auth-link.json", "../home/.ctxkit/auth.json"),
    ("project/dangling.txt", "../outside/created.txt"),
    ("project/dangling-dir", "../outside/made"),
    ("project/src/up", "../.."),
    ("project/loop", "loop"),
    ("project/git-link", ".git"),
    ("project/src/abs-link", "@ROOT@/outside/secret.txt"),
];

/// Hard links: (new name, existing file).
const HARD_LINKS: &[(&str, &str)] = &[
    ("project/hard-auth.json", "home/.ctxkit/auth.json"),
    ("project/hard-shared.txt", "outside/shared.txt"),
];

/// A world rebuilt for each input, removed when dropped.
struct World {
    root: PathBuf,
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

impl World {
    fn build() -> Self {
        let root = crate::thread_temp_path("tools");
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let root = std::fs::canonicalize(&root).unwrap();
        for (path, text) in FILES {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let root_text = root.to_string_lossy();
        for (link, target) in LINKS {
            let target = target.replace(ROOT_PLACEHOLDER, &root_text);
            std::os::unix::fs::symlink(target, root.join(link)).unwrap();
        }
        for (name, existing) in HARD_LINKS {
            std::fs::hard_link(root.join(existing), root.join(name)).unwrap();
        }
        std::fs::create_dir_all(root.join("home/.ctxkit/outputs")).unwrap();
        Self { root }
    }

    fn project(&self) -> PathBuf {
        self.root.join("project")
    }

    fn outputs(&self) -> PathBuf {
        self.root.join("home/.ctxkit/outputs")
    }

    /// The context `ctxkit chat` gives a call: the project as the workspace, ctxkit's home
    /// protected, saved outputs readable, a secret to redact, nothing approved.
    fn context(&self) -> ToolContext {
        let mut workspace = Workspace::new(&self.project());
        workspace.set_home(&self.root.join("home/.ctxkit"));
        workspace.allow_reading_outputs(&self.outputs());
        workspace.add_secret(SECRET);
        ToolContext {
            cwd: self.project(),
            output_dir: self.outputs(),
            bash_timeout: Duration::from_secs(1),
            shell: Default::default(),
            pass_env: Vec::new(),
            cancel: CancellationToken::new(),
            engine: None,
            workspace: Arc::new(workspace),
            approved: ctxkit_agent::Approved::default(),
            auto_resize_images: true,
            max_output_bytes: 50 * 1024,
            progress: None,
        }
    }
}

/// Everything a call must leave as it was: the world but the project and the saved outputs.
fn outside_the_project(world: &World) -> Snapshot {
    let project = world.project();
    let outputs = world.outputs();
    let mut found = snapshot(&world.root);
    found.retain(|path, _| !path.starts_with(&project) && !path.starts_with(&outputs));
    found
}

/// The project's guarded folders.
fn guarded(world: &World) -> Snapshot {
    let mut found = snapshot(&world.project().join(".git"));
    found.extend(snapshot(&world.project().join(".ctxkit")));
    found
}

/// The marks a result may show only when the input itself holds them.
fn forbidden_marks(input: &str) -> Vec<&'static str> {
    [OUTSIDE_MARK, HOME_MARK, OUTSIDE_NAME, SECRET]
        .into_iter()
        .filter(|mark| !input.contains(mark))
        .collect()
}

/// Runs the calls the bytes describe; see the module's documentation for what each must keep.
pub fn agent_tools(data: &[u8]) {
    let world = World::build();
    let input =
        String::from_utf8_lossy(data).replace(ROOT_PLACEHOLDER, &world.root.to_string_lossy());
    let marks = forbidden_marks(&input);
    let context = world.context();
    let registry = ToolRegistry::coding();
    let calls = input
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .take(MAX_CALLS);
    for (index, call) in calls.enumerate() {
        let name = call.get("tool").and_then(Value::as_str).unwrap_or_default();
        if name == "bash" {
            continue;
        }
        let arguments = call.get("arguments").cloned().unwrap_or(Value::Null);
        let outside_before = outside_the_project(&world);
        let guarded_before = guarded(&world);
        let project_before = snapshot(&world.project());
        let outcome = registry.run(name, &arguments, &format!("call-{index}"), &context);
        let details = outcome
            .details
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default();
        for mark in &marks {
            assert!(
                !outcome.text.contains(mark),
                "`{name}` showed `{mark}`: {}",
                outcome.text
            );
            assert!(
                !details.contains(mark),
                "`{name}`'s details showed `{mark}`: {details}"
            );
        }
        for (path, content) in snapshot(&world.outputs()) {
            let text = String::from_utf8_lossy(content.as_deref().unwrap_or_default()).into_owned();
            for mark in &marks {
                assert!(!text.contains(mark), "`{}` holds `{mark}`", path.display());
            }
        }
        assert!(
            outside_the_project(&world) == outside_before,
            "`{name}` changed a file outside the project: {}",
            outcome.text
        );
        assert!(
            guarded(&world) == guarded_before,
            "`{name}` changed a guarded file: {}",
            outcome.text
        );
        if outcome.is_error {
            assert!(
                snapshot(&world.project()) == project_before,
                "`{name}` failed but changed the project: {}",
                outcome.text
            );
        }
    }
}
