//! The agent loop every ctxkit surface runs (`ctxkit chat`, `agent.run` over `ctxkit serve`, an
//! embedder's own program): a [`ChatModel`] is called on the engine's view of the session, its tool
//! calls are approved ([`Approver`]) and run ([`ToolRegistry`]), everything is appended through the
//! engine, and the engine's checks compact on threshold and recover overflows, wherever in a turn
//! they happen, by compacting and running the turn again.
//!
//! Everything an embedder needs is re-exported here, so one dependency on `ctxkit-agent` is enough:
//!
//! ```
//! use std::sync::Arc;
//!
//! use ctxkit_agent::testing::ScriptedModel;
//! use ctxkit_agent::{
//!     Agent, AgentOptions, DenyAll, Engine, EngineOptions, EngineSettings, ForkPosition, HookSet,
//!     IgnoreEvents, ModelInfo, NavigateOptions, OfflineSummarizer, PromptOutcome, Prompts, Session,
//!     Settings, ToolRegistry,
//! };
//!
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! let sessions = tempfile::tempdir()?;
//! // A new session file for a project (written once the first reply arrives).
//! let session = Session::create("/home/me/project", sessions.path());
//! // The engine: settings as a user without settings files gets them (`Settings::read` reads a
//! // settings document as the files are read), summaries written offline.
//! let engine = Engine::new(
//!     session,
//!     EngineOptions {
//!         settings: EngineSettings::from_settings(&Settings::read(&serde_json::json!({}))),
//!         model: None,
//!         summarizer: Arc::new(OfflineSummarizer::default()),
//!         prompts: Prompts::default(),
//!         hooks: HookSet::new(),
//!         thinking_level: None,
//!         project: None,
//!     },
//! );
//! // Any `ChatModel`: `ctxkit_llm::ModelClient` for a real provider, a scripted one here.
//! let model = ScriptedModel::answering(
//!     ModelInfo { provider: "mock".into(), id: "coder".into(), context_window: 128_000, cache: None },
//!     &["The parser is fixed."],
//! );
//! let mut agent = Agent::new(
//!     engine,
//!     Arc::new(model),
//!     ToolRegistry::coding(),
//!     AgentOptions {
//!         system_prompt: "You are a coding agent.".into(),
//!         max_tokens: Some(4_096),
//!         reasoning: None,
//!         pass_env: Vec::new(),
//!         auto_resize_images: true,
//!         max_tool_output_bytes: None,
//!         cwd: "/home/me/project".into(),
//!         bash_timeout: std::time::Duration::from_secs(120),
//!         shell: Default::default(),
//!     },
//! )
//! .await;
//! // `DenyAll` declines risky calls (`bash`); a UI implements `Approver` and `AgentObserver`.
//! let outcome = agent.prompt("fix the parser".into(), &mut DenyAll, &IgnoreEvents).await?;
//! assert_eq!(outcome, PromptOutcome::Answered);
//! let messages = agent.engine().transcript().await?;
//! assert_eq!(messages.len(), 2);
//! // Manual operations go to the engine: back to the reply (nothing left behind to summarize)…
//! let reply = agent.engine().with_session(|s| s.leaf_id().map(str::to_owned)).await;
//! let reply = reply.ok_or("no reply")?;
//! let moved = agent.engine().navigate(&reply, NavigateOptions::default()).await?;
//! assert_eq!(moved.new_leaf_id.as_deref(), Some(reply.as_str()));
//! // …and a new session from it, which the engine works on from now.
//! let fork = agent.engine().fork(&reply, ForkPosition::At).await?;
//! assert!(fork.session_file.is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod agent;
mod approve;
mod git_hooks;
mod limits;
mod model;
mod names;
mod resolve;
pub mod testing;
mod tool;
mod tool_selection;
pub mod tools;
mod warming;
mod workspace;

pub use agent::{
    AfterCancelledCompaction, Agent, AgentEvent, AgentObserver, AgentOptions, IgnoreEvents,
    NoOutputRoom, NoRoomCause, PromptOutcome, Steering,
};
pub use approve::{Approval, ApproveAll, Approver, DenyAll};
pub use limits::WorkspaceLimits;
pub use model::ChatModel;
pub use names::{shown_path, shown_path_argument};
pub use tool::{Approved, Tool, ToolContext, ToolOutcome, ToolProgress, ToolRegistry, TypedTool};
pub use tool_selection::{
    NoTools, ToolFlags, ToolListProblem, ToolListSource, ToolSelection, UnknownTool,
    select_coding_tools, select_tools, tool_list_problem,
};
pub use warming::{CacheWarmer, CacheWarming, PromptCache};
pub use workspace::{Access, GUARDED_KINDS, Place, Refusal, Workspace, resolve as resolve_path};

// What an embedder builds an agent from, so that one dependency is enough.
pub use ctxkit_compaction::Prompts;
pub use ctxkit_engine::{
    CompactionEnd, Engine, EngineError, EngineEvent, EngineOptions, EngineSettings, ForkOutcome,
    ForkPosition, HookSet, Hooks, ModelInfo, NavigateOptions, NavigateOutcome,
};
pub use ctxkit_llm::{
    ChatDelta, ChatRequest, EnvSettings, LlmOptions, ModelClient, ModelRole, ProviderConfig,
    ReasoningLevel, resolve_model,
};
pub use ctxkit_protocol::{
    AgentMessage, AssistantMessage, ContentBlock, MessageContent, ToolCall, ToolResultMessage,
    UserMessage,
};
pub use ctxkit_session::Session;
pub use ctxkit_settings::Settings;
pub use ctxkit_summarizer::{Summarizer, ToolDefinition};
pub use ctxkit_summarizer_offline::OfflineSummarizer;
