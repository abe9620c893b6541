//! The step log: each run's committed steps appended, one JSON line each, to
//! `.atomic/steps/<run>.log` by the process that owns the run (its lease makes it the only
//! writer), before the commit returns. A `write` that returned survives `kill -9` (the data is
//! in the kernel); `--durability full` also syncs it. The writer thread folds the steps into
//! SQLite in batches, one transaction for all the steps that queued up, and deletes a run's
//! log once everything in it is in the database and the run has stopped (finished or
//! paused). A process that takes a run over folds what its log holds beyond the database
//! first, so a step acknowledged by a process that then died is never lost.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;
use serde_json::Value;

use crate::store::{
    Json, PendingWait, RunId, RunStatus, StepCommit, StepStatus, StoreError, Timestamp,
};

/// A step serialised once: its delta, cursor and events as the database stores them, which
/// also make up its log line.
#[derive(Debug)]
pub(super) struct Encoded {
    pub(super) step: StepCommit,
    pub(super) delta: String,
    /// `None` when the step recorded no output.
    pub(super) outputs: Option<String>,
    pub(super) cursor: String,
    pub(super) events: String,
}

/// The rest of a step's log line.
#[derive(Serialize)]
struct Head<'a> {
    seq: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: &'a Option<String>,
    node_id: &'a str,
    started_at: Timestamp,
    finished_at: Timestamp,
    status: StepStatus,
    attempts: u32,
    error: &'a Option<String>,
    run_status: RunStatus,
    wait: &'a Option<PendingWait>,
}

/// A step's events as one JSON array.
fn events_text(events: &[Json]) -> String {
    let mut text = String::with_capacity(2 + events.len() * 96);
    text.push('[');
    for (at, event) in events.iter().enumerate() {
        if at > 0 {
            text.push(',');
        }
        text.push_str(&event.to_text());
    }
    text.push(']');
    text
}

impl Encoded {
    /// Serialises `step`, keeping of it only what the database still reads (its cursor and
    /// events are kept as text alone: steps wait in the writer's queue, and a long run's
    /// queue should not hold them twice).
    pub(super) fn new(mut step: StepCommit) -> Self {
        let cursor = std::mem::replace(&mut step.cursor, Json::from(Value::Null));
        let events = std::mem::take(&mut step.events);
        Self {
            delta: step.delta.to_json(),
            outputs: (!step.outputs.is_empty())
                .then(|| serde_json::to_string(&step.outputs).expect("JSON values serialise")),
            // Written straight from the typed payloads: the same text as through a `Value`.
            cursor: cursor.to_text(),
            events: events_text(&events),
            step,
        }
    }

    /// The step as one JSON line (it reads back as a [`StepCommit`]).
    fn line(&self) -> Vec<u8> {
        let step = &self.step;
        let head = serde_json::to_vec(&Head {
            seq: step.seq,
            scope: &step.scope,
            node_id: &step.node_id,
            started_at: step.started_at,
            finished_at: step.finished_at,
            status: step.status,
            attempts: step.attempts,
            error: &step.error,
            run_status: step.run_status,
            wait: &step.wait,
        })
        .expect("a step head serialises");
        let mut line = Vec::with_capacity(
            head.len()
                + self.delta.len()
                + self.outputs.as_ref().map_or(0, String::len)
                + self.cursor.len()
                + self.events.len()
                + 52,
        );
        // `{…head…` then the encoded parts, then `}`.
        line.extend_from_slice(&head[..head.len() - 1]);
        for (name, json) in [
            (&b",\"delta\":"[..], Some(&self.delta)),
            (b",\"outputs\":", self.outputs.as_ref()),
            (b",\"cursor\":", Some(&self.cursor)),
            (b",\"events\":", Some(&self.events)),
        ] {
            if let Some(json) = json {
                line.extend_from_slice(name);
                line.extend_from_slice(json.as_bytes());
            }
        }
        line.extend_from_slice(b"}\n");
        line
    }
}

/// The directory of a database's step logs.
pub(super) fn log_dir(db: &Path) -> PathBuf {
    db.parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("steps"), |dir| dir.join("steps"))
}

/// The log of `run` in `dir`.
pub(super) fn log_path(dir: &Path, run: &RunId) -> PathBuf {
    dir.join(format!("{}.log", run.as_str()))
}

/// A log this large is emptied once everything in it is in the database, so a long run's
/// log does not grow without bound.
pub(super) const RESET_AFTER: u64 = 4 * 1024 * 1024;

/// The appending side, held by the store the runtime commits through.
#[derive(Debug)]
pub(super) struct StepLog {
    dir: PathBuf,
    /// Sync each append to disk (`--durability full`).
    sync: bool,
    /// Each open log and how many bytes it holds.
    files: Mutex<HashMap<RunId, (File, u64)>>,
}

impl StepLog {
    pub(super) fn new(dir: PathBuf, sync: bool) -> Self {
        Self {
            dir,
            sync,
            files: Mutex::default(),
        }
    }

