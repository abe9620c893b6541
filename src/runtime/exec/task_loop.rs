//! `task-loop`: the body runs once per ready task of a tasks file, at most
//! `max-concurrency` tasks at a time, as the branches of a for-each parallel whose items
//! are picked one by one: whenever a slot is free the file is read again and the best
//! ready task starts (marked `in_progress` first). When a task's body ends, its status is
//! written back (`failing` when the body failed; when it succeeded, the status the body
//! left, or `left-in-progress=` if it left the task in progress), and then a *mark* is
//! committed beside its block. The loop ends when nothing is running and no task is
//! ready, or after `max-iterations` tasks; the branches' writes then merge in the order
//! the tasks ended.
//!
//! Durability comes from the parallel's machinery: each task's block commits its steps
//! under a scope named by the task's id (`<loop>@<entry>#<id>`), so a resumed loop
//! continues a task from its last committed step, and a task whose mark is committed is
//! neither run nor marked again. A task found `in_progress` with no block (a run that
//! died before committing anything of it, or an earlier run) simply starts again.
//!
//! A dry run reads the file (a missing one as no tasks) but never writes it: statuses are
//! kept in memory.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures_util::stream::{FuturesUnordered, StreamExt};
use futures_util::{FutureExt, future::BoxFuture};
use serde_json::{Value, json};

use super::task_file::TaskFile;
use super::{Halt, Place};
use crate::ir::{NodeIdx, Parallel};
use crate::lower::StepIdx;
use crate::runtime::NodeError;
use crate::runtime::frame::{Frame, Write};
use crate::runtime::shared::Shared;
use crate::runtime::walk::{Block, Mark, ScopePath, Stop, commit_mark, resume_block, walk_block};
use crate::store::PendingWait;

/// A task that ended in this run of the loop.
struct Ended {
    id: String,
    status: String,
    /// Its body's writes (none when it failed).
    writes: Vec<Write>,
}

