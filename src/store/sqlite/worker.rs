//! The store's writer thread: it owns the connection and runs jobs in the order they were
//! sent, so async callers never block the runtime's threads on SQLite (its API is sync).
//! One thread with a channel beat `spawn_blocking` with a mutex in `benches/store.rs`
//! (a round trip of an empty job: about 10 µs against 25 µs, release build on a loaded
//! two-core machine), and it keeps jobs in call order without a lock.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::db::Db;
use crate::store::{StoreError, StoreFuture};

type Job = Box<dyn FnOnce(&mut Db) + Send>;

/// A running writer thread. Dropping it lets queued jobs finish, then closes the database.
#[derive(Debug)]
pub(super) struct Worker {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts the thread that owns `db`.
    pub(super) fn spawn(mut db: Db) -> Result<Self, StoreError> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("atomic-store".to_owned())
            .spawn(move || {
                while let Ok(job) = queue.recv() {
                    job(&mut db);
                    gather(&queue, &mut db);
                    db.flush_or_poison();
                }
                db.flush_or_poison();
                db.close();
            })
            .map_err(|error| StoreError::Io {
                path: "atomic-store thread".to_owned(),
                message: error.to_string(),
            })?;
        Ok(Self {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// Queues `job` now (so jobs run in call order) and returns a future of its result.
    pub(super) fn call<T, F>(&self, job: F) -> StoreFuture<'static, T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Db) -> Result<T, StoreError> + Send + 'static,
    {
        let (reply, result) = oneshot::channel();
        let sent = self.jobs.as_ref().is_some_and(|jobs| {
            jobs.send(Box::new(move |db: &mut Db| {
                // Every job sees the steps queued before it.
                let answer = db.flush().and_then(|()| job(db));
                // The caller may have stopped waiting (cancelled); the job still ran.
                let _ = reply.send(answer);
            }))
            .is_ok()
        });
        Box::pin(async move {
            if !sent {
                return Err(StoreError::Closed);
            }
            result.await.unwrap_or(Err(StoreError::Closed))
        })
    }
}

/// Steps worth one transaction: fewer commits are fewer WAL frames and syncs of the
/// b-tree's right edge, and each step is already durable in its run's log.
const BATCH_STEPS: usize = 64;

/// How long the writer waits for a batch to fill before writing what it has: the delay
/// before a step is in the database (other processes fold the log meanwhile).
const BATCH_WAIT: Duration = Duration::from_millis(4);

/// How long the writer sleeps between looks at its queue while a batch fills.
const BATCH_NAP: Duration = Duration::from_millis(1);

/// Runs the jobs that have queued up, then, while steps are pending but fewer than a batch,
/// naps and looks again, up to [`BATCH_WAIT`]. Steps committed in a tight loop reach the
/// thread one by one: writing each as it came made the writer as slow as the walker, and
/// waiting on the channel for each had every commit wake the thread (a futex call and a
/// context switch per step). A job someone waits for meanwhile waits up to a nap longer.
fn gather(queue: &mpsc::Receiver<Job>, db: &mut Db) {
    let deadline = Instant::now() + BATCH_WAIT;
    loop {
        while let Ok(job) = queue.try_recv() {
            job(db);
        }
        let pending = db.pending_len();
        if pending == 0 || pending >= BATCH_STEPS {
            return;
        }
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            return;
        };
        std::thread::sleep(left.min(BATCH_NAP));
    }
}

impl Worker {
    /// Queues `job` without waiting for it (a logged step to fold); `false` once the thread
    /// has stopped.
    pub(super) fn send<F>(&self, job: F) -> bool
    where
        F: FnOnce(&mut Db) + Send + 'static,
    {
        self.jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(Box::new(job)).is_ok())
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            // Waits for queued commits and, for a large WAL, its checkpoint (`Db::close`).
            let _ = thread.join();
        }
    }
}
