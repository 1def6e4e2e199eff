//! `ctxkit store import FILE` of a session already stored: the entries the file gained since are
//! appended, under the session's lease. `ctxkit import` run again appends what a transcript
//! gained to its file and says to `store import` it; the store refused the whole file as a
//! session it already had (QA r99).

use std::path::Path;

use anyhow::{Context as _, Result, bail};
use ctxkit_store::{AnyStore, SessionLines, SessionStore};

/// What a second import of a stored session did.
pub(super) struct Appended {
    pub id: String,
    /// The entries the file had beyond the stored ones, now stored.
    pub added: usize,
    /// The session's entries in the store.
    pub entries: u64,
}

/// Appends to the stored session `file` holds the entries that follow the stored ones. Refused,
/// storing nothing, when the file is not the stored session with more entries: another header, or
/// stored entries the file does not have (the session went on in the store).
pub(super) fn append_gained(
    runtime: &tokio::runtime::Runtime,
    store: &AnyStore,
    file: &Path,
) -> Result<Appended> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read `{}`", file.display()))?;
    let lines = SessionLines::parse(&file.display().to_string(), &bytes)?;
    let id = ctxkit_store::header_facts(&lines.header)
        .map_err(anyhow::Error::msg)?
        .id;
    // The lease first: the stored entries compared with the file's are then the last ones.
    let lease = runtime.block_on(store.acquire(
        &id,
        &super::store_copy::writer_name(),
        ctxkit_store::DEFAULT_LEASE,
    ))?;
    let appended = append_under_lease(runtime, store, &lease, &lines, file);
    // Released whatever the append did: the next writer need not wait for the lease to expire.
    let released = runtime.block_on(store.release(&lease));
    let (added, entries) = appended?;
    released?;
    Ok(Appended { id, added, entries })
}

/// The entries of `lines` beyond the stored ones, appended: how many, and the session's count.
fn append_under_lease(
    runtime: &tokio::runtime::Runtime,
    store: &AnyStore,
    lease: &ctxkit_store::Lease,
    lines: &SessionLines,
    file: &Path,
) -> Result<(usize, u64)> {
    let id = &lease.session_id;
    let stored = runtime.block_on(store.export(id))?;
    let continues = stored.header == lines.header
        && stored.entries.len() <= lines.entries.len()
        && lines
            .entries
            .iter()
            .zip(&stored.entries)
            .all(|(line, kept)| line == kept);
    if !continues {
        bail!(
            "session `{id}` is already in the store, and `{}` does not continue it (the stored \
             session has entries the file does not: it went on in the store); `ctxkit store export \
             {id} -o FILE` writes the stored one",
            file.display()
        );
    }
    let gained = &lines.entries[stored.entries.len()..];
    if gained.is_empty() {
        return Ok((0, stored.entries.len() as u64));
    }
    let entries = runtime.block_on(store.append(lease, gained, ctxkit_store::DEFAULT_LEASE))?;
    Ok((gained.len(), entries))
}
