//! The agent loop every ctxkit surface runs (`ctxkit chat`, `agent.run` over `ctxkit serve`, an
//! embedder's own program): a [`ChatModel`] is called on the engine's view of the session, its tool
//! calls are approved ([`Approver`]) and run ([`ToolRegistry`]), everything is appended through the
//! engine, and the engine's checks compact on threshold and recover overflows, wherever in a turn
//! they happen, by compacting and running the turn again.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod agent;
mod approve;
mod model;
pub mod testing;
mod tool;
pub mod tools;

pub use agent::{Agent, AgentEvent, AgentObserver, AgentOptions, IgnoreEvents, PromptOutcome};
pub use approve::{Approval, ApproveAll, Approver, DenyAll};
pub use model::ChatModel;
pub use tool::{Tool, ToolContext, ToolOutcome, ToolRegistry, TypedTool};
