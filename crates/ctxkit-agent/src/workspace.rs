//! The boundary around the agent's file tools: which paths a tool may read or write without a
//! question (the project, and for reading the paths the user listed), which need the user's
//! approval (everything else), and which no tool may touch at all (ctxkit's own home: settings,
//! credentials, the trust list, sessions; and the user's credentials, `~/.ssh` and the like,
//! wherever the project is). What no answer can open is refused before any question is asked. Paths are judged after resolving them as the system
//! will (symlinks, `..`), and tools then work on the resolved path, so what was judged is what is
//! touched. Tool results also pass through [`Workspace::redact`], which hides every known secret.

use std::path::{Path, PathBuf};

pub use crate::resolve::resolve;
use crate::resolve::{expand, home_link_targets};

/// What a tool does with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// `read`, `ls`, `grep`.
    Read,
    /// `write`, `edit`.
    Write,
}

impl Access {
    /// The verb of a question or refusal.
    pub fn verb(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

/// Where a resolved path lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// In the project, or (for reading) under a path the user made readable: no question.
    Allowed(PathBuf),
    /// Outside the project: the user approves first.
    Outside(PathBuf),
    /// In the project, but a place ctxkit guards against writes (`.git/`, `.ctxkit/`, the
    /// `core.hooksPath` folder, hook scripts, the live session file, package folders): the user approves first, as for `bash`.
    Guarded(PathBuf),
}

impl Place {
    /// The resolved path.
    pub fn path(&self) -> &Path {
        match self {
            Place::Allowed(path) | Place::Outside(path) | Place::Guarded(path) => path,
        }
    }
}

/// Why no tool may touch a path, whatever the user answers ([`Workspace::locate`]): the reason
/// alone (its `Display`); [`Refusal::of`] puts the call in front, as the model and the user read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(String);

impl Refusal {
    /// The refusal of `call`, the tool called and its argument as written (`edit src/main.rs`):
    /// ``"`edit src/main.rs` refused: <reason>"``.
    pub fn of(&self, call: &str) -> String {
        refused(call, &self.0)
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.0)
    }
}

/// The most characters of a call a refusal shows; the reason after it is never cut.
const SHOWN_CALL_CHARS: usize = 200;

/// The one form of every refusal: ``"`{call}` refused: {reason}"``, with a call longer than
/// [`SHOWN_CALL_CHARS`] (a path of 20,000 components) shortened and the reason whole.
pub(crate) fn refused(call: &str, reason: &str) -> String {
    // The model's text on one line: a path holding a line break drew a fake question after the
    // refusal, and the chat's line cut took its reason (QA).
    let call: String = call
        .chars()
        .flat_map(|character| match character {
            '\n' => "\\n".chars().collect::<Vec<_>>(),
            '\r' => "\\r".chars().collect(),
            character if character.is_control() => format!("\\u{{{:x}}}", u32::from(character))
                .chars()
                .collect(),
            character => vec![character],
        })
        .collect();
    let shown: String = if call.chars().count() > SHOWN_CALL_CHARS {
        let mut shown: String = call.chars().take(SHOWN_CALL_CHARS - 1).collect();
        shown.push('…');
        shown
    } else {
        call
    };
    format!("`{shown}` refused: {reason}")
}

/// The project a tool works in, the paths no tool may touch, and the secrets no result may show.
#[derive(Debug, Clone, Default)]
pub struct Workspace {
    /// The project root, resolved.
    root: PathBuf,
    /// The project root as given (without `.` and `..`): the tools' working directory names it so.
    given_root: PathBuf,
    /// ctxkit's home (settings, credentials, trust list, sessions), resolved.
    home: Option<PathBuf>,
    /// ctxkit's own places besides its home (a sessions directory elsewhere, the session file),
    /// resolved and as given.
    protected: Vec<PathBuf>,
    /// Folders of saved tool outputs tools may read although they lie in a protected place (what
    /// is saved there was redacted first).
    outputs: Vec<PathBuf>,
    /// Folders of loaded skills tools may read (never write) without a question, although ctxkit's
    /// home or a place outside the project holds them ([`Self::allow_reading_skill_folder`]).
    skill_folders: Vec<PathBuf>,
    /// Paths outside the project the user lets tools read without a question, resolved.
    readable: Vec<PathBuf>,
    /// Places inside the project a write needs the user's approval for, resolved (besides
    /// folders of [`GUARDED_NAMES`] at any depth under the root).
    guarded: Vec<PathBuf>,
    /// The user's credentials (`ctxkit_jail::credential_places`), as named and resolved: never
    /// opened, wherever the project is, whatever the user answers (the jail denies them too).
    credentials: Vec<PathBuf>,
    /// Values redacted from every tool result.
    secrets: Vec<String>,
    /// The redactor of [`Self::secrets`], made again when one is added.
    redactor: ctxkit_secrets::Redactor,
}

