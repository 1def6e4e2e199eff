//! What a surface changes in a running engine: its settings and its summarizer (the chat's
//! `/reload`, a model switch).

use std::sync::Arc;

use ctxkit_summarizer::Summarizer;

use crate::engine::Engine;
use crate::settings::EngineSettings;

impl Engine {
    /// Replaces the settings (`/reload`): the next check, view and compaction read them. A
    /// compaction in flight keeps the settings it started with; the session's durability follows
    /// the new `session.*`.
    pub async fn set_settings(&self, settings: EngineSettings) {
        let mut state = self.lock().await;
        state
            .session
            .set_durability(crate::settings::durability(&settings.session));
        state.settings = settings;
        // The view the transforms make may change with them.
        state.calibration.forget_view();
        state.log_cache_terms();
    }

    /// The summarizer of the next compaction or branch summary.
    pub(crate) fn summarizer(&self) -> Arc<dyn Summarizer> {
        let summarizer = match self.inner.summarizer.read() {
            Ok(summarizer) => summarizer,
            Err(poisoned) => poisoned.into_inner(),
        };
        Arc::clone(&summarizer)
    }

    /// Summarizes with `summarizer` from the next compaction or branch summary on (`/reload` of
    /// `compaction.model`); one in flight keeps its own.
    pub fn set_summarizer(&self, summarizer: Arc<dyn Summarizer>) {
        let mut current = match self.inner.summarizer.write() {
            Ok(current) => current,
            Err(poisoned) => poisoned.into_inner(),
        };
        *current = summarizer;
    }
}
