//! `summary-eval`: recall, size and noise of the offline summarizer on the corpus of
//! `crates/ctxkit-bench/eval/summaries/`, beside the verbatim tail of each span at the summary's
//! size (see `docs/summaries.md`). Prints a markdown table per budget; `--verbose` adds every
//! summary with its missed facts and noise lines; `--json` prints the results as JSON.

use std::path::PathBuf;

use clap::Parser;
use ctxkit_bench::summary_eval::{corpus_dir, evaluate, load_corpus, render_markdown};

/// Measure the offline summarizer against hand-written facts and the verbatim tail.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Summary budgets in tokens (default: the default compaction budget, 13107).
    #[arg(long = "budget")]
    budgets: Vec<u64>,
    /// The corpus folder (default: the source tree's `crates/ctxkit-bench/eval/summaries`).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Only the cases whose folder starts with this (`developed`, `held-out/sets-1-13`, …).
    #[arg(long)]
    group: Option<String>,
    /// Print each summary, its missed facts and its noise lines.
    #[arg(long)]
    verbose: bool,
    /// Print the results as JSON.
    #[arg(long)]
    json: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let budgets = if args.budgets.is_empty() {
        vec![13_107]
    } else {
        args.budgets
    };
    let mut cases = load_corpus(&args.corpus.unwrap_or_else(corpus_dir))?;
    if let Some(group) = &args.group {
        cases.retain(|case| case.group.starts_with(group.as_str()));
    }
    let mut out = String::new();
    let mut all = Vec::new();
    for budget in budgets {
        let results = evaluate(&cases, budget);
        out.push_str(&render_markdown(budget, &results));
        out.push('\n');
        if args.verbose {
            for result in &results {
                out.push_str(&format!(
                    "### {}/{} ({budget})\n\nMissed: {:?}\nTail missed: {:?}\n\nNoise lines:\n{}\n\n```\n{}\n```\n\n",
                    result.group,
                    result.name,
                    result.summary.missed,
                    result.tail.missed,
                    result
                        .summary
                        .noise
                        .iter()
                        .map(|line| format!("    {line}"))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    result.summary_text
                ));
            }
        }
        all.push((budget, results));
    }
    if args.json {
        let value: Vec<_> = all
            .iter()
            .map(|(budget, results)| serde_json::json!({ "budget": budget, "cases": results }))
            .collect();
        out = serde_json::to_string_pretty(&value)?;
    }
    std::io::Write::write_all(&mut std::io::stdout().lock(), format!("{out}\n").as_bytes())?;
    Ok(())
}