/// Folders (and files) of every project whose writes need the user's approval, wherever they are
/// in it: git's config and hooks (a `core.fsmonitor` or hook runs at the user's next `git
/// status`), Mercurial's and Jujutsu's (an `hgrc` hook runs at `hg status`, a `config.toml` pager
/// at `jj log`), the hooks `pre-commit`, husky and lefthook run at the user's next `git commit`,
/// ctxkit's, Pi's and other agents' project settings (hooks, MCP servers and commands run when
/// that agent next starts: `.claude`, `.codex`, `.gemini`, `.cursor`, `.mcp.json`, OpenCode's, Roo's, Kiro's,
/// Amazon Q's, Continue's, Windsurf's), and the editors' (`.vscode` and a `*.code-workspace`: a
/// task run when the folder opens; `.idea`'s run configurations; a dev container's
/// `postCreateCommand`), and the shells' start-up files (a line in `.bashrc` or `.profile` runs at
/// the user's next shell or login; a dotfiles project's are linked from the home; vim's runs at its
/// next start), and Python's `.pth` files (a line starting `import` runs at every Python start
/// that finds it in `site-packages`). A name starting with `*` stands for every name ending with
/// the rest.
/// What the guarded places are, as a question or a refusal says it.
pub const GUARDED_KINDS: &str = "version control config and hooks, ctxkit's and other agents' and \
     editors' project settings, hook scripts, shell and login start-up files, the session file, \
     packages";

pub const GUARDED_NAMES: &[&str] = &[
    ".git",
    ".ctxkit",
    ".pi",
    ".hg",
    ".jj",
    ".pre-commit-config.yaml",
    ".husky",
    ".lefthook",
    ".lefthook-local",
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook-local.yml",
    ".lefthook-local.yml",
    "lefthook.yaml",
    ".lefthook.yaml",
    "lefthook-local.yaml",
    ".lefthook-local.yaml",
    "lefthook.toml",
    ".lefthook.toml",
    "lefthook.json",
    ".lefthook.json",
    "lefthook.jsonc",
    ".lefthook.jsonc",
    ".claude",
    ".codex",
    ".gemini",
    ".cursor",
    ".mcp.json",
    ".opencode",
    "opencode.json",
    "opencode.jsonc",
    ".roo",
    ".kiro",
    ".amazonq",
    ".continue",
    ".windsurf",
    ".vscode",
    "*.code-workspace",
    ".idea",
    ".devcontainer",
    ".devcontainer.json",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".xprofile",
    ".xinitrc",
    ".xsessionrc",
    ".xsession",
    ".bash_aliases",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".logout",
    ".pam_environment",
    ".vimrc",
    ".exrc",
    ".vim",
    ".emacs",
    ".emacs.d",
    ".tmux.conf",
    ".gdbinit",
    ".Rprofile",
    ".ipython",
    "sitecustomize.py",
    "usercustomize.py",
    "*.pth",
];

/// Folders of the user's configuration (`~/.config`, and `$XDG_CONFIG_HOME` when it is elsewhere)
/// whose files run without the user doing more than log in or start a program they always start:
/// `autostart`'s desktop entries, systemd's user units, `environment.d`, Plasma's `env` scripts,
/// fish's `config.fish` and `conf.d`, neovim's `init.lua`. Guarded as [`GUARDED_NAMES`] are,
/// whether the project is the home (QA 2026-12-07: with the project at `~`, a unit and an
/// autostart entry were written without a question) or they are written outside it.
const GUARDED_HOME_FOLDERS: &[&str] = &[
    "autostart",
    "systemd",
    "environment.d",
    "fish",
    "plasma-workspace",
    "nvim",
    "vim",
    "i3",
    "sway",
];

