//! File checkpoints of `ctxkit chat`: before the agent's first `write` or `edit` of a file in a
//! turn, the file's bytes (or its absence) are kept beside the session, in
//! `<session>.checkpoints/` next to the session file, so a rewind to an earlier prompt can put
//! the files back. Every file there is written atomically (temporary file + rename), `0600` in a
//! `0700` folder; the folder never lies inside the project, and its total size is bounded by
//! `chat.checkpointMaxBytes`. `ctxkit checkpoints [SESSION]` lists them.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::Outcome;

/// The index file inside a checkpoint folder.
const INDEX: &str = "index.json";

/// The most bytes an index may have (a snapshot's entry is about 300 bytes): a shipped folder's
/// `index.json` that is a link to `/dev/zero` or a huge file is refused, not read without end.
const MAX_INDEX_BYTES: u64 = 16 * 1024 * 1024;

/// One file as it was before the agent first wrote it in a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The id of the user message that started the turn.
    pub turn: String,
    /// The absolute path the tool wrote.
    pub path: PathBuf,
    /// Whether the file existed (else a restore removes it).
    pub existed: bool,
    /// The snapshot's file in the folder, when the file existed.
    pub blob: Option<String>,
    /// The folders the write was about to create for a file that did not exist (deepest first),
    /// removed with it when they are empty again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created_folders: Vec<PathBuf>,
    pub size: u64,
    /// When it was taken (RFC 3339).
    pub time: String,
}

/// The folder's index: every snapshot in the order taken, and what the agent last wrote to each
/// path (a SHA-256), to tell a file the user changed since.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Index {
    #[serde(default)]
    snapshots: Vec<Snapshot>,
    #[serde(default)]
    written: BTreeMap<PathBuf, String>,
}

/// The checkpoint folder of one session.
#[derive(Debug, Clone)]
pub struct CheckpointStore {
    dir: PathBuf,
    index: Index,
}

/// Copies into `fork`'s checkpoints the snapshots `source`'s hold of the turns `fork_session`
/// holds (the user messages a fork copies keep their ids), so a rewind in the fork puts files back
/// as one in `source` would: `/fork`, `/clone`, `ctxkit fork`, `ctxkit chat --fork` and `/import`
/// (QA 2026-12-07: a fork's rewind found no snapshot). Only for a copy in the same project: the
/// snapshots are of that project's files, which a copy working elsewhere has no business putting
/// back. The copy is bounded by the source's own budget, which its snapshots are within; how many
/// were copied.
pub fn carry_to_fork(
    source: &Path,
    fork: &Path,
    fork_session: &ctxkit_session::Session,
    max_bytes: u64,
) -> Result<usize> {
    let same_project =
        ctxkit_session::read_header(source).is_ok_and(|header| header.cwd == fork_session.cwd());
    if !same_project || !checkpoint_dir(source).exists() {
        return Ok(0);
    }
    let turns: Vec<&str> = fork_session
        .entries()
        .iter()
        .filter(|entry| entry.role() == Some("user"))
        .map(ctxkit_session::StoredEntry::id)
        .collect();
    let turns = turns.into_iter().collect();
    CheckpointStore::open(source)?.copy_turns_to(fork, &turns, max_bytes)
}

/// Where a session file's checkpoints live: `<file without .jsonl>.checkpoints`.
pub fn checkpoint_dir(session_file: &Path) -> PathBuf {
    let mut name = session_file
        .file_stem()
        .map(std::ffi::OsStr::to_os_string)
        .unwrap_or_default();
    name.push(".checkpoints");
    session_file.with_file_name(name)
}

/// The hex SHA-256 of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// What a file holds, as compared by a rewind: the digest of its bytes, or `absent`.
pub fn state_digest(bytes: Option<&[u8]>) -> String {
    bytes.map_or_else(|| "absent".to_owned(), digest)
}

