//! The session store: Pi-compatible (format v3) append-only JSONL session trees. Loading, indexing,
//! navigation, context building, conversion for providers, appends, branching, forking, migration and
//! listing.
//!
//! Everything here is synchronous and never prints; problems in files come back as values
//! ([`Diagnostic`]) or errors ([`SessionError`]).

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
mod ids;
mod index;
mod last_used;
mod line;
mod line_head;
mod listing;
mod llm;
mod load;
mod lock_holder;
mod migrate;
mod paths;
mod records;
mod regular;
mod scan;
mod session;
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
pub use ids::{iso_from_ms, new_entry_id, new_session_id, now_iso, parse_timestamp_ms};
pub use index::{EntryIndex, SessionIndex, TreeNode};
pub use last_used::{LAST_USED_RECORD, find_last_used_session, record_last_used_session};
pub use listing::{
    SkippedFile, find_most_recent_session, list_all_sessions, list_sessions, read_session_info,
};
pub use llm::{
    BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX, bash_execution_text, convert_to_llm, convert_values_to_llm,
    to_llm_message,
};
pub use paths::{default_session_dir, encode_cwd, session_file_name};
pub use records::ContextForm;
pub use regular::MAX_SESSION_BYTES;
pub use session::{LeafSelector, NewCompaction, Session, SummarySource};
pub use storage::Durability;
pub use system::current_system_message;
pub use watch::FileChange;

pub(crate) use ctxkit_protocol::JsonObject;
