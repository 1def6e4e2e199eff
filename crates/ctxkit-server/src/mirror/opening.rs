//! Opening and creating a database session for a client: its lease taken and its private copy
//! written first, the session open until then given up only once that has worked, so a refused
//! `session.open` or `session.create` leaves the client where it was.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use ctxkit_session::Session;
use ctxkit_store::{Lease, SessionLines, SessionStore as _};

use super::{
    Confirmed, Mirror, StoreBinding, close, copy_error, renew_in_background, store_error, sync,
};
use crate::{MethodError, Shared};

/// A session opened or created for a client and not yet its current one: the session open until
/// now stays open, untouched, until [`replace`] makes this one current. A refused `session.open` or
/// `session.create` thus leaves the client where it was.
pub(crate) struct Opened {
    pub(crate) session: Session,
    /// Its lease and private copy, on a database store.
    stored: Option<Mirror>,
}

impl Opened {
    /// A session file (or one in memory): no lease, no copy.
    pub(crate) fn file(session: Session) -> Self {
        Self {
            session,
            stored: None,
        }
    }
}

/// `session.open` of a stored session: its lease, then its copy.
pub(crate) async fn open(
    shared: &Arc<Shared>,
    binding: &StoreBinding,
    id: &str,
) -> Result<Opened, MethodError> {
    store_open_tail(shared, id).await?;
    let acquired = Instant::now();
    let lease = binding
        .store
        .acquire(id, &shared.owner, binding.lease)
        .await
        .map_err(store_error)?;
    let opened = async {
        let lines = binding.store.export(id).await.map_err(store_error)?;
        let folder = private_folder()?;
        let path = ctxkit_session::private_copy_path(folder.path(), id);
        let bytes = lines.to_jsonl();
        ctxkit_session::write_private_file(&path, &bytes)
            .map_err(|error| copy_error("cannot write the session's copy", error))?;
        let session =
            Session::open(&path).map_err(|error| crate::errors::engine_error(error.into()))?;
        Ok::<_, MethodError>((session, path, folder, bytes.len() as u64))
    }
    .await;
    let (session, path, folder, synced) = match opened {
        Ok(opened) => opened,
        Err(error) => {
            let _ = binding.store.release(&lease).await;
            return Err(error);
        }
    };
    let copy = PrivateCopy {
        path,
        folder,
        synced,
    };
    Ok(Opened {
        session,
        stored: Some(new_mirror(binding, lease, acquired, copy)),
    })
}

/// Before the session open now is opened again (`session.open` of its own id): what it appended
/// is stored first, as the new copy is exported from the database and the new lease fences the
/// old one.
async fn store_open_tail(shared: &Shared, id: &str) -> Result<(), MethodError> {
    let mut mirror = shared.mirror.lock().await;
    match mirror.as_mut() {
        Some(open) if open.lease.session_id == id => sync(shared, open).await,
        Some(_) | None => Ok(()),
    }
}

/// `session.create` on a database store: the header is stored at once, and its lease taken.
pub(crate) async fn create(
    binding: &StoreBinding,
    owner: &str,
    cwd: &str,
) -> Result<Opened, MethodError> {
    let folder = private_folder()?;
    let mut session = Session::create(cwd, folder.path());
    session
        .flush_pending()
        .map_err(|error| crate::errors::engine_error(error.into()))?;
    let path = session
        .path()
        .map(std::path::Path::to_owned)
        .ok_or_else(|| copy_error("the new session", "has no file"))?;
    // Readable by this user only, as an opened session's copy.
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .map_err(|error| copy_error("cannot write the session's copy", error))?;
    let bytes = std::fs::read(&path)
        .map_err(|error| copy_error("cannot read the session's copy", error))?;
    let lines = SessionLines::parse(&path.display().to_string(), &bytes).map_err(store_error)?;
    // Stored and leased in one step: a failure between the two left an empty session behind.
    let acquired = Instant::now();
    let lease = binding
        .store
        .create(&lines, owner, binding.lease)
        .await
        .map_err(store_error)?;
    let copy = PrivateCopy {
        path,
        folder,
        synced: bytes.len() as u64,
    };
    Ok(Opened {
        session,
        stored: Some(new_mirror(binding, lease, acquired, copy)),
    })
}

/// A session's private copy: its file, its folder, and how many of its bytes are stored.
struct PrivateCopy {
    path: PathBuf,
    folder: tempfile::TempDir,
    synced: u64,
}

/// The lease is renewed from now on, so a session whose open is still being answered is not lost.
fn new_mirror(
    binding: &StoreBinding,
    lease: Lease,
    acquired: Instant,
    copy: PrivateCopy,
) -> Mirror {
    let confirmed = Confirmed::new(acquired);
    let renewer = renew_in_background(&binding.store, &lease, binding.lease, confirmed.clone());
    Mirror {
        store: binding.store.clone(),
        lease,
        ttl: binding.lease,
        path: copy.path,
        synced: copy.synced,
        _folder: copy.folder,
        renewer,
        confirmed,
    }
}

/// Makes `opened` the client's session as far as the store goes: the database session open until
/// now (if any) is closed (what is left stored, its lease given up), and `opened`'s lease and copy
/// are kept. Called with the old engine still installed, whose held-back entries are stored first;
/// the caller installs the new engine next, and returns the session to open.
pub(crate) async fn replace(shared: &Shared, opened: Opened) -> Session {
    close(shared).await;
    *shared.mirror.lock().await = opened.stored;
    opened.session
}

/// A private folder (`0700`, named after this process: one a killed server left is removed by
/// the next process of its user) for one session's copy.
fn private_folder() -> Result<tempfile::TempDir, MethodError> {
    ctxkit_session::private_temporary_folder("serve")
        .map_err(|error| copy_error("cannot create a private temporary folder", error))
}
