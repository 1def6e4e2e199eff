//! Where sessions live: [`SessionStore`] with two backends that pass one test suite —
//! [`DirectoryStore`], today's JSONL files (the default), and [`PostgresStore`], one row per entry
//! in PostgreSQL for a fleet. Both keep each entry's line byte for byte, so a session moves between
//! them (`ctxkit store import`/`export`) unchanged and opens in `ctxkit_session::Session` exactly
//! as its file does. One writer per session: [`SessionStore::acquire`] grants a lease with a
//! fencing token; appends check it in the same step as the write.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod error;
mod files;
mod folder;
mod lines;
mod postgres;
mod search;
mod store;
mod url;

pub use error::{Result, StoreError};
pub use files::{DirectoryStore, list_folder};
pub use folder::{list_folder_records, list_store_records};
pub use lines::{EntryFacts, HeaderFacts, SessionLines, entry_facts, header_facts};
pub use postgres::PostgresStore;
pub use store::{Lease, ListQuery, SessionStore, StoredSession};
pub use url::{DATABASE_URL_FORM, StoreUrl, redact_url, shown_store_text};

use std::time::Duration;

/// How long a lease lasts unless renewed (each append renews it).
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// Either backend, chosen by `store.url`.
#[derive(Debug, Clone)]
pub enum AnyStore {
    Directory(DirectoryStore),
    Postgres(PostgresStore),
}

impl AnyStore {
    /// Opens the store `url` names (a database is connected and migrated).
    pub async fn open(url: &StoreUrl) -> Result<Self> {
        match url {
            StoreUrl::Directory(root) => Ok(Self::Directory(DirectoryStore::new(root.clone()))),
            StoreUrl::Postgres(url) => Ok(Self::Postgres(PostgresStore::connect(url).await?)),
        }
    }

    /// Whether the store answers now (a health check: the caller bounds how long it waits).
    pub async fn check(&self) -> Result<()> {
        match self {
            Self::Directory(store) => store.check(),
            Self::Postgres(store) => store.check().await,
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $store:ident => $call:expr) => {
        match $self {
            AnyStore::Directory($store) => $call,
            AnyStore::Postgres($store) => $call,
        }
    };
}

impl SessionStore for AnyStore {
    async fn import(&self, lines: &SessionLines) -> Result<StoredSession> {
        dispatch!(self, store => store.import(lines).await)
    }

    async fn import_file(&self, path: &std::path::Path) -> Result<StoredSession> {
        dispatch!(self, store => store.import_file(path).await)
    }

    async fn create(&self, lines: &SessionLines, owner: &str, ttl: Duration) -> Result<Lease> {
        dispatch!(self, store => store.create(lines, owner, ttl).await)
    }

    async fn export(&self, id: &str) -> Result<SessionLines> {
        dispatch!(self, store => store.export(id).await)
    }

    async fn acquire(&self, id: &str, owner: &str, ttl: Duration) -> Result<Lease> {
        dispatch!(self, store => store.acquire(id, owner, ttl).await)
    }

    async fn renew(&self, lease: &Lease, ttl: Duration) -> Result<()> {
        dispatch!(self, store => store.renew(lease, ttl).await)
    }

    async fn release(&self, lease: &Lease) -> Result<()> {
        dispatch!(self, store => store.release(lease).await)
    }

    async fn append(&self, lease: &Lease, lines: &[String], ttl: Duration) -> Result<u64> {
        dispatch!(self, store => store.append(lease, lines, ttl).await)
    }

    async fn resolve(&self, id_or_prefix: &str) -> Result<String> {
        dispatch!(self, store => store.resolve(id_or_prefix).await)
    }

    async fn list(&self, query: &ListQuery) -> Result<Vec<StoredSession>> {
        dispatch!(self, store => store.list(query).await)
    }
}
