//! One recorder of a workspace at a time: an advisory lock (`flock`) on a file beside its
//! private index.
//!
//! git locks an index only while it writes it (`index.lock`, failing at once when taken),
//! so two recorders of one workspace — `add -A`, `write-tree`, then moving a run's chain —
//! would fail each other or read a tree half of the other's making. The lock serialises
//! them. It is the kernel's: it goes with its holder, so an atomic killed while recording
//! (`kill -9`) leaves nothing for the next one to wait on or break; a holder that hangs is
//! waited for at most [`WAIT`].

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::snapshot::SnapshotError;

/// How long a recorder waits for another to finish.
const WAIT: Duration = Duration::from_secs(30);

/// The pause between attempts.
const PAUSE: Duration = Duration::from_millis(2);

/// The lock of one private index, held until dropped (closing the file releases it).
#[derive(Debug)]
pub(super) struct Lock {
    _held: File,
}

impl Lock {
    /// Takes the lock of `index`, waiting up to [`WAIT`] for its holder.
    pub(super) fn take(index: &Path) -> Result<Self, SnapshotError> {
        let mut path = index.as_os_str().to_owned();
        path.push(".atomic-lock");
        let path = PathBuf::from(path);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|error| SnapshotError::NotWritable {
                path: path.clone(),
                reason: error.to_string(),
            })?;
        let deadline = Instant::now() + WAIT;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Self { _held: file }),
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(PAUSE);
                }
                Err(TryLockError::WouldBlock) => return Err(SnapshotError::Busy(path)),
                Err(TryLockError::Error(error)) => {
                    return Err(SnapshotError::NotWritable {
                        path,
                        reason: error.to_string(),
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_waits_for_the_first() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let index = dir.path().join("index");
        let first = Lock::take(&index).expect("free");
        let waiter = {
            let index = index.clone();
            std::thread::spawn(move || {
                let started = Instant::now();
                Lock::take(&index).map(|_| started.elapsed())
            })
        };
        std::thread::sleep(Duration::from_millis(100));
        drop(first);
        let waited = waiter.join().expect("joins").expect("taken once released");
        assert!(waited >= Duration::from_millis(80), "it waited: {waited:?}");
    }

    #[test]
    fn a_lock_whose_holder_died_is_free() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let index = dir.path().join("index");
        let lock = dir.path().join("index.atomic-lock");
        #[allow(clippy::print_stderr, reason = "a skipped test says so")]
        if std::process::Command::new("flock")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("SKIP: no flock(1) here to hold the lock from another process");
            return;
        }
        // Another process takes the lock (`-o`: its child does not inherit it) and is
        // killed holding it.
        let mut holder = std::process::Command::new("flock")
            .arg("-o")
            .arg(&lock)
            .args(["sleep", "30"])
            .spawn()
            .expect("spawn flock");
        std::thread::sleep(Duration::from_millis(200));
        assert!(
            matches!(
                File::open(&lock).map(|file| file.try_lock()),
                Ok(Err(TryLockError::WouldBlock))
            ),
            "the other process holds it"
        );
        holder.kill().expect("kill -9 the holder");
        holder.wait().expect("reaped");
        let started = Instant::now();
        drop(Lock::take(&index).expect("free once its holder is gone"));
        assert!(started.elapsed() < Duration::from_secs(1));
    }
}