impl CheckpointStore {
    /// The checkpoints of `session_file` (none yet when the folder does not exist). The folder may
    /// have come with a shipped session, so its index is read as untrusted input: beneath the
    /// folder (a link out of it is refused), a regular file only (a FIFO, a device refused at
    /// once, never waited on) and at most [`MAX_INDEX_BYTES`].
    pub fn open(session_file: &Path) -> Result<Self> {
        let dir = checkpoint_dir(session_file);
        refuse_link(&dir)?;
        let index_file = dir.join(INDEX);
        let cannot_read = || format!("cannot read `{}`", index_file.display());
        let index = match read_in_folder(&dir, INDEX, MAX_INDEX_BYTES) {
            Ok(Some(bytes)) => serde_json::from_slice(&bytes).with_context(cannot_read)?,
            Ok(None) => Index::default(),
            Err(error) => return Err(error).with_context(cannot_read),
        };
        Ok(Self { dir, index })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn snapshots(&self) -> &[Snapshot] {
        &self.index.snapshots
    }

    /// The bytes the snapshots hold in total.
    pub fn total_bytes(&self) -> u64 {
        self.index
            .snapshots
            .iter()
            .map(|snapshot| snapshot.size)
            .sum()
    }

    /// Whether `turn` already holds a snapshot of `path` (only the first write is kept).
    pub fn has(&self, turn: &str, path: &Path) -> bool {
        self.index
            .snapshots
            .iter()
            .any(|snapshot| snapshot.turn == turn && snapshot.path == path)
    }

    /// What the agent last wrote to `path` (a SHA-256), if it wrote it.
    pub fn written(&self, path: &Path) -> Option<&str> {
        self.index.written.get(path).map(String::as_str)
    }

    /// Keeps `previous` (`None`: the file did not exist, nor did `missing_folders`) as `path`'s
    /// state before `turn`, before the agent's write runs. Refused, writing nothing, when it would
    /// take the folder over `max_bytes`.
    pub fn add(
        &mut self,
        turn: &str,
        path: &Path,
        previous: Option<&[u8]>,
        missing_folders: &[PathBuf],
        max_bytes: u64,
    ) -> Result<AddOutcome> {
        let time = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let taken = Snapshot {
            turn: turn.to_owned(),
            path: path.to_owned(),
            existed: previous.is_some(),
            blob: None,
            created_folders: Vec::new(),
            size: 0,
            time,
        };
        self.add_taken_at(&taken, previous, missing_folders, max_bytes)
    }

    /// [`CheckpointStore::add`] of `taken`'s turn and path, stamped with its time.
    fn add_taken_at(
        &mut self,
        taken: &Snapshot,
        previous: Option<&[u8]>,
        missing_folders: &[PathBuf],
        max_bytes: u64,
    ) -> Result<AddOutcome> {
        let size = previous.map_or(0, |bytes| bytes.len() as u64);
        if self.total_bytes().saturating_add(size) > max_bytes {
            return Ok(AddOutcome::OverLimit);
        }
        self.create_dir()?;
        remove_left_temporaries(&self.dir);
        let blob = match previous {
            Some(bytes) => {
                let hash = digest(bytes);
                let name = format!("{:06}-{}.snap", self.index.snapshots.len() + 1, &hash[..12]);
                write_private(&self.dir, &name, bytes)?;
                Some(name)
            }
            None => None,
        };
        self.index.snapshots.push(Snapshot {
            turn: taken.turn.clone(),
            path: taken.path.clone(),
            existed: previous.is_some(),
            blob,
            created_folders: if previous.is_some() {
                Vec::new()
            } else {
                missing_folders.to_vec()
            },
            size,
            time: taken.time.clone(),
        });
        self.save()?;
        Ok(AddOutcome::Kept)
    }

    /// Drops the snapshot of `path` in `turn` (its write failed: the file is as it was).
    pub fn drop_snapshot(&mut self, turn: &str, path: &Path) -> Result<()> {
        let Some(position) = self
            .index
            .snapshots
            .iter()
            .rposition(|snapshot| snapshot.turn == turn && snapshot.path == path)
        else {
            return Ok(());
        };
        let snapshot = self.index.snapshots.remove(position);
        if let Some(blob) = snapshot.blob.filter(|blob| is_plain_name(blob)) {
            let _ = std::fs::remove_file(self.dir.join(blob));
        }
        if self.index.snapshots.is_empty() && self.index.written.is_empty() {
            // Nothing is kept (every write of the session failed): no folder is left beside it.
            let _ = std::fs::remove_file(self.dir.join(INDEX));
            let _ = std::fs::remove_dir(&self.dir);
            return Ok(());
        }
        self.save()
    }

    /// Records what the agent's write left in `path` (a [`state_digest`]).
    pub fn note_written(&mut self, path: &Path, state: String) -> Result<()> {
        self.create_dir()?;
        self.index.written.insert(path.to_owned(), state);
        self.save()
    }

    /// Records that a rewind put `path` back as `restored` (`None`: removed), so a later rewind
    /// sees it as the agent left it.
    pub fn note_restored(&mut self, path: &Path, restored: Option<&[u8]>) -> Result<()> {
        self.create_dir()?;
        self.index
            .written
            .insert(path.to_owned(), state_digest(restored));
        self.save()
    }

    /// The bytes a snapshot kept (`None` for a file that did not exist), at most `max_bytes`. Read
    /// as the index is: a snapshot that is a link out of the folder (to `~/.ssh/id_rsa`), a FIFO
    /// or a device is refused, and one whose size is not the size the index records.
    pub fn read_blob(&self, snapshot: &Snapshot, max_bytes: u64) -> Result<Option<Vec<u8>>> {
        let Some(blob) = &snapshot.blob else {
            return Ok(None);
        };
        // Only a plain name made by `add`: an edited index cannot point anywhere else.
        if !is_plain_name(blob) {
            bail!("the checkpoint index names `{blob}`, not a snapshot file");
        }
        let file = self.dir.join(blob);
        if snapshot.size > max_bytes {
            bail!(
                "`{}` is larger than chat.checkpointMaxBytes ({max_bytes})",
                file.display()
            );
        }
        let bytes = read_in_folder(&self.dir, blob, snapshot.size)
            .with_context(|| format!("cannot read `{}`", file.display()))?
            .with_context(|| format!("`{}` is missing", file.display()))?;
        if bytes.len() as u64 != snapshot.size {
            bail!(
                "`{}` is not the size the checkpoint index records",
                file.display()
            );
        }
        Ok(Some(bytes))
    }

    /// Copies the snapshots of `turns` (with what the agent last wrote to their files) into the
    /// checkpoints of `session_file`, a fork of this session holding those turns, so its rewinds
    /// put the files back as this session's would. Each snapshot is read as a rewind reads it
    /// (a link out, a wrong size refused); one that cannot be read, or would take the copy over
    /// `max_bytes`, is left out. How many were copied.
    pub fn copy_turns_to(
        &self,
        session_file: &Path,
        turns: &std::collections::HashSet<&str>,
        max_bytes: u64,
    ) -> Result<usize> {
        let mut copy = Self::open(session_file)?;
        let mut copied = 0;
        for snapshot in &self.index.snapshots {
            if !turns.contains(snapshot.turn.as_str()) || copy.has(&snapshot.turn, &snapshot.path) {
                continue;
            }
            let Ok(previous) = self.read_blob(snapshot, max_bytes) else {
                continue;
            };
            let folders = &snapshot.created_folders;
            let outcome = copy.add_taken_at(snapshot, previous.as_deref(), folders, max_bytes)?;
            if outcome == AddOutcome::Kept {
                copied += 1;
                // What the agent last wrote is the fork's only when every turn that wrote the
                // file is one the fork holds; else a rewind there asks before replacing it (the
                // verifier, 2026-12-07: a fork made before a later write took that write's
                // record, and a rewind replaced the file without asking).
                let all_held = self
                    .index
                    .snapshots
                    .iter()
                    .filter(|other| other.path == snapshot.path)
                    .all(|other| turns.contains(other.turn.as_str()));
                if let Some(state) = self.index.written.get(&snapshot.path).filter(|_| all_held) {
                    copy.index
                        .written
                        .insert(snapshot.path.clone(), state.clone());
                }
            }
        }
        if copied > 0 {
            copy.save()?;
        }
        Ok(copied)
    }

    /// For each path written since a turn: its earliest snapshot among `turns` (the turns
    /// from the one rewound to on), in the order first taken.
    pub fn earliest_since(&self, turns: &[String]) -> Vec<Snapshot> {
        let mut seen = std::collections::HashSet::new();
        self.index
            .snapshots
            .iter()
            .filter(|snapshot| turns.contains(&snapshot.turn))
            .filter(|snapshot| seen.insert(snapshot.path.clone()))
            .cloned()
            .collect()
    }

    fn create_dir(&self) -> Result<()> {
        refuse_link(&self.dir)?;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .with_context(|| format!("cannot create `{}`", self.dir.display()))
    }

    fn save(&self) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(&self.index)?;
        write_private(&self.dir, INDEX, &bytes)
    }
}

