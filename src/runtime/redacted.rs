//! Keeping secrets out of everything a run writes, whatever a provider or model does: the
//! store is wrapped so each run record, state change, cursor, event and error is
//! redacted before it is written ([`Redactor`]: the values of the variables providers
//! read keys from, and anything shaped like a well-known key). A model echoing its key
//! into its reply leaves `[REDACTED]` in the checkpoint, never the key.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use crate::providers::Redactor;
use crate::store::{
    Acquired, Beat, Change, Checkpoint, Json, Lease, NewRun, Owner, PendingWait, RunAmend,
    RunDetail, RunFilter, RunId, RunRecord, RunStatus, Scrub, State, StepCommit, Store,
    StoreFuture, ToJson,
};

/// A store whose writes are redacted.
#[derive(Debug)]
pub struct RedactingStore {
    inner: Arc<dyn Store>,
    redactor: Arc<Redactor>,
}

/// A cursor or event redacted when its JSON is built, not before: a store that never
/// serialises it (the memory store keeps only the latest cursor, and drops events) pays
/// nothing, and one that does builds the JSON once, redacted.
#[derive(Debug)]
struct Redacted {
    payload: Json,
    redactor: Arc<Redactor>,
}

impl ToJson for Redacted {
    fn to_json(&self) -> Value {
        let mut value = self.payload.to_value();
        self.redactor.redact_value(&mut value);
        value
    }

    fn to_text(&self, scrub: Scrub<'_>) -> String {
        self.payload
            .to_text_scrubbed(&|text: &str| match self.redactor.redact(text) {
                Cow::Borrowed(text) => scrub(text),
                Cow::Owned(clean) => Cow::Owned(scrub(&clean).into_owned()),
            })
    }
}

impl RedactingStore {
    /// Wraps `inner`.
    #[must_use]
    pub fn new(inner: Arc<dyn Store>, redactor: Redactor) -> Self {
        Self {
            inner,
            redactor: Arc::new(redactor),
        }
    }

    fn text(&self, text: &mut String) {
        if let std::borrow::Cow::Owned(clean) = self.redactor.redact(text) {
            *text = clean;
        }
    }

    fn json(&self, json: Json) -> Json {
        Json::lazy(Arc::new(Redacted {
            payload: json,
            redactor: Arc::clone(&self.redactor),
        }))
    }

    fn state(&self, state: &mut State) {
        let mut value = Value::Object(std::mem::take(state));
        self.redactor.redact_value(&mut value);
        if let Value::Object(clean) = value {
            *state = clean;
        }
    }
}

