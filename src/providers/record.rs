//! Recording: `atomic run --record FILE` wraps every provider in a [`Recording`] that passes
//! calls through and appends each finished call to a cassette the `replay` adapter plays
//! back (format in `cassette.rs`). Secrets are redacted before anything is written.
//!
//! Each call is written and flushed when it finishes, so a crashed run keeps what it
//! recorded. Calls finish in any order under `parallel`; replay matches by node and call
//! index, so order in the file does not matter. A cancelled call is not recorded.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::cassette::{CASSETTE_VERSION, CallOutcome, CassetteCall, CassetteHeader, RecordedError};
use super::redact::Redactor;
use super::{AgentEvent, AgentRequest, EventSink, Provider, ProviderError, ProviderFuture};

/// An open cassette file being written.
#[derive(Debug)]
pub struct CassetteRecorder {
    path: PathBuf,
    file: Mutex<BufWriter<File>>,
    redactor: Redactor,
}

impl CassetteRecorder {
    /// Creates (or truncates) `path` (mode 0600: it holds prompts and replies) and writes the
    /// header.
    ///
    /// # Errors
    /// [`ProviderError::Config`] naming the file when it cannot be written.
    pub fn create(
        path: &Path,
        workflow: Option<&str>,
        redactor: Redactor,
    ) -> Result<Self, ProviderError> {
        let file = create_private(path).map_err(|error| write_error(path, &error))?;
        let recorder = Self {
            path: path.to_owned(),
            file: Mutex::new(BufWriter::new(file)),
            redactor,
        };
        let header = CassetteHeader {
            cassette: CASSETTE_VERSION,
            workflow: workflow.map(str::to_owned),
            recorded_with: Some(format!("atomic {}", env!("CARGO_PKG_VERSION"))),
            calls: Vec::new(),
        };
        recorder.write_line(serde_json::to_value(header).expect("a header serialises"))?;
        Ok(recorder)
    }

    /// The cassette file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one call (redacted) and flushes it.
    ///
    /// # Errors
    /// [`ProviderError::Config`] when the file cannot be written.
    pub fn record(&self, call: &CassetteCall) -> Result<(), ProviderError> {
        self.write_line(serde_json::to_value(call).expect("a call serialises"))
    }

    fn write_line(&self, mut value: serde_json::Value) -> Result<(), ProviderError> {
        self.redactor.redact_value(&mut value);
        let mut line = value.to_string();
        line.push('\n');
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        file.write_all(line.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|error| write_error(&self.path, &error))
    }
}

#[cfg(unix)]
fn create_private(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn create_private(path: &Path) -> std::io::Result<File> {
    File::create(path)
}

fn write_error(path: &Path, error: &std::io::Error) -> ProviderError {
    ProviderError::config(
        "record",
        format!("cannot write cassette `{}`: {error}", path.display()),
    )
}

/// A provider whose calls are recorded.
#[derive(Debug)]
pub struct Recording {
    inner: Arc<dyn Provider>,
    recorder: Arc<CassetteRecorder>,
}

impl Recording {
    /// Records the calls of `inner` into `recorder`.
    #[must_use]
    pub fn new(inner: Arc<dyn Provider>, recorder: Arc<CassetteRecorder>) -> Self {
        Self { inner, recorder }
    }
}

/// Forwards events and keeps a copy with the time since the previous one.
struct Tap<'a> {
    sink: &'a dyn EventSink,
    seen: Mutex<(Instant, Vec<AgentEvent>, Vec<u64>)>,
}

impl EventSink for Tap<'_> {
    fn emit(&self, event: AgentEvent) {
        {
            let mut seen = self
                .seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let now = Instant::now();
            let delay = u64::try_from(now.duration_since(seen.0).as_millis()).unwrap_or(u64::MAX);
            seen.0 = now;
            seen.1.push(event.clone());
            seen.2.push(delay);
        }
        self.sink.emit(event);
    }
}

