//! Reads: checkpoints, states at a step, run listings and histories.

use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

use super::db::Db;
use super::implicit;
use super::rows::{self, RUN_SELECT, STEP_COLUMNS};
use crate::store::keyframe::LiveState;
use crate::store::{
    Checkpoint, EventRecord, LogPosition, LogTail, OpenStep, RunDetail, RunFilter, RunId,
    RunRecord, State, StateDelta, StepStatus, StepTime, StoreError,
};

/// A step's columns a log tail reads: seq, node, start, finish, events, status, attempts,
/// delta (the last three rebuild a plain step's events).
type TailRow = (i64, String, i64, i64, String, String, i64, String);

impl Db {
    pub(super) fn run(&self, run: &RunId) -> Result<RunRecord, StoreError> {
        run_record(&self.conn, run)
    }

    pub(super) fn checkpoint(&mut self, run: &RunId) -> Result<Checkpoint, StoreError> {
        let record = run_record(&self.conn, run)?;
        let seq = record.steps;
        let (state, outputs) = match self.live.get(run) {
            Some(live) if live.seq == seq => (live.state.clone(), live.outputs.clone()),
            _ => {
                let (state, outputs) = state_and_outputs_at(&self.conn, run, seq)?;
                let bytes = serde_json::to_string(&state).map_or(0, |text| text.len());
                // Resuming commits next: count deltas from here, as if a keyframe had just
                // been written.
                self.live.insert(
                    run.clone(),
                    LiveState::from_keyframe(state.clone(), outputs.clone(), seq, bytes),
                );
                (state, outputs)
            }
        };
        // The last unscoped step, found from the end: only a block's open steps follow it.
        let top: Option<(i64, String)> = self
            .conn
            .prepare_cached(
                "SELECT seq, cursor FROM steps WHERE run_id = ?1 AND scope IS NULL
                 ORDER BY seq DESC LIMIT 1",
            )?
            .query_row([run.as_str()], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?;
        let (top_seq, cursor) = match top {
            Some((top_seq, text)) => (top_seq, Some(rows::json(run.as_str(), &text)?)),
            None => (0, None),
        };
        let open_rows: Vec<(i64, String, String, String)> = self
            .conn
            .prepare_cached(
                "SELECT seq, scope, status, cursor FROM steps
                 WHERE run_id = ?1 AND seq > ?2 AND scope IS NOT NULL ORDER BY seq",
            )?
            .query_map(rusqlite::params![run.as_str(), top_seq], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
            })?
            .collect::<Result<_, _>>()?;
        let mut open = Vec::with_capacity(open_rows.len());
        for (seq, scope, status, cursor) in open_rows {
            open.push(OpenStep {
                seq: seq as u64,
                scope,
                status: StepStatus::parse(&status).ok_or_else(|| {
                    rows::corrupt(run.as_str(), format!("unknown step status `{status}`"))
                })?,
                cursor: rows::json(run.as_str(), &cursor)?,
            });
        }
        Ok(Checkpoint {
            run: record,
            seq,
            state,
            outputs,
            cursor,
            open,
        })
    }

    pub(super) fn load_state(&self, run: &RunId, upto: u64) -> Result<State, StoreError> {
        let last = run_record(&self.conn, run)?.steps;
        let upto = upto.min(last);
        match self.live.get(run) {
            Some(live) if live.seq == upto => Ok(live.state.clone()),
            _ => state_at(&self.conn, run, upto),
        }
    }

