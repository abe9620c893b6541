//! How a worker compiles a run's workflow: as `atomic run` does, in the project the worker
//! was started in (workers share the project's files), with the worker's own environment
//! for providers and commands.

use std::path::PathBuf;
use std::sync::Arc;

use crate::cli::disk::Disk;
use crate::cli::execute::{self, workflow};
use crate::cli::project::Project;
use crate::temporal::wire::WorkflowRef;
use crate::temporal::{Prepare, Prepared};

/// Compiles from the worker's project.
pub(super) struct FromProject;

impl Prepare for FromProject {
    fn prepare(&self, workflow_ref: &WorkflowRef) -> Result<Prepared, String> {
        let project = Project::discover().with_adapter(workflow_ref.adapter.clone());
        let path = PathBuf::from(&workflow_ref.path);
        // Its problems are printed to the worker's stderr by the loader.
        let loaded = workflow::load(&project, &path, false).map_err(|_| {
            format!(
                "`{}` cannot be compiled on this worker (its errors are in the worker's log)",
                workflow_ref.path
            )
        })?;
        let setup = execute::setup(&project, &loaded, true, None)?;
        Ok(Prepared {
            base_dir: loaded.dir(),
            hash: loaded.hash.clone(),
            plan: Arc::clone(&loaded.plan),
            providers: setup.providers,
            subgraphs: setup.loader,
            env: setup.env,
            tool_env: setup.tool_env,
            redactor: setup.redactor,
            files: Arc::new(Disk),
        })
    }
}
