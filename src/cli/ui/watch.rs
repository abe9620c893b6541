//! What both faces of `atomic ui` read: the project's store, its runs, and each run's
//! view with the graph of the workflow it ran (compiled once per workflow file). A run's
//! view is kept between reads ([`Follow`]), so reading it again reads only what is new.

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
use crate::view::{Follow, RunView};

/// Graphs by workflow file and hash.
type Outlines = HashMap<(String, String), Arc<Outline>>;

/// How many runs' views are kept (the least recently read goes first).
const FOLLOWED: usize = 32;

/// The views kept, with when each was last read.
type Followed = HashMap<RunId, (Arc<tokio::sync::Mutex<Follow>>, u64)>;

/// The runs of one project.
#[derive(Clone)]
pub(crate) struct Watch {
    project: Arc<Project>,
    store: Arc<dyn Store>,
    /// Workflow file and hash → its graph.
    outlines: Arc<Mutex<Outlines>>,
    /// The runs' views being followed, and a clock for which was read last.
    followed: Arc<Mutex<(Followed, u64)>>,
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
            followed: Arc::default(),
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
        self.read(run, |view, _| view.clone()).await
    }

    /// Brings `run`'s view up to date (reading only what was logged since it was last read)
    /// and gives it to `read` with its version, which goes up whenever the view changed.
    ///
    /// # Errors
    /// The store cannot be read, or has no such run.
    pub(crate) async fn read<T>(
        &self,
        run: &RunId,
        read: impl FnOnce(&RunView, u64) -> T,
    ) -> Result<T, StoreError> {
        let follow = match self.followed(run) {
            Some(follow) => follow,
            None => {
                let record = self.store.run(run).await?;
                let outline = self.outline(&record);
                self.keep(run, Follow::new(run, &outline))
            }
        };
        let mut follow = follow.lock().await;
        follow.refresh(self.store.as_ref()).await?;
        Ok(read(follow.view(), follow.version()))
    }

    /// The follower of `run`, if one is kept (marked as read now).
    fn followed(&self, run: &RunId) -> Option<Arc<tokio::sync::Mutex<Follow>>> {
        let mut guard = self
            .followed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (followed, clock) = &mut *guard;
        *clock += 1;
        let (follow, used) = followed.get_mut(run)?;
        *used = *clock;
        Some(Arc::clone(follow))
    }

    /// Keeps `follow` for `run` (or the one another reader kept first), dropping the least
    /// recently read when there are too many.
    fn keep(&self, run: &RunId, follow: Follow) -> Arc<tokio::sync::Mutex<Follow>> {
        let mut guard = self
            .followed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (followed, clock) = &mut *guard;
        *clock += 1;
        if !followed.contains_key(run) && followed.len() >= FOLLOWED {
            let oldest = followed
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(id, _)| id.clone());
            if let Some(oldest) = oldest {
                followed.remove(&oldest);
            }
        }
        let (follow, used) = followed
            .entry(run.clone())
            .or_insert_with(|| (Arc::new(tokio::sync::Mutex::new(follow)), 0));
        *used = *clock;
        Arc::clone(follow)
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
