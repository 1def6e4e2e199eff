//! `simulate`: the context economics simulator. Replays a generated agent session (or, with
//! `--session`, real ones) call by call under each context strategy and prints what the requests
//! cost and what the model still sees: a markdown report on stdout, or the report as JSON with
//! `--json`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context as _;
use clap::Parser;
use ctxkit_simulate::{
    Billing, CheckPoint, CheckRule, Placement, Provider, SimulateError, SimulateOptions,
    SimulationReport, Strategy, check_claude_code, overall, render_cache_checks, render_markdown,
    render_overall, simulate, simulate_session,
};

/// Replay a generated agent session (or real ones) under several context strategies and compare
/// them.
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
    /// Bill each real session as its own model (the one most of its replies name) at its list
    /// prices, under its provider's cache, as `ctxkit simulate` does by default; without it every
    /// session is billed at `--provider`'s table, as the earlier rounds of docs/simulator.md were.
    #[arg(long)]
    session_model: bool,
    /// A settings document (JSON) applied over the recommended strategy's settings, for
    /// experiments, e.g. '{"compaction":{"keepRecentTokens":10000}}'.
    #[arg(long)]
    recommended_settings: Option<String>,
    /// Replay the strategies one after another instead of on parallel threads (cleaner timings).
    #[arg(long)]
    sequential: bool,
    /// Replay these real sessions instead of a generated one: Pi or ctxkit session files, or any
    /// file `ctxkit import` reads (Claude Code, Codex, OpenCode). One report per file, then an
    /// overall table when there are several.
    #[arg(long = "session", num_args = 1.., value_name = "FILE")]
    sessions: Vec<PathBuf>,
    /// Instead of simulating: replay these Claude Code transcripts' requests through the Anthropic
    /// cache rule and compare the cache reads with those they recorded (docs/simulator.md).
    #[arg(long = "claude-cache", num_args = 1.., value_name = "FILE")]
    claude_cache: Vec<PathBuf>,
    /// Where `--claude-cache` puts the message breakpoints.
    #[arg(long, value_enum, default_value_t = Placement::LastTwoMessages)]
    placement: Placement,
    /// The rule `--claude-cache` bills with (the two others are ablations).
    #[arg(long, value_enum, default_value_t = CheckRule::Anthropic)]
    claude_rule: CheckRule,
    /// Print the report as JSON (several sessions: `{"reports": [...], "overall": [...]}`).
    #[arg(long)]
    json: bool,
    /// With `--session`: write every identifier a call's reply named again that its request no
    /// longer held to FILE, one JSON object per line (session, strategy, call, identifier, kind,
    /// the tool call whose result showed it, whether that result was still in the request, whether
    /// a summary was).
    #[arg(long, value_name = "FILE")]
    misses: Option<PathBuf>,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            #[expect(clippy::print_stderr, reason = "the error for the user")]
            match error.downcast_ref::<SimulateError>() {
                Some(SimulateError::Session { .. }) => eprintln!(
                    "error: {error}\nhint: `--session` reads Pi and ctxkit session files and what \
                     `ctxkit import` reads (Claude Code, Codex, OpenCode); try `ctxkit import FILE \
                     --out /tmp/check.jsonl` or `ctxkit check FILE`"
                ),
                Some(_) | None => eprintln!("error: {error:#}"),
            }
            ExitCode::from(2)
        }
    }
}

/// Replays every `--session` file; the reports and what to print.
fn replay_sessions(
    sessions: &[PathBuf],
    options: &SimulateOptions,
    json: bool,
    misses: Option<&Path>,
) -> anyhow::Result<String> {
    let reports = sessions
        .iter()
        .map(|path| simulate_session(path, options))
        .collect::<Result<Vec<SimulationReport>, _>>()?;
    if let Some(misses) = misses {
        write_misses(&reports, misses)
            .with_context(|| format!("Could not write {}", misses.display()))?;
    }
    if json {
        let value = match &reports[..] {
            [one] => serde_json::to_value(one)?,
            several => serde_json::json!({ "reports": several, "overall": overall(several) }),
        };
        let mut text = serde_json::to_string_pretty(&value)?;
        text.push('\n');
        return Ok(text);
    }
    if let [one] = &reports[..] {
        return Ok(render_markdown(one));
    }
    let mut text = String::new();
    for report in &reports {
        let path = report
            .session
            .as_ref()
            .map_or("", |source| source.path.as_str());
        text.push_str(&format!("## `{path}`\n\n{}\n", render_markdown(report)));
    }
    text.push_str(&render_overall(&reports));
    Ok(text)
}

/// Every report's recall misses, one JSON object per line.
fn write_misses(reports: &[SimulationReport], path: &Path) -> anyhow::Result<()> {
    let mut text = String::new();
    for report in reports {
        let session = report
            .session
            .as_ref()
            .map_or("", |source| source.path.as_str());
        for strategy in &report.strategies {
            for miss in &strategy.recall_misses {
                let mut line = serde_json::to_value(miss)?;
                if let Some(fields) = line.as_object_mut() {
                    fields.insert("session".to_owned(), session.into());
                    fields.insert("strategy".to_owned(), strategy.name.into());
                }
                text.push_str(&format!("{line}\n"));
            }
        }
    }
    std::fs::write(path, text)?;
    Ok(())
}

fn run() -> anyhow::Result<()> {
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
        billing: if args.session_model {
            Billing::SessionModel
        } else {
            Billing::Provider
        },
        prices: None,
        recommended_override,
        progress: None,
    };
    let text = if !args.claude_cache.is_empty() {
        let checks = args
            .claude_cache
            .iter()
            .filter_map(
                |path| match check_claude_code(path, args.placement, args.claude_rule) {
                    Ok(check) => Some(check),
                    Err(error) => {
                        #[expect(clippy::print_stderr, reason = "a file left out, for the user")]
                        {
                            eprintln!("skipped: {error}");
                        }
                        None
                    }
                },
            )
            .collect::<Vec<_>>();
        if args.json {
            let mut text = serde_json::to_string_pretty(&checks)?;
            text.push('\n');
            text
        } else {
            render_cache_checks(&checks, args.placement, args.claude_rule)
        }
    } else if !args.sessions.is_empty() {
        replay_sessions(&args.sessions, &options, args.json, args.misses.as_deref())?
    } else {
        let report = simulate(&options)?;
        if args.json {
            let mut text = serde_json::to_string_pretty(&report)?;
            text.push('\n');
            text
        } else {
            render_markdown(&report)
        }
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
    if args.claude_cache.is_empty() {
        eprintln!(
            "simulated {} under {} strategies in {:.1} s",
            if args.sessions.is_empty() {
                format!("{} calls", options.calls)
            } else {
                format!("{} sessions", args.sessions.len())
            },
            options.strategies.len(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
