//! One recorder of a workspace at a time: a lock file beside its private index.
//!
//! git locks an index only while it writes it (`index.lock`, failing at once when taken),
//! so two atomic processes recording one workspace — `add -A`, then `write-tree` — would
//! fail each other or read a tree half of the other's making. The lock file serialises
//! them: created with `create_new`, retried for [`WAIT`], removed when dropped. A lock
//! older than [`STALE`] was left by a process that died and is broken; breaking one is
//! best effort, and git's own `index.lock` still keeps the index whole if two recorders
//! ever overlap.

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::snapshot::SnapshotError;

/// How long a recorder waits for another to finish.
const WAIT: Duration = Duration::from_secs(10);

/// The age of a lock whose holder is taken for dead.
const STALE: Duration = Duration::from_secs(60);

/// The pause between attempts.
const PAUSE: Duration = Duration::from_millis(5);

/// The lock of one private index, held until dropped.
#[derive(Debug)]
pub(super) struct Lock(PathBuf);

impl Lock {
    /// Takes the lock of `index`, waiting up to [`WAIT`] for its holder.
    pub(super) fn take(index: &Path) -> Result<Self, SnapshotError> {
        let mut path = index.as_os_str().to_owned();
        path.push(".atomic-lock");
        let path = PathBuf::from(path);
        let deadline = Instant::now() + WAIT;
        loop {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    // Who holds it, for a person looking; the lock is the file's existence.
                    let _ = write!(file, "{}", std::process::id());
                    return Ok(Self(path));
                }
                Err(error) if error.kind() == ErrorKind::AlreadyExists => {}
                Err(error) => {
                    return Err(SnapshotError::NotWritable {
                        path,
                        reason: error.to_string(),
                    });
                }
            }
            if is_stale(&path) {
                let _ = fs::remove_file(&path);
                continue;
            }
            if Instant::now() >= deadline {
                return Err(SnapshotError::Busy(path));
            }
            std::thread::sleep(PAUSE);
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// Whether the lock at `path` was taken more than [`STALE`] ago.
fn is_stale(path: &Path) -> bool {
    fs::metadata(path)
        .and_then(|metadata| metadata.modified())
        .is_ok_and(|taken| taken.elapsed().is_ok_and(|age| age > STALE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_waits_for_the_first_and_a_stale_lock_is_broken() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let index = dir.path().join("index");
        let first = Lock::take(&index).expect("free");
        let waiter = {
            let index = index.clone();
            std::thread::spawn(move || Lock::take(&index).map(drop))
        };
        std::thread::sleep(Duration::from_millis(50));
        drop(first);
        waiter.join().expect("joins").expect("taken once released");

        let lock = dir.path().join("index.atomic-lock");
        fs::write(&lock, "1").expect("a lock left behind");
        let old = std::time::SystemTime::now() - Duration::from_secs(120);
        fs::File::options()
            .write(true)
            .open(&lock)
            .and_then(|file| file.set_modified(old))
            .expect("aged");
        let taken = Lock::take(&index).expect("a stale lock is broken");
        drop(taken);
        assert!(!lock.exists(), "removed when dropped");
    }
}
