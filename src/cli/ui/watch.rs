//! What both faces of `atomic ui` read: the project's store, its runs, and each run's
//! view with the graph of the workflow it ran (compiled once per workflow file).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::cli::Exit;
use crate::cli::args::DurabilityArg;
use crate::cli::disk::Disk;
use crate::cli::execute::store;
use crate::cli::project::Project;
use crate::compile;
use crate::lower::{Outline, outline};
use crate::source::Sources;
use crate::store::{RunFilter, RunId, RunRecord, Store, StoreError};
use crate::view::RunView;

/// Graphs by workflow file and hash.
type Outlines = HashMap<(String, String), Arc<Outline>>;

/// The runs of one project.
#[derive(Clone)]
pub(crate) struct Watch {
    project: Arc<Project>,
    store: Arc<dyn Store>,
    /// Workflow file and hash → its graph.
    outlines: Arc<Mutex<Outlines>>,
}

impl Watch {
    /// The current project's store; refused (said on stderr) when it has no runs yet.
    ///
    /// # Errors
    /// The exit code, the reason already printed.
    pub(crate) fn open() -> Result<Self, Exit> {
        let project = Project::discover();
        let store = store::open_for_run(&project, DurabilityArg::Normal)?;
        Ok(Self {
            project: Arc::new(project),
            store,
            outlines: Arc::default(),
        })
    }

    /// The project.
    pub(crate) fn project(&self) -> &Project {
        &self.project
    }

    /// Reports a store failure (file named, what to do) and gives the exit code.
    pub(crate) fn report(&self, error: StoreError) -> Exit {
        store::report(&self.project, error)
    }

    /// The newest runs, newest first.
    ///
    /// # Errors
    /// The store cannot be read.
    pub(crate) async fn runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        self.store
            .list_runs(&RunFilter {
                limit: Some(limit),
                ..RunFilter::default()
            })
            .await
    }

    /// The run `prefix` names, or the newest when none is given.
    ///
    /// # Errors
    /// No such run (or no run at all), or the store cannot be read.
    pub(crate) async fn resolve(&self, prefix: Option<&str>) -> Result<RunId, StoreError> {
        match prefix {
            Some(prefix) => self.store.resolve(prefix).await,
            None => self
                .runs(1)
                .await?
                .into_iter()
                .next()
                .map(|run| run.id)
                .ok_or_else(|| StoreError::NotFound("no runs yet".to_owned())),
        }
    }

    /// The graph of the workflow `run` ran.
    ///
    /// # Errors
    /// The store cannot be read, or has no such run.
    pub(crate) async fn graph(&self, run: &RunId) -> Result<Arc<Outline>, StoreError> {
        let record = self.store.run(run).await?;
        Ok(self.outline(&record))
    }

    /// The view of `run` now.
    ///
    /// # Errors
    /// The store cannot be read, or has no such run.
    pub(crate) async fn view(&self, run: &RunId) -> Result<RunView, StoreError> {
        let record = self.store.run(run).await?;
        let outline = self.outline(&record);
        crate::view::load(self.store.as_ref(), run, &outline).await
    }

    /// The graph of the workflow `run` ran, compiled from its file (once per file and hash
    /// the run recorded); empty when the file no longer compiles (the steps then appear as
    /// the events name them).
    fn outline(&self, run: &RunRecord) -> Arc<Outline> {
        let key = (run.path.clone(), run.hash.clone());
        let mut outlines = self
            .outlines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        outlines
            .entry(key)
            .or_insert_with(|| Arc::new(self.compile(Path::new(&run.path))))
            .clone()
    }

    fn compile(&self, path: &Path) -> Outline {
        let mut sources = Sources::new();
        let (config, _) = self.project.config(&mut sources);
        compile::compile_path(&mut sources, path, &Disk, &config)
            .ok()
            .and_then(|compiled| compiled.plan.as_ref().map(outline))
            .unwrap_or_else(|| Outline {
                steps: Vec::new(),
                edges: Vec::new(),
            })
    }
}