pub(super) async fn execute(
    shared: &Arc<Shared>,
    frame: &Frame,
    at: StepIdx,
    node: NodeIdx,
    parallel: &Parallel,
    seq: u64,
    place: &Place<'_>,
) -> Result<Vec<Write>, Halt> {
    let plan = &shared.program.plan;
    let id = shared.id(node).clone();
    let join = plan
        .join_of(at)
        .ok_or_else(|| NodeError::fatal(format!("`{id}` has no join")))?;
    let branches = plan.branches(at);
    let (Some(body), Some(each), Some(tasks)) = (
        branches.first(),
        &parallel.for_each,
        parallel.tasks.as_deref(),
    ) else {
        return Err(NodeError::fatal(format!("`{id}` has no body")).into());
    };
    let scope = shared.scope(frame, Some(node), seq);
    let file = shared.program.templates.render(&each.items, &scope)?;
    let most = match &tasks.max_iterations {
        None => usize::MAX,
        Some(max) => match shared.program.templates.eval_json(max, &scope)? {
            Value::Number(n) if n.as_u64().is_some() => {
                usize::try_from(n.as_u64().unwrap_or_default()).unwrap_or(usize::MAX)
            }
            other => {
                return Err(NodeError::fatal(format!(
                    "`max-iterations` of `{id}` is `{other}`, not a whole number of tasks"
                ))
                .into());
            }
        },
    };
    drop(scope);
    let path: PathBuf = shared.ctx.workspace.resolve(file.trim());
    let limit = parallel
        .max_concurrency
        .as_ref()
        .map_or(1, |max| (max.value as usize).max(1));
    let entry = place.entry();
    let name: Arc<str> = Arc::from(each.as_.value.as_str());
    let index_name: Arc<str> = Arc::from("index");

    let ended = recovered(shared, frame, &place.scope.task(&id, &entry, ""), join)?;
    let mut done: HashSet<String> = ended.iter().map(|task| task.id.clone()).collect();
    let mut ended: Vec<Option<Ended>> = ended.into_iter().map(Some).collect();
    let file = Arc::new(Tasks {
        path,
        dry: shared.ctx.dry_run,
        overlay: Mutex::new(HashMap::new()),
        executor: Arc::clone(&shared.ctx.executor),
        turn: tokio::sync::Mutex::new(()),
    });
    let mut started = ended.len();
    let mut running: HashSet<String> = HashSet::new();
    let mut walks: FuturesUnordered<BoxFuture<'static, Result<Option<Ended>, Halt>>> =
        FuturesUnordered::new();
    let mut paused: Vec<PendingWait> = Vec::new();
    // Tasks a run that died had started and not marked: they continue first, whatever the
    // file now says (it may already hold the status written just before the crash).
    let mut unmarked: Vec<String> = file
        .read()
        .await?
        .tasks
        .iter()
        .filter(|task| !done.contains(&task.id))
        .filter(|task| {
            !shared
                .journal
                .recovery
                .steps_of(&place.scope.task(&id, &entry, &task.id))
                .is_empty()
        })
        .map(|task| task.id.clone())
        .rev()
        .collect();

    loop {
        // Fill the free slots, best ready task first. A paused task stops new starts. The
        // running tasks are not polled meanwhile, and each read-modify-write of the file
        // holds its turn.
        while paused.is_empty() && walks.len() < limit && started < most {
            let turn = file.turn.lock().await;
            let mut read = file.read().await?;
            let busy = |task: &str| done.contains(task) || running.contains(task);
            let next = match unmarked.pop() {
                Some(task) => read.tasks.iter().find(|other| other.id == task),
                None => read.ready(busy).first().copied(),
            };
            let Some((task_id, mut view)) = next.map(|task| (task.id.clone(), task.view.clone()))
            else {
                break;
            };
            if matches!(read.status_of(&task_id), Some("pending")) {
                file.set(&mut read, &task_id, "in_progress").await?;
            }
            drop(turn);
            view["status"] = Value::from("in_progress");
            let index = u32::try_from(started).map_err(|_| NodeError::fatal("too many tasks"))?;
            let mut counters = frame.counters.clone();
            let start = plan.take(body.edge, &mut counters);
            let mut locals = frame
                .locals
                .as_ref()
                .map(|locals| locals.as_ref().clone())
                .unwrap_or_default();
            locals.retain(|(local, _)| *local != name && *local != index_name);
            locals.push((
                name.clone(),
                minijinja::Value::from(minijinja::value::Serde(view)),
            ));
            locals.push((index_name.clone(), minijinja::Value::from(index)));
            let mut branch = Frame {
                state: frame.state.clone(),
                outputs: frame.outputs.clone(),
                counters,
                locals: Some(Arc::new(locals)),
                error: frame.error.clone(),
                branch: Some(index),
                log: Some(Vec::new()),
                tree: frame.tree.clone(),
            };
            let scope = place.scope.task(&id, &entry, &task_id);
            let resumed = resume_block(shared, &mut branch, &scope, start, Some(join))?;
            running.insert(task_id.clone());
            started += 1;
            let walk = (!resumed.finished).then(|| {
                walk_block(
                    Block {
                        shared: shared.clone(),
                        frame: branch.clone(),
                        scope: scope.clone(),
                        number: seq,
                        local: resumed.local,
                        durable: true,
                    },
                    resumed.start,
                    Some(join),
                )
            });
            let task = TaskRun {
                shared: shared.clone(),
                frame: frame.clone(),
                file: file.clone(),
                loop_id: id.clone(),
                id: task_id,
                scope,
                seq,
                join,
                left_in_progress: tasks.left_in_progress.as_str(),
            };
            walks.push(
                async move {
                    let result = match walk {
                        // A task that panics fails, not the process.
                        Some(walk) => std::panic::AssertUnwindSafe(walk)
                            .catch_unwind()
                            .await
                            .unwrap_or_else(|_| {
                                Err(Stop::Failed {
                                    node: Arc::from("?"),
                                    error: NodeError::fatal("the task panicked"),
                                })
                            }),
                        // Its body had ended before a crash: only its status is left.
                        None => Ok(branch),
                    };
                    task.end(result).await
                }
                .boxed(),
            );
        }
        let Some(result) = walks.next().await else {
            break;
        };
        match result {
            Ok(Some(task)) => {
                running.remove(&task.id);
                done.insert(task.id.clone());
                ended.push(Some(task));
            }
            // Its siblings go on; the loop pauses once they have ended.
            Ok(None) => {}
            Err(Halt::Paused(waits)) => paused.extend(waits),
            // Returning drops the other tasks, ending what they started; they stay in
            // progress in the file and resume where they stopped.
            Err(error) => return Err(error),
        }
    }
    if !paused.is_empty() {
        return Err(Halt::Paused(paused));
    }
    let blocked = file.read().await?.blocked(|task| done.contains(task));
    let mut writes = Vec::new();
    let mut summary = Vec::new();
    for task in ended.into_iter().flatten() {
        writes.extend(task.writes);
        summary.push(json!({"id": task.id, "status": task.status}));
    }
    writes.push(Write::Output(
        id,
        json!({"tasks": summary, "blocked": blocked}),
    ));
    Ok(writes)
}

/// The tasks file, with a dry run's statuses kept in memory over it. It is read and
/// written through the executor (an effect like any other: on Temporal, an activity), and a
/// read-modify-write holds `turn`, so no other task's write interleaves with it.
struct Tasks {
    path: PathBuf,
    dry: bool,
    overlay: Mutex<HashMap<String, String>>,
    executor: Arc<dyn crate::runtime::Executor>,
    turn: tokio::sync::Mutex<()>,
}

