//! Tools the model may call: the [`Tool`] trait, [`TypedTool`] for tools whose arguments are a
//! serde type, and the [`ToolRegistry`], the one place that maps names to tools and schemas.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ctxkit_summarizer::ToolDefinition;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::workspace::{Access, Place, Workspace, refused};

/// Where and how a tool call runs.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Relative paths are resolved against it; `bash` runs in it.
    pub cwd: PathBuf,
    /// Where full outputs of cut results are saved.
    pub output_dir: PathBuf,
    /// The default `bash` time limit.
    pub bash_timeout: Duration,
    /// The shell `bash` commands run in, and the line run before each.
    pub shell: crate::tools::Shell,
    /// Secret environment variables `bash` commands may see; the others are removed.
    pub pass_env: Vec<String>,
    /// Fires when the user interrupts the turn.
    pub cancel: CancellationToken,
    /// The session's engine, for tools that read the session (`recall`).
    pub engine: Option<ctxkit_engine::Engine>,
    /// The project boundary paths are judged against, and the secrets results must not show.
    pub workspace: Arc<Workspace>,
    /// What the user approved for this call: places outside the project, guarded places in it.
    pub approved: Approved,
    /// Whether `read` fits the images it returns (`images.autoResize`).
    pub auto_resize_images: bool,
    /// The most bytes one output keeps (`Agent`'s `max_output_bytes`: Pi's 50 KB, less for a
    /// small model's window).
    pub max_output_bytes: usize,
    /// Where the call reports its output so far while it runs (`bash`: its last lines), for a
    /// UI; `None` when nobody watches.
    pub progress: Option<ToolProgress>,
}

/// What the user approved for one call, as the resolved paths the questions named. A tool judges
/// its path again when it runs, so a path that resolves elsewhere by then (a symlink swapped while
/// the question was on screen) is refused, not opened under an approval given for another place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Approved {
    /// Accesses allowed anywhere outside the project (a caller without a person to ask).
    pub outside_everywhere: Vec<Access>,
    /// Places outside the project, each with the access approved for it.
    pub outside: Vec<(Access, PathBuf)>,
    /// Guarded places of the project approved for writing.
    pub guarded: Vec<PathBuf>,
}

impl Approved {
    /// `accesses` allowed anywhere outside the project, nothing else.
    pub fn everywhere(accesses: &[Access]) -> Self {
        Self {
            outside_everywhere: accesses.to_vec(),
            ..Self::default()
        }
    }

    /// Whether `path`, outside the project, may be used for `access`.
    pub fn allows_outside(&self, access: Access, path: &std::path::Path) -> bool {
        self.outside_everywhere.contains(&access)
            || self
                .outside
                .iter()
                .any(|(approved, place)| *approved == access && place == path)
    }

    /// Whether `path`, a guarded place of the project, may be written.
    pub fn allows_guarded(&self, path: &std::path::Path) -> bool {
        self.guarded.iter().any(|place| place == path)
    }
}

/// Where a running tool reports what it has written so far. Each report replaces the one before
/// (a watcher that falls behind sees the latest only), so reporting never blocks the tool.
#[derive(Debug, Clone)]
pub struct ToolProgress(tokio::sync::watch::Sender<String>);

impl ToolProgress {
    /// A progress handle for a tool and the receiver its watcher reads the reports from; the
    /// receiver sees the channel closed once every handle is dropped (the call ended).
    pub fn channel() -> (Self, tokio::sync::watch::Receiver<String>) {
        let (sender, receiver) = tokio::sync::watch::channel(String::new());
        (Self(sender), receiver)
    }

    /// Reports `text` as the call's output so far.
    pub fn report(&self, text: String) {
        self.0.send_replace(text);
    }
}

/// A path a tool may use, with the jail it must be opened through.
#[derive(Debug)]
pub struct Target {
    /// The resolved path.
    pub path: PathBuf,
    /// The folder it is opened beneath (symlinks out of it, `..` past it and ctxkit's own places
    /// fail at the moment of opening).
    pub jail: ctxkit_jail::Jail,
}

impl ToolContext {
    /// The resolved path the tool `tool` may use for `argument`, or why it may not (a refusal
    /// naming `tool`): ctxkit's own files and the user's credentials never, a path outside the
    /// project or a guarded one only as [`Self::approved`] names it.
    pub fn path(&self, tool: &str, argument: &str, access: Access) -> Result<PathBuf, String> {
        // A project that is no project (ctxkit's home or one of its folders, a credential
        // place) is refused to every tool, as to `bash` (QA: in an installed skill's folder
        // `bash` was refused and `write SKILL.md` went through).
        if let Some(refusal) = self.workspace.project_refusal() {
            return Err(refused(&format!("{tool} {argument}"), &refusal));
        }
        let place = self
            .workspace
            .locate(&self.cwd, argument, access)
            .map_err(|refusal| refusal.of(&format!("{tool} {argument}")))?;
        let path = match place {
            Place::Allowed(path) => path,
            Place::Outside(path) if self.approved.allows_outside(access, &path) => path,
            Place::Outside(path) => {
                return Err(outside_refusal(tool, argument, &path, &self.workspace));
            }
            Place::Guarded(path) if self.approved.allows_guarded(&path) => path,
            Place::Guarded(path) => return Err(guarded_refusal(tool, argument, &path)),
        };
        refuse_file_as_directory(tool, argument, access, &path)?;
        Ok(path)
    }

