//! `ctxkit branch`: move the leaf to another entry, optionally leaving a summary of the branch left.
//! The move is recorded by an appended entry (a branch summary, or a `custom` marker without one) so
//! it survives reopening; nothing is deleted.

use std::io::Write;
use std::path::Path;

use anyhow::{Result, bail};
use ctxkit_compaction::collect_branch_entries;
use ctxkit_engine::NavigateOptions;
use ctxkit_session::{Session, SessionError};
use serde_json::json;

use super::engine_run::{engine_for, run_cancellable};
use super::summary_setup::SummarySetup;
use crate::Outcome;
use crate::render::counted;

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

pub fn branch(args: BranchArgs<'_>, setup: SummarySetup, out: &mut dyn Write) -> Result<Outcome> {
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
    session.hold_lock()?;
    let summarizer = setup.summarizer.name();
    let left_behind = collect_branch_entries(&session, old_leaf.as_deref(), Some(args.to))
        .entries
        .len();
    let engine = engine_for(session, setup, args.context_window);
    let cancel = engine.clone();
    let options = NavigateOptions {
        summarize: true,
        custom_instructions: args.focus.map(str::to_owned),
        replace_instructions: args.replace_instructions,
        label: None,
        keep_target: true,
    };
    let outcome = run_cancellable(
        &engine,
        summarizer,
        "Summarizing the branch…",
        engine.navigate(args.to, options),
        move || cancel.cancel_branch_summary(),
    )??;
    if outcome.aborted {
        bail!("branch summary cancelled; nothing was written");
    }
    if outcome.cancelled {
        bail!("a hook cancelled the move; nothing was written");
    }
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let Some(summary_id) = outcome.summary_entry_id else {
        // Nothing was left behind (the target is on the current path), or nothing left behind
        // holds a message: a plain move, no summary in the context.
        runtime.block_on(async {
            engine
                .append_custom_entry(NAVIGATE_TYPE, Some(json!({"fromId": old_leaf})))
                .await?;
            engine.flush_pending().await
        })?;
        if left_behind == 0 {
            writeln!(
                out,
                "Moved the leaf to {}; nothing was left behind to summarize",
                args.to
            )?;
        } else {
            writeln!(
                out,
                "Moved the leaf to {}; nothing to summarize in the {} left behind, so no summary was written",
                args.to,
                counted(left_behind, "entry"),
            )?;
        }
        return Ok(Outcome::Success);
    };
    let summary = runtime.block_on(engine.with_session(|session| {
        session
            .entry(&summary_id)
            .and_then(|entry| entry.parse().ok())
            .and_then(|entry| {
                entry
                    .kind
                    .as_branch_summary()
                    .map(|summary| summary.summary.clone())
            })
    }));
    writeln!(
        out,
        "Moved the leaf to {} and summarized the {} left behind (summary entry {summary_id})",
        args.to,
        counted(left_behind, "entry"),
    )?;
    writeln!(out)?;
    writeln!(out, "{}", summary.unwrap_or_default())?;
    Ok(Outcome::Success)
}
