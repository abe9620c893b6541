//! Where runs on Temporal are: the flags, then `ATOMIC_TEMPORAL`, then the project's
//! `temporal "…"` in `.atomic/config.kdl`, then Temporal's defaults.

use crate::cli::args::TemporalArgs;
use crate::cli::project::Project;

/// The default server (Temporal's own default port).
const DEFAULT_ADDRESS: &str = "127.0.0.1:7233";
/// The default namespace.
const DEFAULT_NAMESPACE: &str = "default";
/// The default task queue.
const DEFAULT_TASK_QUEUE: &str = "atomic";

/// Where runs on Temporal are, resolved: the flags, then `ATOMIC_TEMPORAL`, then the
/// project's `temporal "…"`, then the defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::cli) struct Target {
    /// `HOST:PORT`.
    pub(in crate::cli) address: String,
    /// The namespace.
    pub(in crate::cli) namespace: String,
    /// The task queue.
    pub(in crate::cli) task_queue: String,
}

impl Target {
    /// Resolves `args` in `project`.
    pub(in crate::cli) fn resolve(project: &Project, args: &TemporalArgs) -> Self {
        let mut sources = crate::source::Sources::new();
        let (config, _) = project.config(&mut sources);
        let configured = config.temporal().cloned().unwrap_or_default();
        let from_env = std::env::var("ATOMIC_TEMPORAL")
            .ok()
            .filter(|value| !value.trim().is_empty());
        let address = args
            .temporal
            .clone()
            .filter(|value| !value.trim().is_empty())
            .or(from_env)
            .or(configured.address)
            .unwrap_or_else(|| DEFAULT_ADDRESS.to_owned());
        Self {
            address,
            namespace: args
                .namespace
                .clone()
                .or(configured.namespace)
                .unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned()),
            task_queue: args
                .task_queue
                .clone()
                .or(configured.task_queue)
                .unwrap_or_else(|| DEFAULT_TASK_QUEUE.to_owned()),
        }
    }

    /// What commands about a run on it need after the run id.
    pub(in crate::cli) fn via(&self) -> String {
        let mut via = format!(" --temporal {}", self.address);
        if self.namespace != DEFAULT_NAMESPACE {
            via.push_str(&format!(" --namespace {}", self.namespace));
        }
        if self.task_queue != DEFAULT_TASK_QUEUE {
            via.push_str(&format!(" --task-queue {}", self.task_queue));
        }
        via
    }

    /// The flags that send `atomic resume`/`atomic cancel` to these runs.
    pub(in crate::cli) fn flags(&self) -> Vec<String> {
        vec![
            "--temporal".to_owned(),
            self.address.clone(),
            "--namespace".to_owned(),
            self.namespace.clone(),
            "--task-queue".to_owned(),
            self.task_queue.clone(),
        ]
    }

    /// How people name it: `Temporal at 127.0.0.1:7233, namespace default, task queue atomic`.
    pub(in crate::cli) fn describe(&self) -> String {
        format!(
            "Temporal at {}, namespace {}, task queue {}",
            self.address, self.namespace, self.task_queue
        )
    }

    /// The command that starts a worker for these runs.
    pub(in crate::cli) fn worker_command(&self) -> String {
        format!(
            "atomic worker --temporal {} --namespace {} --task-queue {}",
            self.address, self.namespace, self.task_queue
        )
    }
}
