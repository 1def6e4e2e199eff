//! What a command writes on the side must not outlive it when a signal ends it: a preview's
//! private copy of a session, an `--out` file not written yet, the temporary file an export or a
//! migration renames over its target. Each is registered while it exists; the first SIGINT,
//! SIGTERM or SIGHUP removes every one registered, then ends the process as the signal would have
//! (QA: Ctrl-C during `compact --preview` of a large session left a 59 MB copy in `/tmp`, during
//! `export` a 13 MB temporary page beside the target, and SIGTERM did the same).
//!
//! A command that answers Ctrl-C itself (a compaction it cancels, whose `Drop`s remove its files)
//! says so with [`answering_interrupts`]; SIGINT is then left to it.
//!
//! Only one-shot commands register (`compact`, `export`, `migrate`): once the first
//! registration starts the watcher, these three signals end the process for as long as it runs,
//! so a long-running command that answers them itself (`chat`, `serve`, `view`) must not.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, Once};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// What to remove when a stop signal arrives.
#[derive(Debug, Clone)]
enum Leftover {
    /// A file of the command's own.
    File(PathBuf),
    /// This process's temporary files (`ctxkit_jail::temporary_prefix`) in a folder.
    Temporaries(PathBuf),
    /// A private folder of the command's own, with what it holds.
    Folder(PathBuf),
}

static REGISTERED: Mutex<Vec<(u64, Leftover)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(0);
static ANSWERING_INTERRUPTS: AtomicBool = AtomicBool::new(false);
static WATCHING: Once = Once::new();

/// A registration: what it names is removed at a stop signal until it is dropped.
#[derive(Debug)]
#[must_use = "the file is removed at a stop signal only while this lives"]
pub struct Registered(u64);

impl Drop for Registered {
    fn drop(&mut self) {
        if let Ok(mut registered) = REGISTERED.lock() {
            registered.retain(|(id, _)| *id != self.0);
        }
    }
}

/// Removes `path` if a stop signal ends the process while the registration lives.
pub fn remove_on_stop(path: &Path) -> Registered {
    register(Leftover::File(path.to_owned()))
}

/// Removes the private folder `folder`, with what it holds, if a stop signal ends the process
/// while the registration lives (QA: an export's folder of imported copies stayed in `$TMPDIR`).
pub fn remove_folder_on_stop(folder: &Path) -> Registered {
    register(Leftover::Folder(folder.to_owned()))
}

/// Removes this process's temporary files in `folder` (a write's `.<name>.ctxkit-<pid>-….tmp`)
/// if a stop signal ends the process while the registration lives.
pub fn temporaries_on_stop(folder: &Path) -> Registered {
    register(Leftover::Temporaries(folder.to_owned()))
}

/// [`temporaries_on_stop`] for the folder holding `file` (the current folder for a bare name).
pub fn temporaries_beside(file: &Path) -> Registered {
    let folder = file
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    temporaries_on_stop(folder)
}

/// While the returned guard lives, SIGINT is the command's own to answer (it cancels and cleans
/// up); SIGTERM and SIGHUP still remove what is registered and end the process.
pub fn answering_interrupts() -> AnsweringInterrupts {
    ANSWERING_INTERRUPTS.store(true, Ordering::SeqCst);
    AnsweringInterrupts(())
}

/// See [`answering_interrupts`].
#[derive(Debug)]
pub struct AnsweringInterrupts(());

impl Drop for AnsweringInterrupts {
    fn drop(&mut self) {
        ANSWERING_INTERRUPTS.store(false, Ordering::SeqCst);
    }
}

fn register(leftover: Leftover) -> Registered {
    watch();
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut registered) = REGISTERED.lock() {
        registered.push((id, leftover));
    }
    Registered(id)
}

/// Starts the thread that waits for the stop signals, once. Without it (the signals cannot be
/// caught) they keep their default action, as before.
fn watch() {
    WATCHING.call_once(|| {
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        let _ = std::thread::Builder::new()
            .name("ctxkit-leftovers".to_owned())
            .spawn(move || {
                for signal in signals.forever() {
                    if signal == SIGINT && ANSWERING_INTERRUPTS.load(Ordering::SeqCst) {
                        continue;
                    }
                    remove_registered();
                    // The default action of these three ends the process, by that signal.
                    let _ = signal_hook::low_level::emulate_default_handler(signal);
                    std::process::exit(128 + signal);
                }
            });
    });
}

/// Removes everything registered now (best effort).
fn remove_registered() {
    let leftovers: Vec<Leftover> = match REGISTERED.lock() {
        Ok(registered) => registered
            .iter()
            .map(|(_, leftover)| leftover.clone())
            .collect(),
        Err(_) => return,
    };
    for leftover in leftovers {
        match leftover {
            Leftover::File(path) => {
                let _ = std::fs::remove_file(path);
            }
            Leftover::Temporaries(folder) => remove_own_temporaries(&folder),
            Leftover::Folder(folder) => {
                let _ = std::fs::remove_dir_all(folder);
            }
        }
    }
}

/// Removes this process's temporary files in `folder`.
fn remove_own_temporaries(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let own = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let is_own = name
            .to_str()
            .and_then(ctxkit_jail::temporary_owner)
            .is_some_and(|owner| owner == own);
        let is_file = entry.file_type().is_ok_and(|kind| kind.is_file());
        if is_own && is_file {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn a_registration_dropped_is_no_longer_removed() {
        let folder = tempfile::tempdir().unwrap();
        let kept = folder.path().join("kept.jsonl");
        let removed = folder.path().join("removed.jsonl");
        let own = folder.path().join(format!(
            "{}7.tmp",
            ctxkit_jail::temporary_prefix("page.html")
        ));
        let other = folder.path().join(".page.html.ctxkit-1-7.tmp");
        for path in [&kept, &removed, &own, &other] {
            std::fs::write(path, "x").unwrap();
        }
        let dropped = remove_on_stop(&kept);
        drop(dropped);
        let _file = remove_on_stop(&removed);
        let _temporaries = temporaries_on_stop(folder.path());
        remove_registered();
        assert!(kept.exists());
        assert!(!removed.exists());
        assert!(!own.exists());
        assert!(
            other.exists(),
            "another process's temporary file is its own"
        );
    }
}
