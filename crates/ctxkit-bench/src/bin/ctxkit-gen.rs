//! `ctxkit-gen`: writes seeded, realistic Pi v3 session files (one file, or a directory of many) and
//! text corpora for the tokenization benchmark. The same arguments always write the same bytes.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use ctxkit_bench::{DirOptions, GenerateOptions, write_session_dir, write_session_file};
use ctxkit_simulate::text::{TextKind, write_text};

/// Generate benchmark inputs.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// One session file.
    Session {
        /// Entries after the header (1k to 1M and beyond; memory stays constant).
        #[arg(long, default_value_t = 10_000)]
        entries: u64,
        /// Seed; equal seeds give identical files.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Largest tool output, bytes.
        #[arg(long, default_value_t = 1 << 20)]
        max_tool_output: usize,
        /// The file to write.
        #[arg(long, short)]
        out: PathBuf,
    },
    /// A directory of session files named like Pi's.
    Dir {
        /// How many sessions.
        #[arg(long, default_value_t = 100)]
        sessions: u64,
        /// Smallest session, entries.
        #[arg(long, default_value_t = 20)]
        min_entries: u64,
        /// Largest session, entries (sizes are log-uniform in between).
        #[arg(long, default_value_t = 2_000)]
        max_entries: u64,
        /// Seed of the directory.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Largest tool output, bytes.
        #[arg(long, default_value_t = 1 << 20)]
        max_tool_output: usize,
        /// The directory to write into.
        #[arg(long, short)]
        out: PathBuf,
    },
    /// Text (prose, code, logs, optionally CJK) for the tokenization benchmark.
    Text {
        /// What the text holds.
        #[arg(long, value_enum, default_value_t = TextKind::Mixed)]
        kind: TextKind,
        /// About how many bytes.
        #[arg(long, default_value_t = 4 << 20)]
        bytes: u64,
        /// Seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The file to write.
        #[arg(long, short)]
        out: PathBuf,
    },
}

fn main() -> anyhow::Result<()> {
    let summary = match Args::parse().command {
        Command::Session {
            entries,
            seed,
            max_tool_output,
            out,
        } => {
            let options = GenerateOptions {
                seed,
                entries,
                max_tool_output,
                ..GenerateOptions::default()
            };
            let stats = write_session_file(&out, &options)?;
            format!(
                "Wrote `{}`: {} entries, {} bytes, {} branches, {} compactions, {} images",
                out.display(),
                stats.entries,
                stats.bytes,
                stats.branches,
                stats.compactions,
                stats.images
            )
        }
        Command::Dir {
            sessions,
            min_entries,
            max_entries,
            seed,
            max_tool_output,
            out,
        } => {
            let options = DirOptions {
                seed,
                sessions,
                min_entries,
                max_entries,
                max_tool_output,
            };
            let stats = write_session_dir(&out, &options)?;
            format!(
                "Wrote {} sessions into `{}`: {} entries, {} bytes",
                stats.sessions,
                out.display(),
                stats.entries,
                stats.bytes
            )
        }
        Command::Text {
            kind,
            bytes,
            seed,
            out,
        } => {
            let file = File::create(&out)
                .with_context(|| format!("Could not create `{}`", out.display()))?;
            write_text(BufWriter::new(file), seed, bytes, kind)
                .with_context(|| format!("Could not write `{}`", out.display()))?;
            format!("Wrote `{}`", out.display())
        }
    };
    #[expect(
        clippy::print_stderr,
        reason = "a one-line summary for the user; stdout stays empty"
    )]
    {
        eprintln!("{summary}");
    }
    Ok(())
}
