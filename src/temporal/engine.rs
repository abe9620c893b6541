//! What a worker knows: how to compile a run's workflow from the project's files, and
//! what its runs need around the plan (providers, subgraphs, environments, the redactor),
//! compiled once per workflow and kept.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::wire::WorkflowRef;
use crate::lower::Plan;
use crate::providers::{Environment, Redactor};
use crate::runtime::{Providers, SubgraphLoader};
use crate::source::Files;

/// A compiled workflow with what its runs need on this worker.
pub struct Prepared {
    /// The plan.
    pub plan: Arc<Plan>,
    /// The hash of what was compiled (compared with [`WorkflowRef::hash`]).
    pub hash: String,
    /// The providers, by declaration name (built from this worker's environment).
    pub providers: Providers,
    /// Subgraph plans.
    pub subgraphs: Arc<dyn SubgraphLoader>,
    /// Variables templates may read.
    pub env: HashMap<String, String>,
    /// The environment of commands: this worker's, without provider keys.
    pub tool_env: Environment,
    /// Secrets to keep out of everything written (and out of Temporal's history).
    pub redactor: Redactor,
    /// Files the run reads (schemas).
    pub files: Arc<dyn Files + Send + Sync>,
    /// The workflow file's directory.
    pub base_dir: PathBuf,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("hash", &self.hash)
            .field("base_dir", &self.base_dir)
            .finish_non_exhaustive()
    }
}

/// Compiles a run's workflow (the CLI's loader: the same as `atomic run`'s).
pub trait Prepare: Send + Sync {
    /// The workflow `workflow` names, compiled, with its surroundings.
    ///
    /// # Errors
    /// A message saying why it cannot run here (unreadable, has errors).
    fn prepare(&self, workflow: &WorkflowRef) -> Result<Prepared, String>;
}

/// A worker's workflows, compiled once each.
pub struct Engine {
    prepare: Box<dyn Prepare>,
    compiled: Mutex<HashMap<WorkflowRef, Arc<Prepared>>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine compiling with `prepare`.
    #[must_use]
    pub fn new(prepare: Box<dyn Prepare>) -> Self {
        Self {
            prepare,
            compiled: Mutex::default(),
        }
    }

    /// The workflow `workflow` names, compiled (once), refusing one whose file changed
    /// since the run started: a worker must not run another workflow under its id.
    ///
    /// # Errors
    /// Why it cannot run here.
    pub fn prepared(&self, workflow: &WorkflowRef) -> Result<Arc<Prepared>, String> {
        let mut compiled = self
            .compiled
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(found) = compiled.get(workflow) {
            return Ok(Arc::clone(found));
        }
        let prepared = self.prepare.prepare(workflow)?;
        if prepared.hash != workflow.hash {
            return Err(format!(
                "`{}` changed since the run started (this worker compiles another version of it): restore the file the run started with, or start a new run",
                workflow.path
            ));
        }
        let prepared = Arc::new(prepared);
        compiled.insert(workflow.clone(), Arc::clone(&prepared));
        Ok(prepared)
    }
}
