//! `atomic runs delete RUN…` and `atomic runs prune`: runs leave the project's store — their
//! history, step log and live feed, and the refs of their workspace snapshots (git collects
//! the objects later) — and the space they held goes back to the file system. Neither
//! touches a run a live process is running. The store's size is measured here too, for
//! the line under `atomic runs`'s table.

use std::path::Path;
use std::time::Duration;

use crate::cli::Exit;
use crate::cli::execute::store as stores;
use crate::cli::project::Project;
use crate::store::{RunFilter, RunId, RunRecord, RunStatus, Store, StoreError, Timestamp};
use crate::workspace::snapshot::{SnapshotError, Snapshots};

/// What `atomic runs prune` deletes: the runs that pass every filter given.
pub(super) struct Prune<'a> {
    /// `--older-than`: last changed at least this long ago (`30d`).
    pub(super) older_than: Option<&'a str>,
    /// `--keep`: all but the N newest (of those with the statuses).
    pub(super) keep: Option<usize>,
    /// `--status`: one of these.
    pub(super) status: &'a [String],
    /// `--dry-run`: list them, delete nothing.
    pub(super) dry_run: bool,
}

/// Runs `atomic runs delete RUN…`: every prefix resolved and every run checked first, so a
/// refusal deletes nothing; then one line per run deleted.
pub(super) fn delete(
    runtime: &tokio::runtime::Runtime,
    project: &Project,
    store: &dyn Store,
    prefixes: &[String],
) -> Exit {
    let mut runs: Vec<RunRecord> = Vec::with_capacity(prefixes.len());
    let mut refused = false;
    for prefix in prefixes {
        let record = runtime.block_on(async {
            let id = store.resolve(prefix).await?;
            store.run(&id).await
        });
        let record = match record {
            Ok(record) => record,
            Err(error) => return stores::report(project, error),
        };
        match runtime.block_on(holder(store, &record.id)) {
            Ok(None) => {}
            Ok(Some(owner)) => {
                eprintln!(
                    "error: run `{}` is being run by {owner}; stop it first with `atomic cancel {}`",
                    record.id, record.id
                );
                refused = true;
                continue;
            }
            Err(error) => return stores::report(project, error),
        }
        if !runs.iter().any(|run| run.id == record.id) {
            runs.push(record);
        }
    }
    if refused {
        eprintln!("nothing was deleted");
        return Exit::Problems;
    }
    let mut remover = Remover::new(project);
    for run in &runs {
        if let Err(error) = runtime.block_on(remover.remove(store, &run.id)) {
            return stores::report(project, error);
        }
        println!("deleted run {}", describe(run));
    }
    remover.finish(runtime, store);
    Exit::Ok
}

/// Runs `atomic runs prune`.
pub(super) fn prune(
    runtime: &tokio::runtime::Runtime,
    project: &Project,
    store: &dyn Store,
    filters: &Prune<'_>,
) -> Exit {
    if filters.older_than.is_none() && filters.keep.is_none() && filters.status.is_empty() {
        eprintln!(
            "error: `atomic runs prune` deletes the runs that match its filters, and none was given; give at least one of `--older-than 30d`, `--keep N`, `--status completed,failed,cancelled`"
        );
        return Exit::Usage;
    }
    let older_than = match filters.older_than.map(parse_age).transpose() {
        Ok(age) => age,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Usage;
        }
    };
    let mut statuses = Vec::with_capacity(filters.status.len());
    for text in filters.status {
        match RunStatus::parse(text.trim()) {
            Some(status) => statuses.push(status),
            None => {
                eprintln!(
                    "error: unknown status `{text}`: expected one of `running`, `paused`, `completed`, `failed`, `cancelled`"
                );
                return Exit::Usage;
            }
        }
    }
    let mut runs = match runtime.block_on(store.list_runs(&RunFilter::default())) {
        Ok(runs) => runs,
        Err(error) => return stores::report(project, error),
    };
    // A rewind's copy for `--undo` goes with its run.
    runs.retain(|run| !crate::runtime::is_undo_copy(&run.id));
    let total = runs.len();
    let now = Timestamp::now();
    // Newest first: the first `keep` of the runs with the statuses stay.
    let candidates: Vec<RunRecord> = runs
        .into_iter()
        .filter(|run| statuses.is_empty() || statuses.contains(&run.status))
        .skip(filters.keep.unwrap_or(0))
        .filter(|run| {
            older_than
                .is_none_or(|age| u128::from(now.millis_since(run.updated_at)) >= age.as_millis())
        })
        .collect();
    let mut doomed = Vec::with_capacity(candidates.len());
    for run in candidates {
        match runtime.block_on(holder(store, &run.id)) {
            Ok(None) => doomed.push(run),
            Ok(Some(owner)) => eprintln!("kept run `{}`: {owner} is running it", run.id),
            Err(error) => return stores::report(project, error),
        }
    }
    if filters.dry_run {
        for run in &doomed {
            println!("would delete run {}", describe(run));
        }
        println!(
            "would delete {} of {total} (dry run: nothing was deleted)",
            count(doomed.len())
        );
        return Exit::Ok;
    }
    let state_dir = project.state_dir();
    let before = store_size(&state_dir);
    let mut remover = Remover::new(project);
    for run in &doomed {
        if let Err(error) = runtime.block_on(remover.remove(store, &run.id)) {
            return stores::report(project, error);
        }
    }
    remover.finish(runtime, store);
    let freed = before.saturating_sub(store_size(&state_dir));
    println!("deleted {}, {} freed", count(doomed.len()), human(freed));
    Exit::Ok
}

