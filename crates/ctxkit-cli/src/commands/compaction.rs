//! `compact`, `compactions`: compaction of a session file
//! (`undo-compact` is `undo`). Writing commands append to the file (or to a copy with `--out`); nothing is ever rewritten.

use std::io::Write;
use std::path::Path;

use anyhow::{Context as _, Result, bail};
use ctxkit_compaction::{CompactionRecord, Preparation, list_compactions, serialize_messages};
use ctxkit_engine::{CompactionPlan, Engine, EngineError};
use ctxkit_session::{Session, SessionError};
use serde_json::{Value, json};

use super::engine_run::{engine_for, run_cancellable};
use super::print_json;
use super::summary_setup::SummarySetup;
use crate::Outcome;
use crate::render::{counted, one_line};

/// Options of `ctxkit compact`.
#[derive(Debug)]
pub struct CompactArgs<'a> {
    pub file: &'a Path,
    pub out_file: Option<&'a Path>,
    /// Work on a temporary copy and write nothing.
    pub preview: bool,
    pub focus: Option<&'a str>,
    pub context_window: u64,
    pub dry_run: bool,
    pub json: bool,
}

/// The reference's `prepareCompaction` output as JSON, messages exactly as stored.
fn plan_json(session: &Session, preparation: &Preparation) -> Result<Value> {
    let values = |messages: &[ctxkit_compaction::SourcedMessage]| -> Result<Vec<Value>> {
        messages
            .iter()
            .map(|message| Ok(session.message_value(&message.source)?))
            .collect()
    };
    let lists = preparation.file_operations.lists();
    let mut plan = json!({
        "firstKeptEntryId": preparation.first_kept_entry_id,
        "isSplitTurn": preparation.is_split_turn,
        "tokensBefore": preparation.tokens_before,
        "previousSummary": preparation.previous_summary,
        "messagesToSummarize": values(&preparation.messages_to_summarize)?,
        "turnPrefixMessages": values(&preparation.turn_prefix_messages)?,
        "readFiles": lists.read_files,
        "modifiedFiles": lists.modified_files,
        "serializedToSummarize": serialize_messages(&preparation.messages_to_summarize),
        "serializedTurnPrefix": serialize_messages(&preparation.turn_prefix_messages),
    });
    // A span too long to carry whole lists its window: say how many messages it left out.
    for (key, gap) in [
        ("messagesOmitted", preparation.history_gap),
        ("turnPrefixOmitted", preparation.turn_prefix_gap),
    ] {
        if let (Some(gap), Some(object)) = (gap, plan.as_object_mut()) {
            object.insert(
                key.to_owned(),
                json!({"at": gap.at, "messages": gap.messages}),
            );
        }
    }
    Ok(plan)
}

/// `ctxkit compact`.
pub fn compact_command(
    args: CompactArgs<'_>,
    setup: SummarySetup,
    out: &mut dyn Write,
) -> Result<Outcome> {
    // Kept alive until the command ends; removed on drop, or by a stop signal.
    let preview_copy = if args.preview {
        let mut copy = tempfile::Builder::new()
            .prefix("ctxkit-preview-")
            .suffix(".jsonl")
            .tempfile()?;
        let registered = super::leftovers::remove_on_stop(copy.path());
        // Written into the private copy (mode 0600), not copied with the file's mode: a
        // read-only session gave a read-only copy the preview could not compact (QA).
        std::fs::File::open(args.file)
            .and_then(|mut source| std::io::copy(&mut source, copy.as_file_mut()))
            .with_context(|| format!("cannot copy `{}` for the preview", args.file.display()))?;
        Some((copy, registered))
    } else {
        None
    };
    // The new --out file stays only when a compaction is written into it.
    let (target, unwritten_copy) = match (args.out_file, &preview_copy) {
        (_, Some((copy, _))) => (copy.path(), None),
        (Some(out_file), None) => {
            let registered = new_copy(args.file, out_file)?;
            (out_file, Some(UnwrittenCopy(out_file, Some(registered))))
        }
        (None, None) => (args.file, None),
    };
    compact_target(&args, setup, target, unwritten_copy, out)
        .map_err(|error| naming_the_file(error, target, args.file))
}