/// Folders of the home on the user's `PATH` by custom: a program written there runs in place of
/// the one the user meant (`~/.local/bin/git`).
const GUARDED_HOME_PROGRAM_FOLDERS: &[&str] = &[".local/bin", "bin"];

impl Workspace {
    /// The workspace of a project at `root`, with ctxkit's home of this process protected
    /// (`CTXKIT_HOME`, else `~/.ctxkit`) and the secrets of its environment redacted.
    pub fn new(root: &Path) -> Self {
        let mut workspace = Self {
            root: resolve(root),
            given_root: ctxkit_jail::lexical(root),
            home: None,
            protected: Vec::new(),
            outputs: Vec::new(),
            skill_folders: Vec::new(),
            readable: Vec::new(),
            guarded: Vec::new(),
            credentials: ctxkit_jail::credential_places(),
            secrets: ctxkit_secrets::secret_environment_values(),
            redactor: ctxkit_secrets::Redactor::default(),
        };
        workspace.redactor =
            ctxkit_secrets::Redactor::new(workspace.secrets.iter().map(String::as_str));
        if let Some(home) = default_ctxkit_home() {
            workspace.set_home(&home);
        }
        let user_home = std::env::home_dir();
        // Pi's sessions, which ctxkit works on beside its own (`--sessions-dir`): transcripts
        // holding what users pasted, closed to tools as ctxkit's own sessions are (QA r103; the
        // other agents' transcripts are among the credentials).
        if let Some(user_home) = &user_home {
            workspace.protect(&user_home.join(".pi/agent/sessions"));
            workspace.guard_home_folders(user_home);
        }
        workspace.guard_what_git_runs(user_home.as_deref());
        workspace
    }

    /// Guards the folders of `user_home` whose files run at login or at the next shell
    /// ([`GUARDED_HOME_FOLDERS`]).
    fn guard_home_folders(&mut self, user_home: &Path) {
        let mut configs = vec![user_home.join(".config")];
        if let Some(config) = std::env::var_os("XDG_CONFIG_HOME").filter(|value| !value.is_empty())
        {
            configs.push(PathBuf::from(config));
        }
        for config in &configs {
            for folder in GUARDED_HOME_FOLDERS {
                self.guard(&config.join(folder));
            }
        }
        for folder in GUARDED_HOME_PROGRAM_FOLDERS {
            self.guard(&user_home.join(folder));
        }
        // A guarded name of the home that is a link (a dotfiles project's `.bashrc`): where it
        // leads is guarded by its own name too (QA 2026-12-07: the project's `bashrc`, linked
        // from `~/.bashrc`, was edited unasked).
        for name in GUARDED_NAMES.iter().filter(|name| !name.starts_with('*')) {
            let place = user_home.join(name);
            if ctxkit_jail::is_link(&place) {
                self.guard(&place);
            }
        }
    }

    /// Guards what the project's git config (or the user's) makes git run: the `core.hooksPath`
    /// folders (`.husky`), included config files, and programs named by a path
    /// (`core.fsmonitor = tools/fsmon.sh`). A file written there runs at the user's next `git
    /// status` or `git commit`, as a hook in `.git/hooks` would.
    fn guard_what_git_runs(&mut self, user_home: Option<&Path>) {
        let global = crate::git_hooks::global_configs(user_home);
        for path in crate::git_hooks::guarded_by_config(&self.root, global, user_home) {
            self.guard(&path);
        }
    }

    /// The project root, resolved.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// ctxkit's home, resolved (where sessions kept in memory save full tool outputs).
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// ctxkit's home is `home` (`--home`), protected like [`Self::protect`], and with it where each
    /// of its entries that is a symlink leads (`home_link_targets`): a `settings.json` linked
    /// into a dotfiles project is ctxkit's settings by the target's own name too.
    pub fn set_home(&mut self, home: &Path) {
        self.home = Some(resolve(home));
        self.protect(home);
        for target in home_link_targets(home) {
            self.protect(&target);
        }
    }

