//! `ctxkit simulate`: the context economics simulator (`ctxkit-simulate`) over the user's own
//! sessions or the generated workload, with a progress bar on stderr, the like-for-like verdict and
//! the settings it recommends as `ctxkit config set` lines.

use std::io::{IsTerminal as _, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;
use ctxkit_simulate::{
    Billing, CheckPoint, Progress, Provider, SimulateOptions, SimulationReport, Strategy,
    defaults_margin, overall, recommend, render_markdown, render_overall, render_verdict, simulate,
    simulate_session, verdict_rows,
};

use super::Locations;
use crate::Outcome;
use crate::render::counted;

/// `ctxkit simulate` arguments.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Sessions to replay: a session file (Pi, ctxkit, or any file `ctxkit import` reads: Claude
    /// Code, Codex, OpenCode) or a session id (or its start) from the sessions directory. None: a
    /// generated agent session of `--calls` calls.
    #[arg(value_name = "SESSION")]
    sessions: Vec<String>,
    /// One more session (file or id); repeatable.
    #[arg(long = "session", value_name = "SESSION")]
    session_flags: Vec<String>,
    /// Model calls in the generated session.
    #[arg(long, default_value_t = 2_000, value_parser = positive::<usize>)]
    calls: usize,
    /// Seed of the generated session; equal seeds give equal results.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The model's context window, tokens.
    #[arg(long, default_value_t = 200_000, value_parser = positive::<u64>)]
    window: u64,
    /// Whose prices and prompt-cache rule bill the requests [default: a session's own model (the
    /// one most of its replies name) at its list prices, under its provider's cache; Anthropic's
    /// 5-minute cache at Sonnet 4.5's prices for the generated session and a session naming no
    /// provider].
    #[arg(long, value_enum)]
    provider: Option<Provider>,
    /// A strategy to replay; repeat for several (default: no-management, defaults,
    /// reference-compaction, transforms, provider-compaction, recommended).
    #[arg(long = "strategy", value_enum)]
    strategies: Vec<Strategy>,
    /// When the compaction check runs.
    #[arg(long, value_enum, default_value_t = CheckPoint::RunEnd)]
    check: CheckPoint,
    /// Print JSON: `{"reports", "overall", "verdict", "recommendation", "defaults_margin"}`.
    #[arg(long)]
    json: bool,
}

impl SimulateArgs {
    /// The sessions named, files or ids.
    pub(crate) fn session_names_mut(&mut self) -> impl Iterator<Item = &mut String> {
        self.sessions.iter_mut().chain(&mut self.session_flags)
    }
}

/// A count of at least one (a window of no token, or a session of no call, simulates nothing).
fn positive<T: std::str::FromStr + PartialEq + Default>(text: &str) -> Result<T, String> {
    match text.parse::<T>() {
        Ok(value) if value != T::default() => Ok(value),
        Ok(_) => Err("must be at least 1".to_owned()),
        Err(_) => Err(format!("`{text}` is not a whole number")),
    }
}

/// Runs the simulation and prints the reports, the verdict and the recommended settings.
pub fn simulate_command(
    locations: &Locations,
    args: SimulateArgs,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let started = Instant::now();
    let names: Vec<&String> = args.sessions.iter().chain(&args.session_flags).collect();
    let files = names
        .iter()
        .map(|name| super::sessions::resolve_session(locations, name))
        .collect::<Result<Vec<PathBuf>>>()?;
    let progress = Arc::new(Progress::default());
    let mut strategies = if args.strategies.is_empty() {
        Strategy::DEFAULT.to_vec()
    } else {
        args.strategies.clone()
    };
    // Defaults first: what a user with an empty settings file gets is the first row.
    strategies.sort_by_key(|strategy| *strategy != Strategy::Defaults);
    let options = SimulateOptions {
        calls: args.calls,
        seed: args.seed,
        context_window: args.window,
        check: args.check,
        strategies,
        provider: args.provider.unwrap_or(Provider::Anthropic5m),
        billing: if args.provider.is_some() {
            Billing::Provider
        } else {
            Billing::SessionModel
        },
        progress: Some(Arc::clone(&progress)),
        ..SimulateOptions::default()
    };
    let reports = with_progress(&progress, files.len(), |session| {
        let report = match files.get(session) {
            Some(file) => simulate_session(file, &options)?,
            None => simulate(&options)?,
        };
        Ok(report)
    })?;
    warn_of_damaged_sessions(&files, &reports)?;
    let text = if args.json {
        json_text(&reports)?
    } else {
        markdown_text(&reports)
    };
    out.write_all(text.as_bytes())?;
    out.flush()?;
    writeln!(
        std::io::stderr().lock(),
        "simulated {} under {} in {:.1} s",
        if files.is_empty() {
            counted(options.calls, "call")
        } else {
            counted(files.len(), "session")
        },
        counted(options.strategies.len(), "strategy"),
        started.elapsed().as_secs_f64()
    )?;
    Ok(Outcome::Success)
}

