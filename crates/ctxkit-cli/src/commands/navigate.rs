//! `ctxkit branch`: move the leaf to another entry, optionally leaving a summary of the branch left.
//! The move follows Pi's tree navigation: a user message (or custom message) as the target puts the
//! leaf on its parent — before the message, or at the start of the session for a root — and gives
//! its text back to send again, so the next prompt never follows a user message; any other entry
//! becomes the leaf. The move is recorded by an appended entry (a branch summary, or a `custom`
//! marker without one) so it survives reopening; nothing is deleted.

use std::io::Write;
use std::path::Path;

use anyhow::{Result, bail};
use ctxkit_compaction::collect_branch_entries;
use ctxkit_engine::{Engine, NavigateOptions, NavigateOutcome};
use ctxkit_session::{Session, SessionError};
use serde_json::json;

use super::engine_run::{engine_for, run_cancellable};
use super::print_json;
use super::summary_setup::SummarySetup;
use crate::Outcome;
use crate::render::counted;

/// Options of `ctxkit branch`.
#[derive(Debug)]
pub struct BranchArgs<'a> {
    pub file: &'a Path,
    pub to: &'a str,
    pub summarize: bool,
    pub focus: Option<&'a str>,
    pub replace_instructions: bool,
    pub context_window: u64,
    pub json: bool,
}

/// What a move did, as printed.
struct Moved<'a> {
    target: &'a str,
    outcome: NavigateOutcome,
    /// Where the leaf landed: the target, or the parent of the message targeted (`None`: the
    /// start of the session).
    landing: Option<String>,
    /// The leaf once the move is recorded: the summary entry, or the marker.
    leaf: Option<String>,
    left_behind: usize,
    summary: Option<String>,
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
    session.hold_lock()?;
    let summarizer = setup.summarizer.name();
    let left_behind = collect_branch_entries(&session, old_leaf.as_deref(), Some(args.to))
        .entries
        .len();
    let engine = engine_for(session, setup, args.context_window);
    let cancel = engine.clone();
    let options = NavigateOptions {
        summarize: args.summarize,
        custom_instructions: args.focus.map(str::to_owned),
        replace_instructions: args.replace_instructions,
        label: None,
        keep_target: false,
    };
    let outcome = run_cancellable(
        &engine,
        summarizer,
        "Summarizing the branch…",
        engine.navigate(args.to, options),
        move || cancel.cancel_branch_summary(),
    )??;
    // Interrupted, as the user asked: 130, as a cancelled compaction.
    if outcome.aborted {
        writeln!(
            crate::redact::stderr(),
            "branch summary cancelled; nothing was written"
        )?;
        return Ok(Outcome::Signalled { number: 2 });
    }
    if outcome.cancelled {
        bail!("a hook cancelled the move; nothing was written");
    }
    // Already there (the leaf itself named, or the entry the last move's marker stands on):
    // nothing moved, so nothing is recorded; a marker each time grew the tree with empty
    // branches.
    let stayed = outcome.summary_entry_id.is_none() && {
        let runtime = tokio::runtime::Builder::new_current_thread().build()?;
        runtime.block_on(engine.leaf_stayed(old_leaf.as_deref()))
    };
    if stayed {
        // Before a user message, the leaf stands on its parent: said so, and its text given
        // again, as the move that put it there gave it (a tester's second run said the leaf was
        // at the message, which is not on the branch, and gave no text).
        let landing = match &outcome.editor_text {
            Some(_) => outcome.new_leaf_id.clone(),
            None => Some(args.to.to_owned()),
        };
        if args.json {
            print_json(
                out,
                &json!({"targetId": args.to, "movedTo": landing, "leafId": old_leaf,
                        "editorText": outcome.editor_text, "summaryEntryId": null,
                        "summary": null, "leftBehind": 0}),
            )?;
        } else {
            stayed_note(
                args.to,
                landing.as_deref(),
                outcome.editor_text.as_deref(),
                out,
            )?;
        }
        return Ok(Outcome::Success);
    }
    let recorded = record_move(&engine, &outcome, args.to, old_leaf)?;
    let moved = Moved {
        target: args.to,
        outcome,
        landing: recorded.landing,
        leaf: recorded.leaf,
        left_behind,
        summary: recorded.summary,
    };
    if args.json {
        print_json(out, &moved.to_json())?;
    } else {
        moved.print(args.summarize, out)?;
    }
    Ok(Outcome::Success)
}