    /// Tools may read the saved outputs under `dir` although ctxkit's home holds it. Not when `dir`
    /// or its parent (`tool-output`) is a link: one planted beside a shipped session file would make
    /// wherever it leads readable without a question, ctxkit's own settings included.
    pub fn allow_reading_outputs(&mut self, dir: &Path) {
        if ctxkit_jail::is_link(dir) || dir.parent().is_some_and(ctxkit_jail::is_link) {
            return;
        }
        self.outputs.push(resolve(dir));
    }

    /// Tools may read (never write) the folder of a skill ctxkit loaded and offered the model,
    /// `folder` (the one holding its `SKILL.md`), wherever it lies: the system prompt tells the
    /// model to read the skill's file and the files it names relative to it. ctxkit's home, a local
    /// package's folder or a `skills` entry of the user's settings alike; the loader loads no skill
    /// of an untrusted project, so none of its folders comes here. Never a folder holding a
    /// protected place (the home itself, its settings, the sessions) or one of the user's
    /// credentials (`~` itself): a skill named at `~/.ctxkit/SKILL.md` or `~/SKILL.md` opens
    /// nothing. Call it after every [`Self::protect`].
    pub fn allow_reading_skill_folder(&mut self, folder: &Path) {
        let resolved = resolve(folder);
        let holds_protected = self
            .protected
            .iter()
            .chain(&self.credentials)
            .any(|place| place.starts_with(&resolved));
        if !holds_protected && !self.skill_folders.contains(&resolved) {
            self.skill_folders.push(resolved);
        }
    }

    /// No tool may read or write `path` or anything under it, even with approval.
    pub fn protect(&mut self, path: &Path) {
        let resolved = resolve(path);
        if !self.protected.contains(&resolved) {
            self.protected.push(resolved);
        }
        // The path as given too, when a symlink makes it differ (a link itself is never opened
        // through, so this only matters for messages and lexical checks).
        let lexical = ctxkit_jail::lexical(path);
        if !self.protected.contains(&lexical) {
            self.protected.push(lexical);
        }
    }

    /// Why the project itself is no place for tools, if it is not: it is ctxkit's home, a
    /// private folder of session copies, or in the user's credentials. `bash` starts in the
    /// project, so it would run among ctxkit's settings and keys (`read` and `write` refuse them
    /// one by one). So is a folder inside the home (`~/.ctxkit/sessions`, QA: `agent.run` with
    /// that `cwd` ran `bash` among every project's sessions), unless the home holds the user's
    /// own home (`CTXKIT_HOME=~`), where projects are.
    pub fn project_refusal(&self) -> Option<String> {
        let user_home = std::env::home_dir();
        let own = self
            .home
            .as_ref()
            .is_some_and(|home| in_own_home(&self.root, home, user_home.as_deref()))
            || ctxkit_session::private_folder_holding(&self.root).is_some();
        let credentials = self
            .credentials
            .iter()
            .any(|place| self.root.starts_with(place));
        (own || credentials).then(|| {
            format!(
                "`{}` is {}: tools never work there; start in the project's folder",
                self.root.display(),
                if own {
                    "ctxkit's own folder (its settings, keys or sessions)"
                } else {
                    "among the user's credentials"
                }
            )
        })
    }

    /// Writing `path` (a hook script, the live session file, a package folder) needs the user's
    /// approval even inside the project.
    pub fn guard(&mut self, path: &Path) {
        let resolved = resolve(path);
        if !self.guarded.contains(&resolved) {
            self.guarded.push(resolved);
        }
    }

    /// `place` is one of the user's credentials for [`Self::locate`] (tests: the real ones are
    /// read from `$HOME` when the workspace is made).
    #[cfg(test)]
    pub(crate) fn add_credential_place(&mut self, place: &Path) {
        self.credentials.push(place.to_owned());
    }

    /// Tools may read `path` and everything under it without a question (`chat.readablePaths`).
    pub fn allow_reading(&mut self, path: &Path) {
        self.readable.push(resolve(path));
    }

    /// Hides `secret` in every tool result (values shorter than 8 characters are ignored).
    pub fn add_secret(&mut self, secret: &str) {
        let secret = secret.trim();
        if secret.len() >= 8 && !self.secrets.iter().any(|known| known == secret) {
            self.secrets.push(secret.to_owned());
            self.redactor = ctxkit_secrets::Redactor::new(self.secrets.iter().map(String::as_str));
        }
    }

