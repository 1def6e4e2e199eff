//! `real-summary-eval`: the offline summarizer at the compactions real agents made, beside the
//! verbatim tail at the same size (see `docs/summaries.md`). Reads a folder gathered by
//! `eval/gather-real-sessions`; prints a markdown table per point and per set, `--json` the
//! results, `--verbose` each summary with the identifiers it missed.

use std::path::PathBuf;

use clap::Parser;
use ctxkit_bench::real_eval::{evaluate_corpus, read_manifest, render_report};

/// Score offline summaries against real agents' summaries.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// The folder `eval/gather-real-sessions` wrote (with manifest.tsv).
    dir: PathBuf,
    /// Only this split (`developed`, `blind`, `blind2`); default every split but `usage`.
    #[arg(long)]
    split: Option<String>,
    /// Print each summary and the real summary's identifiers it missed.
    #[arg(long)]
    verbose: bool,
    /// Print the results as JSON.
    #[arg(long)]
    json: bool,
    /// Score the real summaries with the file lists their compaction appended (`<read-files>`,
    /// `<modified-files>`), as the first runs before 2026-11-29's third round did.
    #[arg(long)]
    keep_file_blocks: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let rows = read_manifest(&args.dir).map_err(anyhow::Error::msg)?;
    let (results, skipped) = evaluate_corpus(&rows, args.split.as_deref(), args.keep_file_blocks);
    let out = if args.json {
        serde_json::to_string_pretty(&serde_json::json!({"points": results, "skipped": skipped}))?
    } else {
        render_report(&results, &skipped, args.verbose)
    };
    std::io::Write::write_all(&mut std::io::stdout().lock(), format!("{out}\n").as_bytes())?;
    Ok(())
}