    pub(super) fn resolve(&self, prefix: &str) -> Result<RunId, StoreError> {
        let mut matches: Vec<String> = self
            .conn
            .prepare_cached(
                "SELECT id FROM runs WHERE substr(id, 1, length(?1)) = ?1
                 ORDER BY (id = ?1) DESC, id LIMIT 6",
            )?
            .query_map([prefix], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        match matches.as_slice() {
            [] => Err(StoreError::NotFound(prefix.to_owned())),
            [first, ..] if first == prefix => Ok(RunId::new(first.clone())),
            [_] => Ok(RunId::new(matches.remove(0))),
            _ => Err(StoreError::Ambiguous {
                prefix: prefix.to_owned(),
                matches,
            }),
        }
    }

    pub(super) fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunRecord>, StoreError> {
        let limit = filter.limit.map_or(-1, |limit| limit as i64);
        let rows: Vec<rows::RunRow> = self
            .conn
            .prepare_cached(&format!(
                "{RUN_SELECT}
                 WHERE (?1 IS NULL OR r.workflow = ?1) AND (?2 IS NULL OR r.status = ?2)
                 ORDER BY r.id DESC LIMIT ?3"
            ))?
            .query_map(
                rusqlite::params![filter.workflow, filter.status.map(|s| s.as_str()), limit],
                rows::run_row,
            )?
            .collect::<Result<_, _>>()?;
        rows.into_iter().map(rows::run_record).collect()
    }

    pub(super) fn run_detail(&self, run: &RunId) -> Result<RunDetail, StoreError> {
        let record = run_record(&self.conn, run)?;
        let steps: Vec<rows::StepRow> = self
            .conn
            .prepare_cached(&format!(
                "SELECT {STEP_COLUMNS} FROM steps WHERE run_id = ?1 ORDER BY seq"
            ))?
            .query_map([run.as_str()], rows::step_row)?
            .collect::<Result<_, _>>()?;
        let mut records = Vec::with_capacity(steps.len());
        let mut step_events = Vec::with_capacity(steps.len());
        for row in steps {
            let (step, events) = rows::step_record(run, row)?;
            step_events.push((step.seq, events));
            records.push(step);
        }
        let loose = self.loose_events(run, 0)?;
        let (events, _) = interleave(run, LogPosition::default(), step_events, loose)?;
        Ok(RunDetail {
            run: record,
            steps: records,
            events,
        })
    }

    /// The run's record and its events after `after`: the steps and loose events it has
    /// not seen, read by their keys, so a view following a long run reads only what is new.
    pub(super) fn log_after(&self, run: &RunId, after: LogPosition) -> Result<LogTail, StoreError> {
        let record = run_record(&self.conn, run)?;
        let rows: Vec<TailRow> = self
            .conn
            .prepare_cached(
                "SELECT seq, node_id, started_at, finished_at, events, status, attempts, delta
                 FROM steps WHERE run_id = ?1 AND seq > ?2 ORDER BY seq",
            )?
            .query_map(rusqlite::params![run.as_str(), after.step as i64], |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                    row.get(5)?,
                    row.get(6)?,
                    row.get(7)?,
                ))
            })?
            .collect::<Result<_, _>>()?;
        let mut step_events = Vec::with_capacity(rows.len());
        let mut steps = Vec::with_capacity(rows.len());
        for (seq, node_id, started, finished, text, status, attempts, delta) in rows {
            let columns = implicit::StepColumns {
                seq: seq as u64,
                node_id: &node_id,
                status: &status,
                attempts: attempts as u64,
                delta: &delta,
            };
            let text = implicit::events(&columns, &text);
            step_events.push((seq as u64, rows::json(run.as_str(), &text)?));
            steps.push(StepTime {
                seq: seq as u64,
                node_id,
                started_at: rows::timestamp(started),
                finished_at: rows::timestamp(finished),
            });
        }
        let mut loose = self.loose_events(run, after.loose)?;
        // One logged after a step committed between the two reads waits for the next read,
        // which has that step: it goes after the step's events.
        let last_step = step_events.last().map_or(after.step, |(seq, _)| *seq);
        if let Some(cut) = loose.iter().position(|(_, at, _)| *at as u64 > last_step) {
            loose.truncate(cut);
        }
        let (events, position) = interleave(run, after, step_events, loose)?;
        Ok(LogTail {
            run: record,
            events,
            steps,
            position,
        })
    }

    /// Events logged outside a step after the one with id `after`: (id, after step, event).
    fn loose_events(&self, run: &RunId, after: u64) -> Result<Vec<(i64, i64, String)>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT id, after_step, event FROM run_events WHERE run_id = ?1 AND id > ?2
                 ORDER BY id",
            )?
            .query_map(rusqlite::params![run.as_str(), after as i64], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })?
            .collect::<Result<_, _>>()?)
    }
}