/// An error when the checkpoint folder is a link: one planted beside a shipped session file would
/// take the snapshots (the user's files) wherever it leads, and give a rewind its index.
fn refuse_link(dir: &Path) -> Result<()> {
    if ctxkit_jail::is_link(dir) {
        anyhow::bail!(
            "`{}` is a link: checkpoints are never kept or read through one (remove it)",
            dir.display()
        );
    }
    Ok(())
}

/// The bytes of the file `name` in the checkpoint folder `dir` (`None` when the folder or the
/// file does not exist), opened through a jail on the folder: a link leading out of it, ctxkit's
/// own places and the user's credentials are refused, so are anything but a regular file and a
/// file longer than `max`.
fn read_in_folder(
    dir: &Path,
    name: &str,
    max: u64,
) -> Result<Option<Vec<u8>>, ctxkit_jail::JailError> {
    let jail = match ctxkit_jail::Jail::open(dir) {
        Ok(jail) => jail,
        Err(error) if error.is_not_found() => return Ok(None),
        Err(error) => return Err(error),
    };
    match jail.read(Path::new(name), max) {
        Ok((bytes, size)) if (bytes.len() as u64) < size => Err(ctxkit_jail::JailError::TooLarge {
            path: dir.join(name),
            max,
        }),
        Ok((bytes, _)) => Ok(Some(bytes)),
        Err(error) if error.is_not_found() => Ok(None),
        Err(error) => Err(error),
    }
}

