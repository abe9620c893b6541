//! [`RunContext`]: everything a run gets from outside — providers, the checkpoint store,
//! the environment, files, subgraph plans, the event sink and the cancellation token. The
//! runtime reads no process environment and no disk except through this.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{RunSink, StreamModes};
use crate::lower::Plan;
use crate::providers::Provider;
use crate::source::Files;
use crate::store::{MemoryStore, Store};
use crate::workspace::Workspace;

/// Finds the plan of a `subgraph`'s workflow. The CLI implements it with `compile()`;
/// tests with a map.
pub trait SubgraphLoader: Send + Sync {
    /// The compiled plan of the workflow at `path` (already resolved against the calling
    /// file), or why it cannot be had.
    ///
    /// # Errors
    /// A message naming the file.
    fn load(&self, path: &Path) -> Result<Arc<Plan>, String>;
}

/// The providers of a run, by `provider "<name>"` declaration.
#[derive(Clone, Default)]
pub struct Providers {
    by_name: HashMap<String, Arc<dyn Provider>>,
}

impl std::fmt::Debug for Providers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.by_name.keys().collect();
        names.sort();
        f.debug_struct("Providers").field("names", &names).finish()
    }
}

impl Providers {
    /// No providers.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the provider declared as `name`.
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, provider: Arc<dyn Provider>) -> Self {
        self.by_name.insert(name.into(), provider);
        self
    }

    /// The provider declared as `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Provider>> {
        self.by_name.get(name)
    }

    /// Every provider replaced by what `wrap` makes of it (given its declaration's name).
    #[must_use]
    pub fn map(
        mut self,
        mut wrap: impl FnMut(&str, Arc<dyn Provider>) -> Arc<dyn Provider>,
    ) -> Self {
        for (name, provider) in &mut self.by_name {
            *provider = wrap(name, Arc::clone(provider));
        }
        self
    }

    /// How many there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

/// What a run needs from its surroundings.
#[derive(Clone)]
pub struct RunContext {
    /// Where steps are committed.
    pub store: Arc<dyn Store>,
    /// Providers by declaration name.
    pub providers: Providers,
    /// Where events go (none: nobody listens).
    pub sink: Option<Arc<dyn RunSink>>,
    /// Which events the sink wants.
    pub stream: StreamModes,
    /// Whether events are kept in the store's run log.
    pub log_events: bool,
    /// Environment values; templates see only the workflow's declared `env` names.
    pub env: HashMap<String, String>,
    /// The whole environment of tool nodes and hooks (atomic's without provider keys);
    /// a tool's own `env` children are added to it. Empty by default: the runtime never
    /// hands its own process environment on.
    pub tool_env: crate::providers::Environment,
    /// Files the run reads (JSON Schemas).
    pub files: Arc<dyn Files + Send + Sync>,
    /// The workflow file's directory: schema and subgraph paths are relative to it.
    pub base_dir: PathBuf,
    /// Where tools and agents work (relative `cwd`s are relative to its root).
    pub workspace: Workspace,
    /// The project's default sandbox (`.atomic/config.kdl`), for workflows that declare
    /// none.
    pub sandbox: Option<Arc<crate::ir::Sandbox>>,
    /// The workflow file as given, for the run record.
    pub workflow_path: String,
    /// A hash of the workflow file's content, for the run record.
    pub workflow_hash: String,
    /// Plans of subgraphs.
    pub subgraphs: Option<Arc<dyn SubgraphLoader>>,
    /// Cancels the run (Ctrl-C): the step in flight is dropped, its children killed.
    pub cancel: CancellationToken,
    /// A dry run (`atomic run --dry-run`): agents and tools return canned results made
    /// from their outputs' declared types (no provider is called, no process starts) and
    /// waits answer themselves at once; templates, decisions and loops run for real.
    pub dry_run: bool,
    /// Where the run's effects happen: agent calls, commands, timers, the clock.
    pub executor: Arc<dyn super::Executor>,
}

impl std::fmt::Debug for RunContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunContext")
            .field("store", &self.store)
            .field("providers", &self.providers)
            .field("stream", &self.stream)
            .field("base_dir", &self.base_dir)
            .field("workspace", &self.workspace)
            .field("dry_run", &self.dry_run)
            .finish_non_exhaustive()
    }
}

/// Files that do not exist (a run without schemas needs none).
#[derive(Debug)]
struct NoFiles;

impl Files for NoFiles {
    fn read(&self, _path: &Path) -> Result<String, crate::source::ReadError> {
        Err(crate::source::ReadError::NotFound)
    }

    fn list(&self, _dir: &Path) -> Vec<std::path::PathBuf> {
        Vec::new()
    }
}

impl RunContext {
    /// A context over `store`, with no providers, events, environment or files, working
    /// in `.`.
    #[must_use]
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self {
            store,
            providers: Providers::new(),
            sink: None,
            stream: StreamModes::default(),
            log_events: true,
            env: HashMap::new(),
            tool_env: crate::providers::Environment::default(),
            files: Arc::new(NoFiles),
            base_dir: PathBuf::from("."),
            workspace: Workspace::new("."),
            sandbox: None,
            workflow_path: String::new(),
            workflow_hash: String::new(),
            subgraphs: None,
            cancel: CancellationToken::new(),
            dry_run: false,
            executor: Arc::new(super::LocalExecutor::default()),
        }
    }

    /// A context over a fresh [`MemoryStore`].
    #[must_use]
    pub fn in_memory() -> Self {
        Self::new(Arc::new(MemoryStore::new()))
    }
}
