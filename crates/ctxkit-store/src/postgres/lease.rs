//! The lease of the PostgreSQL backend: granted, renewed and given up on the session's row.

use std::time::Duration;

use super::deadline::Deadline as _;
use super::{PostgresStore, millis};
use crate::error::{Result, StoreError};
use crate::store::Lease;

impl PostgresStore {
    pub(super) async fn acquire_lease(
        &self,
        id: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<Lease> {
        let client = self.client().await?;
        let granted = client
            .query_opt(
                "UPDATE ctxkit_sessions
                 SET lease_owner = $2, lease_token = lease_token + 1,
                     lease_expires = clock_timestamp() + make_interval(secs => $3::bigint / 1000.0)
                 WHERE id = $1
                   AND (lease_owner IS NULL OR lease_expires <= clock_timestamp()
                        OR lease_owner = $2)
                 RETURNING lease_token",
                &[&id, &owner, &millis(ttl)],
            )
            .within("acquire the lease")
            .await?;
        if let Some(row) = granted {
            return Ok(Lease {
                session_id: id.to_owned(),
                owner: owner.to_owned(),
                token: row.get(0),
            });
        }
        let holder = client
            .query_opt(
                "SELECT lease_owner,
                        (extract(epoch FROM lease_expires - clock_timestamp()) * 1000)::bigint
                 FROM ctxkit_sessions WHERE id = $1",
                &[&id],
            )
            .within("read the lease")
            .await?
            .ok_or_else(|| StoreError::NotFound { id: id.to_owned() })?;
        Err(StoreError::SessionInUse {
            id: id.to_owned(),
            owner: holder.get::<_, Option<String>>(0).unwrap_or_default(),
            expires_in_ms: holder.get::<_, Option<i64>>(1).unwrap_or(0).max(0),
        })
    }

    pub(super) async fn renew_lease(&self, lease: &Lease, ttl: Duration) -> Result<()> {
        let client = self.client().await?;
        let renewed = client
            .execute(
                "UPDATE ctxkit_sessions
                 SET lease_expires = clock_timestamp() + make_interval(secs => $3::bigint / 1000.0)
                 WHERE id = $1 AND lease_token = $2 AND lease_owner IS NOT NULL",
                &[&lease.session_id, &lease.token, &millis(ttl)],
            )
            .within("renew the lease")
            .await?;
        fenced_unless(renewed == 1, lease)
    }

    pub(super) async fn release_lease(&self, lease: &Lease) -> Result<()> {
        let client = self.client().await?;
        let released = client
            .execute(
                "UPDATE ctxkit_sessions SET lease_owner = NULL, lease_expires = NULL
                 WHERE id = $1 AND lease_token = $2 AND lease_owner IS NOT NULL",
                &[&lease.session_id, &lease.token],
            )
            .within("release the lease")
            .await?;
        fenced_unless(released == 1, lease)
    }
}

pub(super) fn fenced_unless(holds: bool, lease: &Lease) -> Result<()> {
    if holds {
        Ok(())
    } else {
        Err(StoreError::Fenced {
            id: lease.session_id.clone(),
            token: lease.token,
        })
    }
}
