//! `atomic rewind RUN --to STEP` / `--undo` and `atomic fork RUN --at STEP`: a run's
//! history and the workspace's files moved together (see `runtime::run::history`).

use std::path::Path;
use std::sync::Arc;

use tokio::runtime::Runtime;

use super::Exit;
use super::args::{DurabilityArg, ForkArgs, RewindArgs};
use super::execute::{self, store};
use super::progress::text::files_changed;
use super::project::Project;
use crate::runtime::{ForkPlace, HistoryError, Moved};
use crate::store::{RunId, Store};
use crate::workspace::snapshot::{SnapshotError, Snapshots};

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
    let fork_id = RunId::generate();
    let place =
        if args.in_place {
            ForkPlace::InPlace
        } else {
            ForkPlace::Worktree(args.worktree.clone().unwrap_or_else(|| {
                crate::runtime::default_worktree(&project.state_dir(), &fork_id)
            }))
        };
    let moved = runtime.block_on(async {
        let run = store.resolve(&args.run).await?;
        crate::runtime::fork(
            store.as_ref(),
            snapshots.as_ref(),
            &run,
            &args.at,
            &fork_id,
            &place,
        )
        .await
    });
    let moved = match moved {
        Ok(moved) => moved,
        Err(error) => return report(&project, error),
    };
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