/// The line under `atomic runs`'s table: `store: 4 runs · 1.2 MB in .atomic/`.
pub(super) fn size_line(project: &Project, runs: usize) -> String {
    format!(
        "store: {} · {} in .atomic/",
        count(runs),
        human(store_size(&project.state_dir()))
    )
}

/// Who runs `run` now, if a live process does.
async fn holder(store: &dyn Store, run: &RunId) -> Result<Option<String>, StoreError> {
    Ok(store
        .lease(run)
        .await?
        .filter(crate::store::Lease::is_held)
        .map(|lease| lease.owner.describe()))
}

/// Deletes runs one by one, with their live feeds and snapshot refs; the store is
/// compacted once at the end.
struct Remover<'a> {
    project: &'a Project,
    /// The workspace's snapshots, opened at the first run deleted (`None` inside: none).
    snapshots: Option<Option<Snapshots>>,
    deleted: usize,
}

impl<'a> Remover<'a> {
    fn new(project: &'a Project) -> Self {
        Self {
            project,
            snapshots: None,
            deleted: 0,
        }
    }

    async fn remove(&mut self, store: &dyn Store, run: &RunId) -> Result<(), StoreError> {
        let feed = store.live_feed(run);
        store.delete_run(run).await?;
        self.deleted += 1;
        match store.delete_run(&crate::runtime::undo_id(run)).await {
            Ok(()) | Err(StoreError::NotFound(_)) => {}
            Err(error) => return Err(error),
        }
        if let Some(feed) = feed {
            let _ = std::fs::remove_file(feed);
        }
        let project = self.project;
        if let Some(snapshots) = self.snapshots.get_or_insert_with(|| snapshots(project)) {
            remove_branch_worktrees(snapshots, &project.state_dir(), run);
            if let Err(error) = snapshots.forget_run(run.as_str()) {
                eprintln!("warning: the workspace snapshots of run `{run}` are kept: {error}");
            }
        }
        Ok(())
    }

    /// Gives the space of the runs deleted back to the file system.
    fn finish(self, runtime: &tokio::runtime::Runtime, store: &dyn Store) {
        if self.deleted == 0 {
            return;
        }
        if let Err(error) = runtime.block_on(store.compact()) {
            eprintln!("warning: the store keeps the space of the deleted runs for now: {error}");
        }
    }
}

/// Removes the worktrees the branches of the run's isolated parallels left (a run stopped
/// in one): `.atomic/worktrees/<run>/`. A fork's worktree (`.atomic/worktrees/<fork>`, a
/// work tree itself) holds people's work and stays.
fn remove_branch_worktrees(snapshots: &Snapshots, state_dir: &Path, run: &RunId) {
    let dir = state_dir.join("worktrees").join(run.as_str());
    if dir.join(".git").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        if let Err(error) = snapshots.remove_worktree(&entry.path()) {
            eprintln!(
                "warning: the worktree {} is kept: {error}",
                entry.path().display()
            );
        }
    }
    let _ = std::fs::remove_dir(&dir);
}

/// The project's snapshot store, where there is one: in the project's git repository, or
/// private in `.atomic/snapshots.git`. None is created (opening one where none exists
/// would make a private repository); none without git.
fn snapshots(project: &Project) -> Option<Snapshots> {
    let private = project.state_dir().join("snapshots.git");
    let in_git = project
        .root
        .ancestors()
        .any(|dir| dir.join(".git").exists());
    if !private.exists() && !in_git {
        return None;
    }
    match Snapshots::open(&project.root) {
        Ok(snapshots) => Some(snapshots),
        Err(SnapshotError::NoGit(_)) => None,
        Err(error) => {
            eprintln!("warning: the runs' workspace snapshots are kept: {error}");
            None
        }
    }
}