/// A file name of the folder itself: no separator, not hidden.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('/') && !name.starts_with('.')
}

/// Whether a snapshot was kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddOutcome {
    Kept,
    /// The folder would go over `chat.checkpointMaxBytes`.
    OverLimit,
}

/// The prefix of the temporary files earlier versions wrote, named without their process.
const UNOWNED_TEMPORARY_PREFIX: &str = ".checkpoint-";

/// How old such a temporary file must be before it counts as left behind: a write takes seconds at
/// most, and one chat at a time writes a session's checkpoints (the session's writer lock).
const LEFT_BEHIND_AFTER: std::time::Duration = std::time::Duration::from_secs(120);

/// Removes the temporary files a killed chat left in the folder (a kill between the temporary
/// file and its rename): they held copies of project files, counted nowhere, for ever. A
/// temporary names its writer (`ctxkit_jail::temporary_owner`) and goes once that process is gone;
/// an earlier version's, once two minutes old. Best effort: a file that cannot be read or removed
/// stays.
fn remove_left_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let Ok(metadata) = entry.metadata() else {
            continue;
        };
        let left_behind = match ctxkit_jail::temporary_owner(name) {
            Some(pid) => !ctxkit_jail::is_running(pid),
            None => {
                name.starts_with(UNOWNED_TEMPORARY_PREFIX)
                    && metadata
                        .modified()
                        .ok()
                        .and_then(|modified| modified.elapsed().ok())
                        .is_some_and(|age| age >= LEFT_BEHIND_AFTER)
            }
        };
        if left_behind && metadata.is_file() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Writes `dir/name` atomically (temporary file, fsync, rename), readable by the user only.
