//! `atomic rewind RUN --to STEP` / `--undo` and `atomic fork RUN --at STEP`: a run's
//! history and the workspace's files moved together (see `runtime::run::history`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::runtime::Runtime;

use serde_json::{Map, Value};

use super::Exit;
use super::args::{DurabilityArg, ForkArgs, RewindArgs};
use super::disk::Disk;
use super::execute::workflow::{self, Loaded};
use super::execute::{self, inputs, store};
use super::progress::text::files_changed;
use super::project::Project;
use crate::runtime::{ForkPlace, HistoryError, Moved, RunContext};
use crate::store::{RunAmend, RunId, Store};
use crate::workspace::snapshot::{Mark, SnapshotError, Snapshots};

/// Runs `atomic rewind`.
pub(super) fn rewind(args: &RewindArgs) -> Exit {
    let project = Project::discover();
    let (store, runtime, snapshots) = match open(&project) {
        Ok(opened) => opened,
        Err(exit) => return exit,
    };
    let moved = runtime.block_on(async {
        let run = store.resolve(&args.run).await?;
        match &args.to {
            Some(to) => crate::runtime::rewind(store.as_ref(), snapshots.as_ref(), &run, to).await,
            None => crate::runtime::undo_rewind(store.as_ref(), snapshots.as_ref(), &run).await,
        }
    });
    match moved {
        Ok(moved) if args.undo => {
            eprintln!(
                "undid the rewind of run `{}`: its steps are back ({} committed){}",
                moved.run,
                moved.step,
                files_note(&moved, "put back")
            );
            Exit::Ok
        }
        Ok(moved) => {
            eprintln!(
                "rewound run `{}` to just after step {} `{}`: its state{}; it is paused there\n  atomic resume {}        goes on from there (with the workflow as it is now: add --force if you edited it)\n  atomic rewind {} --undo  puts back what this replaced",
                moved.run,
                moved.step,
                moved.node,
                match &moved.files {
                    Some(paths) => format!(
                        " and files as that step left them ({} put back)",
                        files_changed(paths.len())
                    ),
                    None =>
                        " (the run recorded no files, so they were left as they are)".to_owned(),
                },
                moved.run,
                moved.run,
            );
            Exit::Ok
        }
        Err(error) => report(&project, error),
    }
}

/// Runs `atomic fork`.
pub(super) fn fork(args: &ForkArgs) -> Exit {
    let project = Project::discover();
    let (store, runtime, snapshots) = match open(&project) {
        Ok(opened) => opened,
        Err(exit) => return exit,
    };
    let run = match runtime.block_on(store.resolve(&args.run)) {
        Ok(run) => run,
        Err(error) => return store::report(&project, error),
    };
    // What the fork goes on with, checked before anything moves.
    let (amend, loaded) = match amendment(&project, store.as_ref(), &runtime, &run, args) {
        Ok(found) => found,
        Err(exit) => return exit,
    };
    // Putting the fork point's files in place may take the workflow file given with them
    // (written since): it is put back as given.
    let workflow_text = match (&loaded, args.in_place && args.workflow.is_some()) {
        (Some(loaded), true) => std::fs::read(&loaded.path).ok(),
        _ => None,
    };
    let fork_id = RunId::generate();
    let place =
        if args.in_place {
            ForkPlace::InPlace
        } else {
            ForkPlace::Worktree(args.worktree.clone().unwrap_or_else(|| {
                crate::runtime::default_worktree(&project.state_dir(), &fork_id)
            }))
        };
    let moved = runtime.block_on(crate::runtime::fork(
        store.as_ref(),
        snapshots.as_ref(),
        &run,
        &args.at,
        &fork_id,
        &place,
        amend,
    ));
    let moved = match moved {
        Ok(moved) => moved,
        Err(error) => return report(&project, error),
    };
    if let (Some(text), Some(loaded), Some(snapshots)) = (&workflow_text, &loaded, &snapshots)
        && let Err(error) = keep_workflow(snapshots, &moved.run, &loaded.path, text)
    {
        eprintln!(
            "warning: {} is not as given after the fork's files were put in place: {error}",
            loaded.path.display()
        );
    }
    if let Some(loaded) = &loaded {
        let ctx = RunContext {
            files: Arc::new(Disk),
            base_dir: loaded.dir(),
            ..RunContext::new(Arc::clone(&store))
        };
        if let Err(error) = runtime.block_on(crate::runtime::check_fits(
            loaded.plan.clone(),
            &moved.run,
            ctx,
        )) {
            undo_fork(&runtime, store.as_ref(), snapshots.as_ref(), &moved);
            eprintln!(
                "error: the fork cannot go on with {}: {error}\n  nothing was forked",
                loaded.path.display()
            );
            return Exit::Problems;
        }
    }
    if let Some(worktree) = &moved.worktree
        && let Err(error) = share_store(&project.state_dir(), worktree)
    {
        eprintln!(
            "warning: the fork's worktree {} cannot reach the project's store ({error}); run atomic there with the store linked as `.atomic`",
            worktree.display()
        );
    }
    let whence = match (&moved.worktree, &moved.files) {
        (Some(worktree), _) => format!(
            "its files as that step left them are in the git worktree {}\n  cd {} && atomic resume {}",
            worktree.display(),
            worktree.display(),
            moved.run
        ),
        (None, Some(paths)) => format!(
            "its files as that step left them are in place ({} put back)\n  atomic resume {}",
            files_changed(paths.len()),
            moved.run
        ),
        (None, None) => format!(
            "the run recorded no files, so they were left as they are\n  atomic resume {}",
            moved.run
        ),
    };
    eprintln!(
        "forked run `{}` from `{}` at step {} `{}`; {whence}",
        moved.run, args.run, moved.step, moved.node
    );
    println!("{}", moved.run);
    Exit::Ok
}