/// An error met in the copy a preview or `--out` compacts, naming the file the user gave: the copy
/// is gone when the error is shown (QA 2026-12-07: "`/tmp/ctxkit-preview-hNCNUY.jsonl` line 300",
/// and a hint to check that file).
fn naming_the_file(mut error: anyhow::Error, copy: &Path, file: &Path) -> anyhow::Error {
    if copy == file {
        return error;
    }
    let path = if error.is::<SessionError>() {
        error
            .downcast_mut::<SessionError>()
            .and_then(SessionError::path_mut)
    } else {
        match error.downcast_mut::<EngineError>() {
            Some(EngineError::Session(session)) => session.path_mut(),
            Some(_) | None => None,
        }
    };
    if let Some(path) = path.filter(|path| path.as_path() == copy) {
        *path = file.to_owned();
    }
    error
}

/// `ctxkit compact` on `target`: the file, or the copy a preview or `--out` writes.
fn compact_target(
    args: &CompactArgs<'_>,
    setup: SummarySetup,
    target: &Path,
    mut unwritten_copy: Option<UnwrittenCopy<'_>>,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let mut session = Session::open(target)?;
    if args.dry_run || args.preview {
        super::report_damage(&session, args.file)?;
    } else {
        super::note_damage_before_writing(&session, target)?;
    }
    // Said once the compaction is written: "this write rewrites it as v3" came before "Nothing
    // to compact … nothing was written" (QA 2026-12-07).
    let rewritten_from = super::older_format(&session).filter(|_| !args.preview);
    let context_window = if args.context_window == 0 {
        setup.model_context_window.unwrap_or(0)
    } else {
        args.context_window
    };
    if args.dry_run {
        return dry_run(&engine_for(session, setup, context_window), args.json, out);
    }
    // Refuse before a (possibly paid) summary when another process holds the file.
    session.hold_lock()?;
    let summarizer = setup.summarizer.name();
    let engine = engine_for(session, setup, context_window);
    let cancel = engine.clone();
    let focus = args.focus.map(str::to_owned);
    let outcome = run_cancellable(
        &engine,
        summarizer,
        "Compacting…",
        engine.compact(focus),
        move || cancel.cancel_compaction(),
    )?;
    let end = match outcome {
        Ok(end) => end,
        Err(EngineError::NothingToCompact | EngineError::AlreadyCompacted) => {
            let reason = nothing_to_compact(&engine)?;
            if args.json {
                print_json(out, &json!({"compactionId": null, "reason": reason}))?;
            } else {
                writeln!(out, "Nothing to compact: {reason}; nothing was written")?;
            }
            return Ok(Outcome::Success);
        }
        // Interrupted, as the user asked: 130, not "invalid input" (QA).
        Err(EngineError::Cancelled) => {
            writeln!(
                crate::redact::stderr(),
                "compaction cancelled; nothing was written"
            )?;
            return Ok(Outcome::Signalled { number: 2 });
        }
        Err(error) => return Err(error.into()),
    };
    if let Some(copy) = unwritten_copy.take() {
        copy.keep();
    }
    if let Some(version) = rewritten_from {
        writeln!(
            crate::redact::stderr(),
            "note: `{}` was in session format v{version}; it is v3 now (entry ids as `ctxkit tree` \
             shows them)",
            target.display()
        )?;
    }
    let (Some(entry_id), Some(before), Some(after)) =
        (end.entry_id.as_deref(), end.tokens_before, end.tokens_after)
    else {
        bail!("the compaction wrote no entry");
    };
    // A session without an assistant message holds its entries back (Pi's deferred first write):
    // a compaction asked for by name is written now, or the command fails.
    tokio::runtime::Builder::new_current_thread()
        .build()?
        .block_on(engine.flush_pending())?;
    let (summary, details, recorded_before) = written_summary(&engine, entry_id)?;
    let first_kept = end.first_kept_entry_id.clone().unwrap_or_default();
    let saved = if before == 0 {
        0.0
    } else {
        100.0 * (1.0 - after as f64 / before as f64)
    };
    if args.json {
        print_json(
            out,
            &json!({
                "compactionId": entry_id,
                "file": if args.preview { Value::Null } else { json!(target.display().to_string()) },
                "tokensBefore": recorded_before,
                "estimatedTokensBefore": before,
                "tokensAfter": after,
                "firstKeptEntryId": first_kept,
                "readFiles": details["readFiles"],
                "modifiedFiles": details["modifiedFiles"],
                "summary": summary,
                "fallback": end.fallback,
                "warning": end.advice,
            }),
        )?;
    } else {
        let what = if args.preview {
            "Preview (nothing written)".to_owned()
        } else {
            format!("Compacted `{}`", target.display())
        };
        let change = if after < before {
            format!("{saved:.0}% saved")
        } else {
            format!("{:.0}% larger", -saved)
        };
        writeln!(
            out,
            "{what}: the model's view ~{before} → ~{after} tokens, estimated ({change}), \
             keeping from {first_kept}"
        )?;
        let count = |key: &str| details[key].as_array().map_or(0, Vec::len);
        writeln!(
            out,
            "Files tracked: {} read, {} modified",
            count("readFiles"),
            count("modifiedFiles")
        )?;
        writeln!(out)?;
        writeln!(out, "{summary}")?;
    }
    if let Some(error) = end.error.as_deref().filter(|_| end.fallback) {
        writeln!(
            crate::redact::stderr(),
            "warning: summarization failed ({error}); the oldest messages were dropped without a summary"
        )?;
    }
    if after >= before && !args.preview {
        writeln!(
            crate::redact::stderr(),
            "warning: the summary is larger than what it replaced; `ctxkit undo-compact {}` puts \
             the earlier context back",
            target.display()
        )?;
    }
    if let Some(advice) = &end.advice {
        writeln!(crate::redact::stderr(), "warning: {advice}")?;
    }
    Ok(Outcome::Success)
}

