//! `simulate`: the context economics simulator. Replays a generated agent session call by call
//! under each context strategy and prints what the requests cost and what the model still sees:
//! a markdown report on stdout, or the report as JSON with `--json`.

use std::io::Write as _;
use std::time::Instant;

use anyhow::Context as _;
use clap::Parser;
use ctxkit_bench::simulate::{
    CheckPoint, Provider, SimulateOptions, Strategy, render_markdown, simulate,
};

/// Replay a generated agent session under several context strategies and compare them.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Model calls in the generated session.
    #[arg(long, default_value_t = 2_000)]
    calls: usize,
    /// Seed; equal seeds replay equal sessions and give equal results.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The model's context window, tokens.
    #[arg(long, default_value_t = 200_000)]
    window: u64,
    /// When the compaction check runs.
    #[arg(long, value_enum, default_value_t = CheckPoint::RunEnd)]
    check: CheckPoint,
    /// A strategy to replay; repeat for several (default: no-management, reference-compaction,
    /// transforms, provider-compaction, recommended).
    #[arg(long = "strategy", value_enum)]
    strategies: Vec<Strategy>,
    /// Whose prices and prompt cache the requests are billed with.
    #[arg(long, value_enum, default_value_t = Provider::Anthropic5m)]
    provider: Provider,
    /// A settings document (JSON) applied over the recommended strategy's settings, for
    /// experiments, e.g. '{"compaction":{"keepRecentTokens":10000}}'.
    #[arg(long)]
    recommended_settings: Option<String>,
    /// Replay the strategies one after another instead of on parallel threads (cleaner timings).
    #[arg(long)]
    sequential: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let started = Instant::now();
    let recommended_override = args
        .recommended_settings
        .as_deref()
        .map(serde_json::from_str)
        .transpose()
        .context("--recommended-settings is not JSON")?;
    let options = SimulateOptions {
        calls: args.calls,
        seed: args.seed,
        context_window: args.window,
        check: args.check,
        strategies: if args.strategies.is_empty() {
            Strategy::DEFAULT.to_vec()
        } else {
            args.strategies
        },
        parallel: !args.sequential,
        provider: args.provider,
        recommended_override,
    };
    let report = simulate(&options)?;
    let text = if args.json {
        let mut text = serde_json::to_string_pretty(&report)?;
        text.push('\n');
        text
    } else {
        render_markdown(&report)
    };
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
        Err(error) => return Err(error).context("Could not write the report"),
    }
    #[expect(
        clippy::print_stderr,
        reason = "the wall time for the user; stdout holds only the report"
    )]
    {
        eprintln!(
            "simulated {} calls under {} strategies in {:.1} s",
            options.calls,
            options.strategies.len(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
