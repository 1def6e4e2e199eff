//! What the running request is doing, followed from its events (the engine's compaction and branch
//! summary events, `agent.run`'s model calls and tool calls): a request abandoned after a stop
//! names what actually held it, not what its method might have been waiting on.

use std::sync::{Arc, Mutex};

use ctxkit_agent::AgentEvent;
use ctxkit_engine::EngineEvent;

/// The step a request is in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Activity {
    /// None of the steps below (between them, or a request that has none).
    #[default]
    Other,
    /// A compaction: its `before_compact` hook, or the summary request (or the wait for a
    /// background summary).
    Compaction,
    /// A branch summary for `tree.navigate`, or its `before_tree` hook.
    BranchSummary,
    /// A model request of `agent.run`.
    ModelRequest,
    /// A tool call of `agent.run`, by its tool's name.
    Tool(String),
}

/// The running request's activity, shared with the engine's event sink and the run's observer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tracker(Arc<Mutex<Activity>>);

impl Tracker {
    pub(crate) fn set(&self, activity: Activity) {
        if let Ok(mut current) = self.0.lock() {
            *current = activity;
        }
    }

    pub(crate) fn get(&self) -> Activity {
        self.0
            .lock()
            .map(|current| current.clone())
            .unwrap_or_default()
    }

    /// Follows an engine event.
    pub(crate) fn engine_event(&self, event: &EngineEvent) {
        match event {
            EngineEvent::CompactionStart { .. } => self.set(Activity::Compaction),
            EngineEvent::BranchSummaryStart { .. } => self.set(Activity::BranchSummary),
            EngineEvent::CompactionEnd(_)
            | EngineEvent::CompactionFailed(_)
            | EngineEvent::BranchSummaryEnd { .. } => self.set(Activity::Other),
            EngineEvent::ContextUsage(_) | EngineEvent::HookError { .. } => {}
        }
    }

    /// Follows an event of `agent.run`'s loop.
    pub(crate) fn agent_event(&self, event: &AgentEvent) {
        match event {
            AgentEvent::ModelCall => self.set(Activity::ModelRequest),
            AgentEvent::ToolStart { call } => self.set(Activity::Tool(call.name.clone())),
            AgentEvent::Reply { .. }
            | AgentEvent::ToolEnd { .. }
            | AgentEvent::CompactionCancelled(_)
            | AgentEvent::NoOutputRoom(_) => self.set(Activity::Other),
            AgentEvent::Checked(_)
            | AgentEvent::Delta(_)
            | AgentEvent::Retry
            | AgentEvent::ProviderRetry(_)
            | AgentEvent::ToolOutput { .. }
            | AgentEvent::Steered { .. } => {}
        }
    }
}

/// What held `method`, doing `activity`, past its stop; `compaction_hooks`: whether a
/// `before_compact` command hook is configured (a hook's process group is killed with the request).
pub(crate) fn held_by(method: &str, activity: &Activity, compaction_hooks: bool) -> String {
    match activity {
        Activity::Compaction if compaction_hooks => "its compaction's `before_compact` hook or \
             summary request did not end in time (a hook is killed with it)"
            .to_owned(),
        Activity::Compaction => "its compaction's summary request did not end in time".to_owned(),
        Activity::BranchSummary => "its `before_tree` hook or branch summary did not end in time \
             (a hook is killed with it)"
            .to_owned(),
        Activity::ModelRequest => "its model request did not end in time".to_owned(),
        Activity::Tool(name) => {
            format!("its `{name}` tool call cannot be interrupted and may still be running")
        }
        Activity::Other => match method {
            "fork" | "clone" => "its `before_fork` hook did not end in time and was killed",
            _ => "it did not end in time",
        }
        .to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_abandoned_request_names_what_it_was_doing() {
        let compacting = held_by("agent.run", &Activity::Compaction, false);
        assert!(compacting.contains("summary request"), "{compacting}");
        assert!(!compacting.contains("tool call") && !compacting.contains("hook"));
        assert!(held_by("compact", &Activity::Compaction, true).contains("before_compact"));
        let tool = held_by("agent.run", &Activity::Tool("read".to_owned()), false);
        assert!(tool.contains("`read` tool call"), "{tool}");
        assert!(held_by("tree.navigate", &Activity::BranchSummary, false).contains("before_tree"));
    }
}
