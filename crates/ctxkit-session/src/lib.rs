//! The session store: Pi-compatible (format v3) append-only JSONL session trees. Loading, indexing,
//! navigation, context building, conversion for providers, appends, branching, forking, migration and
//! listing.
//!
//! Everything here is synchronous and never prints; problems in files come back as values
//! ([`Diagnostic`]) or errors ([`SessionError`]).
//!
//! A session written, opened again as another process would, and its context built:
//!
//! ```
//! use ctxkit_protocol::AgentMessage;
//! use ctxkit_session::Session;
//! use serde_json::json;
//!
//! let sessions = tempfile::tempdir()?;
//! // A new session for a project; its file is written once the first reply arrives (as Pi does).
//! let mut session = Session::create("/home/me/project", sessions.path());
//! let question: AgentMessage = serde_json::from_value(json!({
//!     "role": "user", "content": "fix the parser", "timestamp": 1_763_900_000_000_i64
//! }))?;
//! let reply: AgentMessage = serde_json::from_value(json!({
//!     "role": "assistant",
//!     "content": [{"type": "text", "text": "Fixed: the tokenizer skipped the last line."}],
//!     "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop",
//!     "usage": {"input": 120, "output": 12, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 132},
//!     "timestamp": 1_763_900_001_000_i64
//! }))?;
//! session.append_messages(vec![question, reply])?;
//! let path = session.path().ok_or("a session created in a directory has a file")?.to_owned();
//!
//! // The file is Pi's JSONL tree; the context is what a model sees at the leaf.
//! let reopened = Session::open(&path)?;
//! assert!(reopened.diagnostics().is_empty());
//! let context = reopened.build_context();
//! let messages = reopened.messages(&context.messages)?;
//! assert_eq!(messages.len(), 2);
//! let first = messages[0].as_user().ok_or("the first message is the question")?;
//! assert_eq!(first.content.joined_text("\n"), "fix the parser");
//! let model = context.model.and_then(|model| model.model_id);
//! assert_eq!(model.as_deref(), Some("claude-sonnet-4-5"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod atomic;
mod body;
#[cfg(unix)]
mod chunked;
mod context;
mod diagnostics;
mod entry;
mod error;
mod fast_head;
mod head;
mod header_file;
mod ids;
mod index;
mod last_used;
mod lax;
mod line;
mod line_facts;
mod line_head;
mod listing;
mod llm;
mod load;
mod lock_holder;
mod migrate;
mod paths;
mod private;
mod process;
mod records;
mod regular;
mod scan;
mod session;
mod spend;
mod storage;
mod system;
mod watch;

pub use body::EntryText;
pub use context::{
    ContextMessage, ContextMessageKind, EditEffect, ProjectedEntry, SessionContext, build_context,
    build_context_on_path, context_entries, context_message, context_message_value, edits_among,
    entry_messages, project_path,
};
pub use diagnostics::{Diagnostic, DiagnosticKind};
pub use entry::StoredEntry;
pub use error::{Result, SessionError};
pub use header_file::{read_header, scan_entry_ids};
pub use ids::{iso_from_ms, new_entry_id, new_session_id, now_iso, parse_timestamp_ms};
pub use index::{EntryIndex, SessionIndex, TreeNode};
pub use last_used::{LAST_USED_RECORD, find_last_used_session, record_last_used_session};
pub use line_facts::{EntryLineFacts, entry_line_facts};
pub use listing::{
    LISTED_FIRST_MESSAGE_CHARS, LineVisitor, ListedWith, SkippedFile, find_most_recent_session,
    list_all_sessions, list_all_sessions_with, list_sessions, list_sessions_with,
    listed_first_message, read_session_info, read_session_info_with,
};
pub use llm::{
    BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX, bash_execution_text, convert_to_llm, convert_values_to_llm,
    reaches_model, to_llm_message,
};
pub use paths::{default_session_dir, encode_cwd, file_safe_id, resolved_cwd, session_file_name};
pub use private::{
    private_copy_path, private_folder_holding, private_folders, private_temporary_folder,
    remove_abandoned_private_folders, write_private_file,
};
pub use process::current_user_id;
pub use records::ContextForm;
pub use regular::{MAX_SESSION_BYTES, open_session_file};
pub use session::{
    ContextEditWritten, LeafSelector, NewCompaction, OrphanedToolResult, Session, SummarySource,
};
pub use spend::{FreeModels, SessionSpend, SpendPart, SpendTally, session_spend};
pub use storage::{Durability, lock_session_file};
pub use system::current_system_message;
pub use watch::FileChange;

pub(crate) use ctxkit_protocol::JsonObject;
