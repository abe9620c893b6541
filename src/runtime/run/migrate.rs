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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::split_outputs;
    use crate::runtime::testing::{Harness, plan, run_id};
    use crate::runtime::{ResumeError, ResumeOptions, RunEnd, RunError};
    use crate::store::Store;

    /// Counts 3 into `n`, then waits.
    const VERSION_1: &str = r#"workflow "w" {
    state { field "n" type="integer" default=0; }
    set "n" expr="state.n + 3" id="count"
    wait "ok" prompt="Go?" answer="yes-no"
}"#;

    /// `n` became a list; a run stored at version 1 keeps its count as the list's item.
    const VERSION_2: &str = r#"workflow "w" {
    state version=2 { field "n" type="array" default="[]" migrate="[old, version]"; }
    set "n" expr="state.n" id="count"
    wait "ok" prompt="Go?" answer="yes-no"
}"#;

    /// The node ids of the run's committed steps, in order.
    async fn steps(h: &Harness) -> Vec<String> {
        let detail = h.store.run_detail(&run_id()).await.unwrap();
        detail.steps.into_iter().map(|step| step.node_id).collect()
    }

    #[test]
    fn outputs_kept_as_legacy_fields_are_moved_to_outputs() {
        let stored = json!({"n": 1, "#output:plan": {"text": "old"}});
        let outputs = json!({"review": {"text": "new"}});
        let (fields, found) = split_outputs(
            stored.as_object().unwrap().clone(),
            outputs.as_object().unwrap().clone(),
        );
        assert_eq!(serde_json::Value::Object(fields), json!({"n": 1}));
        assert_eq!(found.get("plan"), Some(&json!({"text": "old"})));
        assert_eq!(found.get("review"), Some(&json!({"text": "new"})));
    }

    #[tokio::test]
    async fn an_older_state_is_migrated_once_as_a_step_of_its_own() {
        let h = Harness::new();
        let paused = h.start(&plan(VERSION_1)).await.unwrap();
        assert_eq!(paused.state["n"], json!(3));
        let edited = plan(VERSION_2);

        // The run's own wait checks its answer as the walk starts, after the migration
        // was committed: the run stays paused, migrated.
        let refused = h.resume(&edited, Some("perhaps"), None).await.unwrap_err();
        assert!(matches!(refused, RunError::BadAnswer { .. }), "{refused}");
        assert_eq!(steps(&h).await, ["count", "ok", "resume"]);
        let checkpoint = h.store.checkpoint(&run_id()).await.unwrap();
        assert_eq!(checkpoint.run.status, crate::store::RunStatus::Paused);
        assert_eq!(
            checkpoint.state["n"],
            json!([3, 1]),
            "`old` and `version` as stored"
        );

        let done = h.resume(&edited, Some("yes"), None).await.unwrap();
        assert_eq!(done.end, RunEnd::Completed);
        assert_eq!(done.state["n"], json!([3, 1]), "migrated once, not again");
        assert_eq!(steps(&h).await, ["count", "ok", "resume", "ok"]);
    }

    #[tokio::test]
    async fn a_state_stored_by_a_newer_version_is_refused() {
        let h = Harness::new();
        h.start(&plan(VERSION_2)).await.unwrap();
        let error = h
            .resume(&plan(VERSION_1), Some("yes"), None)
            .await
            .unwrap_err();
        assert!(
            matches!(
                error,
                RunError::Resume(ResumeError::NewerStateVersion {
                    stored: 2,
                    workflow: 1,
                    ..
                })
            ),
            "{error}"
        );
        assert_eq!(
            error.to_string(),
            "run `r1` stored its state at `state version=2`, newer than this workflow's 1: resume it with the workflow it ran with"
        );
    }

    #[tokio::test]
    async fn fields_that_no_longer_fit_are_listed_until_reset() {
        let h = Harness::new();
        h.start(&plan(VERSION_1)).await.unwrap();
        // `n` retyped with no migration.
        let retyped = plan(
            &VERSION_2
                .replace(r#"state version=2"#, "state")
                .replace(r#" migrate="[old, version]""#, ""),
        );
        let refused = h.resume(&retyped, Some("yes"), None).await.unwrap_err();
        assert!(
            refused.to_string().starts_with(
                "run `r1` cannot continue with this version of the workflow; its saved state no longer fits:\n  - field `n` holds `3`, which its new type `array` cannot take"
            ),
            "{refused}"
        );
        let unknown = ResumeOptions {
            answer: Some("yes".to_owned()),
            reset: vec!["m".to_owned()],
            ..ResumeOptions::default()
        };
        let error = h.resume_with(&retyped, unknown).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            "the workflow has no state field `m` to reset"
        );

        let reset = ResumeOptions {
            answer: Some("yes".to_owned()),
            reset: vec!["n".to_owned()],
            ..ResumeOptions::default()
        };
        let done = h.resume_with(&retyped, reset).await.unwrap();
        assert_eq!(done.end, RunEnd::Completed);
        assert_eq!(done.state["n"], json!([]), "back to its default");
    }
}
