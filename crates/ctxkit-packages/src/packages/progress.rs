//! Progress of package operations as events handed to a [`ProgressReporter`]: the library never
//! prints, the binary decides how (and whether) to show them.

/// What a package operation is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressAction {
    /// `install` (and installs of missing packages while resolving).
    Install,
    /// `remove`.
    Remove,
    /// `update`.
    Update,
    /// Refreshing a cached temporary git checkout while resolving.
    Pull,
}

impl ProgressAction {
    /// `install`, `remove`, `update` or `pull`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Install => "install",
            Self::Remove => "remove",
            Self::Update => "update",
            Self::Pull => "pull",
        }
    }

    fn verb(self) -> &'static str {
        match self {
            Self::Install => "Installing",
            Self::Remove => "Removing",
            Self::Update => "Updating",
            Self::Pull => "Refreshing",
        }
    }

    /// The human message of a `start` event: `Installing <source>...` and so on.
    pub fn start_message(self, source: &str) -> String {
        format!("{} {source}...", self.verb())
    }
}

/// The stage of an operation an event reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgressStage {
    /// The operation began; carries the human message (`Installing npm:x...`).
    Start {
        /// The message.
        message: String,
    },
    /// The operation succeeded.
    Complete,
    /// The operation failed; carries the error text.
    Error {
        /// The error, as displayed.
        message: String,
    },
}

/// One progress event (the reference's `{type, action, source, message}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressEvent {
    /// What is being done.
    pub action: ProgressAction,
    /// The package source as written (or `user npm packages` for a batched update).
    pub source: String,
    /// Start, completion or failure.
    pub stage: ProgressStage,
}

/// Receives progress events. Called from the thread running the operation.
pub trait ProgressReporter: Send + Sync {
    /// Handles one event.
    fn report(&self, event: &ProgressEvent);
}

/// Drops every event.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl ProgressReporter for NoProgress {
    fn report(&self, _: &ProgressEvent) {}
}
