//! Directory mode of the generator: many sessions of heavy-tailed sizes in one directory, named like
//! Pi's session files, for the listing benchmarks.

use std::path::{Path, PathBuf};

use crate::error::GenerateError;
use crate::generate::{GenerateOptions, write_session_file};
use ctxkit_simulate::Rng;

/// What to write in directory mode.
#[derive(Debug, Clone)]
pub struct DirOptions {
    /// Seed of the whole directory; session `i` uses a seed derived from it and `i`.
    pub seed: u64,
    /// How many session files.
    pub sessions: u64,
    /// Smallest and largest session, in entries (drawn log-uniformly between them).
    pub min_entries: u64,
    /// See `min_entries`.
    pub max_entries: u64,
    /// Largest tool output in bytes.
    pub max_tool_output: usize,
}

/// Totals of a generated directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirStats {
    /// Files written.
    pub sessions: u64,
    /// Entries over all files.
    pub entries: u64,
    /// Bytes over all files.
    pub bytes: u64,
}

/// Writes `options.sessions` sessions into `dir` (created if missing), named like Pi's files
/// (`<timestamp>_<session id>.jsonl`).
pub fn write_session_dir(dir: &Path, options: &DirOptions) -> Result<DirStats, GenerateError> {
    std::fs::create_dir_all(dir).map_err(|source| GenerateError::Io {
        path: dir.to_owned(),
        source,
    })?;
    let mut totals = DirStats::default();
    for index in 0..options.sessions {
        let mut rng = Rng::fork(options.seed, index);
        let entries =
            rng.log_uniform(options.min_entries as usize, options.max_entries as usize) as u64;
        let session = GenerateOptions {
            seed: rng.next_u64(),
            entries,
            max_tool_output: options.max_tool_output,
            ..GenerateOptions::default()
        };
        let staging: PathBuf = dir.join(format!(".generating-{index}.jsonl"));
        let stats = write_session_file(&staging, &session)?;
        let name = format!(
            "2025-06-{:02}T09-00-00-000Z_{}.jsonl",
            1 + index % 28,
            stats.session_id
        );
        let target = dir.join(name);
        std::fs::rename(&staging, &target).map_err(|source| GenerateError::Io {
            path: target,
            source,
        })?;
        totals.sessions += 1;
        totals.entries += stats.entries;
        totals.bytes += stats.bytes;
    }
    Ok(totals)
}
