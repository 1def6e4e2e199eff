//! Methods on the session itself: creating it, its name, labels, the compaction history and the
//! session list. Unknown ids are errors (`entry_not_found`), never `null`; a `cwd` no session
//! folder can be named after is refused when the session is created, not at its first write.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxkit_compaction::{NotCarried, NotCarriedReason, list_compactions};
use ctxkit_engine::EngineError;
use ctxkit_protocol::SessionInfoRecord;
use ctxkit_session::{Session, default_session_dir, list_all_sessions, list_sessions};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::errors::engine_error;
use crate::methods::{engine, install, params};
use crate::{MethodError, Shared, codes};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateParams {
    cwd: String,
    #[serde(default)]
    session_dir: Option<PathBuf>,
    #[serde(default)]
    in_memory: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NameParams {
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LabelParams {
    entry_id: String,
    /// `null` or absent removes the label.
    #[serde(default)]
    label: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListParams {
    /// The project whose sessions to list (default: the open session's `cwd`).
    #[serde(default)]
    cwd: Option<String>,
    /// Every project's sessions.
    #[serde(default)]
    all: bool,
}

fn session_error(error: ctxkit_session::SessionError) -> MethodError {
    engine_error(EngineError::from(error))
}

fn compaction_error(error: ctxkit_compaction::CompactionError) -> MethodError {
    engine_error(EngineError::from(error))
}

/// `session.create`: a new session for the project at `cwd`, in the database store, in memory, in
/// `session_dir`, or in the sessions folder named after `cwd`.
pub(crate) async fn create(shared: &Arc<Shared>, raw: Value) -> Result<Value, MethodError> {
    let mut params: CreateParams = params(raw)?;
    check_cwd(&params.cwd)?;
    // As Pi records it: `/proj/` and `/work/../proj` are the folder `/proj`.
    if let Ok(resolved) = ctxkit_session::resolved_cwd(Path::new(&params.cwd)) {
        params.cwd = resolved.display().to_string();
    }
    // The client named it: its runs work there.
    shared.projects.choose(Path::new(&params.cwd));
    if let Some(binding) = &shared.config.store
        && !params.in_memory
        && params.session_dir.is_none()
    {
        let opened = crate::mirror::create(binding, &shared.owner, &params.cwd).await?;
        return install(shared, opened).await;
    }
    let session = if params.in_memory {
        Session::in_memory(&params.cwd)
    } else {
        let dir = match params.session_dir {
            Some(dir) => {
                check_session_dir(&dir)?;
                dir
            }
            // An over-long `cwd` names a shortened folder (`encode_cwd`).
            None => default_session_dir(&shared.config.sessions_root, &params.cwd),
        };
        Session::create(&params.cwd, &dir)
    };
    install(shared, crate::mirror::Opened::file(session)).await
}

fn invalid_cwd(reason: String) -> MethodError {
    MethodError::new(
        codes::INVALID_PARAMS,
        format!("invalid params: `cwd` {reason}; pass the project's absolute path"),
    )
}

/// A session's `cwd` is where its tools run and what names its sessions folder: an absolute path.
pub(crate) fn check_cwd(cwd: &str) -> Result<(), MethodError> {
    if cwd.is_empty() {
        return Err(invalid_cwd("is empty".to_owned()));
    }
    if cwd.contains('\0') {
        return Err(invalid_cwd(
            "contains a NUL byte, which no path holds".to_owned(),
        ));
    }
    if !Path::new(cwd).is_absolute() {
        return Err(invalid_cwd(format!("`{cwd}` is not an absolute path")));
    }
    Ok(())
}

/// A `session_dir` is an absolute folder: a relative one would name a folder below wherever the
/// server happens to run (over WebSocket, not where the client is).
/// One that is there must be a folder: a file named there was taken, and the first append
/// failed with "File exists".
fn check_session_dir(dir: &Path) -> Result<(), MethodError> {
    let problem = if !dir.is_absolute() {
        "is not an absolute path; pass the folder's absolute path"
    } else if dir.exists() && !dir.is_dir() {
        "is not a folder; pass a folder (a missing one is created)"
    } else {
        return Ok(());
    };
    Err(MethodError::new(
        codes::INVALID_PARAMS,
        format!(
            "invalid params: `session_dir` `{}` {problem}",
            dir.display()
        ),
    ))
}

/// `session.name`: names the session (appends a `session_info` entry).
pub(crate) async fn name(shared: &Arc<Shared>, raw: Value) -> Result<Value, MethodError> {
    let params: NameParams = params(raw)?;
    let name = params.name.trim().to_owned();
    if name.is_empty() {
        return Err(MethodError::new(
            codes::INVALID_PARAMS,
            "invalid params: `name` is empty",
        ));
    }
    let id = engine(shared)
        .await?
        .name_session(&name)
        .await
        .map_err(engine_error)?;
    Ok(json!({ "entry_id": id }))
}

/// `label.set`: labels an entry, or removes its label.
pub(crate) async fn label(shared: &Arc<Shared>, raw: Value) -> Result<Value, MethodError> {
    let params: LabelParams = params(raw)?;
    let label = params.label.filter(|label| !label.trim().is_empty());
    let id = engine(shared)
        .await?
        .set_label(&params.entry_id, label.as_deref())
        .await
        .map_err(engine_error)?;
    Ok(json!({ "entry_id": id }))
}

/// `compaction.list`: the compactions on the current branch, oldest first.
pub(crate) async fn compactions(shared: &Arc<Shared>) -> Result<Value, MethodError> {
    let records = engine(shared)
        .await?
        .with_session(|session| list_compactions(session, None))
        .await
        .map_err(compaction_error)?;
    let records: Vec<Value> = records
        .into_iter()
        .map(|record| {
            json!({
                "id": record.id,
                "timestamp": record.timestamp,
                "first_kept_entry_id": record.first_kept_entry_id,
                "covered_entry_ids": record.covered_entry_ids,
                "tokens_before": record.tokens_before,
                "tokens_after": record.tokens_after,
                "summarizer": record.summarizer,
                "from_hook": record.from_hook,
                "summary": record.summary,
                "unreadable": record.unreadable,
            })
        })
        .collect();
    Ok(json!({ "compactions": records }))
}

/// `compaction.undo`: back to before the last compaction on the branch (append-only).
pub(crate) async fn undo(shared: &Arc<Shared>) -> Result<Value, MethodError> {
    let undone = engine(shared)
        .await?
        .undo_compaction()
        .await
        .map_err(engine_error)?;
    match undone {
        Some(undone) => Ok(json!({
            "compaction_id": undone.compaction_id,
            "restored_leaf_id": undone.restored_leaf_id,
            "marker_id": undone.marker_id,
            "reappended": undone.reappended_messages(),
            "carried": undone.carried.iter().map(|entry| json!({
                "type": entry.entry_type,
                "id": entry.original_id,
                "copy_id": entry.copy_id,
            })).collect::<Vec<_>>(),
            "not_carried": undone.not_carried.iter().map(not_carried).collect::<Vec<_>>(),
        })),
        None => Err(MethodError {
            code: codes::ENGINE_ERROR,
            message: "no compaction on the current branch".to_owned(),
            kind: Some("no_compaction"),
        }),
    }
}

/// An entry `compaction.undo` could not carry over: its type and id, a reason code, what it
/// edits, and one line saying so.
fn not_carried(entry: &NotCarried) -> Value {
    let (reason, target_id) = match &entry.reason {
        NotCarriedReason::EditsUndoneCompaction => ("edits_undone_compaction", None),
        NotCarriedReason::TargetNotOnBranch { target_id } => {
            ("target_not_on_branch", Some(target_id.as_str()))
        }
    };
    json!({
        "type": entry.entry_type,
        "id": entry.id,
        "reason": reason,
        "target_id": target_id,
        "message": entry.to_string(),
    })
}

/// `sessions.list`: sessions of a project (or of all), newest first.
pub(crate) async fn sessions(shared: &Arc<Shared>, raw: Value) -> Result<Value, MethodError> {
    let params: ListParams = params(raw)?;
    // A relative `cwd` names no project's folder (sweep 9: the list came back empty, silently).
    if let Some(cwd) = &params.cwd {
        check_cwd(cwd)?;
    }
    if let Some(binding) = &shared.config.store {
        return stored_sessions(shared, binding, params).await;
    }
    let root = &shared.config.sessions_root;
    let (records, skipped) = if params.all {
        list_all_sessions(root)
    } else {
        let cwd = match params.cwd {
            Some(cwd) => cwd,
            None => {
                engine(shared)
                    .await?
                    .with_session(|session| session.cwd().to_owned())
                    .await
            }
        };
        list_sessions(&default_session_dir(root, &cwd))
    }
    .map_err(session_error)?;
    let records: Vec<Value> = records.iter().map(session_record).collect();
    let skipped: Vec<Value> = skipped
        .iter()
        .map(|file| json!({"path": file.path.display().to_string(), "error": file.error.to_string()}))
        .collect();
    Ok(json!({ "sessions": records, "skipped": skipped }))
}

/// A listing row with the protocol's `snake_case` names.
fn session_record(record: &SessionInfoRecord) -> Value {
    json!({
        "path": record.path,
        "id": record.id,
        "cwd": record.cwd,
        "name": record.name,
        "parent_session_path": record.parent_session_path,
        "created": record.created,
        "modified": record.modified,
        "message_count": record.message_count,
        "first_message": record.first_message,
        "format_version": record.format_version,
    })
}

/// `sessions.list` on a database store: the database's listing; `path` is the id to pass to
/// `session.open`.
async fn stored_sessions(
    shared: &Arc<Shared>,
    binding: &crate::StoreBinding,
    params: ListParams,
) -> Result<Value, MethodError> {
    use ctxkit_store::SessionStore as _;
    let project = if params.all {
        None
    } else {
        match params.cwd {
            Some(cwd) => Some(cwd),
            None => Some(
                engine(shared)
                    .await?
                    .with_session(|session| session.cwd().to_owned())
                    .await,
            ),
        }
    };
    let query = ctxkit_store::ListQuery {
        project,
        ..ctxkit_store::ListQuery::default()
    };
    let stored = binding
        .store
        .list(&query)
        .await
        .map_err(|error| MethodError {
            code: codes::ENGINE_ERROR,
            message: error.to_string(),
            kind: Some("store"),
        })?;
    let records: Vec<Value> = stored
        .into_iter()
        .map(|session| {
            json!({
                "path": session.id,
                "id": session.id,
                "cwd": session.cwd,
                "name": session.name,
                "parent_session_path": session.parent_session,
                "created": session.created,
                "modified": ctxkit_session::iso_from_ms(session.shown_modified_ms()),
                "message_count": session.message_count,
                "first_message": session.first_message.unwrap_or_else(|| "(no messages)".to_owned()),
                "format_version": null,
            })
        })
        .collect();
    Ok(json!({ "sessions": records, "skipped": [] }))
}
