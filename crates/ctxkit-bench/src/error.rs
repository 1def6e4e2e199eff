//! Errors of the generator and the measurement runner.

use std::path::PathBuf;

/// A generated file could not be written.
///
/// Returned by `write_session_file` and `write_session_dir`; the partly written file is left in
/// place. React by checking the path and the free space.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// Creating or writing `path` failed.
    #[error("Could not write `{}`", path.display())]
    Io {
        /// The file or directory being written.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}