    /// The values redacted from every tool result: the secret variables of the process's
    /// environment and those [`Self::add_secret`] added. A page of the session (`ctxkit export`,
    /// `ctxkit view`) redacts the same list.
    pub fn secrets(&self) -> &[String] {
        &self.secrets
    }

    /// `text` with every known secret replaced by `<redacted>`.
    pub fn redact(&self, text: &str) -> String {
        self.redactor.redact(text)
    }

    /// Whether `text` holds one of the known secrets (or a piece of one that is redacted).
    pub fn holds_known_secret(&self, text: &str) -> bool {
        self.redactor.redact_known(text) != text
    }

    /// Where a tool's path argument (relative to `cwd`, absolute, or `~/…`; a leading `@` is
    /// dropped) lies for `access`; the [`Refusal`] when no tool may touch it, whatever the user
    /// would answer (the caller names the call it refuses).
    pub fn locate(&self, cwd: &Path, argument: &str, access: Access) -> Result<Place, Refusal> {
        let given = expand(cwd, argument);
        // Before anything resolves it: a path of 20,000 components is one refusal.
        ctxkit_jail::check_shape(&given).map_err(|error| Refusal(error.to_string()))?;
        let resolved = resolve(&given);
        let lexical = ctxkit_jail::lexical(&given);
        // Before the question about leaving the project: no answer could open them.
        if let Some(place) = self
            .credentials
            .iter()
            .find(|place| resolved.starts_with(place) || lexical.starts_with(place))
        {
            let shown = crate::names::shown_path(&resolved);
            // A place that is the file itself (where a key folder's link leads) is named once.
            let reason = if resolved == *place {
                format!("`{shown}` is")
            } else {
                format!("`{shown}` lies in `{}`:", crate::names::shown_path(place))
            };
            return Err(Refusal(format!(
                "{reason} the user's credentials are never opened by tools, even with approval"
            )));
        }
        if access == Access::Read
            && self
                .outputs
                .iter()
                .chain(&self.skill_folders)
                .any(|dir| resolved.starts_with(dir))
        {
            return Ok(Place::Allowed(resolved));
        }
        let in_private_folder = || {
            ctxkit_session::private_folder_holding(&resolved)
                .or_else(|| ctxkit_session::private_folder_holding(&lexical))
                .is_some_and(|folder| !self.project_within(&folder, &resolved))
        };
        if self.protected.iter().any(|protected| {
            (resolved.starts_with(protected) || lexical.starts_with(protected))
                && !self.project_within(protected, &resolved)
        }) || in_private_folder()
        {
            return Err(Refusal(format!(
                "ctxkit's own settings, credentials, trust list and sessions are never {} by tools",
                match access {
                    Access::Read => "readable",
                    Access::Write => "writable",
                }
            )));
        }
        if resolved.starts_with(&self.root) {
            if access == Access::Write && self.is_guarded(&resolved, &lexical) {
                return Ok(Place::Guarded(resolved));
            }
            return Ok(Place::Allowed(resolved));
        }
        if access == Access::Read && self.readable.iter().any(|path| resolved.starts_with(path)) {
            return Ok(Place::Allowed(resolved));
        }
        // A guarded name outside the project is asked about as one inside it, and so is what
        // the git config of the repository holding it makes git run: an approval of writes
        // outside the project never covers another repository's hooks.
        if access == Access::Write
            && (self.is_guarded(&resolved, &lexical) || run_by_outside_git(&resolved))
        {
            return Ok(Place::Guarded(resolved));
        }
        Ok(Place::Outside(resolved))
    }
}

impl Workspace {
    /// The jail a tool opens the resolved `path` through: the folder of saved outputs or of a
    /// loaded skill, the project, or a readable folder holding it, else the whole filesystem (a path the user
    /// approved); ctxkit's own places and the user's credentials denied in every case.
    pub fn jail_for(&self, path: &Path) -> Result<ctxkit_jail::Jail, String> {
        let root = self
            .outputs
            .iter()
            .chain(&self.skill_folders)
            .chain(std::iter::once(&self.root))
            .chain(self.readable.iter())
            .find(|root| path.starts_with(root) && root.is_dir())
            .map_or(Path::new("/"), PathBuf::as_path);
        let mut jail = ctxkit_jail::Jail::open(root).map_err(|error| error.to_string())?;
        // The jail denies the user's credentials by itself; the workspace's list is the same
        // but for places a test names.
        for place in self.protected.iter().chain(&self.credentials) {
            jail.deny(place);
        }
        // Copies of sessions a database or an import keeps while a command or a server runs.
        for folder in ctxkit_session::private_folders() {
            if !self.project_within(&folder, path) {
                jail.deny(&folder);
            }
        }
        Ok(jail)
    }

