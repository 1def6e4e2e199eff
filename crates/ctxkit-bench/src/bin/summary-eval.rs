//! `summary-eval`: recall, size and noise of the offline summarizer on the hand-built corpus (see
//! `docs/summaries.md`). Prints a markdown table per budget; `--verbose` adds every summary with its
//! missed facts and noise lines; `--json` prints the results as JSON.

use clap::Parser;
use ctxkit_bench::summary_eval::{corpus, evaluate, render_markdown};

/// Measure the offline summarizer against hand-written facts.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Summary budgets in tokens (default: 2000 and the default compaction budget, 13107).
    #[arg(long = "budget")]
    budgets: Vec<u64>,
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
        vec![2_000, 13_107]
    } else {
        args.budgets
    };
    let cases = corpus();
    let mut out = String::new();
    let mut all = Vec::new();
    for budget in budgets {
        let results = evaluate(&cases, budget);
        out.push_str(&render_markdown(budget, &results));
        out.push('\n');
        if args.verbose {
            for result in &results {
                out.push_str(&format!(
                    "### {} ({budget})\n\nMissed: {:?}\n\nNoise lines:\n{}\n\n```\n{}\n```\n\n",
                    result.name,
                    result.missed,
                    result
                        .noise
                        .iter()
                        .map(|line| format!("    {line}"))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    result.summary
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
