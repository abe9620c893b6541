//! Leases in SQLite: taking, renewing and giving up a run, each one transaction, so two
//! processes racing for a run cannot both win.

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::db::Db;
use crate::store::{Acquired, Beat, Lease, Owner, RunId, StoreError, Timestamp};

impl Db {
    pub(super) fn acquire(&mut self, run: &RunId, owner: &Owner) -> Result<Acquired, StoreError> {
        let me = owner_json(owner);
        let now = Timestamp::now().0;
        let stored_now = i64::try_from(now).unwrap_or(i64::MAX);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let held = read_lease(&tx, run)?;
        let outcome = match held {
            None => Acquired::Free,
            Some(lease) if lease.owner == *owner => Acquired::Free,
            Some(lease) => {
                if lease.is_held() {
                    return Err(StoreError::Owned {
                        run: run.as_str().to_owned(),
                        owner: lease.owner.describe(),
                        since: format!("{} UTC", crate::store::utc(Timestamp(lease.since_ms))),
                    });
                }
                Acquired::TakenOver(lease.owner)
            }
        };
        tx.execute(
            "INSERT INTO leases (run_id, owner, since_ms, heartbeat_ms, cancel_requested)
             VALUES (?1, ?2, ?3, ?3, 0)
             ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner,
                 since_ms = excluded.since_ms, heartbeat_ms = excluded.heartbeat_ms,
                 cancel_requested = 0",
            params![run.as_str(), me, stored_now],
        )?;
        tx.commit()?;
        Ok(outcome)
    }

    pub(super) fn heartbeat(&mut self, run: &RunId, owner: &Owner) -> Result<Beat, StoreError> {
        let me = owner_json(owner);
        let now = i64::try_from(Timestamp::now().0).unwrap_or(i64::MAX);
        let cancel: Option<i64> = self
            .conn
            .query_row(
                "UPDATE leases SET heartbeat_ms = ?3 WHERE run_id = ?1 AND owner = ?2
                 RETURNING cancel_requested",
                params![run.as_str(), me, now],
                |row| row.get(0),
            )
            .optional()?;
        match cancel {
            Some(flag) => Ok(Beat {
                cancel_requested: flag != 0,
            }),
            None => {
                let holder = read_lease(&self.conn, run)?
                    .map_or_else(|| "nobody".to_owned(), |lease| lease.owner.describe());
                Err(StoreError::LeaseLost {
                    run: run.as_str().to_owned(),
                    owner: holder,
                })
            }
        }
    }

    pub(super) fn release(&mut self, run: &RunId, owner: &Owner) -> Result<(), StoreError> {
        self.conn.execute(
            "DELETE FROM leases WHERE run_id = ?1 AND owner = ?2",
            params![run.as_str(), owner_json(owner)],
        )?;
        Ok(())
    }

    pub(super) fn lease(&mut self, run: &RunId) -> Result<Option<Lease>, StoreError> {
        read_lease(&self.conn, run)
    }

    pub(super) fn request_cancel(&mut self, run: &RunId) -> Result<bool, StoreError> {
        let changed = self.conn.execute(
            "UPDATE leases SET cancel_requested = 1 WHERE run_id = ?1",
            [run.as_str()],
        )?;
        Ok(changed > 0)
    }
}

/// The owner as stored: JSON with its fields in declaration order, so equal owners are
/// equal text.
fn owner_json(owner: &Owner) -> String {
    serde_json::to_string(owner).expect("an owner serialises")
}

fn read_lease(conn: &rusqlite::Connection, run: &RunId) -> Result<Option<Lease>, StoreError> {
    let row: Option<(String, i64, i64, i64)> = conn
        .query_row(
            "SELECT owner, since_ms, heartbeat_ms, cancel_requested FROM leases WHERE run_id = ?1",
            [run.as_str()],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        )
        .optional()?;
    let Some((owner, since_ms, heartbeat_ms, cancel)) = row else {
        return Ok(None);
    };
    let owner: Owner = serde_json::from_str(&owner).map_err(|error| StoreError::Corrupt {
        run: run.as_str().to_owned(),
        message: format!("its lease does not decode: {error}"),
    })?;
    Ok(Some(Lease {
        owner,
        since_ms: u64::try_from(since_ms).unwrap_or(0),
        heartbeat_ms: u64::try_from(heartbeat_ms).unwrap_or(0),
        cancel_requested: cancel != 0,
    }))
}