    /// [`Self::path`] with the jail to open it through.
    pub fn target(&self, tool: &str, argument: &str, access: Access) -> Result<Target, String> {
        let path = self.path(tool, argument, access)?;
        let mut jail = self
            .workspace
            .jail_for(&path)
            .map_err(|error| refused(&format!("{tool} {argument}"), &error))?;
        if access == Access::Write && !self.approved.allows_guarded(&path) {
            self.workspace.guard_writes(&mut jail);
        }
        Ok(Target { path, jail })
    }
}

/// Refuses `notes.txt/` and `notes.txt/.` as the system does ("Is a directory", "Not a
/// directory"): the path's resolution drops a trailing `/` and `.`, and `write notes.txt/` had
/// overwritten the file `notes.txt`. A write never takes such a path; another tool only a folder.
fn refuse_file_as_directory(
    tool: &str,
    argument: &str,
    access: Access,
    path: &std::path::Path,
) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt as _;
    let decoded = crate::names::decoded(argument);
    let bytes = decoded.as_os_str().as_bytes();
    if !(bytes.ends_with(b"/") || bytes.ends_with(b"/.")) {
        return Ok(());
    }
    let shown = crate::names::shown_path_argument(argument);
    match access {
        Access::Write => Err(format!(
            "Cannot {tool} `{shown}`: a path ending in `/` names a directory, not a file"
        )),
        Access::Read if path.is_dir() => Ok(()),
        Access::Read => Err(format!("Cannot {tool} `{shown}`: not a directory")),
    }
}

/// Why `tool` did not write a guarded place of the project.
pub(crate) fn guarded_refusal(tool: &str, argument: &str, path: &std::path::Path) -> String {
    refused(
        &format!("{tool} {argument}"),
        &format!(
            "`{}` is guarded ({}) and the user did not approve the write",
            path.display(),
            crate::GUARDED_KINDS
        ),
    )
}

/// The result of a call that needed approval when nobody could be asked.
pub(crate) const UNANSWERED: &str = "Not run: this call needs the user's approval and nobody can \
be asked in this run (no terminal, or the caller approves nothing); the user did not decline it. \
Do not try it again in another form; say what you would have run";

/// Why `tool` did not touch a path outside the project.
pub(crate) fn outside_refusal(
    tool: &str,
    argument: &str,
    path: &std::path::Path,
    workspace: &Workspace,
) -> String {
    refused(
        &format!("{tool} {argument}"),
        &format!(
            "`{}` is outside the project `{}` and was not approved",
            crate::names::shown_path(path),
            crate::names::shown_path(workspace.root())
        ),
    )
}

/// A tool's result, as the model will see it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    pub text: String,
    pub is_error: bool,
    /// Structured details stored with the result (e.g. `{truncated, fullOutputPath}`).
    pub details: Option<Value>,
    /// Images after the text (`read` of an image file).
    pub images: Vec<ctxkit_protocol::ImageContent>,
}

impl ToolOutcome {
    pub fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
            details: None,
            images: Vec::new(),
        }
    }

    pub fn error(text: impl Into<String>) -> Self {
        Self {
            is_error: true,
            ..Self::ok(text)
        }
    }

    /// Whether the call was not run because it needed an approval nobody could give: a UI that
    /// already said so when it could not ask need not show the result too.
    pub fn is_unanswered(&self) -> bool {
        self.is_error && self.text == UNANSWERED
    }
}

/// A tool the agent loop can run. `run` may block (it runs on the blocking pool) and must stop
/// soon after `context.cancel` fires. Bad arguments are error outcomes, never panics.
pub trait Tool: Send + Sync {
    /// Name, description and JSON Schema of the arguments, as sent to the model.
    fn definition(&self) -> ToolDefinition;

    /// The question to put to the user before this call runs (e.g. the command a shell tool would
    /// run); `None` runs it without asking.
    fn approval(&self, arguments: &Value) -> Option<String> {
        let _ = arguments;
        None
    }

    /// The paths this call would touch and how, as the model wrote them; the agent judges them
    /// against the project boundary (and asks about those outside) before the call runs.
    fn paths(&self, arguments: &Value) -> Vec<(String, Access)> {
        let _ = arguments;
        Vec::new()
    }

