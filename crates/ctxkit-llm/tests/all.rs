//! Integration tests: each provider against a local wiremock server speaking its wire format.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "all/adaptive_thinking.rs"]
mod adaptive_thinking;
#[path = "all/chat.rs"]
mod chat;
#[path = "all/chat_compat_flags.rs"]
mod chat_compat_flags;
#[path = "all/chat_formats.rs"]
mod chat_formats;
#[path = "all/chat_reasoning.rs"]
mod chat_reasoning;
#[path = "all/chat_streaming.rs"]
mod chat_streaming;
#[path = "all/common.rs"]
mod common;
#[path = "all/context_editing.rs"]
mod context_editing;
#[path = "all/echoed_secrets.rs"]
mod echoed_secrets;
#[path = "all/foreign_keys.rs"]
mod foreign_keys;
#[path = "all/gemini_thinking.rs"]
mod gemini_thinking;
#[path = "all/live.rs"]
mod live;
#[path = "all/malformed_events.rs"]
mod malformed_events;
#[path = "all/message_threads.rs"]
mod message_threads;
#[path = "all/prompt_caching.rs"]
mod prompt_caching;
#[path = "all/provider_compaction.rs"]
mod provider_compaction;
#[path = "all/providers.rs"]
mod providers;
#[path = "all/redirects.rs"]
mod redirects;
#[path = "all/reply_limit.rs"]
mod reply_limit;
#[path = "all/stream_ends.rs"]
mod stream_ends;
#[path = "all/stream_retries.rs"]
mod stream_retries;
#[path = "all/timeouts.rs"]
mod timeouts;
#[path = "all/transport.rs"]
mod transport;
