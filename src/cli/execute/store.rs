//! Opening the checkpoint store a command uses: the project's `.atomic/atomic.db`, or
//! memory (latest checkpoints only) for `--store memory` and dry runs.

use std::sync::Arc;

use crate::cli::Exit;
use crate::cli::args::{DurabilityArg, StoreKind};
use crate::cli::project::Project;
use crate::store::{Durability, LatestStore, SqliteOptions, SqliteStore, Store, StoreError};

/// The store of `kind` for `project`.
///
/// # Errors
/// The database cannot be created or opened, or is not a usable store.
pub(crate) fn open(
    project: &Project,
    kind: StoreKind,
    durability: DurabilityArg,
) -> Result<Arc<dyn Store>, StoreError> {
    match kind {
        StoreKind::Memory => Ok(Arc::new(LatestStore::new())),
        StoreKind::Sqlite => {
            let options = SqliteOptions {
                durability: match durability {
                    DurabilityArg::Normal => Durability::Process,
                    DurabilityArg::Full => Durability::Full,
                },
                ..SqliteOptions::default()
            };
            SqliteStore::open_project(&project.root, options)
                .map(|store| Arc::new(store) as Arc<dyn Store>)
        }
    }
}

/// Reports a store failure on stderr, naming the database file and what to do, and gives
/// the exit code: 3 when the store itself is at fault (damaged, unreadable, busy), 1 for a
/// run that is not there.
pub(crate) fn report(project: &Project, error: StoreError) -> Exit {
    let error = error.at(&crate::store::project_db_path(&project.root));
    eprintln!("error: {error}");
    match error {
        StoreError::NotFound(_) | StoreError::Ambiguous { .. } => Exit::Problems,
        _ => Exit::Fatal,
    }
}

/// The project's durable store, only if it exists already (`runs`, `resume`: nothing to
/// list or resume otherwise, and nothing is created in its place); `None` when there is
/// none yet.
///
/// # Errors
/// The database cannot be opened, or is not a usable store.
pub(crate) fn open_existing(
    project: &Project,
    durability: DurabilityArg,
) -> Result<Option<Arc<dyn Store>>, StoreError> {
    let path = crate::store::project_db_path(&project.root);
    if !path.exists() {
        return Ok(None);
    }
    open(project, StoreKind::Sqlite, durability).map(Some)
}

/// The project's store for a command about one run (`resume`, `cancel`): reported and
/// refused when there is none yet or it cannot be opened.
///
/// # Errors
/// The exit code, the reason already printed.
pub(crate) fn open_for_run(
    project: &Project,
    durability: DurabilityArg,
) -> Result<Arc<dyn Store>, Exit> {
    match open_existing(project, durability) {
        Ok(Some(store)) => Ok(store),
        Ok(None) => {
            eprintln!("error: {}", no_runs_yet(project));
            Err(Exit::Problems)
        }
        Err(error) => Err(report(project, error)),
    }
}

/// What `atomic runs` and `atomic resume` say when the project has no store yet.
pub(crate) fn no_runs_yet(project: &Project) -> String {
    format!(
        "no runs yet in this project (`{}` does not exist)",
        crate::store::project_db_path(&project.root).display()
    )
}
