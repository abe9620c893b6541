//! A workflow started from the chat (`/ralph "build the parser"`): run as `atomic run` by
//! this binary, a child in its own process group, so it obeys the same checks, store and
//! locks as from a shell; followed through the project's store the way `atomic ui` follows
//! a run, drawn with its view, and its waits answered from the chat (`atomic resume
//! --answer`, as `atomic ui` answers them). The chat ends a run it started that is still
//! going when the chat quits: it is cancelled, and `atomic resume` can take it up again.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::cli::project::Project;
use crate::cli::ui::Watch;
use crate::cli::ui::actions::Actions;
use crate::view::{RunPhase, RunView};

/// How often a followed run's view is read again.
const POLL: Duration = Duration::from_millis(200);
/// How long a started run may take to create the project's store before following it
/// gives up.
const STORE_WAIT: Duration = Duration::from_secs(10);
/// The most of a failed start's stderr kept for the message.
const STDERR_KEPT: usize = 8 * 1024;

/// What the chat hears about the run it started.
#[derive(Debug)]
pub(crate) enum RunUpdate {
    /// The run has its id.
    Started {
        /// Its id.
        run_id: String,
    },
    /// The run as it stands now.
    View(Box<RunView>),
    /// It did not start, or could not be followed: why.
    Failed(String),
}

/// The run the chat started, if any, and where its updates come in.
pub(crate) struct Runs {
    project: Project,
    runtime: tokio::runtime::Handle,
    sender: mpsc::Sender<RunUpdate>,
    updates: mpsc::Receiver<RunUpdate>,
    live: Option<Live>,
}

/// The run being followed.
struct Live {
    workflow: String,
    child: Child,
    run_id: Option<String>,
    /// The latest view read.
    view: Option<RunView>,
}

impl Runs {
    /// Nothing started yet, in `project`.
    pub(crate) fn new(project: Project, runtime: tokio::runtime::Handle) -> Self {
        let (sender, updates) = mpsc::channel();
        Self {
            project,
            runtime,
            sender,
            updates,
            live: None,
        }
    }

    /// Whether a run started from the chat has not ended yet.
    pub(crate) fn is_live(&self) -> bool {
        self.live.as_ref().is_some_and(|live| {
            live.view
                .as_ref()
                .is_none_or(|view| matches!(view.phase, RunPhase::Running | RunPhase::Paused))
        })
    }

    /// The latest view of the run being followed.
    pub(crate) fn view(&self) -> Option<&RunView> {
        self.live.as_ref().and_then(|live| live.view.as_ref())
    }

    /// The workflow being run.
    pub(crate) fn workflow(&self) -> Option<&str> {
        self.live.as_ref().map(|live| live.workflow.as_str())
    }

