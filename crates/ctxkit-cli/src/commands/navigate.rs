//! `ctxkit branch`: move the leaf to another entry, optionally leaving a summary of the branch left.
//! The move is recorded by an appended entry (a branch summary, or a `custom` marker without one) so
//! it survives reopening; nothing is deleted.

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::{Result, bail};
use ctxkit_compaction::{
    BranchSummaryOptions, CompactionError, InstructionsMode, collect_branch_entries,
    summarize_branch,
};
use ctxkit_session::{Session, SessionError, SummarySource};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::summary_setup::SummarySetup;
use crate::Outcome;

/// The custom entry type recording a leaf move without a summary.
pub const NAVIGATE_TYPE: &str = "ctxkit.navigate";

/// Options of `ctxkit branch`.
#[derive(Debug)]
pub struct BranchArgs<'a> {
    pub file: &'a Path,
    pub to: &'a str,
    pub summarize: bool,
    pub focus: Option<&'a str>,
    pub replace_instructions: bool,
    pub context_window: u64,
}

pub fn branch(args: BranchArgs<'_>, setup: &SummarySetup, out: &mut dyn Write) -> Result<Outcome> {
    let mut session = Session::open(args.file)?;
    if session.entry(args.to).is_none() {
        bail!(SessionError::EntryNotFound {
            id: args.to.to_owned()
        });
    }
    let old_leaf = session.leaf_id().map(str::to_owned);
    super::note_rewrite(&session, args.file)?;
    if !args.summarize {
        session.branch(args.to)?;
        session.append_custom_entry(NAVIGATE_TYPE, Some(json!({"fromId": old_leaf})))?;
        session.flush_pending()?;
        writeln!(out, "Moved the leaf to {}", args.to)?;
        return Ok(Outcome::Success);
    }
    writeln!(
        std::io::stderr().lock(),
        "Summarizing with {}",
        setup.summarizer.name()
    )?;
    let collected = collect_branch_entries(&session, old_leaf.as_deref(), Some(args.to));
    let token_budget = args
        .context_window
        .saturating_sub(setup.branch_reserve_tokens);
    let options = BranchSummaryOptions {
        instructions: args.focus.map(str::to_owned),
        mode: if args.replace_instructions {
            InstructionsMode::Replace
        } else {
            InstructionsMode::Focus
        },
        token_budget,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let spinner = std::io::stderr().is_terminal().then(|| {
        let spinner = indicatif::ProgressBar::new_spinner();
        spinner.set_message("Summarizing the branch…");
        spinner.enable_steady_tick(std::time::Duration::from_millis(100));
        spinner
    });
    let cancel = CancellationToken::new();
    let outcome = runtime.block_on(async {
        let watcher = cancel.clone();
        let ctrl_c = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                watcher.cancel();
            }
        });
        let outcome = summarize_branch(
            &session,
            &collected.entries,
            setup.summarizer.as_ref(),
            &setup.prompts,
            &options,
            &cancel,
        )
        .await;
        ctrl_c.abort();
        outcome
    });
    if let Some(spinner) = spinner {
        spinner.finish_and_clear();
    }
    let summary = match outcome {
        Ok(summary) => summary,
        Err(CompactionError::Cancelled) => bail!("branch summary cancelled; nothing was written"),
        Err(error) => return Err(error.into()),
    };
    let details = json!({"readFiles": summary.files.read_files, "modifiedFiles": summary.files.modified_files});
    let id = session.branch_with_summary(
        Some(args.to),
        &summary.summary,
        Some(details),
        SummarySource::Ctxkit,
    )?;
    session.flush_pending()?;
    writeln!(
        out,
        "Moved the leaf to {} and summarized the {} entries left behind (summary entry {id})",
        args.to,
        collected.entries.len()
    )?;
    writeln!(out)?;
    writeln!(out, "{}", summary.summary)?;
    Ok(Outcome::Success)
}
