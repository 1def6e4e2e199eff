//! Ctrl-C while the agent works: cancels a running compaction or branch summary (nothing is
//! written), else the running turn (the model request or tool in flight). At the input line the
//! line editor reads Ctrl-C itself.

use std::sync::{Arc, Mutex};

use ctxkit_engine::Engine;

/// What Ctrl-C stops: the current engine's compaction or turn. Clones share it.
#[derive(Debug, Clone, Default)]
pub struct Interrupts(Arc<Mutex<Option<Engine>>>);

impl Interrupts {
    /// Listens for Ctrl-C for the rest of the process (the terminal's SIGINT no longer kills it).
    pub fn listen(&self) -> std::io::Result<()> {
        let mut signals =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        let targets = self.clone();
        tokio::spawn(async move {
            while signals.recv().await.is_some() {
                targets.interrupt();
            }
        });
        Ok(())
    }

    pub fn set_engine(&self, engine: &Engine) {
        if let Ok(mut target) = self.0.lock() {
            *target = Some(engine.clone());
        }
    }

    /// Stops what is running: a compaction first, else the turn.
    pub fn interrupt(&self) {
        let Ok(target) = self.0.lock() else { return };
        let Some(engine) = target.as_ref() else {
            return;
        };
        if engine.is_compacting() {
            engine.cancel_compaction();
            engine.cancel_branch_summary();
        } else {
            engine.interrupt_turn();
        }
    }
}