impl Store for RedactingStore {
    fn create_run(&self, mut run: NewRun) -> StoreFuture<'_, ()> {
        self.redactor.redact_value(&mut run.inputs);
        self.state(&mut run.state);
        self.inner.create_run(run)
    }

    fn commit_step<'a>(&'a self, run: &'a RunId, mut step: StepCommit) -> StoreFuture<'a, ()> {
        for change in step.delta.0.values_mut() {
            match change {
                Change::Set(value) => self.redactor.redact_value(value),
                Change::Append { items, .. } => {
                    items
                        .iter_mut()
                        .for_each(|item| self.redactor.redact_value(item));
                }
                Change::Merge(keys) => self.state(keys),
                Change::Unset => {}
            }
        }
        self.state(&mut step.outputs);
        step.cursor = self.json(step.cursor);
        step.events = step
            .events
            .into_iter()
            .map(|event| self.json(event))
            .collect();
        if let Some(error) = &mut step.error {
            self.text(error);
        }
        if let Some(wait) = &mut step.wait {
            self.text(&mut wait.prompt);
        }
        self.inner.commit_step(run, step)
    }

    fn log_events<'a>(&'a self, run: &'a RunId, mut events: Vec<Value>) -> StoreFuture<'a, ()> {
        events
            .iter_mut()
            .for_each(|event| self.redactor.redact_value(event));
        self.inner.log_events(run, events)
    }

    fn set_status<'a>(
        &'a self,
        run: &'a RunId,
        status: RunStatus,
        mut error: Option<String>,
    ) -> StoreFuture<'a, ()> {
        if let Some(error) = &mut error {
            self.text(error);
        }
        self.inner.set_status(run, status, error)
    }

    fn pause<'a>(&'a self, run: &'a RunId, mut waits: Vec<PendingWait>) -> StoreFuture<'a, ()> {
        for wait in &mut waits {
            self.text(&mut wait.prompt);
            if let Some(permission) = &mut wait.permission {
                self.redactor.redact_value(&mut permission.input);
            }
        }
        self.inner.pause(run, waits)
    }

    fn checkpoint<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, Checkpoint> {
        self.inner.checkpoint(run)
    }

    fn load_state<'a>(&'a self, run: &'a RunId, upto_seq: u64) -> StoreFuture<'a, State> {
        self.inner.load_state(run, upto_seq)
    }

    fn run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunRecord> {
        self.inner.run(run)
    }

    fn resolve<'a>(&'a self, prefix: &'a str) -> StoreFuture<'a, RunId> {
        self.inner.resolve(prefix)
    }

    fn list_runs<'a>(&'a self, filter: &'a RunFilter) -> StoreFuture<'a, Vec<RunRecord>> {
        self.inner.list_runs(filter)
    }

    fn run_detail<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, RunDetail> {
        self.inner.run_detail(run)
    }

    fn live_feed(&self, run: &RunId) -> Option<std::path::PathBuf> {
        self.inner.live_feed(run)
    }

    fn log_after<'a>(
        &'a self,
        run: &'a RunId,
        after: crate::store::LogPosition,
    ) -> StoreFuture<'a, crate::store::LogTail> {
        self.inner.log_after(run, after)
    }

    fn delete_run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, ()> {
        self.inner.delete_run(run)
    }

    fn compact(&self) -> StoreFuture<'_, ()> {
        self.inner.compact()
    }

    fn copy_run<'a>(
        &'a self,
        from: &'a RunId,
        to: &'a RunId,
        upto: Option<u64>,
        status: RunStatus,
        origin: Option<String>,
    ) -> StoreFuture<'a, ()> {
        self.inner.copy_run(from, to, upto, status, origin)
    }

    fn amend_run<'a>(&'a self, run: &'a RunId, amend: RunAmend) -> StoreFuture<'a, ()> {
        self.inner.amend_run(run, amend)
    }

    fn save_progress<'a>(
        &'a self,
        run: &'a RunId,
        key: &'a str,
        mut progress: Value,
    ) -> StoreFuture<'a, ()> {
        self.redactor.redact_value(&mut progress);
        self.inner.save_progress(run, key, progress)
    }

    fn load_progress<'a>(&'a self, run: &'a RunId, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        self.inner.load_progress(run, key)
    }

    fn clear_progress<'a>(&'a self, run: &'a RunId, key: &'a str) -> StoreFuture<'a, ()> {
        self.inner.clear_progress(run, key)
    }
    fn acquire<'a>(&'a self, run: &'a RunId, owner: &'a Owner) -> StoreFuture<'a, Acquired> {
        self.inner.acquire(run, owner)
    }

    fn heartbeat<'a>(&'a self, run: &'a RunId, owner: &'a Owner) -> StoreFuture<'a, Beat> {
        self.inner.heartbeat(run, owner)
    }

    fn release<'a>(&'a self, run: &'a RunId, owner: &'a Owner) -> StoreFuture<'a, ()> {
        self.inner.release(run, owner)
    }

    fn lease<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, Option<Lease>> {
        self.inner.lease(run)
    }

    fn request_cancel<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, bool> {
        self.inner.request_cancel(run)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::{MemoryStore, StateDelta, StepStatus, Timestamp};

    #[tokio::test]
    async fn writes_are_redacted_reads_are_not_touched() {
        let memory = Arc::new(MemoryStore::new());
        let store = RedactingStore::new(
            memory.clone(),
            Redactor::new().with_secret("hunter2-correct-horse"),
        );
        let id = RunId::new("r1");
        store
            .create_run(NewRun {
                id: id.clone(),
                workflow: "w".into(),
                path: "w.kdl".into(),
                hash: "0".into(),
                inputs: json!({"token": "hunter2-correct-horse"}),
                state: json!({"a": "x"}).as_object().unwrap().clone(),
            })
            .await
            .unwrap();
        let mut delta = StateDelta::new();
        delta.record(
            "a",
            Change::Set(json!("the key is hunter2-correct-horse")),
            &json!(null),
        );
        store
            .commit_step(
                &id,
                StepCommit {
                    seq: 1,
                    scope: None,
                    node_id: "n".into(),
                    outputs: State::new(),
                    started_at: Timestamp(0),
                    finished_at: Timestamp(0),
                    status: StepStatus::Completed,
                    attempts: 1,
                    delta,
                    cursor: json!({}).into(),
                    events: vec![json!({"message": "hunter2-correct-horse"}).into()],
                    error: Some("saw hunter2-correct-horse".into()),
                    run_status: RunStatus::Running,
                    wait: None,
                },
            )
            .await
            .unwrap();
        store
            .set_status(&id, RunStatus::Failed, Some("hunter2-correct-horse".into()))
            .await
            .unwrap();
        let detail = memory.run_detail(&id).await.unwrap();
        let text = serde_json::to_string(&detail).unwrap();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("the key is [REDACTED]"), "{text}");
        let state = store.load_state(&id, 1).await.unwrap();
        assert_eq!(state["a"], "the key is [REDACTED]");
    }

    /// A typed payload is redacted as it is written, with the same result as redacting its
    /// `Value`: strings after an escape (`\n`), object keys, and nested values.
    #[test]
    fn typed_payloads_are_redacted_as_they_are_written() {
        #[derive(Debug, serde::Serialize)]
        struct Event {
            message: String,
            by_key: std::collections::BTreeMap<String, Vec<String>>,
        }
        let key = format!("sk-ant-{}", "a".repeat(24));
        let event = Event {
            message: format!("line one\n{key} and hunter2-correct-horse"),
            by_key: [(key.clone(), vec![format!("\"quoted\" {key}")])].into(),
        };
        let redacted = Redacted {
            payload: Json::lazy(Arc::new(event)),
            redactor: Arc::new(Redactor::new().with_secret("hunter2-correct-horse")),
        };
        let text = redacted.to_text(&|text: &str| Cow::Borrowed(text));
        assert!(
            !text.contains("sk-ant") && !text.contains("hunter2"),
            "{text}"
        );
        assert_eq!(text, redacted.to_json().to_string());
        assert_eq!(
            text,
            r#"{"message":"line one\n[REDACTED] and [REDACTED]","by_key":{"[REDACTED]":["\"quoted\" [REDACTED]"]}}"#
        );
    }
}
