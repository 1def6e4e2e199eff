//! `ctxkit-bench-op <operation> <input>`: runs one benchmark operation with ctxkit in this (fresh)
//! process and prints `{"seconds", "peakRssBytes", "check"}` on stdout.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Parser;
use ctxkit_bench::{Operation, run_operation};

/// Run one side-by-side operation with ctxkit.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// The operation.
    #[arg(value_enum)]
    operation: Operation,
    /// A session file, a directory (`list`) or a text file (`tokens`).
    input: PathBuf,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let measurement = run_operation(args.operation, &args.input).with_context(|| {
        format!(
            "Running `{:?}` on `{}`",
            args.operation,
            args.input.display()
        )
    })?;
    #[expect(
        clippy::print_stdout,
        reason = "the measurement is this binary's output"
    )]
    {
        println!("{}", measurement.to_json());
    }
    Ok(())
}
