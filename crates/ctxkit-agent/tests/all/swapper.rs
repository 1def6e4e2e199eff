//! A thread that swaps a path between two states while a tool runs, for the race tests.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

/// Swaps a path between two states until stopped. It keeps each state until the racing thread
/// has begun an attempt after it was made ([`Swapper::attempted`]), so the attempts meet both
/// states however a loaded machine schedules the threads, and swaps while the next attempts run.
pub(crate) struct Swapper {
    stop: Arc<AtomicBool>,
    attempts: Arc<AtomicUsize>,
    swaps: Arc<AtomicUsize>,
    thread: std::thread::JoinHandle<()>,
}

impl Swapper {
    pub(crate) fn start(
        path: PathBuf,
        first: impl Fn(&Path) + Send + 'static,
        second: impl Fn(&Path) + Send + 'static,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let attempts = Arc::new(AtomicUsize::new(0));
        let swaps = Arc::new(AtomicUsize::new(0));
        let thread = {
            let (stop, attempts, swaps) = (stop.clone(), attempts.clone(), swaps.clone());
            // One attempt ends after the state was made, and the next begins in it.
            let hold = move || {
                let made = attempts.load(SeqCst);
                while attempts.load(SeqCst) < made + 2 && !stop.load(SeqCst) {
                    std::thread::yield_now();
                }
                !stop.load(SeqCst)
            };
            std::thread::spawn(move || {
                loop {
                    first(&path);
                    if !hold() {
                        break;
                    }
                    second(&path);
                    if !hold() {
                        break;
                    }
                    swaps.fetch_add(1, SeqCst);
                }
            })
        };
        Self {
            stop,
            attempts,
            swaps,
            thread,
        }
    }

    /// Says that the racing thread ended one attempt.
    pub(crate) fn attempted(&self) {
        self.attempts.fetch_add(1, SeqCst);
    }

    /// How many times the thread swapped both ways.
    pub(crate) fn swaps(&self) -> usize {
        self.swaps.load(SeqCst)
    }

    /// Whether the race goes on: for `minimum` attempts at least, and on (for two minutes at
    /// most, from `started`) while the thread swapped fewer than 100 times or the attempts did not
    /// show `raced` (both states met).
    pub(crate) fn goes_on(
        &self,
        attempts: usize,
        minimum: usize,
        raced: bool,
        started: std::time::Instant,
    ) -> bool {
        let deadline = started + std::time::Duration::from_secs(120);
        attempts < minimum
            || ((self.swaps() < 100 || !raced) && std::time::Instant::now() < deadline)
    }

    /// Stops the thread; returns how many times it swapped both ways.
    pub(crate) fn stop(self) -> usize {
        self.stop.store(true, SeqCst);
        let swaps = self.swaps();
        self.thread.join().unwrap();
        swaps
    }
}
