//! The files a rewind puts back (`rewind`'s second half). The checkpoint folder may have come with
//! a shipped session, so its index is someone else's text: each path is judged as the model's own
//! `write` of it would be (`Workspace::locate`: ctxkit's home and the user's credentials never,
//! outside the project and guarded places asked on their own), written through the same jail and
//! guards, and a snapshot no write of the agent's in this session accounts for is asked about,
//! its recorded digest not believed.

use std::path::{Component, Path, PathBuf};

use anyhow::Result;
use ctxkit_agent::{Access, Place, Workspace};

use super::Chat;
use super::agent::Ask;
use crate::commands::checkpoints::{CheckpointStore, Snapshot, state_digest};

/// Where a snapshot's file would be put back, judged as a `write` of its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Destination {
    /// In the project and not guarded: no question beyond the restore's own.
    Project,
    /// Outside the project: asked about on its own, as the `write` tool asks.
    Outside,
    /// A guarded place of the project (`.git/config`): asked about on its own.
    Guarded,
    /// Never put back (why): not a plain absolute path, a denied place, or a path that now leads
    /// elsewhere.
    Refused(String),
}

/// Where `path`, as a checkpoint index names it, would be written.
pub(super) fn destination(workspace: &Workspace, path: &Path) -> Destination {
    // Snapshots are taken of resolved absolute paths: a relative one, or one with `..`, was not
    // written by ctxkit and could name anything.
    let plain = path.is_absolute()
        && path
            .components()
            .all(|component| matches!(component, Component::RootDir | Component::Normal(_)));
    let Some(argument) = path.to_str().filter(|_| plain) else {
        return Destination::Refused(format!(
            "the checkpoint index names `{}`, not a file a snapshot is taken of",
            path.display()
        ));
    };
    match workspace.locate(workspace.root(), argument, Access::Write) {
        Err(refusal) => Destination::Refused(refusal.to_string()),
        Ok(place) if place.path() != path => Destination::Refused(format!(
            "`{}` now leads to `{}`",
            path.display(),
            place.path().display()
        )),
        Ok(Place::Allowed(_)) => Destination::Project,
        Ok(Place::Outside(_)) => Destination::Outside,
        Ok(Place::Guarded(_)) => Destination::Guarded,
    }
}

/// Writes `wanted` to `path` (`None`: removes it when `exists`) through the jail the `write` tool
/// would use, guarded places refused unless the user approved this one.
pub(super) fn put_back(
    workspace: &Workspace,
    path: &Path,
    destination: &Destination,
    wanted: Option<&[u8]>,
    exists: bool,
) -> Result<(), String> {
    let mut jail = workspace.jail_for(path)?;
    if *destination != Destination::Guarded {
        workspace.guard_writes(&mut jail);
    }
    let result = match wanted {
        Some(bytes) => jail.write_atomic(path, bytes),
        None if exists => jail.remove_file(path),
        None => Ok(()),
    };
    result.map_err(|error| error.to_string())
}

/// The folders of `snapshot.created_folders` a restore may remove: folders above its file only
/// (an edited index cannot name another), below the project for a file in it.
fn created_folders(snapshot: &Snapshot, root: &Path, destination: &Destination) -> Vec<PathBuf> {
    snapshot
        .created_folders
        .iter()
        .filter(|folder| *folder != &snapshot.path && snapshot.path.starts_with(folder))
        .filter(|folder| {
            folder
                .components()
                .all(|component| matches!(component, Component::RootDir | Component::Normal(_)))
        })
        .filter(|folder| *destination != Destination::Project || folder.starts_with(root))
        .cloned()
        .collect()
}

/// What happened to one file.
enum Restored {
    Written(PathBuf),
    Removed(PathBuf),
    Kept(PathBuf),
    Failed(PathBuf, String),
}

/// One snapshot to put back, and what is known of it.
struct Planned {
    snapshot: Snapshot,
    destination: Destination,
    /// Whether a `write` or `edit` of the agent's since the prompt, in this session, wrote it.
    vouched: bool,
}

