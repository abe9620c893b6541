//! What a person does from `atomic ui`: answer a wait, cancel a run. Each is the command
//! they would type (`atomic resume RUN --answer …`, `atomic cancel RUN`), run as a child of
//! this binary in its own process group, so a resumed run goes on after the view closes
//! and obeys the same checks, store and locks as from a shell. For runs on Temporal the
//! command carries the same `--temporal ADDRESS --namespace … --task-queue …` the view
//! reads them with ([`Actions::flags`]).

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long an action waits to see whether its command refused at once (a wrong answer,
/// a run that ended): longer ones go on in the background.
const REFUSAL_WINDOW: Duration = Duration::from_secs(3);

/// Where actions go: the project they run in, and the flags that send them to where the
/// viewed runs are (none: the project's store; `--temporal ADDRESS …` for runs on Temporal).
#[derive(Clone, Debug)]
pub(crate) struct Actions {
    /// The project's root.
    pub(crate) project: PathBuf,
    /// Put after the run id of every command.
    pub(crate) flags: Vec<String>,
}

/// Why an action did not happen.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ActionError {
    /// Its command could not be started.
    #[error("could not start `atomic {action}`: {source}")]
    Start {
        /// `resume` or `cancel`.
        action: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// Its command refused, saying why.
    #[error("{0}")]
    Refused(String),
}

impl Actions {
    /// Answers the wait `wait` (or the run's only one) of `run` with `answer`: the run
    /// resumes in the background.
    ///
    /// # Errors
    /// The child could not be started, or its command refused.
    pub(crate) fn answer(
        &self,
        run: &str,
        wait: Option<&str>,
        answer: &str,
    ) -> Result<(), ActionError> {
        let mut args = vec!["resume", run, "--answer", answer, "--quiet"];
        if let Some(wait) = wait {
            args.extend(["--wait", wait]);
        }
        self.spawn("resume", &args)
    }

    /// Resumes `run` (a crashed or cancelled one) in the background.
    ///
    /// # Errors
    /// The child could not be started, or its command refused.
    pub(crate) fn resume(&self, run: &str) -> Result<(), ActionError> {
        self.spawn("resume", &["resume", run, "--quiet"])
    }

    /// Cancels `run` (its owner stops as on Ctrl-C).
    ///
    /// # Errors
    /// The child could not be started, or its command refused.
    pub(crate) fn cancel(&self, run: &str) -> Result<(), ActionError> {
        self.spawn("cancel", &["cancel", run])
    }

    fn spawn(&self, action: &'static str, args: &[&str]) -> Result<(), ActionError> {
        spawn(&self.project, &self.flags, action, args)
    }
}

fn spawn(
    project: &std::path::Path,
    flags: &[String],
    action: &'static str,
    args: &[&str],
) -> Result<(), ActionError> {
    let failed = |source| ActionError::Start { action, source };
    let exe = std::env::current_exe().map_err(failed)?;
    let mut command = Command::new(exe);
    command
        .args(args)
        .args(flags)
        .current_dir(project)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().map_err(failed)?;
    let stderr = child.stderr.take();
    let (sender, ended) = mpsc::channel();
    // Reaped in the background: the view does not wait for a resumed run to end.
    std::thread::spawn(move || {
        let mut said = String::new();
        if let Some(mut stderr) = stderr {
            let _ = stderr.read_to_string(&mut said);
        }
        let status = child.wait();
        let _ = sender.send((status, said));
    });
    match ended.recv_timeout(REFUSAL_WINDOW) {
        Ok((Ok(status), said)) if !status.success() => Err(ActionError::Refused(
            said.lines()
                .filter(|line| !line.trim().is_empty())
                .collect::<Vec<_>>()
                .join("\n"),
        )),
        _ => Ok(()),
    }
}