/// The log in order from `after` on: events logged between steps go before the next step's
/// own events (a loose event is logged after the run's last step, so this order never
/// changes as the log grows).
fn interleave(
    run: &RunId,
    after: LogPosition,
    steps: Vec<(u64, Vec<Value>)>,
    loose: Vec<(i64, i64, String)>,
) -> Result<(Vec<EventRecord>, LogPosition), StoreError> {
    let mut position = after;
    let mut events = Vec::new();
    let mut push = |position: &mut LogPosition, step: u64, event: Value| {
        position.events += 1;
        events.push(EventRecord {
            seq: position.events,
            step,
            event,
        });
    };
    let mut loose = loose.into_iter().peekable();
    for (seq, step_events) in steps {
        while let Some((id, _, text)) = loose.next_if(|(_, after, _)| (*after as u64) < seq) {
            push(&mut position, 0, rows::json(run.as_str(), &text)?);
            position.loose = id as u64;
        }
        for event in step_events {
            push(&mut position, seq, event);
        }
        position.step = seq;
    }
    for (id, _, text) in loose {
        push(&mut position, 0, rows::json(run.as_str(), &text)?);
        position.loose = id as u64;
    }
    Ok((events, position))
}

fn run_record(conn: &Connection, run: &RunId) -> Result<RunRecord, StoreError> {
    let row = conn
        .prepare_cached(&format!("{RUN_SELECT} WHERE r.id = ?1"))?
        .query_row([run.as_str()], rows::run_row)
        .optional()?
        .ok_or_else(|| StoreError::NotFound(run.to_string()))?;
    rows::run_record(row)
}

/// The state after step `upto`: the latest keyframe at or before it, then later deltas.
pub(super) fn state_at(conn: &Connection, run: &RunId, upto: u64) -> Result<State, StoreError> {
    state_and_outputs_at(conn, run, upto).map(|(state, _)| state)
}

/// The state and the latest output of each node after step `upto`: the latest keyframe at
/// or before it, then the deltas and outputs of the run's later steps.
pub(super) fn state_and_outputs_at(
    conn: &Connection,
    run: &RunId,
    upto: u64,
) -> Result<(State, State), StoreError> {
    let (base, text, outputs): (i64, String, Option<String>) = conn
        .prepare_cached(
            "SELECT seq, state, outputs FROM keyframes WHERE run_id = ?1 AND seq <= ?2
             ORDER BY seq DESC LIMIT 1",
        )?
        .query_row(rusqlite::params![run.as_str(), upto as i64], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .optional()?
        .ok_or_else(|| StoreError::NotFound(run.to_string()))?;
    let mut state: State = rows::json(run.as_str(), &text)?;
    let mut latest: State = match outputs {
        Some(text) => rows::json(run.as_str(), &text)?,
        None => State::new(),
    };
    let mut deltas = conn.prepare_cached(
        "SELECT delta, outputs FROM steps
         WHERE run_id = ?1 AND seq > ?2 AND seq <= ?3 AND scope IS NULL ORDER BY seq",
    )?;
    let mut found = deltas.query(rusqlite::params![run.as_str(), base, upto as i64])?;
    while let Some(row) = found.next()? {
        let text: String = row.get(0)?;
        let delta: StateDelta = rows::json(run.as_str(), &text)?;
        delta
            .apply(&mut state)
            .map_err(|error| rows::corrupt(run.as_str(), error.to_string()))?;
        if let Some(text) = row.get::<_, Option<String>>(1)? {
            let outputs: State = rows::json(run.as_str(), &text)?;
            latest.extend(outputs);
        }
    }
    Ok((state, latest))
}
