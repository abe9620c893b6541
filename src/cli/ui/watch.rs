//! What both faces of `atomic ui` read: where the runs are (the project's store, or with
//! `--temporal` a Temporal server), its runs, and each run's view with the graph of the
//! workflow it ran (compiled from the project's files once per workflow file). A run's
//! view is kept between reads ([`Follow`]), so reading it again reads only what is new.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::cli::Exit;
use crate::cli::args::{DurabilityArg, UiArgs};
use crate::cli::disk::Disk;
use crate::cli::execute::store;
use crate::cli::project::Project;
use crate::compile;
use crate::lower::{Outline, outline};
use crate::source::Sources;
use crate::store::{RunId, RunRecord, StoreError, Timestamp};
use crate::view::{Follow, RunSource, RunView, StoreSource};

/// Graphs by workflow file and hash.
type Outlines = HashMap<(String, String), Arc<Outline>>;

/// How many runs' views are kept (the least recently read goes first).
const FOLLOWED: usize = 32;

/// The views kept, with when each was last read.
type Followed = HashMap<RunId, (Arc<tokio::sync::Mutex<Follow>>, u64)>;

/// Runs' costs, with the update of the run each was read at.
type Costs = HashMap<RunId, (Timestamp, Option<f64>)>;

/// Where the runs are read from.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Kept {
    /// The project's store.
    Store,
    /// A Temporal server.
    #[cfg(feature = "temporal")]
    Temporal {
        /// As people name it.
        name: String,
        /// The flags that send a command to its runs (`--temporal ADDRESS …`).
        flags: Vec<String>,
    },
}

/// The runs of one project.
#[derive(Clone)]
pub(crate) struct Watch {
    project: Arc<Project>,
    source: Arc<dyn RunSource>,
    kept: Kept,
    /// Workflow file and hash → its graph.
    outlines: Arc<Mutex<Outlines>>,
    /// The runs' views being followed, and a clock for which was read last.
    followed: Arc<Mutex<(Followed, u64)>>,
    /// What each listed run cost, so a runs list does not fold every run each time.
    costs: Arc<Mutex<Costs>>,
}

impl Watch {
    /// The runs `args` asks for: the current project's store (refused, said on stderr,
    /// when it has no runs yet), or with `--temporal` the runs on that server, connected
    /// to on `runtime` (the one the faces then read on: the connection's tasks live there).
    ///
    /// # Errors
    /// The exit code, the reason already printed.
    pub(crate) fn open(args: &UiArgs, runtime: &tokio::runtime::Runtime) -> Result<Self, Exit> {
        let project = Project::discover();
        if crate::cli::temporal::wanted(&args.temporal) {
            return Self::open_temporal(project, args, runtime);
        }
        let store = store::open_for_run(&project, DurabilityArg::Normal)?;
        Ok(Self::over(
            project,
            Arc::new(StoreSource::new(store)),
            Kept::Store,
        ))
    }

    /// The runs of `project`'s store, for a face that starts runs itself (`atomic chat`):
    /// `None` while the project has no store yet.
    ///
    /// # Errors
    /// The store cannot be opened.
    pub(crate) fn of_project(project: Project) -> Result<Option<Self>, StoreError> {
        let Some(store) = store::open_existing(&project, DurabilityArg::Normal)? else {
            return Ok(None);
        };
        Ok(Some(Self::over(
            project,
            Arc::new(StoreSource::new(store)),
            Kept::Store,
        )))
    }

    /// The runs on the Temporal server `args` names (resolved as `atomic runs --temporal`
    /// resolves it); the actions go there too.
    #[cfg(feature = "temporal")]
    fn open_temporal(
        project: Project,
        args: &UiArgs,
        runtime: &tokio::runtime::Runtime,
    ) -> Result<Self, Exit> {
        use super::temporal::{Place, TemporalSource};
        let place = Place::resolve(&project, &args.temporal);
        let source = runtime
            .block_on(TemporalSource::connect(place.clone()))
            .map_err(|message| {
                eprintln!("error: {message}");
                Exit::Fatal
            })?;
        let kept = Kept::Temporal {
            name: place.describe(),
            flags: place.flags(),
        };
        Ok(Self::over(project, Arc::new(source), kept))
    }