impl Chat {
    /// Lists the files written since the prompt and restores them if the user says so.
    pub(super) fn offer_restore(
        &self,
        session_file: &Path,
        turns: &[String],
        calls: &[ctxkit_protocol::ToolCall],
        ask: &mut dyn Ask,
    ) -> Result<()> {
        let mut store = CheckpointStore::open(session_file)?;
        let snapshots = store.earliest_since(turns);
        self.name_unrestorable(calls, &snapshots);
        self.name_commands(calls);
        if snapshots.is_empty() {
            return Ok(());
        }
        let written: Vec<PathBuf> = calls
            .iter()
            .filter_map(|call| self.checkpoints.target(call))
            .collect();
        let planned: Vec<Planned> = snapshots
            .into_iter()
            .map(|snapshot| Planned {
                destination: destination(self.checkpoints.workspace(), &snapshot.path),
                vouched: written.contains(&snapshot.path),
                snapshot,
            })
            .collect();
        self.list_planned(&planned);
        let mut done = Vec::new();
        let mut restorable = Vec::new();
        for plan in planned {
            match &plan.destination {
                Destination::Refused(reason) => {
                    done.push(Restored::Failed(plan.snapshot.path.clone(), reason.clone()));
                }
                Destination::Project | Destination::Outside | Destination::Guarded => {
                    restorable.push(plan);
                }
            }
        }
        if !restorable.is_empty() {
            let question = format!("Restore {} file(s)? [y]es / [n]o: ", restorable.len());
            if ask.ask_key(&question, "yn") != Some('y') {
                self.report(&done);
                self.ui.info("Files left as they are");
                return Ok(());
            }
        }
        let mut folders = Vec::new();
        for plan in &restorable {
            let restored = self.restore_one(&mut store, plan, ask);
            if matches!(restored, Restored::Removed(_)) {
                let root = self.checkpoints.workspace().root();
                folders.extend(created_folders(&plan.snapshot, root, &plan.destination));
            }
            done.push(restored);
        }
        self.report(&done);
        self.remove_created_folders(folders);
        Ok(())
    }

    /// The files a restore would touch, each with what it does to it and what is asked first.
    fn list_planned(&self, planned: &[Planned]) {
        self.ui
            .line("The agent changed these files since that prompt:");
        for plan in planned {
            self.ui.say(&format!(
                "  {}  ({})",
                self.shown(&plan.snapshot.path),
                listed_as(plan)
            ));
        }
    }

    /// Says which files the agent's `write` and `edit` calls since the prompt named that have no
    /// snapshot (over `chat.checkpointMaxBytes`, or too large): a rewind leaves them as they are,
    /// and it said nothing of them.
    fn name_unrestorable(&self, calls: &[ctxkit_protocol::ToolCall], snapshots: &[Snapshot]) {
        let mut missing: Vec<PathBuf> = calls
            .iter()
            .filter_map(|call| self.checkpoints.target(call))
            .filter(|path| !snapshots.iter().any(|snapshot| &snapshot.path == path))
            .collect();
        missing.sort();
        missing.dedup();
        if missing.is_empty() {
            return;
        }
        let shown: Vec<String> = missing.iter().map(|path| self.shown(path)).collect();
        self.ui.notice(&format!(
            "No snapshot was kept of {} the agent wrote since that prompt; left as it is now: {}",
            if missing.len() == 1 {
                "a file"
            } else {
                "files"
            },
            shown.join(", ")
        ));
    }

    /// Says how many `bash` commands the agent ran since the prompt: what they changed has no
    /// snapshot, and a rewind that restored the files named nothing of them (a tester's `echo
    /// appended >> a.txt` stayed, unsaid).
    fn name_commands(&self, calls: &[ctxkit_protocol::ToolCall]) {
        let commands = calls.iter().filter(|call| call.name == "bash").count();
        if commands == 0 {
            return;
        }
        self.ui.notice(&format!(
            "{} ran since that prompt; what {} changed is not restored (snapshots are kept of \
             `write` and `edit` only)",
            if commands == 1 {
                "A `bash` command".to_owned()
            } else {
                format!("{commands} `bash` commands")
            },
            if commands == 1 { "it" } else { "they" }
        ));
    }

