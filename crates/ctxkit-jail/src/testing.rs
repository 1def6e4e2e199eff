//! Test support shared by the crates whose tests race the jail or read another user's files: the
//! jail's own unit tests (`cfg(test)`) and, through the `testing` feature, the tests of the agent,
//! the resource loader and the package resolver (their dev-dependencies turn it on; no build of
//! the binary has it). One home for what was written once per crate.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::time::{Duration, Instant};

use crate::LocalUsers;

/// How long a race goes on at most until both sides of the swap have met it: generous, as a
/// loaded machine may leave the swapper unscheduled for a while; an unloaded one is done in well
/// under a second.
pub const RACE_LIMIT: Duration = Duration::from_secs(120);

/// Makes the files at `paths` another local user's: given to `nobody` when the tests run as root,
/// else the tests pretend to be someone else (then every file they made is another user's).
///
/// # Panics
/// When running as root and a file cannot be given away (test setup: the test cannot go on).
pub fn owned_by_another_user(paths: &[&Path]) -> LocalUsers {
    let users = LocalUsers::of_process();
    if users.current() != 0 {
        return LocalUsers::as_user(users.current() + 1);
    }
    for path in paths {
        if let Err(error) = std::os::unix::fs::lchown(path, Some(65534), Some(65534)) {
            panic!("could not give {} to nobody: {error}", path.display());
        }
    }
    users
}

/// A thread that swaps a path between two states until stopped. It keeps each state until the
/// racing thread has begun an attempt after it was made ([`Swapper::attempted`]), so the attempts
/// meet both states however a loaded machine schedules the threads, and swaps while the next
/// attempts run.
#[derive(Debug)]
pub struct Swapper {
    stop: Arc<AtomicBool>,
    attempts: Arc<AtomicUsize>,
    swaps: Arc<AtomicUsize>,
    thread: std::thread::JoinHandle<()>,
}

impl Swapper {
    /// Starts swapping `path`: `first` makes one state, `second` the other.
    pub fn start(
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

    /// Flips `path` between a symlink to `target` and a real, empty folder: the race a jail must
    /// win when it reads or writes beneath `path`.
    pub fn folder_or_link(path: PathBuf, target: PathBuf) -> Self {
        Self::start(
            path,
            move |path| {
                let _ = std::fs::remove_dir_all(path);
                let _ = std::os::unix::fs::symlink(&target, path);
            },
            |path| {
                let _ = std::fs::remove_file(path);
                let _ = std::fs::create_dir(path);
            },
        )
    }

    /// Says that the racing thread ended one attempt (a read, a write).
    pub fn attempted(&self) {
        self.attempts.fetch_add(1, SeqCst);
    }

    /// How many times the thread swapped both ways.
    pub fn swaps(&self) -> usize {
        self.swaps.load(SeqCst)
    }

    /// Whether the race goes on: for `minimum` attempts at least, and on (for [`RACE_LIMIT`] at
    /// most, from `started`) while the thread swapped fewer than 100 times or the attempts did not
    /// show `raced` (both states met).
    pub fn goes_on(&self, attempts: usize, minimum: usize, raced: bool, started: Instant) -> bool {
        attempts < minimum
            || ((self.swaps() < 100 || !raced) && Instant::now() < started + RACE_LIMIT)
    }

    /// Stops the thread; returns how many times it swapped both ways.
    ///
    /// # Panics
    /// When the swapping thread panicked (its panic goes on here).
    pub fn stop(self) -> usize {
        self.stop.store(true, SeqCst);
        let swaps = self.swaps();
        if let Err(panic) = self.thread.join() {
            std::panic::resume_unwind(panic);
        }
        swaps
    }
}

/// The names in `dir`, sorted: what a write left beside the file (a temporary, a copy).
///
/// # Panics
/// When `dir` cannot be listed (test setup).
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("cannot list {}: {error}", dir.display()))
        .map(|entry| match entry {
            Ok(entry) => entry.file_name().to_string_lossy().into_owned(),
            Err(error) => panic!("cannot list {}: {error}", dir.display()),
        })
        .collect();
    names.sort();
    names
}