/// Copies `source` to the new file `out_file` (`compact --out`) under a new session id naming
/// `source` its parent: one id per file.
/// Copies `source` to the new file `out_file`, which a stop signal removes until the returned
/// registration is dropped.
fn new_copy(source: &Path, out_file: &Path) -> Result<super::leftovers::Registered> {
    if out_file.is_dir() {
        bail!(
            "`{}` is a folder; name the new session file for --out (e.g. `{}`)",
            out_file.display(),
            out_file.join("compacted.jsonl").display()
        );
    }
    // A dangling symlink counts as existing: copying would write through it.
    if std::fs::symlink_metadata(out_file).is_ok() {
        bail!(
            "`{}` already exists; choose a new file for --out",
            out_file.display()
        );
    }
    // The folder must exist: a mistyped --out creates no folders.
    if let Some(folder) = out_file
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
    {
        std::fs::metadata(folder)
            .with_context(|| format!("cannot write `{}`", out_file.display()))?;
    }
    let registered = super::leftovers::remove_on_stop(out_file);
    // The copy is written through a temporary file beside it (QA: a signal during the copy left
    // the whole session there).
    let _temporaries = super::leftovers::temporaries_beside(out_file);
    Session::copy_to(source, out_file).with_context(|| {
        format!(
            "cannot copy `{}` to `{}`",
            source.display(),
            out_file.display()
        )
    })?;
    Ok(registered)
}

/// A file `compact --out` created, removed when the command ends before a compaction is written
/// into it (nothing to compact, cancelled, failed): "nothing was written" stays true.
struct UnwrittenCopy<'a>(&'a Path, Option<super::leftovers::Registered>);

impl UnwrittenCopy<'_> {
    fn keep(mut self) {
        // Written: no longer removed by a stop signal either.
        drop(self.1.take());
        std::mem::forget(self);
    }
}

impl Drop for UnwrittenCopy<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.0);
    }
}

/// `compact --dry-run`: the plan the engine would carry out.
fn dry_run(engine: &Engine, json: bool, out: &mut dyn Write) -> Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let preparation = match runtime.block_on(engine.plan())? {
        CompactionPlan::Ready(preparation) => preparation,
        CompactionPlan::Nothing(reason) => {
            if json {
                print_json(out, &json!({"plan": null, "reason": reason.describe()}))?;
            } else {
                writeln!(out, "Nothing to compact: {}", reason.describe())?;
            }
            return Ok(Outcome::Success);
        }
    };
    if json {
        let plan =
            runtime.block_on(engine.with_session(|session| plan_json(session, &preparation)))?;
        print_json(out, &json!({"plan": plan, "reason": null}))?;
        return Ok(Outcome::Success);
    }
    let lists = preparation.file_operations.lists();
    writeln!(
        out,
        "Would summarize {}{} and keep from entry {}.",
        counted(preparation.history_len(), "message"),
        if preparation.is_split_turn {
            format!(
                " plus a split-turn prefix of {}",
                preparation.turn_prefix_len()
            )
        } else {
            String::new()
        },
        preparation.first_kept_entry_id
    )?;
    writeln!(
        out,
        "Context now: {} tokens. Files: {} read, {} modified.",
        preparation.tokens_before,
        lists.read_files.len(),
        lists.modified_files.len()
    )?;
    Ok(Outcome::Success)
}

