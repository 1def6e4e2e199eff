//! A flag's value that is not what the flag takes: a usage error (exit 2), as clap's own are,
//! though found after parsing (an address, a pattern).

use std::fmt;

/// A flag's value ctxkit cannot use, with a hint showing what it takes. `main` exits with 2.
#[derive(Debug)]
pub struct UsageError {
    pub message: String,
    pub hint: String,
}

impl fmt::Display for UsageError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.message)
    }
}

impl std::error::Error for UsageError {}
