//! Compaction for ctxkit: cut points, preparation, conversation serialization, summaries (through a
//! model-agnostic `Summarizer`; the offline one is `ctxkit-summarizer-offline`), branch summaries.
//! Token accounting is `ctxkit-tokens`'. Planning is pure; only the runner talks to a model.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod branch;
mod chunks;
mod continuation;
mod cut;
mod error;
mod file_context;
mod file_ops;
mod history;
mod kept;
mod on_demand;
mod powershell;
mod prepare;
mod prompts;
mod runner;
mod serialize;
mod settings;
mod span_window;
mod tool_paths;
mod verbatim_prefix;

pub use branch::{
    BranchEntries, BranchSummary, BranchSummaryOptions, InstructionsMode, PreparedBranch,
    branch_has_messages, branch_request, collect_branch_entries, prepare_branch_entries,
    summarize_branch,
};
pub use continuation::{CachePrefix, estimate_overhead_tokens, estimate_prefix_tokens};
pub use cut::{CutEntry, CutPoint, find_cut_point, find_turn_start, is_valid_cut_point};
pub use error::CompactionError;
pub use file_context::{
    CurrentFile, FileContextLimits, file_context_block, rank_context_files, read_file_context,
};
pub use file_ops::{FileLists, FileOperations};
pub use history::{
    CarriedEntry, CompactionRecord, LoopGuard, NotCarried, NotCarriedReason, UNDO_COMPACTION_TYPE,
    UndoOutcome, check_after_compaction, list_compactions, undo_last_compaction,
};
pub use kept::kept_summary;
pub use on_demand::{compact_on_demand, open_tool_call};
pub use prepare::{
    NoPlanReason, PlanOutcome, Preparation, ProjectedTokens, SourcedMessage, UsageStanding,
    count_projected_context_tokens, estimate_projected_context_tokens, prepare_compaction,
};
pub use prompts::{PromptFileError, Prompts};
pub use runner::{
    APPEND_NOTE, APPEND_SEPARATOR, CompactOptions, CompactionResult, NO_PRIOR_HISTORY,
    TURN_CONTEXT_SEPARATOR, appended_to, compact, history_request, run_request, serialize_messages,
    turn_prefix_request,
};
pub use serialize::{TOOL_RESULT_MAX_UNITS, serialize_conversation, truncate_for_summary};
pub use settings::CompactionSettings;
pub use span_window::{SPAN_WINDOW_MESSAGES, SPAN_WINDOW_TOKENS, SpanGap};
pub use verbatim_prefix::{VERBATIM_TURN_PREFIX_CHARS, verbatim_turn_prefix};