/// What `branch --to TARGET` says when the leaf already stands there (at TARGET, or before it when
/// it is a user message, whose text comes again).
fn stayed_note(
    target: &str,
    landing: Option<&str>,
    editor_text: Option<&str>,
    out: &mut dyn Write,
) -> Result<()> {
    let Some(text) = editor_text else {
        writeln!(out, "The leaf is already at {target}; nothing was written")?;
        return Ok(());
    };
    let place = landing.unwrap_or("the start of the session");
    writeln!(
        out,
        "The leaf is already before the message {target} (at {place}); nothing was written"
    )?;
    write_text_to_send_again(target, text, out)
}

/// The text of the user message `target` the leaf now stands before, to send again or edit.
fn write_text_to_send_again(target: &str, text: &str, out: &mut dyn Write) -> Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "The next prompt replaces the message {target}; its text, to send again or edit:"
    )?;
    writeln!(out)?;
    writeln!(out, "{text}")?;
    Ok(())
}

/// What recording a move left in the session.
struct Recorded {
    landing: Option<String>,
    leaf: Option<String>,
    summary: Option<String>,
}

/// Makes the move survive reopening: without a summary entry, a navigation marker at the new leaf
/// (at the start of the session, a new root). Says where the leaf landed, where it is now and the
/// summary's text when one was written.
fn record_move(
    engine: &Engine,
    outcome: &NavigateOutcome,
    target: &str,
    old_leaf: Option<String>,
) -> Result<Recorded> {
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    if outcome.summary_entry_id.is_none() {
        runtime.block_on(engine.record_leaf_move(old_leaf))?;
    }
    let summary_id = outcome.summary_entry_id.as_deref();
    let before_target = outcome.editor_text.is_some();
    Ok(runtime.block_on(engine.with_session(|session| {
        let landing = match before_target {
            true => session
                .entry(target)
                .and_then(|entry| entry.parent_id())
                .map(str::to_owned),
            false => Some(target.to_owned()),
        };
        let summary = summary_id
            .and_then(|id| session.entry(id))
            .and_then(|entry| entry.parse().ok())
            .and_then(|entry| {
                entry
                    .kind
                    .as_branch_summary()
                    .map(|summary| summary.summary.clone())
            });
        Recorded {
            landing,
            leaf: session.leaf_id().map(str::to_owned),
            summary,
        }
    })))
}

impl Moved<'_> {
    /// Where the leaf went: the target, or before the message targeted.
    fn place(&self) -> String {
        match (&self.outcome.editor_text, &self.landing) {
            (None, _) => self.target.to_owned(),
            (Some(_), Some(parent)) => format!("{parent}, before the message {}", self.target),
            (Some(_), None) => format!(
                "the start of the session, before the message {}",
                self.target
            ),
        }
    }

    fn print(&self, summarize: bool, out: &mut dyn Write) -> Result<()> {
        let place = self.place();
        let left = counted(self.left_behind, "entry");
        match (&self.outcome.summary_entry_id, summarize) {
            (Some(summary_id), _) => writeln!(
                out,
                "Moved the leaf to {place} and summarized the {left} left behind (summary entry {summary_id})",
            )?,
            (None, false) => writeln!(out, "Moved the leaf to {place}")?,
            (None, true) if self.left_behind == 0 => writeln!(
                out,
                "Moved the leaf to {place}; nothing was left behind to summarize"
            )?,
            (None, true) => writeln!(
                out,
                "Moved the leaf to {place}; nothing to summarize in the {left} left behind, so no summary was written",
            )?,
        }
        if let Some(summary) = &self.summary {
            writeln!(out)?;
            writeln!(out, "{summary}")?;
        }
        if let Some(text) = &self.outcome.editor_text {
            write_text_to_send_again(self.target, text, out)?;
        }
        Ok(())
    }

    fn to_json(&self) -> serde_json::Value {
        json!({
            "targetId": self.target,
            "movedTo": self.landing,
            "leafId": self.leaf,
            "editorText": self.outcome.editor_text,
            "summaryEntryId": self.outcome.summary_entry_id,
            "summary": self.summary,
            "leftBehind": self.left_behind,
        })
    }
}