    /// Makes `jail` refuse writes to the project's guarded places (folders of `GUARDED_NAMES`
    /// at any depth of the project, and the places [`Self::guard`] named), judged again on the
    /// folder it opens for each write: a folder swapped for a symlink into `.git` after
    /// [`Self::locate`] judged the path puts nothing there. For a write not approved as guarded.
    pub fn guard_writes(&self, jail: &mut ctxkit_jail::Jail) {
        jail.guard_writes(&self.root, &self.guarded, GUARDED_NAMES);
    }

    /// The folder `bash` starts in: `cwd` (the project or a folder in it) opened through the
    /// project's jail, so a symlink out of the project, `..` past it, ctxkit's own places and the
    /// user's credentials are refused, and a project folder swapped for a symlink since the
    /// session started is noticed; the child starts in the opened descriptor, not a name.
    pub fn working_directory(&self, cwd: &Path) -> Result<ctxkit_jail::OpenedDir, String> {
        let refused = |reason: String| {
            format!(
                "`bash` refused: its working directory `{}` {reason}",
                cwd.display()
            )
        };
        let lexical = ctxkit_jail::lexical(cwd);
        let relative = lexical
            .strip_prefix(&self.root)
            .or_else(|_| lexical.strip_prefix(&self.given_root))
            .map_err(|_| refused("is not in the project".to_owned()))?;
        let mut jail =
            ctxkit_jail::Jail::open(&self.root).map_err(|error| refused(error.to_string()))?;
        if jail.root() != self.root {
            return Err(refused(format!(
                "is no longer the project: `{}` now leads to `{}`",
                self.root.display(),
                jail.root().display()
            )));
        }
        for place in &self.protected {
            jail.deny(place);
        }
        let opened = jail
            .open_directory(relative)
            .map_err(|error| refused(error.to_string()))?;
        if !opened.real_path().starts_with(&self.root) {
            return Err(refused(format!(
                "leads out of the project, to `{}`",
                opened.real_path().display()
            )));
        }
        Ok(opened)
    }

    /// Whether `path` is in a project that itself lies strictly inside the protected `place` (a
    /// project kept under `CTXKIT_HOME`): the project's own files are the project's, while
    /// ctxkit's files beside it stay protected.
    fn project_within(&self, place: &Path, path: &Path) -> bool {
        self.root != place && self.root.starts_with(place) && path.starts_with(&self.root)
    }
}

use ctxkit_jail::default_ctxkit_home;

#[path = "workspace_guarded.rs"]
mod guarded;
use guarded::run_by_outside_git;

/// The folders ctxkit keeps in its home: its sessions and saved outputs, the packages it installs
/// (`git`, `npm`) and the resources it loads (skills, prompts, themes, extensions, agents, hooks).
const HOME_FOLDERS: [&str; 10] = [
    "sessions",
    "tool-output",
    "git",
    "npm",
    "skills",
    "prompts",
    "themes",
    "extensions",
    "agents",
    "hooks",
];

/// Whether `root` is ctxkit's home `home` or in one of its own folders ([`HOME_FOLDERS`]; QA:
/// `cwd` at `~/.ctxkit/sessions` ran `bash` among every project's sessions, and a chat started in
/// an installed skill's folder rewrote the skill). Another folder in the home is a project's (a
/// temporary home holding a project); where the home holds the user's home `user_home`
/// (`CTXKIT_HOME=~`, where projects are, `~/git` among them), only its sessions are its own.
pub(crate) fn in_own_home(root: &Path, home: &Path, user_home: Option<&Path>) -> bool {
    if root == home {
        return true;
    }
    let own: &[&str] = if user_home.is_some_and(|user_home| resolve(user_home).starts_with(home)) {
        &HOME_FOLDERS[..1]
    } else {
        &HOME_FOLDERS
    };
    own.iter().any(|folder| root.starts_with(home.join(folder)))
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
