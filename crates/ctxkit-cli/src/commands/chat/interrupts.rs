//! Ctrl-C while the agent works: cancels a running compaction or branch summary (nothing is
//! written), else the running turn (the model request or tool in flight). At the input line the
//! line editor reads Ctrl-C itself.

use std::sync::{Arc, Mutex};

use ctxkit_engine::Engine;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Default)]
struct Targets {
    engine: Option<Engine>,
    turn: Option<CancellationToken>,
}

/// What Ctrl-C stops. Clones share the targets.
#[derive(Debug, Clone, Default)]
pub struct Interrupts(Arc<Mutex<Targets>>);

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
        if let Ok(mut targets) = self.0.lock() {
            targets.engine = Some(engine.clone());
        }
    }

    pub fn set_turn(&self, turn: Option<CancellationToken>) {
        if let Ok(mut targets) = self.0.lock() {
            targets.turn = turn;
        }
    }

    /// Stops what is running: a compaction first, else the turn.
    pub fn interrupt(&self) {
        let Ok(targets) = self.0.lock() else { return };
        if let Some(engine) = &targets.engine
            && engine.is_compacting()
        {
            engine.cancel_compaction();
            engine.cancel_branch_summary();
            return;
        }
        if let Some(turn) = &targets.turn {
            turn.cancel();
        }
    }
}
