//! On-disk and wire types of ctxkit: Pi's session format v3 (header, entries, messages, content blocks,
//! usage) and the JSON records the `ctxkit` CLI prints.
//!
//! This crate is pure data: serde only, no I/O. Every type keeps fields it does not know in an `extra`
//! map so a value read from a file serializes back to an equal value.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod content;
mod entry;
mod foreign_block;
mod grep_lines;
mod header;
mod injected;
mod js;
mod json;
mod lenient;
mod message;
mod pinned;
mod provider_compaction;
mod provider_edits;
mod records;
mod scripts;
mod shown;
mod tagged;
mod tool_pairing;

pub use content::{
    ContentBlock, ImageContent, MessageContent, TextContent, ThinkingContent, ToolCall,
};
pub use entry::{
    BranchSummaryEntry, CompactionEntry, ContextEditEntry, CustomEntry, CustomMessageEntry,
    EditReplacement, EntryKind, LabelEntry, ModelChangeEntry, SessionEntry, SessionInfoEntry,
    ThinkingLevelChangeEntry, UsageEntry,
};
pub use foreign_block::{ANTHROPIC_BLOCK_FIELD, anthropic_document, foreign_block_text};
pub use grep_lines::{has_file_extension, without_grep_line_number};
pub use header::{CURRENT_SESSION_VERSION, SessionHeader};
pub use injected::{injected_events, is_injected_context, strip_blocks, strip_injected_context};
pub use js::{js_number, js_object_entries, js_stringify};
pub use json::{TOO_DEEP, from_str_repaired, json_line_error, repair_lone_surrogates};
pub use lenient::{value_as_i64, value_as_u64};
pub use message::{
    AgentMessage, AssistantMessage, BashExecutionMessage, BranchSummaryMessage,
    CompactionSummaryMessage, CustomMessage, ToolResultMessage, Usage, UsageCost, UserMessage,
    parse_agent_message,
};
pub use pinned::{AFTER_COMPACTION_KEY, PIN_ENTRY_TYPE, PIN_ID_KEY, PINNED_MESSAGE_TYPE};
pub use provider_compaction::{
    ON_DEMAND_COMPACTION_FIELD, ON_DEMAND_MODE, PROVIDER_COMPACTION_DETAILS,
    PROVIDER_COMPACTION_FIELD,
};
pub use provider_edits::{PROVIDER_EDITS_FIELD, ProviderContextEdit};
pub use records::{ContextRecord, ModelRef, SessionInfoRecord, TreeNodeRecord, TreeRecord};
pub use scripts::is_written_without_spaces;
pub use shown::{UNSAFE_TO_SHOW, draws_nothing, is_invisible, is_unsafe_to_show};

/// The name of the tool that fetches what a view shortened or a summary replaced (the agent's
/// `recall`): what summaries and carried names leave out, and what the view's markers point at.
pub const RECALL_TOOL: &str = "recall";
pub use tool_pairing::{NO_TOOL_RESULT, OpenCall, OpenToolCalls, paired_order};

/// A JSON object with its keys in file order.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;
