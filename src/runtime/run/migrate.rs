//! Fitting a stored state to the workflow it resumes with: node outputs that older runs
//! kept as state fields, `state version` migrations (each field's `migrate=`), `--reset`,
//! and the refusal that lists every field that still does not fit. A migration or reset
//! is committed as a step of its own (`resume`), so it happens once.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::ResumeError;
use crate::runtime::RunError;
use crate::runtime::cursor::Cursor;
use crate::runtime::shared::Shared;
use crate::runtime::template::Outputs;
use crate::store::{Change, Checkpoint, RunId, RunStatus, StateDelta, StepCommit, StepStatus};

/// The state fields in which runs stored before store schema 5 kept node outputs.
const LEGACY_OUTPUT_PREFIX: &str = "#output:";

/// Splits a checkpoint's stored state into its fields and the node outputs, taking the
/// outputs that runs stored before outputs were kept apart hold as `#output:<node>`
/// fields.
pub(super) fn split_outputs(
    stored: crate::store::State,
    outputs: crate::store::State,
) -> (Map<String, Value>, Outputs) {
    let mut fields = Map::new();
    let mut found = Outputs::default();
    for (name, value) in stored {
        match name.strip_prefix(LEGACY_OUTPUT_PREFIX) {
            Some(node) => found.insert(Arc::from(node), value),
            None => {
                fields.insert(name, value);
            }
        }
    }
    for (node, value) in outputs {
        found.insert(Arc::from(node.as_str()), value);
    }
    (fields, found)
}

/// The workflow's `state version` (1 when it declares none).
pub(super) fn workflow_version(shared: &Shared) -> u32 {
    shared
        .workflow()
        .state_version
        .as_ref()
        .map_or(1, |version| version.value)
}

/// Fits stored `fields` to this version of the workflow: migrates them when the workflow's
/// `state version` is above the stored one, resets the fields named in `reset`, and refuses
/// with every field that still does not fit, before any step runs (rather than failing at
/// the first write). Returns the changes made.
pub(super) fn fit_state(
    shared: &Shared,
    run_id: &RunId,
    fields: &mut Map<String, Value>,
    stored_version: u32,
    reset: &[String],
) -> Result<StateDelta, ResumeError> {
    let mut changes = StateDelta::new();
    let version = workflow_version(shared);
    if stored_version > version {
        return Err(ResumeError::NewerStateVersion {
            run: run_id.clone(),
            stored: stored_version,
            workflow: version,
        });
    }
    if stored_version < version {
        migrate(shared, run_id, fields, stored_version, &mut changes)?;
    }
    for name in reset {
        let Some(idx) = shared.program.schema.find(name) else {
            // A field the workflow no longer declares is dropped.
            if fields.remove(name).is_some() {
                changes.0.insert(name.clone(), Change::Unset);
                continue;
            }
            return Err(ResumeError::NoFieldToReset {
                field: name.clone(),
            });
        };
        match &shared.program.schema.spec(idx).default {
            Some(default) => {
                fields.insert(name.clone(), default.clone());
                changes.0.insert(name.clone(), Change::Set(default.clone()));
            }
            None => {
                fields.remove(name);
                changes.0.insert(name.clone(), Change::Unset);
            }
        }
    }
    let misfits = shared.program.schema.misfits(fields);
    if !misfits.is_empty() {
        return Err(ResumeError::StateMisfits {
            run: run_id.clone(),
            misfits,
        });
    }
    Ok(changes)
}

/// Migrates stored `fields` from `from` to the workflow's state version: each field with
/// `migrate=` gets the value of its expression (reading `old`, `state`, `version`, `input`).
fn migrate(
    shared: &Shared,
    run_id: &RunId,
    fields: &mut Map<String, Value>,
    from: u32,
    changes: &mut StateDelta,
) -> Result<(), ResumeError> {
    // Every expression reads the state as stored, not as migrated so far.
    let stored = minijinja::Value::from(minijinja::value::Serde(Value::Object(fields.clone())));
    for field in &shared.workflow().state {
        let Some(expr) = &field.migrate else {
            continue;
        };
        let name = &field.name.value;
        let old = fields.get(name).cloned().unwrap_or(Value::Null);
        let scope = minijinja::context! {
            old => minijinja::Value::from(minijinja::value::Serde(&old)),
            state => stored.clone(),
            version => from,
            input => shared.program.input.clone(),
        };
        let failed = |message: String| ResumeError::MigrationFailed {
            run: run_id.clone(),
            field: name.clone(),
            from,
            message,
        };
        let value = shared
            .program
            .templates
            .eval_json(expr, &scope)
            .map_err(|error| failed(error.to_string()))?;
        let value = crate::ir::value::coerce(&field.ty, value).map_err(failed)?;
        fields.insert(name.clone(), value.clone());
        changes.0.insert(name.clone(), Change::Set(value));
    }
    Ok(())
}

/// Commits a migration or reset as a step of its own (`resume`), with the new version in
/// its cursor; a paused run stays paused.
pub(super) async fn commit_fitted(
    shared: &Shared,
    run_id: &RunId,
    checkpoint: &Checkpoint,
    cursor: &Cursor,
    changes: StateDelta,
) -> Result<(), RunError> {
    let paused = checkpoint.run.status == RunStatus::Paused;
    let now = shared.ctx.executor.now();
    let commit = StepCommit {
        seq: checkpoint.seq + 1,
        scope: None,
        node_id: "resume".to_owned(),
        started_at: now,
        finished_at: now,
        status: StepStatus::Completed,
        attempts: 1,
        delta: changes,
        outputs: crate::store::State::new(),
        cursor: crate::store::Json::lazy(Arc::new(cursor.clone())),
        events: Vec::new(),
        error: None,
        run_status: if paused {
            RunStatus::Paused
        } else {
            RunStatus::Running
        },
        wait: checkpoint.run.waits.first().cloned().filter(|_| paused),
    };
    shared.ctx.store.commit_step(run_id, commit).await?;
    Ok(())
}
