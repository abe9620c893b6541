//! Decoding rows into the store's records. Stored JSON that does not decode is reported as
//! [`StoreError::Corrupt`], naming the run.

use rusqlite::Row;
use serde::de::DeserializeOwned;

use super::implicit;

use crate::store::{
    PendingWait, RunId, RunRecord, RunStatus, StepRecord, StepStatus, StoreError, Timestamp,
};

/// `SELECT … FROM …` of the columns [`run_row`] reads, in order: the run joined with its
/// last step (alias `r` for runs), which gives the step count and the last change.
pub(super) const RUN_SELECT: &str = "
    SELECT r.id, r.workflow, r.path, r.hash, r.inputs, r.status, r.created_at,
           max(r.updated_at, coalesce(l.finished_at, 0)), coalesce(l.seq, 0), r.error, r.wait,
           r.origin
    FROM runs r
    LEFT JOIN steps l ON l.run_id = r.id
        AND l.seq = (SELECT max(seq) FROM steps WHERE run_id = r.id)";

/// The columns [`step_record`] reads, in order.
pub(super) const STEP_COLUMNS: &str = "seq, node_id, started_at, finished_at, status, attempts, delta, cursor, error, events, scope, outputs";

/// Raw columns of a run, decoded after the statement is done.
pub(super) type RunRow = (
    String,
    String,
    String,
    String,
    String,
    String,
    i64,
    i64,
    i64,
    Option<String>,
    Option<String>,
    Option<String>,
);

pub(super) fn run_row(row: &Row<'_>) -> rusqlite::Result<RunRow> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
        row.get(7)?,
        row.get(8)?,
        row.get(9)?,
        row.get(10)?,
        row.get(11)?,
    ))
}

pub(super) fn run_record(row: RunRow) -> Result<RunRecord, StoreError> {
    let (id, workflow, path, hash, inputs, status, created, updated, last_seq, error, wait, origin) =
        row;
    let status = RunStatus::parse(&status)
        .ok_or_else(|| corrupt(&id, format!("unknown run status `{status}`")))?;
    Ok(RunRecord {
        inputs: json(&id, &inputs)?,
        waits: wait
            .map(|wait| waits(&id, &wait))
            .transpose()?
            .unwrap_or_default(),
        id: RunId::new(id),
        workflow,
        path,
        hash,
        status,
        created_at: timestamp(created),
        updated_at: timestamp(updated),
        steps: last_seq as u64,
        error,
        origin,
    })
}

/// The `wait` column: a list of waits, or one wait (as schema 3 wrote it).
fn waits(run: &str, text: &str) -> Result<Vec<PendingWait>, StoreError> {
    if text.trim_start().starts_with('[') {
        json(run, text)
    } else {
        json(run, text).map(|wait| vec![wait])
    }
}

/// Raw columns of a step, its events, scope and outputs last.
pub(super) type StepRow = (
    i64,
    String,
    i64,
    i64,
    String,
    i64,
    String,
    String,
    Option<String>,
    String,
    Option<String>,
    Option<String>,
);

pub(super) fn step_row(row: &Row<'_>) -> rusqlite::Result<StepRow> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
        row.get(7)?,
        row.get(8)?,
        row.get(9)?,
        row.get(10)?,
        row.get(11)?,
    ))
}

/// The step, and the events committed with it.
pub(super) fn step_record(
    run: &RunId,
    row: StepRow,
) -> Result<(StepRecord, Vec<serde_json::Value>), StoreError> {
    let (
        seq,
        node_id,
        started,
        finished,
        status,
        attempts,
        delta,
        cursor,
        error,
        events,
        scope,
        outputs,
    ) = row;
    let events = json(
        run.as_str(),
        &implicit::events(
            &implicit::StepColumns {
                seq: seq as u64,
                node_id: &node_id,
                status: &status,
                attempts: attempts as u64,
                delta: &delta,
            },
            &events,
        ),
    )?;
    let status = StepStatus::parse(&status)
        .ok_or_else(|| corrupt(run.as_str(), format!("unknown step status `{status}`")))?;
    let step = StepRecord {
        seq: seq as u64,
        scope,
        node_id,
        started_at: timestamp(started),
        finished_at: timestamp(finished),
        status,
        attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
        delta: json(run.as_str(), &delta)?,
        outputs: outputs
            .map(|text| json(run.as_str(), &text))
            .transpose()?
            .unwrap_or_default(),
        cursor: json(run.as_str(), &cursor)?,
        error,
    };
    Ok((step, events))
}

/// Decodes stored JSON text.
pub(super) fn json<T: DeserializeOwned>(run: &str, text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|error| corrupt(run, error.to_string()))
}

pub(super) fn corrupt(run: &str, message: String) -> StoreError {
    StoreError::Corrupt {
        run: run.to_owned(),
        message,
    }
}

pub(super) fn timestamp(millis: i64) -> Timestamp {
    Timestamp(u64::try_from(millis).unwrap_or(0))
}
