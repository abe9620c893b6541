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

use crate::store::{RunId, StepCommit, StoreError};

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
    pub(super) fn append(&self, run: &RunId, step: &StepCommit) -> Result<u64, StoreError> {
        let mut line = serde_json::to_vec(step).map_err(|error| StoreError::Corrupt {
            run: run.as_str().to_owned(),
            message: format!("a step does not serialise: {error}"),
        })?;
        line.push(b'\n');
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
pub(super) fn read_log(dir: &Path, run: &RunId, cut: bool) -> Result<Vec<StepCommit>, StoreError> {
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
        if line.is_empty() {
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

/// Deletes `run`'s log (everything in it is in the database).
pub(super) fn remove_log(dir: &Path, run: &RunId) {
    let _ = fs::remove_file(log_path(dir, run));
}
