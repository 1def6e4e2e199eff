//! Why a simulation could not run.

/// A simulation failed.
///
/// Returned by `simulate` and `simulate_session`. [`SimulateError::Session`] is bad input (a file
/// that cannot be replayed); every other variant is a bug in the simulator or in the engine it
/// drives, not a property of the simulated session: report it with the command line that produced
/// it.
#[derive(Debug, thiserror::Error)]
pub enum SimulateError {
    /// The engine refused an operation (an append, a view, a check).
    #[error("The engine failed while simulating `{strategy}`: {source}")]
    Engine {
        /// The strategy being replayed.
        strategy: &'static str,
        #[source]
        source: ctxkit_engine::EngineError,
    },
    /// A message could not be serialized to measure it.
    #[error("A request could not be serialized: {0}")]
    Serialize(#[from] serde_json::Error),
    /// The identifier matcher could not be built.
    #[error("The identifier matcher could not be built: {0}")]
    Matcher(#[from] aho_corasick::BuildError),
    /// The async runtime of a strategy could not start.
    #[error("The runtime could not start: {0}")]
    Runtime(#[source] std::io::Error),
    /// The settings document over the recommended strategy (`--recommended-settings`) is not an
    /// object or holds a value its key does not accept. Fix the document.
    #[error("The recommended settings override is invalid: {message}")]
    Settings { message: String },
    /// A real session could not be read or holds nothing to replay (`simulate_session`): the file is
    /// missing, not a session `Session::open` or the importer reads, or has no assistant message.
    /// Check the file (`ctxkit import FILE --out OUT`, `ctxkit check FILE`).
    #[error("Cannot replay `{}`: {reason}", path.display())]
    Session {
        path: std::path::PathBuf,
        /// What was wrong, on one line.
        reason: String,
    },
    /// A strategy's thread panicked.
    #[error("The thread simulating `{strategy}` panicked")]
    Panicked {
        /// The strategy being replayed.
        strategy: &'static str,
    },
}