impl Provider for Recording {
    fn adapter(&self) -> &'static str {
        self.inner.adapter()
    }

    fn can_compact(&self) -> bool {
        self.inner.can_compact()
    }

    fn run<'a>(
        &'a self,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            let tap = Tap {
                sink: events,
                seen: Mutex::new((Instant::now(), Vec::new(), Vec::new())),
            };
            let result = self.inner.run(request, &tap).await;
            // A call stopped for a person's answer has no outcome yet: its continuation,
            // with the same node and call index, is what gets recorded.
            if matches!(result, Err(ProviderError::AwaitingPermission { .. })) {
                return result;
            }
            let (_, events, delays_ms) = tap
                .seen
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let outcome = match &result {
                Ok(reply) => CallOutcome::Reply(reply.clone().into()),
                Err(error) => CallOutcome::Error(RecordedError::from(error)),
            };
            self.recorder.record(&CassetteCall {
                node: request.call.node_id.clone(),
                call: request.call.index,
                prompt: Some(request.prompt.text.clone()),
                system: request.prompt.system.clone(),
                model: request.model.clone(),
                events,
                delays_ms,
                outcome,
            })?;
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::super::AgentReply;
    use super::super::cassette::Cassette;
    use super::super::in_process::InProcess;
    use super::super::replay::Replay;
    use super::*;
    use crate::providers::{CallId, Prompt};

    fn request(node: &str, call: u32, prompt: &str) -> AgentRequest {
        AgentRequest {
            call: CallId {
                node_id: node.into(),
                index: call,
            },
            prompt: Prompt {
                text: prompt.into(),
                ..Prompt::default()
            },
            ..AgentRequest::default()
        }
    }

    async fn collect(
        provider: &dyn Provider,
        request: &AgentRequest,
    ) -> (Vec<AgentEvent>, Result<AgentReply, String>) {
        let seen = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| seen.lock().unwrap().push(event);
        let result = provider
            .run(request, &sink)
            .await
            .map_err(|error| error.to_string());
        (seen.into_inner().unwrap(), result)
    }

    /// Record calls (replies and errors) through a provider, then replay the cassette:
    /// the same events and the same outcomes.
    #[tokio::test]
    async fn record_then_replay_gives_the_same_calls() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.cassette");
        let recorder =
            Arc::new(CassetteRecorder::create(&path, Some("flow"), Redactor::new()).unwrap());
        let mut decl = super::super::registry::test_decl("m", "in-process");
        decl.options =
            json!({"replies": ["first", "second"], "fail": "overloaded", "fail-calls": 1})
                .as_object()
                .unwrap()
                .clone();
        let model: Arc<dyn Provider> = Arc::new(InProcess::from_decl(&decl).unwrap());
        let recording = Recording::new(model, recorder);
        let requests = [
            request("a", 0, "one"),
            request("a", 1, "two"),
            request("b", 0, "three"),
            request("b", 1, "four"),
        ];
        let mut live = Vec::new();
        for request in &requests {
            live.push(collect(&recording, request).await);
        }
        assert!(live[0].1.is_err() && live[1].1.is_ok(), "{live:?}");
        drop(recording);

        let replay = Replay::new(Cassette::load(&path).unwrap(), path.clone());
        for (request, recorded) in requests.iter().zip(&live) {
            let replayed = collect(&replay, request).await;
            assert_eq!(
                replayed.0, recorded.0,
                "events of {}/{}",
                request.call.node_id, request.call.index
            );
            match (&replayed.1, &recorded.1) {
                (Ok(a), Ok(b)) => assert_eq!(a, b),
                (Err(a), Err(b)) => assert_eq!(a.replace("`replay`", "`in-process`"), *b),
                other => panic!("outcomes differ: {other:?}"),
            }
        }
    }

    #[tokio::test]
    async fn secrets_never_reach_the_cassette() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.cassette");
        let redactor = Redactor::new().with_secret("hunter2-correct-horse");
        let recorder = Arc::new(CassetteRecorder::create(&path, None, redactor).unwrap());
        let recording = Recording::new(Arc::new(InProcess::new()), recorder);
        let prompt = "key hunter2-correct-horse and sk-ant-api03-abcdefghijklmnopqrstuvwx";
        let (events, reply) = collect(&recording, &request("a", 0, prompt)).await;
        // The live run still sees the real text; only the recording is redacted.
        assert_eq!(reply.unwrap().text, prompt);
        assert!(!events.is_empty());
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(
            !written.contains("hunter2") && !written.contains("sk-ant-api03"),
            "{written}"
        );
        assert!(
            written.contains("key [REDACTED] and [REDACTED]"),
            "{written}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
    }

    #[test]
    fn an_unwritable_path_is_a_config_error() {
        let error = CassetteRecorder::create(
            Path::new("/nonexistent/dir/x.cassette"),
            None,
            Redactor::new(),
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("cannot write cassette `/nonexistent/dir/x.cassette`"),
            "{error}"
        );
    }

    /// Every value a recording writes is valid against `schemas/cassette.schema.json`.
    #[tokio::test]
    async fn recordings_match_the_published_schema() {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../schemas/cassette.schema.json")).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.cassette");
        let recorder =
            Arc::new(CassetteRecorder::create(&path, Some("w"), Redactor::new()).unwrap());
        let mut decl = super::super::registry::test_decl("m", "in-process");
        decl.options = json!({"fail": "server-error", "fail-calls": 1})
            .as_object()
            .unwrap()
            .clone();
        let recording = Recording::new(Arc::new(InProcess::from_decl(&decl).unwrap()), recorder);
        for call in 0..2 {
            let _ = collect(&recording, &request("a", call, "p")).await;
        }
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(written.lines().count(), 3);
        for line in written.lines() {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&value)
                .map(|e| e.to_string())
                .collect();
            assert!(errors.is_empty(), "{line}: {errors:?}");
        }
        let wrong = json!({"node": "a", "call": 0, "prompt": "p", "reply": {"text": "x"}, "error": {"class": "timeout"}});
        assert!(!validator.is_valid(&wrong), "reply and error together");
        let wrong = json!({"node": "a", "call": 0, "prompt": "p", "events": [{"type": "text-delta"}], "reply": {}});
        assert!(!validator.is_valid(&wrong), "an event without its fields");
    }
}