    /// Removes the folders the agent's writes created, deepest first, those that are empty now
    /// (a folder holding anything else stays).
    fn remove_created_folders(&self, mut folders: Vec<PathBuf>) {
        folders.sort_by(|one, other| {
            (other.components().count(), other).cmp(&(one.components().count(), one))
        });
        folders.dedup();
        let removed: Vec<String> = folders
            .iter()
            .filter(|folder| {
                self.checkpoints
                    .workspace()
                    .jail_for(folder)
                    .is_ok_and(|jail| jail.remove_dir(folder).is_ok())
            })
            .map(|folder| self.shown(folder))
            .collect();
        if !removed.is_empty() {
            let noun = if removed.len() == 1 {
                "folder"
            } else {
                "folders"
            };
            self.ui.say(&format!(
                "Removed the empty {noun} the agent created: {}",
                removed.join(", ")
            ));
        }
    }

    fn restore_one(
        &self,
        store: &mut CheckpointStore,
        plan: &Planned,
        ask: &mut dyn Ask,
    ) -> Restored {
        let snapshot = &plan.snapshot;
        let path = snapshot.path.clone();
        let wanted = match store.read_blob(snapshot, self.checkpoints.max_bytes()) {
            Ok(bytes) => bytes,
            Err(error) => return Restored::Failed(path, format!("{error:#}")),
        };
        let now = self.checkpoints.current_state(&path);
        if now == state_digest(wanted.as_deref()) {
            return match wanted {
                Some(_) => Restored::Written(path),
                None => Restored::Removed(path),
            };
        }
        if !self.may_put_back(store, plan, wanted.is_some(), &now, ask) {
            return Restored::Kept(path);
        }
        let exists = now != state_digest(None);
        let workspace = self.checkpoints.workspace();
        if let Err(reason) = put_back(
            workspace,
            &path,
            &plan.destination,
            wanted.as_deref(),
            exists,
        ) {
            return Restored::Failed(path, reason);
        }
        let _ = store.note_restored(&path, wanted.as_deref());
        match wanted {
            Some(_) => Restored::Written(path),
            None => Restored::Removed(path),
        }
    }

    /// The questions of one file beyond the restore's own, as the `write` tool would ask them
    /// (outside the project, a guarded place) and for a file not as the agent left it; whether
    /// every one was answered yes.
    fn may_put_back(
        &self,
        store: &CheckpointStore,
        plan: &Planned,
        kept: bool,
        now: &str,
        ask: &mut dyn Ask,
    ) -> bool {
        let shown = self.shown(&plan.snapshot.path);
        let (verb, noun) = if kept {
            ("Put back", "the snapshot")
        } else {
            ("Delete", "it")
        };
        let place = match plan.destination {
            Destination::Outside => Some(format!(
                "{verb} {shown}, outside the project? [y]es / [n]o: "
            )),
            Destination::Guarded => Some(format!(
                "{verb} {shown}? ctxkit guards it ({}) [y]es / [n]o: ",
                ctxkit_agent::GUARDED_KINDS
            )),
            Destination::Project | Destination::Refused(_) => None,
        };
        if place.is_some_and(|question| ask.ask_key(&question, "yn") != Some('y')) {
            return false;
        }
        // Said as what `y` does: a file the agent created is deleted, not "put back".
        let question = if !plan.vouched {
            format!(
                "{shown} was not written by the agent in this session; {} {noun} anyway? [y]es / [n]o: ",
                verb.to_lowercase()
            )
        } else if store.written(&plan.snapshot.path) != Some(now) {
            // Not what the agent left (or unknown, as after a crash mid-write): the user decides.
            if kept {
                format!(
                    "{shown} was changed since the agent wrote it; put the snapshot back anyway? [y]es / [n]o: "
                )
            } else {
                format!(
                    "{shown}, which the agent created, was changed since; delete it anyway? [y]es / [n]o: "
                )
            }
        } else {
            return true;
        };
        ask.ask_key(&question, "yn") == Some('y')
    }

    fn report(&self, done: &[Restored]) {
        for outcome in done {
            match outcome {
                Restored::Written(path) => self.ui.say(&format!("Restored {}", self.shown(path))),
                Restored::Removed(path) => self.ui.say(&format!("Removed {}", self.shown(path))),
                Restored::Kept(path) => self
                    .ui
                    .line(&format!("Kept {} as you changed it", self.shown(path))),
                Restored::Failed(path, reason) => self.ui.error(&format!(
                    "Cannot restore {}: {reason}; the file was left as it is",
                    self.shown(path)
                )),
            }
        }
    }