    fn run(&self, arguments: &Value, call_id: &str, context: &ToolContext) -> ToolOutcome;
}

/// A tool whose arguments are read into a serde type; implementing it implements [`Tool`].
pub trait TypedTool: Send + Sync {
    type Arguments: DeserializeOwned;

    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    /// The JSON Schema of [`Self::Arguments`] (an object schema).
    fn parameters(&self) -> Value;

    /// See [`Tool::approval`].
    fn approval(&self, arguments: &Self::Arguments) -> Option<String> {
        let _ = arguments;
        None
    }

    /// See [`Tool::paths`].
    fn paths(&self, arguments: &Self::Arguments) -> Vec<(String, Access)> {
        let _ = arguments;
        Vec::new()
    }

    /// Runs the call; an `Err` is shown to the model as an error result.
    fn run(
        &self,
        arguments: Self::Arguments,
        call_id: &str,
        context: &ToolContext,
    ) -> Result<ToolOutcome, String>;
}

/// Reads a call's arguments into `T`, with an error the model can act on.
fn typed_arguments<T: DeserializeOwned>(tool: &str, arguments: &Value) -> Result<T, String> {
    if !arguments.is_object() {
        return Err(format!(
            "Invalid arguments for `{tool}`: expected a JSON object, got {arguments}"
        ));
    }
    serde_path_to_error::deserialize(arguments).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        if path == "." {
            format!("Invalid arguments for `{tool}`: {inner}")
        } else {
            format!("Invalid arguments for `{tool}`: `{path}`: {inner}")
        }
    })
}

impl<T: TypedTool> Tool for T {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: self.name().to_owned(),
            description: self.description().to_owned(),
            parameters: self.parameters(),
        }
    }

    fn approval(&self, arguments: &Value) -> Option<String> {
        // Calls with bad arguments are refused by `run` without running anything.
        typed_arguments::<T::Arguments>(self.name(), arguments)
            .ok()
            .and_then(|arguments| TypedTool::approval(self, &arguments))
    }

    fn paths(&self, arguments: &Value) -> Vec<(String, Access)> {
        typed_arguments::<T::Arguments>(self.name(), arguments)
            .map(|arguments| TypedTool::paths(self, &arguments))
            .unwrap_or_default()
    }

    fn run(&self, arguments: &Value, call_id: &str, context: &ToolContext) -> ToolOutcome {
        typed_arguments::<T::Arguments>(self.name(), arguments)
            .and_then(|arguments| TypedTool::run(self, arguments, call_id, context))
            .unwrap_or_else(ToolOutcome::error)
    }
}

/// The tools of an agent, by name, in the order they are offered to the model.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<(String, Arc<dyn Tool>)>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_list()
            .entries(self.tools.iter().map(|(name, _)| name))
            .finish()
    }
}

impl ToolRegistry {
    /// No tools.
    pub fn new() -> Self {
        Self::default()
    }

    /// The coding tools: `read`, `write`, `edit`, `bash`, `ls`, `grep`, and `recall` for pruned
    /// tool results.
    pub fn coding() -> Self {
        let mut registry = Self::new();
        crate::tools::register_coding_tools(&mut registry);
        registry
    }

    /// Adds `tool`, replacing a tool of the same name in place.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let name = tool.definition().name;
        match self.tools.iter_mut().find(|(known, _)| *known == name) {
            Some(slot) => slot.1 = tool,
            None => self.tools.push((name, tool)),
        }
    }

    /// Removes the tool called `name`; whether there was one.
    pub fn remove(&mut self, name: &str) -> bool {
        let before = self.tools.len();
        self.tools.retain(|(known, _)| known != name);
        self.tools.len() != before
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools
            .iter()
            .find(|(known, _)| known == name)
            .map(|(_, tool)| Arc::clone(tool))
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|(name, _)| name.as_str())
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// What the model is told about every tool.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .map(|(_, tool)| tool.definition())
            .collect()
    }

    /// Runs a call by name, blocking; an unknown name is an error outcome naming the tools.
    pub fn run(
        &self,
        name: &str,
        arguments: &Value,
        call_id: &str,
        context: &ToolContext,
    ) -> ToolOutcome {
        match self.get(name) {
            Some(tool) => tool.run(arguments, call_id, context),
            None => ToolOutcome::error(self.unknown(name)),
        }
    }

    pub(crate) fn unknown(&self, name: &str) -> String {
        let names: Vec<&str> = self.names().collect();
        if names.is_empty() {
            return format!("Unknown tool `{name}`; no tools are available");
        }
        format!("Unknown tool `{name}`; the tools are {}", names.join(", "))
    }
}