/// Why the engine found nothing to compact, in words.
fn nothing_to_compact(engine: &Engine) -> Result<String> {
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    match runtime.block_on(engine.plan())? {
        CompactionPlan::Nothing(reason) => Ok(reason.describe()),
        // The command holds the file's lock and the engine's answer was just this plan's.
        CompactionPlan::Ready(_) => bail!("the engine found nothing to compact but plans one now"),
    }
}

/// The summary, details and recorded `tokensBefore` of the compaction entry `id`.
fn written_summary(engine: &Engine, id: &str) -> Result<(String, Value, u64)> {
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let parsed = runtime
        .block_on(engine.with_session(|session| session.entry(id).map(|entry| entry.parse())));
    let entry = match parsed {
        Some(entry) => entry?,
        None => bail!("the compaction entry `{id}` is missing"),
    };
    let Some(compaction) = entry.kind.as_compaction() else {
        bail!("entry `{id}` is not a compaction");
    };
    Ok((
        compaction.summary.clone(),
        compaction.details.clone().unwrap_or(Value::Null),
        compaction.tokens_before,
    ))
}

/// `ctxkit compactions`.
pub fn compactions(file: &Path, json: bool, out: &mut dyn Write) -> Result<Outcome> {
    let session = super::open_for_reading(file)?;
    let records = list_compactions(&session, None)?;
    warn_of_unreadable(&records, file)?;
    if json {
        let values: Vec<Value> = records
            .iter()
            .map(|record| {
                json!({
                    "id": record.id,
                    "timestamp": record.timestamp,
                    "firstKeptEntryId": record.first_kept_entry_id,
                    "coveredEntryIds": record.covered_entry_ids,
                    "tokensBefore": record.tokens_before,
                    "tokensAfter": record.tokens_after,
                    "summarizer": record.summarizer,
                    "usage": record.usage,
                    "fromHook": record.from_hook,
                    "unreadable": record.unreadable,
                })
            })
            .collect();
        print_json(out, &values)?;
        return Ok(Outcome::Success);
    }
    if records.is_empty() {
        writeln!(out, "No compaction on the current path.")?;
    }
    for record in &records {
        writeln!(out, "{}", describe_compaction(record))?;
        // An unreadable one has no summary to show (a line of blanks).
        if record.unreadable.is_none() {
            writeln!(out, "    {}", one_line(&record.summary, 76))?;
        }
    }
    Ok(Outcome::Success)
}

/// Says on stderr, in one line, which messages kept after a compaction could not be read (left out
/// of its tokens after), as other commands say a file is damaged and go on with what they read.
fn warn_of_unreadable(records: &[CompactionRecord], file: &Path) -> Result<()> {
    let mut unreadable: Vec<&str> = records
        .iter()
        .flat_map(|record| record.unreadable_entry_ids.iter().map(String::as_str))
        .collect();
    unreadable.sort_unstable();
    unreadable.dedup();
    let Some(first) = unreadable.first() else {
        return Ok(());
    };
    let more = match unreadable.len() {
        1 => String::new(),
        count => format!(" and {} more", count - 1),
    };
    writeln!(
        crate::redact::stderr(),
        "warning: `{}` is damaged (entry {first} is not a readable message{more}); its tokens \
         after a compaction leave it out, run `ctxkit check {}` for every problem",
        file.display(),
        file.display()
    )?;
    Ok(())
}

/// A compaction in three lines of at most about 80 columns: id, time and who wrote it; what it
/// covers; tokens before and after. The two counts are not of one kind, and the line says so,
/// with no arrow between them (a tester read "180311 → ~11411" as 94% saved): before is the
/// entry's recorded `tokensBefore` (the provider's count of the whole request when a reply
/// reported one, as Pi records it), after ctxkit's estimate of the messages alone right after it.
pub(crate) fn describe_compaction(record: &CompactionRecord) -> String {
    if let Some(reason) = &record.unreadable {
        return format!(
            "{}  {}  unreadable ({reason}): the context passes over it",
            record.id, record.timestamp
        );
    }
    format!(
        "{}  {}  by {}\n    covers {}, {}\n    before {} tokens (as recorded) · after ~{} tokens of messages (estimated)",
        record.id,
        record.timestamp,
        // Pi and the agents `import` reads record no summarizer: their own model wrote it.
        match record.summarizer.as_deref() {
            Some("offline") => "the offline summarizer",
            Some(model) => model,
            None if record.from_hook => "a hook",
            None => "the session's agent (model not recorded)",
        },
        counted(record.covered_entry_ids.len(), "entry"),
        crate::render::kept_from(&record.id, &record.first_kept_entry_id),
        record.tokens_before,
        record.tokens_after,
    )
}