    /// This build has no Temporal client: says how to get one.
    #[cfg(not(feature = "temporal"))]
    fn open_temporal(_: Project, _: &UiArgs, _: &tokio::runtime::Runtime) -> Result<Self, Exit> {
        Err(crate::cli::temporal::unavailable())
    }

    fn over(project: Project, source: Arc<dyn RunSource>, kept: Kept) -> Self {
        Self {
            project: Arc::new(project),
            source,
            kept,
            outlines: Arc::default(),
            followed: Arc::default(),
            costs: Arc::default(),
        }
    }

    /// What `record`'s run cost (where priced), read again only when the run changed.
    pub(crate) async fn cost(&self, record: &RunRecord) -> Option<f64> {
        if let Some((at, cost)) = self.costs().get(&record.id)
            && *at == record.updated_at
        {
            return *cost;
        }
        let cost = self
            .read(&record.id, |view, _| view.cost_usd)
            .await
            .ok()
            .flatten();
        self.costs()
            .insert(record.id.clone(), (record.updated_at, cost));
        cost
    }

    /// What `run` cost when it was last read, without reading it.
    pub(crate) fn known_cost(&self, run: &RunId) -> Option<f64> {
        self.costs().get(run).and_then(|(_, cost)| *cost)
    }

    fn costs(&self) -> std::sync::MutexGuard<'_, Costs> {
        self.costs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Where the runs come from, when it is not the project's store.
    pub(crate) fn elsewhere(&self) -> Option<&str> {
        match &self.kept {
            Kept::Store => None,
            #[cfg(feature = "temporal")]
            Kept::Temporal { name, .. } => Some(name),
        }
    }

    /// Where a person's actions on these runs go.
    pub(crate) fn actions(&self) -> super::actions::Actions {
        super::actions::Actions {
            project: self.project.root.clone(),
            flags: self.command_flags().to_vec(),
        }
    }

    /// The flags a command about one of these runs needs after the run id (none for the
    /// project's store).
    pub(crate) fn command_flags(&self) -> &[String] {
        match &self.kept {
            Kept::Store => &[],
            #[cfg(feature = "temporal")]
            Kept::Temporal { flags, .. } => flags,
        }
    }

    /// Reports a failure to read the runs (where, what to do) and gives the exit code.
    pub(crate) fn report(&self, error: StoreError) -> Exit {
        match self.kept {
            Kept::Store => store::report(&self.project, error),
            #[cfg(feature = "temporal")]
            Kept::Temporal { .. } => match error {
                StoreError::NotFound(_) | StoreError::Ambiguous { .. } => {
                    eprintln!("error: {error}");
                    Exit::Problems
                }
                other => {
                    eprintln!("error: {other}");
                    Exit::Fatal
                }
            },
        }
    }

    /// The newest runs, newest first.
    ///
    /// # Errors
    /// The runs cannot be read.
    pub(crate) async fn runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        self.source.runs(limit).await
    }

    /// The run `prefix` names, or the newest when none is given.
    ///
    /// # Errors
    /// No such run (or no run at all), or the store cannot be read.
    pub(crate) async fn resolve(&self, prefix: Option<&str>) -> Result<RunId, StoreError> {
        match prefix {
            Some(prefix) => self.source.resolve(prefix).await,
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
    /// The runs cannot be read, or has no such run.
    pub(crate) async fn graph(&self, run: &RunId) -> Result<Arc<Outline>, StoreError> {
        let record = self.source.record(run).await?;
        Ok(self.outline(&record))
    }

    /// The view of `run` now.
    ///
    /// # Errors
    /// The runs cannot be read, or has no such run.
    pub(crate) async fn view(&self, run: &RunId) -> Result<RunView, StoreError> {
        self.read(run, |view, _| view.clone()).await
    }

    /// Brings `run`'s view up to date (reading only what was logged since it was last read)
    /// and gives it to `read` with its version, which goes up whenever the view changed.
    ///
    /// # Errors
    /// The runs cannot be read, or has no such run.
    pub(crate) async fn read<T>(
        &self,
        run: &RunId,
        read: impl FnOnce(&RunView, u64) -> T,
    ) -> Result<T, StoreError> {
        let follow = match self.followed(run) {
            Some(follow) => follow,
            None => {
                let record = self.source.record(run).await?;
                let outline = self.outline(&record);
                self.keep(run, Follow::new(run, &outline))
            }
        };
        let mut follow = follow.lock().await;
        follow.refresh(self.source.as_ref()).await?;
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
