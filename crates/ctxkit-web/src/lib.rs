//! A session as a web page: the tree (branches, labels, names, the leaf), the raw entries beside
//! what the model saw (the session's context builder and the per-call transforms), each compaction
//! beside what it replaced, a chart of the context size per request with its markers, usage and
//! cost, search, deep links and keyboard navigation.
//!
//! [`build_page_data`] turns a session into the page's data (every string redacted by a
//! [`Redactor`] and clipped to the page's text budget); [`render_page`] makes one self-contained
//! HTML document of it (inline script and style allowed by hash, data as escaped JSON, no network);
//! [`export_page`] writes that document as a stream, an entry at a time (an exported session of a
//! million entries is never held whole);
//! [`serve_view`] serves it on loopback behind a random token and follows the file as it grows
//! (the same stream written into one buffer, sent uncopied; a context on demand of at most
//! [`MAX_VIEW_CONTEXT_MESSAGES`] messages).

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod blocks;
mod contexts;
mod error;
mod history;
mod loader;
mod markdown;
mod model;
mod page;
mod parsed;
mod problems;
mod redact;
mod sent_table;
mod serve;
mod stream;
mod tool_calls;

pub use error::WebError;
pub use loader::{ImportCache, OpenedSession, SessionLoader};
pub use model::{
    ContextPolicy, MAX_CLIP_CHARS, MAX_PRECOMPUTED_CONTEXT_RECORDS, MIN_CLIP_CHARS, PageOptions,
    build_page_data, context_data, context_data_within,
};
pub use page::{PageMode, content_security_policy, export_page, render_page, script_safe_json};
pub use redact::{REDACTED, Redactor};
pub use serve::{
    MAX_CONTEXT_BUILDS, MAX_VIEW_CONTEXT_MESSAGES, VIEW_CONNECTION_LIMIT, ViewConfig, new_token,
    serve_view, watched_version,
};
pub use stream::{MAX_PRECOMPUTED_CONTEXT_BYTES, MAX_PRECOMPUTED_CONTEXT_MESSAGES, PageStats};