/// What the store takes on disk: every file under `.atomic/` (the database and its WAL,
/// the step logs, the live feeds, a private snapshot repository) except what people write
/// there — workflows, tools, agents, skills, commands, the configuration — and fork
/// worktrees.
pub(super) fn store_size(state_dir: &Path) -> u64 {
    const NOT_THE_STORE: [&str; 7] = [
        "workflows",
        "tools",
        "agents",
        "skills",
        "commands",
        "worktrees",
        "config.kdl",
    ];
    let Ok(entries) = std::fs::read_dir(state_dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_none_or(|name| !NOT_THE_STORE.contains(&name))
        })
        .map(|entry| tree_size(&entry.path()))
        .sum()
}

/// The size of a file, or of every file below a directory (links not followed).
fn tree_size(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if meta.is_dir() {
        std::fs::read_dir(path).map_or(0, |entries| {
            entries
                .flatten()
                .map(|entry| tree_size(&entry.path()))
                .sum()
        })
    } else if meta.is_file() {
        meta.len()
    } else {
        0
    }
}

/// `--older-than`'s age: a whole number and a unit, `m`, `h`, `d` or `w` (`30d`).
fn parse_age(text: &str) -> Result<Duration, String> {
    let wrong = || {
        format!(
            "`--older-than {text}` is not an age: give a whole number and a unit, `m` (minutes), `h`, `d` or `w` (weeks), as in `30d`"
        )
    };
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(wrong)?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| wrong())?;
    let seconds = match unit {
        "m" => 60,
        "h" => 60 * 60,
        "d" => 24 * 60 * 60,
        "w" => 7 * 24 * 60 * 60,
        _ => return Err(wrong()),
    };
    number
        .checked_mul(seconds)
        .map(Duration::from_secs)
        .ok_or_else(wrong)
}

/// `1 run`, `3 runs`.
fn count(runs: usize) -> String {
    if runs == 1 {
        "1 run".to_owned()
    } else {
        format!("{runs} runs")
    }
}

/// A run for the lines naming it: its id, workflow, status, steps and when it last changed.
fn describe(run: &RunRecord) -> String {
    format!(
        "{}  `{}`  {}  {} step{}  last changed {} UTC",
        run.id,
        run.workflow,
        run.status.as_str(),
        run.steps,
        if run.steps == 1 { "" } else { "s" },
        crate::store::utc(run.updated_at)
    )
}

/// Bytes for people: `812 B`, `4.0 KB`, `1.2 MB`, `3.1 GB` (powers of 1024).
fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_take_a_number_and_a_unit() {
        assert_eq!(parse_age("90m"), Ok(Duration::from_secs(90 * 60)));
        assert_eq!(parse_age("12h"), Ok(Duration::from_secs(12 * 3600)));
        assert_eq!(parse_age("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_age("2w"), Ok(Duration::from_secs(14 * 86_400)));
        assert_eq!(parse_age("0d"), Ok(Duration::ZERO));
        for wrong in ["30", "d", "3x", "-1d", "1.5d", "", "99999999999999999999w"] {
            let error = parse_age(wrong).unwrap_err();
            assert!(error.contains("is not an age"), "{wrong}: {error}");
        }
    }

    #[test]
    fn sizes_read_in_the_largest_unit_that_fits() {
        assert_eq!(human(0), "0 B");
        assert_eq!(human(1023), "1023 B");
        assert_eq!(human(4096), "4.0 KB");
        assert_eq!(human(1_258_291), "1.2 MB");
        assert_eq!(human(3 * 1024 * 1024 * 1024), "3.0 GB");
    }

    #[test]
    fn the_store_size_leaves_out_what_people_write() {
        let dir = tempfile::tempdir().unwrap();
        let atomic = dir.path().join(".atomic");
        for (name, len) in [
            ("atomic.db", 100),
            ("atomic.db-wal", 20),
            ("steps/01run.log", 3),
            ("live/01run.jsonl", 4),
            ("snapshots.git/objects/ab/cdef", 5),
            ("workflows/flow.kdl", 1000),
            ("tools/lint.kdl", 1000),
            ("config.kdl", 1000),
        ] {
            let path = atomic.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, vec![b'x'; len]).unwrap();
        }
        assert_eq!(store_size(&atomic), 132);
        assert_eq!(store_size(&dir.path().join("none")), 0);
    }
}