    /// Starts `workflow` (the file at `path`) with `inputs`.
    ///
    /// # Errors
    /// Another run from the chat has not ended, or the child could not be started.
    pub(crate) fn start(
        &mut self,
        workflow: &str,
        path: &std::path::Path,
        inputs: &[(String, String)],
    ) -> Result<(), String> {
        if self.is_live() {
            return Err(format!(
                "`{}` is still running; answer or wait for it before starting another",
                self.workflow().unwrap_or_default()
            ));
        }
        let exe = std::env::current_exe()
            .map_err(|error| format!("could not find the atomic binary: {error}"))?;
        let mut command = Command::new(exe);
        command.arg("run").arg(path);
        for (name, value) in inputs {
            command.arg("--input").arg(format!("{name}={value}"));
        }
        command
            .args(["--stream", "events"])
            .current_dir(&self.project.root)
            .env_remove("NO_COLOR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own group: the chat's terminal keys never reach it, and ending it ends
        // everything it started.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .spawn()
            .map_err(|error| format!("could not start `atomic run`: {error}"))?;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let sender = self.sender.clone();
        let (project, runtime) = (self.project.clone(), self.runtime.clone());
        std::thread::Builder::new()
            .name("atomic-chat-run".to_owned())
            .spawn(move || follow_output(stdout, stderr, &sender, project, &runtime))
            .map_err(|error| format!("could not follow the run: {error}"))?;
        self.live = Some(Live {
            workflow: workflow.to_owned(),
            child,
            run_id: None,
            view: None,
        });
        Ok(())
    }

    /// The updates that came in since the last call, applied to the run followed.
    pub(crate) fn updates(&mut self) -> Vec<RunUpdate> {
        let mut updates = Vec::new();
        while let Ok(update) = self.updates.try_recv() {
            if let Some(live) = &mut self.live {
                match &update {
                    RunUpdate::Started { run_id } => live.run_id = Some(run_id.clone()),
                    RunUpdate::View(view) => live.view = Some((**view).clone()),
                    RunUpdate::Failed(_) => {}
                }
            }
            updates.push(update);
        }
        if let Some(live) = &mut self.live {
            // The first child exits at a wait or the end; it is reaped, not left a zombie.
            let _ = live.child.try_wait();
        }
        updates
    }

    /// Forgets a run that failed to start.
    pub(crate) fn drop_failed(&mut self) {
        if self.live.as_ref().is_some_and(|live| live.run_id.is_none()) {
            self.live = None;
        }
    }

    /// Answers the run's wait `wait` with `answer` (the run resumes in the background).
    ///
    /// # Errors
    /// No run waits, or `atomic resume` refused the answer (its message).
    pub(crate) fn answer(&self, wait: &str, answer: &str) -> Result<(), String> {
        let run = self
            .live
            .as_ref()
            .and_then(|live| live.run_id.as_deref())
            .ok_or_else(|| "no workflow run is waiting".to_owned())?;
        self.actions()
            .answer(run, Some(wait), answer)
            .map_err(|error| error.to_string())
    }

    /// Cancels the run when it is still going (the chat quits).
    pub(crate) fn cancel_live(&mut self) {
        if !self.is_live() {
            return;
        }
        let actions = self.actions();
        let Some(live) = &mut self.live else {
            return;
        };
        match &live.run_id {
            // Cancelled through the store, as `atomic cancel` does: the run stops at its
            // next step, checkpointed, and a paused one is marked cancelled.
            Some(run) => {
                let _ = actions.cancel(run);
            }
            None => {
                let _ = live.child.kill();
            }
        }
        let _ = live.child.try_wait();
    }

    fn actions(&self) -> Actions {
        Actions {
            project: self.project.root.clone(),
            flags: Vec::new(),
        }
    }
}

/// Reads the run's event stream for its id, then follows its view in the store until it
/// ends or the chat stops listening; reports a start that failed with its stderr.
fn follow_output(
    stdout: Option<std::process::ChildStdout>,
    stderr: Option<std::process::ChildStderr>,
    sender: &mpsc::Sender<RunUpdate>,
    project: Project,
    runtime: &tokio::runtime::Handle,
) {
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(stderr) = stderr {
            let _ = stderr.take(STDERR_KEPT as u64).read_to_string(&mut text);
        }
        text
    });
    let mut run_id = None;
    if let Some(stdout) = stdout {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if run_id.is_none()
                && let Ok(event) = serde_json::from_str::<serde_json::Value>(&line)
                && event.get("type").and_then(|t| t.as_str()) == Some("run-started")
                && let Some(id) = event.get("run_id").and_then(|id| id.as_str())
            {
                run_id = Some(id.to_owned());
                let _ = sender.send(RunUpdate::Started {
                    run_id: id.to_owned(),
                });
                let (sender, project, id) = (sender.clone(), project.clone(), id.to_owned());
                runtime.spawn(async move { follow_view(project, &id, &sender).await });
            }
            // The rest is drained so the run never blocks on a full pipe.
        }
    }
    let stderr = errors.join().unwrap_or_default();
    if run_id.is_none() {
        let message = stderr.trim();
        let _ = sender.send(RunUpdate::Failed(if message.is_empty() {
            "the workflow did not start".to_owned()
        } else {
            message.to_owned()
        }));
    }
}

/// Sends `run`'s view each time it is read, until it ends or nobody listens.
async fn follow_view(project: Project, run: &str, sender: &mpsc::Sender<RunUpdate>) {
    let deadline = tokio::time::Instant::now() + STORE_WAIT;
    let watch = loop {
        match Watch::of_project(project.clone()) {
            Ok(Some(watch)) => break watch,
            Ok(None) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(POLL).await;
            }
            Ok(None) => {
                let _ = sender.send(RunUpdate::Failed(
                    "the run started but the project's store did not appear".to_owned(),
                ));
                return;
            }
            Err(error) => {
                let _ = sender.send(RunUpdate::Failed(format!(
                    "could not read the project's runs: {error}"
                )));
                return;
            }
        }
    };
    let id = match watch.resolve(Some(run)).await {
        Ok(id) => id,
        Err(error) => {
            let _ = sender.send(RunUpdate::Failed(format!(
                "could not find run {run}: {error}"
            )));
            return;
        }
    };
    let mut last = None;
    loop {
        match watch
            .read(&id, |view, version| (version, view.clone()))
            .await
        {
            Ok((version, view)) => {
                let ended = !matches!(view.phase, RunPhase::Running | RunPhase::Paused);
                if last != Some(version) && sender.send(RunUpdate::View(Box::new(view))).is_err() {
                    return;
                }
                last = Some(version);
                if ended {
                    return;
                }
            }
            Err(error) => {
                let _ = sender.send(RunUpdate::Failed(format!(
                    "could not read run {run}: {error}"
                )));
                return;
            }
        }
        tokio::time::sleep(POLL).await;
    }
}

/// A run's outcome in a line or a few: its error, or its state's fields.
pub(crate) fn outcome(view: &RunView) -> Option<String> {
    match view.phase {
        RunPhase::Running | RunPhase::Paused => None,
        RunPhase::Failed => Some(view.error.clone().unwrap_or_else(|| "failed".to_owned())),
        RunPhase::Cancelled => Some("cancelled".to_owned()),
        RunPhase::Completed => Some(
            view.state
                .iter()
                .map(|(name, value)| {
                    let value = match value {
                        serde_json::Value::String(text) => text.clone(),
                        other => other.to_string(),
                    };
                    format!("{name}: {value}")
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    }
}

/// Where `path` (a discovered workflow's file) is run from: built-ins by name.
pub(crate) fn runnable(name: &str, path: &std::path::Path) -> PathBuf {
    if path.starts_with("<built-in>") {
        PathBuf::from(name)
    } else {
        path.to_path_buf()
    }
}
