//! Opening the checkpoint store a command uses: the project's `.atomic/atomic.db`, or
//! memory (latest checkpoints only) for `--store memory` and dry runs.

use std::sync::Arc;

use crate::cli::args::{DurabilityArg, StoreKind};
use crate::cli::project::Project;
use crate::store::{Durability, LatestStore, SqliteOptions, SqliteStore, Store};

/// The store of `kind` for `project`.
///
/// # Errors
/// The database cannot be created or opened (the message names the file).
pub(crate) fn open(
    project: &Project,
    kind: StoreKind,
    durability: DurabilityArg,
) -> Result<Arc<dyn Store>, String> {
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
                .map_err(|error| error.to_string())
        }
    }
}

/// The project's durable store, only if it exists already (`runs`, `resume`: nothing to
/// list or resume otherwise).
///
/// # Errors
/// No database yet, or it cannot be opened.
pub(crate) fn open_existing(
    project: &Project,
    durability: DurabilityArg,
) -> Result<Arc<dyn Store>, String> {
    let path = crate::store::project_db_path(&project.root);
    if !path.exists() {
        return Err(format!(
            "no runs yet in this project (`{}` does not exist)",
            path.display()
        ));
    }
    open(project, StoreKind::Sqlite, durability)
}