fn write_private(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let target = dir.join(name);
    let mut file = ctxkit_jail::temporary_beside(&target)
        .with_context(|| format!("cannot write in `{}`", dir.display()))?;
    file.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(&target)
        .with_context(|| format!("cannot write `{}`", target.display()))?;
    Ok(())
}

/// `ctxkit checkpoints [SESSION]`; without SESSION, the current directory's most recent session.
pub fn run(
    process: &super::settings::ProcessSettings<'_>,
    locations: &super::Locations,
    args: crate::cli::CheckpointsArgs,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let json = args.json;
    let file = match args.file {
        Some(file) => file,
        None => {
            let cwd = process.environment()?.cwd.display().to_string();
            let dir = ctxkit_session::default_session_dir(&locations.sessions_root, &cwd);
            ctxkit_session::find_most_recent_session(&dir)
                .with_context(|| format!("No session for `{cwd}`; name the session file"))?
        }
    };
    list(&file, json, out)
}

/// `ctxkit checkpoints [SESSION]`: the snapshots (turn, file, size, time) and their total.
pub fn list(session_file: &Path, json: bool, out: &mut dyn Write) -> Result<Outcome> {
    super::refuse_folder(session_file)?;
    // A missing file or one of another kind fails as every command that opens a session says
    // it (a missing one: exit 3, with the same hint).
    match std::fs::metadata(session_file) {
        Err(source) => {
            return Err(ctxkit_session::SessionError::Io {
                action: "open",
                path: session_file.to_owned(),
                source,
            }
            .into());
        }
        Ok(metadata) if !metadata.is_file() => {
            return Err(ctxkit_session::SessionError::NotARegularFile {
                path: session_file.to_owned(),
                kind: "a special file",
            }
            .into());
        }
        Ok(_) => {}
    }
    // A file that is not a session is refused as every command on a session refuses it: a
    // mistyped path read as "no checkpoints for this session".
    ctxkit_session::read_header(session_file)?;
    let store = CheckpointStore::open(session_file)?;
    if json {
        let record = serde_json::json!({
            "dir": store.dir(),
            "snapshots": store.snapshots(),
            "totalBytes": store.total_bytes(),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&record)?)?;
        return Ok(Outcome::Success);
    }
    if store.snapshots().is_empty() {
        writeln!(out, "No file checkpoints for this session.")?;
        return Ok(Outcome::Success);
    }
    writeln!(out, "{:<10} {:>10}  {:<20}  file", "turn", "size", "time")?;
    for snapshot in store.snapshots() {
        let size = if snapshot.existed {
            format!("{} B", snapshot.size)
        } else {
            "(new file)".to_owned()
        };
        writeln!(
            out,
            "{:<10} {size:>10}  {:<20}  {}",
            snapshot.turn,
            snapshot.time,
            snapshot.path.display()
        )?;
    }
    writeln!(
        out,
        "{} snapshot(s), {} bytes in total, in {}",
        store.snapshots().len(),
        store.total_bytes(),
        store.dir().display()
    )?;
    Ok(Outcome::Success)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// A link planted in place of a shipped session's checkpoint folder is neither written through
    /// nor read: the snapshot is refused, the place it leads to untouched.
    #[test]
    fn a_linked_checkpoint_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("2026_abc.jsonl");
        std::fs::write(&session, "{}\n").unwrap();
        let victim = dir.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::write(victim.join(INDEX), "{\"snapshots\": []}").unwrap();
        std::os::unix::fs::symlink(&victim, checkpoint_dir(&session)).unwrap();
        let error = CheckpointStore::open(&session).unwrap_err().to_string();
        assert!(error.contains("is a link"), "{error}");
        assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 1);
    }

    /// QA r102: a chat killed while it wrote a snapshot left its `.checkpoint-XXXXXX` temporary
    /// file (a copy of a project file) for ever, outside `chat.checkpointMaxBytes`. The next
    /// snapshot removes such files once they are old; one being written now stays.
    #[test]
    fn a_temporary_file_a_killed_chat_left_is_removed_by_the_next_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("2026_abc.jsonl");
        std::fs::write(&session, "{}\n").unwrap();
        let folder = checkpoint_dir(&session);
        std::fs::create_dir(&folder).unwrap();
        let left = folder.join(".checkpoint-kGu4fa");
        std::fs::write(&left, "a copy of .env").unwrap();
        let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&left)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        let fresh = folder.join(".checkpoint-Fresh1");
        std::fs::write(&fresh, "being written").unwrap();
        let mut writer = std::process::Command::new("true").spawn().unwrap();
        let dead = writer.id();
        writer.wait().unwrap();
        let owned = folder.join(format!(".000002-abc.snap.ctxkit-{dead}-XyZ123.tmp"));
        std::fs::write(&owned, "a copy of main.rs").unwrap();
        let mut store = CheckpointStore::open(&session).unwrap();
        store
            .add("u1", &dir.path().join("a.txt"), Some(b"before"), &[], 100)
            .unwrap();
        assert!(!left.exists(), "the left temporary file stayed");
        assert!(fresh.exists(), "a temporary file being written was removed");
        assert!(!owned.exists(), "a dead writer's temporary file stayed");
        assert_eq!(store.snapshots().len(), 1);
    }

    /// A session whose every write failed left an empty checkpoints folder (its index alone)
    /// beside it: dropping the last snapshot, with nothing written, removes the folder.
    #[test]
    fn a_store_left_with_nothing_leaves_no_folder() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("2026_abc.jsonl");
        std::fs::write(&session, "{}\n").unwrap();
        let mut store = CheckpointStore::open(&session).unwrap();
        let file = dir.path().join("project/a.txt");
        store.add("u1", &file, Some(b"before"), &[], 100).unwrap();
        assert!(checkpoint_dir(&session).join(INDEX).exists());
        store.drop_snapshot("u1", &file).unwrap();
        assert!(!checkpoint_dir(&session).exists());
        let reopened = CheckpointStore::open(&session).unwrap();
        assert!(reopened.snapshots().is_empty());
    }

    /// `/fork` and `/clone` (QA 2026-12-07: a fork's rewinds could not put back a file the
    /// copied turns wrote).
    #[test]
    fn a_fork_gets_the_snapshots_of_the_turns_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("2026_abc.jsonl");
        let fork = dir.path().join("2026_def.jsonl");
        let mut store = CheckpointStore::open(&session).unwrap();
        let file = dir.path().join("project/a.txt");
        let created = dir.path().join("project/new/b.txt");
        let folders = [dir.path().join("project/new")];
        store.add("u1", &file, Some(b"before"), &[], 100).unwrap();
        store
            .note_written(&file, state_digest(Some(b"after")))
            .unwrap();
        store.add("u2", &created, None, &folders, 100).unwrap();
        store.add("u3", &file, Some(b"after"), &[], 100).unwrap();
        let turns = ["u1", "u2"].into_iter().collect();
        assert_eq!(store.copy_turns_to(&fork, &turns, 100).unwrap(), 2);
        let copy = CheckpointStore::open(&fork).unwrap();
        let kept: Vec<_> = copy
            .snapshots()
            .iter()
            .map(|snapshot| (snapshot.turn.as_str(), snapshot.existed))
            .collect();
        assert_eq!(kept, [("u1", true), ("u2", false)]);
        assert_eq!(copy.snapshots()[0].time, store.snapshots()[0].time);
        assert_eq!(copy.snapshots()[1].created_folders, folders);
        assert_eq!(
            copy.read_blob(&copy.snapshots()[0], 100).unwrap(),
            Some(b"before".to_vec())
        );
        // `u3`, which the fork does not hold, wrote the file too: the record of what the agent
        // wrote last is not the fork's, and a rewind there asks before replacing the file.
        assert_eq!(copy.written(&file), None);
        let everything = dir.path().join("2026_all.jsonl");
        let all_turns = ["u1", "u2", "u3"].into_iter().collect();
        assert_eq!(
            store.copy_turns_to(&everything, &all_turns, 100).unwrap(),
            3
        );
        let whole = CheckpointStore::open(&everything).unwrap();
        assert_eq!(whole.written(&file), Some(digest(b"after").as_str()));
        // Copied again (a second fork of the same turns into it): nothing twice.
        assert_eq!(store.copy_turns_to(&fork, &turns, 100).unwrap(), 0);
        // A snapshot that cannot be read is left out, the others copied.
        let other = dir.path().join("2026_ghi.jsonl");
        let blob = store.snapshots()[0].blob.clone().unwrap();
        std::fs::write(checkpoint_dir(&session).join(blob), "changed size").unwrap();
        assert_eq!(store.copy_turns_to(&other, &turns, 100).unwrap(), 1);
    }

    /// A copy working in another project (`chat --fork` or `/import` of another project's
    /// session) gets none of the source's snapshots: they would put back files of a project the
    /// copy does not work in.
    #[test]
    fn a_copy_in_another_project_gets_no_snapshots() {
        let dir = tempfile::tempdir().unwrap();
        let session_in = |name: &str, cwd: &str| {
            let file = dir.path().join(name);
            std::fs::write(
                &file,
                format!(
                    "{{\"type\":\"session\",\"version\":3,\"id\":\"{name}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"{cwd}\"}}\n\
                     {{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"go\",\"timestamp\":1}}}}\n"
                ),
            )
            .unwrap();
            file
        };
        let source = session_in("source.jsonl", "/p1");
        let mut store = CheckpointStore::open(&source).unwrap();
        store
            .add("u1", Path::new("/p1/a.txt"), Some(b"before"), &[], 100)
            .unwrap();
        let elsewhere = session_in("elsewhere.jsonl", "/p2");
        let opened = ctxkit_session::Session::open(&elsewhere).unwrap();
        assert_eq!(carry_to_fork(&source, &elsewhere, &opened, 100).unwrap(), 0);
        let here = session_in("here.jsonl", "/p1");
        let opened = ctxkit_session::Session::open(&here).unwrap();
        assert_eq!(carry_to_fork(&source, &here, &opened, 100).unwrap(), 1);
    }

    #[test]
    fn snapshots_are_kept_once_bounded_and_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("2026_abc.jsonl");
        std::fs::write(&session, "{}\n").unwrap();
        let mut store = CheckpointStore::open(&session).unwrap();
        let file = dir.path().join("project/a.txt");
        assert_eq!(
            store.add("u1", &file, Some(b"before"), &[], 100).unwrap(),
            AddOutcome::Kept
        );
        assert!(store.has("u1", &file));
        assert_eq!(
            store.add("u2", &file, Some(&[0; 200]), &[], 100).unwrap(),
            AddOutcome::OverLimit
        );
        store
            .note_written(&file, state_digest(Some(b"after")))
            .unwrap();
        store
            .add("u2", &dir.path().join("new.txt"), None, &[], 100)
            .unwrap();
        // A failed write's snapshot is dropped with its file.
        store.add("u3", &file, Some(b"again"), &[], 100).unwrap();
        store.drop_snapshot("u3", &file).unwrap();
        let reopened = CheckpointStore::open(&session).unwrap();
        assert_eq!(reopened.snapshots().len(), 2);
        assert_eq!(reopened.total_bytes(), 6);
        assert_eq!(
            reopened.read_blob(&reopened.snapshots()[0], 100).unwrap(),
            Some(b"before".to_vec())
        );
        assert_eq!(reopened.written(&file), Some(digest(b"after").as_str()));
        let dir_mode = std::fs::metadata(checkpoint_dir(&session)).unwrap();
        assert_eq!(dir_mode.permissions().mode() & 0o777, 0o700);
        let earliest = reopened.earliest_since(&["u2".to_owned()]);
        assert_eq!(earliest.len(), 1);
        assert!(!earliest[0].existed);
        let blobs = std::fs::read_dir(checkpoint_dir(&session))
            .unwrap()
            .filter(|entry| {
                entry
                    .as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|ext| ext == "snap")
            })
            .count();
        assert_eq!(blobs, 1, "the dropped snapshot's file is gone");
    }

    /// A shipped folder whose `index.json` is a FIFO hung the chat at the model's first `write`
    /// (Esc and Ctrl-C did nothing), and one linked to `/dev/zero` filled memory: both are refused
    /// at once, as is a link out of the folder.
    #[test]
    fn an_index_that_is_a_fifo_a_device_or_a_link_out_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("s.jsonl");
        std::fs::write(&session, "{}\n").unwrap();
        let folder = checkpoint_dir(&session);
        std::fs::create_dir(&folder).unwrap();
        let index = folder.join(INDEX);
        let made = std::process::Command::new("mkfifo")
            .arg(&index)
            .status()
            .unwrap();
        assert!(made.success());
        assert!(open_within_a_deadline(&session).is_err());
        std::fs::remove_file(&index).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &index).unwrap();
        assert!(open_within_a_deadline(&session).is_err());
        std::fs::remove_file(&index).unwrap();
        let elsewhere = dir.path().join("elsewhere.json");
        std::fs::write(&elsewhere, "{\"snapshots\": []}").unwrap();
        std::os::unix::fs::symlink(&elsewhere, &index).unwrap();
        assert!(open_within_a_deadline(&session).is_err());
    }

    /// [`CheckpointStore::open`] in a thread: an error (as text) when it failed, a panic when it
    /// had not returned after a generous deadline (it hung).
    fn open_within_a_deadline(session: &Path) -> Result<CheckpointStore, String> {
        let (sender, receiver) = std::sync::mpsc::channel();
        let session = session.to_owned();
        std::thread::spawn(move || {
            let _ =
                sender.send(CheckpointStore::open(&session).map_err(|error| format!("{error:#}")));
        });
        receiver
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("opening the checkpoints hung")
    }

    /// A shipped snapshot that is a link to the user's key (or to ctxkit's `auth.json`) was read
    /// through `std::fs::read` and put into a project file by a rewind: a link out of the folder,
    /// a FIFO and a snapshot longer than the index says are refused.
    #[test]
    fn a_snapshot_is_read_only_as_a_regular_file_of_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("s.jsonl");
        std::fs::write(&session, "{}\n").unwrap();
        let mut store = CheckpointStore::open(&session).unwrap();
        let project_file = dir.path().join("project/notes.txt");
        store
            .add("u1", &project_file, Some(b"my notes"), &[], 100)
            .unwrap();
        let mut snapshot = store.snapshots()[0].clone();
        let blob = store.dir().join(snapshot.blob.as_deref().unwrap());
        assert_eq!(
            store.read_blob(&snapshot, 100).unwrap(),
            Some(b"my notes".to_vec())
        );
        let key = dir.path().join("id_rsa");
        std::fs::write(&key, "PRIVATE KEY").unwrap();
        std::fs::remove_file(&blob).unwrap();
        std::os::unix::fs::symlink(&key, &blob).unwrap();
        snapshot.size = 11;
        let error = format!("{:#}", store.read_blob(&snapshot, 100).unwrap_err());
        assert!(error.contains("cannot read"), "{error}");
        std::fs::remove_file(&blob).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(&blob)
            .status()
            .unwrap();
        assert!(made.success());
        assert!(store.read_blob(&snapshot, 100).is_err());
        std::fs::remove_file(&blob).unwrap();
        std::fs::write(&blob, "my notes and more").unwrap();
        snapshot.size = 8;
        assert!(store.read_blob(&snapshot, 100).is_err());
    }

    #[test]
    fn an_index_pointing_elsewhere_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("s.jsonl");
        let store = CheckpointStore::open(&session).unwrap();
        let snapshot = Snapshot {
            turn: "u".to_owned(),
            path: dir.path().join("x"),
            existed: true,
            blob: Some("../../etc/passwd".to_owned()),
            created_folders: Vec::new(),
            size: 1,
            time: String::new(),
        };
        assert!(store.read_blob(&snapshot, 100).is_err());
    }
}
