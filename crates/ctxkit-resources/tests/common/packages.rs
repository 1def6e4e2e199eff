//! Helpers for package-manager tests: command recording (around real processes or a script),
//! progress recording, hermetic `git`/`npm` environments, and local git repositories and npm
//! tarballs made on the spot.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use ctxkit_packages::{
    CommandLine, CommandOutput, CommandRunner, PackageError, PackageManager, ProcessRunner,
    ProgressEvent, ProgressReporter, ProgressStage,
};
use ctxkit_settings::SettingsManager;

use super::World;

type Script = dyn Fn(&CommandLine) -> Result<CommandOutput, PackageError> + Send + Sync;

/// Records every command, then runs it for real or through a script.
#[derive(Clone)]
pub struct Recorder {
    pub commands: Arc<Mutex<Vec<CommandLine>>>,
    inner: Arc<Script>,
}

impl Recorder {
    pub fn real(runner: ProcessRunner) -> Self {
        Self::scripted(move |command| runner.run(command))
    }

    pub fn scripted(
        script: impl Fn(&CommandLine) -> Result<CommandOutput, PackageError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            commands: Arc::default(),
            inner: Arc::new(script),
        }
    }

    /// Recorded commands as `program args…`, with `[ROOT]` for the world's root.
    pub fn lines(&self, world: &World) -> Vec<String> {
        let root = world.root.display().to_string();
        self.commands
            .lock()
            .unwrap()
            .iter()
            .map(|command| command.display().replace(&root, "[ROOT]"))
            .collect()
    }

    pub fn clear(&self) {
        self.commands.lock().unwrap().clear();
    }
}

impl CommandRunner for Recorder {
    fn run(&self, command: &CommandLine) -> Result<CommandOutput, PackageError> {
        self.commands.lock().unwrap().push(command.clone());
        (self.inner)(command)
    }
}

pub fn stdout(text: &str) -> Result<CommandOutput, PackageError> {
    Ok(CommandOutput {
        stdout: text.to_owned(),
        stderr: String::new(),
    })
}

/// Records progress events as `stage action source [message]`.
#[derive(Clone, Default)]
pub struct Progress {
    pub events: Arc<Mutex<Vec<ProgressEvent>>>,
}

impl Progress {
    pub fn lines(&self) -> Vec<String> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .map(|event| match &event.stage {
                ProgressStage::Start { message } => {
                    format!("start {} {}", event.action.as_str(), message)
                }
                ProgressStage::Complete => {
                    format!("complete {} {}", event.action.as_str(), event.source)
                }
                ProgressStage::Error { .. } => {
                    format!("error {} {}", event.action.as_str(), event.source)
                }
            })
            .collect()
    }
}

impl ProgressReporter for Progress {
    fn report(&self, event: &ProgressEvent) {
        self.events.lock().unwrap().push(event.clone());
    }
}

/// Where the hermetic tool environment of a world keeps things.
pub fn repos_dir(world: &World) -> PathBuf {
    world.root.join("repos")
}

pub fn npm_global_prefix(world: &World) -> PathBuf {
    world.root.join("npm-global")
}

/// Variables isolating `git` and `npm` from the machine: no global/system git config, GitHub
/// URLs rewritten to `<root>/repos`, npm cache, user config and global prefix under the root,
/// npm offline.
pub fn tool_env(world: &World) -> Vec<(String, String)> {
    let root = &world.root;
    let pairs = [
        ("GIT_CONFIG_NOSYSTEM", "1".to_owned()),
        ("GIT_CONFIG_GLOBAL", "/dev/null".to_owned()),
        ("GIT_CONFIG_COUNT", "1".to_owned()),
        (
            "GIT_CONFIG_KEY_0",
            format!("url.file://{}/.insteadOf", repos_dir(world).display()),
        ),
        ("GIT_CONFIG_VALUE_0", "https://github.com/".to_owned()),
        (
            "npm_config_cache",
            root.join("npm-cache").display().to_string(),
        ),
        (
            "npm_config_userconfig",
            root.join("npmrc").display().to_string(),
        ),
        (
            "npm_config_prefix",
            npm_global_prefix(world).display().to_string(),
        ),
        ("npm_config_offline", "true".to_owned()),
        ("npm_config_audit", "false".to_owned()),
        ("npm_config_fund", "false".to_owned()),
        ("npm_config_update_notifier", "false".to_owned()),
        ("npm_config_loglevel", "error".to_owned()),
    ];
    pairs
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect()
}

pub fn process_runner(world: &World) -> ProcessRunner {
    tool_env(world)
        .into_iter()
        .fold(ProcessRunner::new(), |runner, (name, value)| {
            runner.with_env(&name, value)
        })
}

/// A manager running real tools hermetically, recording commands and progress.
pub fn real_manager(world: &World) -> (PackageManager, Recorder, Progress) {
    let recorder = Recorder::real(process_runner(world));
    let progress = Progress::default();
    let settings = SettingsManager::load(&world.env);
    let manager = PackageManager::new(world.env.clone(), &settings)
        .with_runner(recorder.clone())
        .with_reporter(progress.clone());
    (manager, recorder, progress)
}

/// Runs a tool for test setup; panics with its stderr on failure.
pub fn tool(world: &World, cwd: &Path, program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .envs(tool_env(world))
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// Creates `<root>/repos/<name>` (e.g. `test/extension`) on branch `main` with `files`
/// committed; returns its path.
pub fn make_repo(world: &World, name: &str, files: &[(&str, &str)]) -> PathBuf {
    let repo = repos_dir(world).join(name);
    std::fs::create_dir_all(&repo).unwrap();
    tool(world, &repo, "git", &["init", "-q", "-b", "main"]);
    commit(world, &repo, files, "initial");
    repo
}

/// Writes `files` into `repo` and commits them; returns the new HEAD.
pub fn commit(world: &World, repo: &Path, files: &[(&str, &str)], message: &str) -> String {
    for (path, contents) in files {
        super::write(repo.join(path), contents);
    }
    tool(world, repo, "git", &["add", "-A"]);
    tool(world, repo, "git", &["commit", "-q", "-m", message]);
    head(world, repo)
}

pub fn head(world: &World, repo: &Path) -> String {
    tool(world, repo, "git", &["rev-parse", "HEAD"])
}

/// Packs an npm package with `package.json` fields `name`/`version` and `files`; returns the
/// tarball path.
pub fn make_tarball(world: &World, name: &str, version: &str, files: &[(&str, &str)]) -> PathBuf {
    let source = world.root.join("npm-src").join(name).join(version);
    super::write(
        source.join("package.json"),
        &format!(r#"{{"name":"{name}","version":"{version}","ctxkit":{{"skills":["skills"]}}}}"#),
    );
    for (path, contents) in files {
        super::write(source.join(path), contents);
    }
    let destination = world.root.join("tarballs");
    std::fs::create_dir_all(&destination).unwrap();
    let file = tool(
        world,
        &source,
        "npm",
        &[
            "pack",
            "--silent",
            "--pack-destination",
            destination.to_str().unwrap(),
        ],
    );
    destination.join(file.lines().last().unwrap().trim())
}

pub fn skill(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill\n---\nBody\n")
}