/// The fork's own inputs and workflow file, when `--input` or FILE asks for them, and the
/// workflow they are checked with (FILE, or the run's own).
fn amendment(
    project: &Project,
    store: &dyn Store,
    runtime: &Runtime,
    run: &RunId,
    args: &ForkArgs,
) -> Result<(RunAmend, Option<Loaded>), Exit> {
    if args.inputs.is_empty() && args.workflow.is_none() {
        return Ok((RunAmend::default(), None));
    }
    let record = runtime
        .block_on(store.run(run))
        .map_err(|error| store::report(project, error))?;
    let path = match &args.workflow {
        Some(file) => workflow::resolve(project, file).map_err(|message| {
            eprintln!("error: {message}");
            Exit::Problems
        })?,
        None => PathBuf::from(&record.path),
    };
    let loaded = workflow::load(project, &path, false)?;
    let mut amend = RunAmend::default();
    if !args.inputs.is_empty() {
        let base = match record.inputs {
            Value::Object(inputs) => inputs,
            _ => Map::new(),
        };
        let inputs =
            inputs::gather_over(loaded.workflow(), base, &args.inputs).map_err(|message| {
                eprintln!("error: {message}");
                Exit::Problems
            })?;
        amend.inputs = Some(Value::Object(inputs));
    }
    if args.workflow.is_some() {
        amend.workflow = Some((loaded.path.display().to_string(), loaded.hash.clone()));
    }
    Ok((amend, Some(loaded)))
}

/// Writes the fork's workflow file back as it was given when putting the fork point's files
/// in place changed it, and records it as the fork's files.
fn keep_workflow(
    snapshots: &Snapshots,
    fork: &RunId,
    path: &Path,
    text: &[u8],
) -> Result<(), SnapshotError> {
    if std::fs::read(path).is_ok_and(|now| now == text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|error| SnapshotError::NotWritable {
        path: path.to_path_buf(),
        reason: error.to_string(),
    })?;
    snapshots
        .take(
            fork.as_str(),
            Mark::Kept,
            None,
            "the workflow file the fork goes on with",
        )
        .map(drop)
}

/// Takes back a fork that cannot go on: its run, its worktree, or the files it put in
/// place (back to what they were). Best effort: what cannot be undone is said.
fn undo_fork(runtime: &Runtime, store: &dyn Store, snapshots: Option<&Snapshots>, moved: &Moved) {
    if let Err(error) = runtime.block_on(store.delete_run(&moved.run)) {
        eprintln!("warning: the fork `{}` is kept: {error}", moved.run);
    }
    let Some(snapshots) = snapshots else {
        return;
    };
    let undone = match (&moved.worktree, &moved.kept) {
        (Some(worktree), _) => snapshots.remove_worktree(worktree),
        (None, Some(kept)) => snapshots.tree_of(kept).and_then(|tree| {
            snapshots
                .restore(moved.run.as_str(), &tree, None, "the fork was taken back")
                .map(drop)
        }),
        (None, None) => Ok(()),
    };
    if let Err(error) = undone.and_then(|()| snapshots.forget_run(moved.run.as_str()).map(drop)) {
        eprintln!("warning: the fork's files are kept: {error}");
    }
}

/// The project's store, a runtime to read it on, and its snapshots.
type Opened = (Arc<dyn Store>, Runtime, Option<Snapshots>);

/// Opens what `rewind` and `fork` work on (see [`Opened`]).
fn open(project: &Project) -> Result<Opened, Exit> {
    let store = store::open_for_run(project, DurabilityArg::Normal)?;
    let runtime = execute::runtime()?;
    Ok((store, runtime, snapshots(project)?))
}

/// The project's snapshots, `None` where git is missing (history moves without files).
fn snapshots(project: &Project) -> Result<Option<Snapshots>, Exit> {
    match Snapshots::open(&project.root) {
        Ok(snapshots) => Ok(Some(snapshots)),
        Err(SnapshotError::NoGit(reason)) => {
            eprintln!("warning: {reason}: the run's files will not be moved, only its state");
            Ok(None)
        }
        Err(error) => {
            eprintln!(
                "error: cannot read the snapshots of {}: {error}",
                project.root.display()
            );
            Err(Exit::Fatal)
        }
    }
}

/// Makes the worktree find the project's store: its `.atomic` is a link to the project's.
fn share_store(state_dir: &Path, worktree: &Path) -> std::io::Result<()> {
    let link = worktree.join(".atomic");
    if link.exists() {
        return Ok(());
    }
    let target = std::fs::canonicalize(state_dir)?;
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(target, link)
    }
    #[cfg(not(unix))]
    {
        let _ = target;
        Err(std::io::Error::other("worktree links need a Unix system"))
    }
}

fn files_note(moved: &Moved, verb: &str) -> String {
    match &moved.files {
        Some(paths) => format!(", and its files ({} {verb})", files_changed(paths.len())),
        None => String::new(),
    }
}

fn report(project: &Project, error: HistoryError) -> Exit {
    match error {
        HistoryError::Store(error) => store::report(project, error),
        error @ HistoryError::Files { .. } => {
            eprintln!("error: {error}");
            Exit::Fatal
        }
        error => {
            eprintln!("error: {error}");
            Exit::Problems
        }
    }
}