/// Says on stderr, as every command that reads a damaged session does, which replayed files are
/// damaged (what could be read is replayed); another agent's file lists its problems with
/// `ctxkit import`.
fn warn_of_damaged_sessions(files: &[PathBuf], reports: &[SimulationReport]) -> Result<()> {
    for (file, report) in files.iter().zip(reports) {
        let Some(source) = &report.session else {
            continue;
        };
        let lister = match source.format {
            "pi" => format!("ctxkit check {}", file.display()),
            _ => format!("ctxkit import {} --out NEW_FILE", file.display()),
        };
        super::warn_damaged(
            file,
            &source.damage,
            "replaying what could be read",
            &lister,
        )?;
    }
    Ok(())
}

/// How often a replay that stderr shows no bar for says how far it is (the first time after as
/// long): a log or a pipe then shows the run is alive, and a short run prints nothing more.
const PROGRESS_LINE_EVERY: Duration = Duration::from_secs(10);

/// Runs `run` for each session (or once, for the generated one) while a bar on stderr shows the
/// calls replayed; when stderr is not a terminal, a line every [`PROGRESS_LINE_EVERY`] instead.
fn with_progress(
    progress: &Progress,
    sessions: usize,
    run: impl Fn(usize) -> Result<SimulationReport>,
) -> Result<Vec<SimulationReport>> {
    let terminal = std::io::stderr().is_terminal();
    let bar = if terminal {
        indicatif::ProgressBar::new(0)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {msg} [{bar:30}] {pos}/{len} calls ({eta} left)",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let done = std::sync::atomic::AtomicBool::new(false);
    let reports = std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut next_line = Instant::now() + PROGRESS_LINE_EVERY;
            while !done.load(Ordering::Relaxed) {
                bar.set_length(progress.total.load(Ordering::Relaxed));
                bar.set_position(progress.done.load(Ordering::Relaxed));
                if !terminal && Instant::now() >= next_line {
                    next_line += PROGRESS_LINE_EVERY;
                    progress_line(&bar);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let mut reports = Vec::new();
        let result = (0..sessions.max(1)).try_for_each(|session| {
            bar.set_message(if sessions == 0 {
                "generated session".to_owned()
            } else {
                format!("session {} of {sessions}", session + 1)
            });
            reports.push(run(session)?);
            Ok::<(), anyhow::Error>(())
        });
        done.store(true, Ordering::Relaxed);
        result.map(|()| reports)
    });
    bar.finish_and_clear();
    reports
}

/// One line on stderr saying how far the replay is, as the bar would show it.
fn progress_line(bar: &indicatif::ProgressBar) {
    let total = bar.length().unwrap_or(0);
    let percent = (bar.position() * 100).checked_div(total).unwrap_or(0);
    // A closed stderr is no reason to stop the replay.
    let _ = writeln!(
        std::io::stderr().lock(),
        "simulating {}: {}/{total} calls replayed ({percent}%)",
        bar.message(),
        bar.position(),
    );
}

fn markdown_text(reports: &[SimulationReport]) -> String {
    let mut text = String::new();
    if let [one] = reports {
        text.push_str(&render_markdown(one));
    } else {
        for report in reports {
            let path = report
                .session
                .as_ref()
                .map_or("", |source| source.path.as_str());
            text.push_str(&format!("## `{path}`\n\n{}\n", render_markdown(report)));
        }
        text.push_str(&render_overall(reports));
    }
    text.push('\n');
    text.push_str(&render_verdict(reports));
    text
}

fn json_text(reports: &[SimulationReport]) -> Result<String> {
    let value = serde_json::json!({
        "reports": reports,
        "overall": overall(reports),
        "verdict": verdict_rows(reports),
        "recommendation": recommend(reports),
        "defaults_margin": defaults_margin(reports),
    });
    let mut text = serde_json::to_string_pretty(&value)?;
    text.push('\n');
    Ok(text)
}