    /// Appends `step` of `run` in one `write`; returns the log's size after it.
    pub(super) fn append(&self, run: &RunId, step: &Encoded) -> Result<u64, StoreError> {
        let line = step.line();
        let mut files = self
            .files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (file, size) = match files.get_mut(run) {
            Some(open) => open,
            None => {
                let path = log_path(&self.dir, run);
                let file =
                    open_append(&self.dir, &path).map_err(|error| self.io_error(run, &error))?;
                let size = file.metadata().map_or(0, |meta| meta.len());
                files.entry(run.clone()).or_insert((file, size))
            }
        };
        file.write_all(&line)
            .map_err(|error| self.io_error(run, &error))?;
        if self.sync {
            file.sync_data()
                .map_err(|error| self.io_error(run, &error))?;
        }
        *size += line.len() as u64;
        Ok(*size)
    }

    /// Empties `run`'s log. Only once everything in it is in the database, and only by the
    /// run's committer between two of its commits (so no line is appended meanwhile).
    pub(super) fn reset(&self, run: &RunId) -> Result<(), StoreError> {
        let mut files = self
            .files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((file, size)) = files.get_mut(run) {
            file.set_len(0)
                .map_err(|error| self.io_error(run, &error))?;
            *size = 0;
        }
        Ok(())
    }

    /// Closes `run`'s log (it stopped, or was deleted); a later step opens it again.
    pub(super) fn forget(&self, run: &RunId) {
        self.files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(run);
    }

    fn io_error(&self, run: &RunId, error: &std::io::Error) -> StoreError {
        StoreError::Io {
            path: log_path(&self.dir, run).display().to_string(),
            message: error.to_string(),
        }
    }
}

/// Opens `path` for appending, creating it (and its directory) private to the user: steps
/// hold prompts, replies and state.
fn open_append(dir: &Path, path: &Path) -> std::io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        if !dir.is_dir() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
        OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)
    }
    #[cfg(not(unix))]
    {
        fs::create_dir_all(dir)?;
        OpenOptions::new().create(true).append(true).open(path)
    }
}

/// The steps in `run`'s log, in order. A last line without its newline was never
/// acknowledged (a crash cut it short, or its writer is writing it now): it is left out, and
/// with `cut` (the run's new owner) removed from the file so the next append starts a line
/// of its own. Any other line that does not read is an error.
pub(super) fn read_log(
    dir: &Path,
    run: &RunId,
    cut: bool,
    after: u64,
) -> Result<Vec<StepCommit>, StoreError> {
    let path = log_path(dir, run);
    let io = |error: std::io::Error| StoreError::Io {
        path: path.display().to_string(),
        message: error.to_string(),
    };
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(io(error)),
    };
    let mut steps = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let Some(length) = bytes[start..].iter().position(|&byte| byte == b'\n') else {
            // No newline: the write of this line was cut short.
            break;
        };
        let line = &bytes[start..start + length];
        start += length + 1;
        if line.is_empty() || leading_seq(line).is_some_and(|seq| seq <= after) {
            continue;
        }
        let step =
            serde_json::from_slice::<StepCommit>(line).map_err(|error| StoreError::Corrupt {
                run: run.as_str().to_owned(),
                message: format!("its step log `{}` does not read: {error}", path.display()),
            })?;
        steps.push(step);
    }
    if cut && start < bytes.len() {
        let file = OpenOptions::new().write(true).open(&path).map_err(io)?;
        file.set_len(start as u64).map_err(io)?;
    }
    Ok(steps)
}

/// The step number a log line starts with (`{"seq":N,`), read without parsing the line, so
/// a reader skips the steps it has quickly.
fn leading_seq(line: &[u8]) -> Option<u64> {
    let digits = line.strip_prefix(b"{\"seq\":")?;
    let end = digits.iter().position(|byte| !byte.is_ascii_digit())?;
    std::str::from_utf8(&digits[..end]).ok()?.parse().ok()
}

/// Deletes `run`'s log (everything in it is in the database).
pub(super) fn remove_log(dir: &Path, run: &RunId) {
    let _ = fs::remove_file(log_path(dir, run));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::{Change, StateDelta, WaitChoice};

    /// The hand-assembled log line is a [`StepCommit`] again, every field kept.
    #[test]
    fn a_log_line_reads_back_as_the_step() {
        let mut delta = StateDelta::new();
        delta.record("n", Change::Set(json!(3)), &json!(3));
        let mut step = crate::store::conformance::step(7);
        step.delta = delta;
        step.events = vec![json!({"type": "node-finished", "node": "a \"quoted\" id"}).into()];
        step.error = Some("it failed: \\n".to_owned());
        step.run_status = RunStatus::Paused;
        step.wait = Some(PendingWait {
            node_id: "ask".to_owned(),
            header: Some("Deploy".to_owned()),
            prompt: "Go?".to_owned(),
            answer: "yes-no".to_owned(),
            choices: vec![WaitChoice {
                value: "yes".to_owned(),
                label: None,
                description: Some("Deploy \"now\"".to_owned()),
            }],
            schema: None,
            auto_answer: Some("yes".to_owned()),
            auto_answer_at: Some(Timestamp(5)),
            scope: Some("fan@2#1".to_owned()),
            permission: None,
        });
        step.scope = Some("fan@2#1".to_owned());
        let line = Encoded::new(step.clone()).line();
        assert_eq!(line.last(), Some(&b'\n'));
        let back: StepCommit = serde_json::from_slice(&line).expect("the line reads");
        assert_eq!(back, step);
    }
}