impl Tasks {
    fn overlay(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.overlay
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The file as it is now. A dry run reads a file that does not exist as one with no
    /// tasks, as its tools and agents need nothing to exist either.
    async fn read(&self) -> Result<TaskFile, NodeError> {
        let mut file = if self.dry && !self.path.exists() {
            TaskFile::parse("[]").map_err(NodeError::fatal)?
        } else {
            TaskFile::read(&self.path, self.executor.read_text(&self.path).await)?
        };
        for (task, status) in self.overlay().iter() {
            file.set_status(task, status);
        }
        Ok(file)
    }

    /// Sets a status in `file` (as just read) and writes it back; a dry run only keeps it.
    async fn set(&self, file: &mut TaskFile, task: &str, status: &str) -> Result<(), NodeError> {
        file.set_status(task, status);
        if self.dry {
            self.overlay().insert(task.to_owned(), status.to_owned());
            return Ok(());
        }
        let text = file.text()?;
        self.executor
            .write_text(&self.path, text)
            .await
            .map_err(|error| {
                NodeError::fatal(format!(
                    "cannot write the tasks file `{}`: {error}",
                    self.path.display()
                ))
            })
    }
}

/// What a task's future needs once its body has ended.
struct TaskRun {
    shared: Arc<Shared>,
    frame: Frame,
    file: Arc<Tasks>,
    loop_id: Arc<str>,
    id: String,
    scope: ScopePath,
    seq: u64,
    join: StepIdx,
    left_in_progress: &'static str,
}

impl TaskRun {
    /// Writes the task's status and commits its mark: `None` when the body paused at a
    /// wait (the task stays in progress; a resumed loop continues it).
    async fn end(self, result: Result<Frame, Stop>) -> Result<Option<Ended>, Halt> {
        let id = &self.loop_id;
        let (ok, writes, error) = match result {
            Ok(finished) => (true, finished.log.unwrap_or_default(), None),
            Err(Stop::Failed { node, error }) => {
                let message = format!(
                    "`{id}` task `{}` failed at `{node}`: {}",
                    self.id, error.message
                );
                (false, Vec::new(), Some(message))
            }
            Err(Stop::Paused(waits)) => return Err(Halt::Paused(waits)),
            Err(Stop::Limit(message)) => return Err(NodeError::fatal(message).into()),
            Err(Stop::Cancelled) => {
                return Err(NodeError::fatal(format!("`{id}` was cancelled")).into());
            }
            Err(Stop::Store(error)) => return Err(NodeError::fatal(error.to_string()).into()),
            Err(Stop::Workspace(message)) => return Err(NodeError::fatal(message).into()),
        };
        // Read, decide and write in one turn, so no other task's write interleaves.
        let turn = self.file.turn.lock().await;
        let mut file = self.file.read().await?;
        let status = match (ok, file.status_of(&self.id)) {
            (false, _) => "failing".to_owned(),
            (true, None | Some("pending" | "in_progress")) => self.left_in_progress.to_owned(),
            (true, Some(other)) => other.to_owned(),
        };
        if file.status_of(&self.id) != Some(status.as_str()) {
            self.file.set(&mut file, &self.id, &status).await?;
        }
        drop(file);
        drop(turn);
        let failed = error.is_some();
        commit_mark(
            &self.shared,
            &self.frame,
            self.scope.status(),
            self.seq,
            Mark {
                node: id.clone(),
                writes: vec![Write::Output(
                    id.clone(),
                    json!({"id": self.id, "status": status, "failed": failed}),
                )],
                error,
                next: self.join,
            },
        )
        .await
        .map_err(|stop| match stop {
            Stop::Store(error) => NodeError::fatal(error.to_string()),
            _ => NodeError::fatal(format!("`{id}` could not record task `{}`", self.id)),
        })?;
        Ok(Some(Ended {
            id: self.id,
            status,
            writes,
        }))
    }
}

/// The tasks a run of this loop that died had ended and marked (`prefix` is the scope of
/// a task with an empty id: `<loop>@<entry>#`), in the order they were marked, each with
/// its body's writes replayed from its block.
fn recovered(
    shared: &Arc<Shared>,
    frame: &Frame,
    prefix: &ScopePath,
    join: StepIdx,
) -> Result<Vec<Ended>, NodeError> {
    let Some(prefix) = prefix.as_str() else {
        return Ok(Vec::new());
    };
    let schema = frame.state.schema().clone();
    let mut ended = Vec::new();
    for (scope, mark) in shared.journal.recovery.marks_under(prefix) {
        let mut task = None;
        for write in mark.writes.iter().cloned() {
            if let Ok(Write::Output(_, value)) = write.decode(&schema) {
                task = Some(value);
            }
        }
        let Some(task) = task else { continue };
        let (Some(id), Some(status)) = (task["id"].as_str(), task["status"].as_str()) else {
            continue;
        };
        let mut writes = Vec::new();
        // A failed body's writes are dropped, as when it fails in this process.
        if task["failed"] != Value::Bool(true) {
            let block = ScopePath::parse(scope.strip_suffix("!status").unwrap_or(scope));
            let mut branch = Frame {
                log: Some(Vec::new()),
                ..frame.clone()
            };
            let start = shared.program.plan.end();
            resume_block(shared, &mut branch, &block, start, Some(join))?;
            writes = branch.log.unwrap_or_default();
        }
        ended.push(Ended {
            id: id.to_owned(),
            status: status.to_owned(),
            writes,
        });
    }
    Ok(ended)
}