    /// A path relative to the project when it lies inside it, quoted as every question shows an
    /// odd name (the index is someone else's text).
    fn shown(&self, path: &Path) -> String {
        let root = self.checkpoints.workspace().root();
        let relative = path.strip_prefix(root).unwrap_or(path);
        format!("`{}`", ctxkit_agent::shown_path(relative))
    }
}

/// How the listing before the question names what a restore does to a file.
fn listed_as(plan: &Planned) -> String {
    let what = if plan.snapshot.existed {
        "put back as it was"
    } else {
        "the agent created it; a restore removes it"
    };
    match &plan.destination {
        Destination::Refused(reason) => format!("not restored: {reason}"),
        Destination::Outside => format!("{what}; outside the project: asked on its own"),
        Destination::Guarded => format!("{what}; a guarded place: asked on its own"),
        Destination::Project if !plan.vouched => {
            format!("{what}; not written by the agent in this session: asked on its own")
        }
        Destination::Project => what.to_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A project in a temporary folder, with the workspace the chat would judge its paths by.
    fn project() -> (tempfile::TempDir, PathBuf, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("project");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(root.join("notes.txt"), "my notes\n").unwrap();
        let workspace = Workspace::new(&root);
        (dir, root, workspace)
    }

    /// The tester's shipped index named `.git/config` (a `core.fsmonitor` then ran at `git
    /// status`), paths outside the project, and (unfinished) relative ones and ones with `..`:
    /// each is judged as the model's `write` of it, never written without its own question.
    #[test]
    fn an_index_path_is_judged_as_a_write_of_it() {
        let (_dir, root, workspace) = project();
        assert_eq!(
            destination(&workspace, &root.join("notes.txt")),
            Destination::Project
        );
        assert_eq!(
            destination(&workspace, &root.join(".git/config")),
            Destination::Guarded
        );
        let outside = root.parent().unwrap().join("elsewhere.txt");
        assert_eq!(destination(&workspace, &outside), Destination::Outside);
        for named in [
            PathBuf::from("notes.txt"),
            PathBuf::from("../elsewhere.txt"),
            root.join("../elsewhere.txt"),
            root.join("sub/../notes.txt"),
        ] {
            assert!(
                matches!(destination(&workspace, &named), Destination::Refused(_)),
                "{}",
                named.display()
            );
        }
        let credentials = ctxkit_jail::credential_places();
        let key = credentials.first().unwrap().join("id_rsa");
        assert!(matches!(
            destination(&workspace, &key),
            Destination::Refused(_)
        ));
    }

    /// A restore writes through the jail and guards the `write` tool uses: a guarded place not
    /// approved is refused however the path reached it.
    #[test]
    fn a_restore_goes_through_the_write_tools_guards() {
        let (_dir, root, workspace) = project();
        let config = root.join(".git/config");
        let refused = put_back(
            &workspace,
            &config,
            &Destination::Project,
            Some(b"[core]\n\tfsmonitor = x\n"),
            true,
        );
        assert!(refused.is_err(), "{refused:?}");
        assert_eq!(std::fs::read_to_string(&config).unwrap(), "[core]\n");
        let notes = root.join("notes.txt");
        put_back(
            &workspace,
            &notes,
            &Destination::Project,
            Some(b"old\n"),
            true,
        )
        .unwrap();
        assert_eq!(std::fs::read_to_string(&notes).unwrap(), "old\n");
    }

    /// The folders an index says a write created are removed only when they lie above its file
    /// (and in the project for a file in it): an edited index cannot empty other folders.
    #[test]
    fn only_folders_above_the_file_are_removed() {
        let (_dir, root, _workspace) = project();
        let snapshot = Snapshot {
            turn: "u1".to_owned(),
            path: root.join("new/deeper/file.txt"),
            existed: false,
            blob: None,
            created_folders: vec![
                root.join("new/deeper"),
                root.join("new"),
                root.join("other"),
                root.join("new/../.git/refs"),
                root.parent().unwrap().to_owned(),
            ],
            size: 0,
            time: String::new(),
        };
        assert_eq!(
            created_folders(&snapshot, &root, &Destination::Project),
            vec![root.join("new/deeper"), root.join("new")]
        );
    }
}
