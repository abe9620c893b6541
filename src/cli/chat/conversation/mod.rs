//! The conversation of `atomic chat`, without a terminal: [`Conversation::open`] builds
//! the agent the chat talks to (the way a run builds its providers) and starts an actor
//! task that owns it; the view gets a [`ChatHandle`] to send [`Command`]s and to draw the
//! shared [`Transcript`] whenever its change counter moves.
//!
//! A turn sends the prompt continuing the backend's session (or, for a backend that keeps
//! none, telling the conversation so far), folds each event of the reply into the
//! transcript as it streams, and saves the session in the project's store. Permission
//! requests are asked inline through the same path as `permission="ask"`: the call stops
//! at the request (`ProviderError::AwaitingPermission`), and the person's answer continues
//! the backend's session with the answered approval and the runtime's continuation
//! prompt. Claude Code's `AskUserQuestion` stops the call the same way and is shown as a
//! question; its answers continue the session, told plainly in the prompt and carried in
//! the tool's input should the agent ask again.
//!
//! `backend.rs` chooses and builds the provider, `sandbox.rs` confines each call,
//! `actor.rs` runs the turns, `board.rs` is the shared transcript, `question.rs` and
//! `history.rs` word what the agent is told, `saved.rs` keeps sessions in the store.

mod actor;
mod backend;
mod board;
mod error;
mod history;
mod question;
mod sandbox;
mod saved;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::runtime::Handle;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::cli::chat::transcript::{Entry, Transcript};
use crate::cli::project::Project;
use crate::providers::{Environment, PermissionAnswer, PriceTable, Redactor, ToolEnv};
use crate::source::Sources;

use actor::Actor;
use backend::{Backends, DEFAULT_ADAPTER, ProjectBackends, check_adapter, check_model};
use board::Board;
use sandbox::ChatSandbox;
use saved::Saving;

pub(crate) use error::ChatError;
// `list_sessions` serves `--resume` without a session, wired by the view.
#[allow(unused_imports)]
pub(crate) use saved::{SessionSummary, list_sessions};

/// What a chat starts with (`atomic chat [--provider] [--model] [--resume]`).
#[derive(Clone, Debug)]
pub(crate) struct Setup {
    /// The project: its root is where the agent works, its store keeps the session.
    pub(crate) project: Project,
    /// `--provider`: the adapter; else the project's `adapter`, else `claude-code` (a
    /// resumed session's own adapter when resuming).
    pub(crate) adapter: Option<String>,
    /// `--model`: the model; else the project's, else the adapter's default.
    pub(crate) model: Option<String>,
    /// `--resume PREFIX`: the saved session to continue (any unambiguous id prefix).
    pub(crate) resume: Option<String>,
}

/// What the view asks of the conversation.
#[derive(Clone, Debug)]
pub(crate) enum Command {
    /// The person sent a message: `shown` as typed, `told` what the agent is told (a slash
    /// command expanded; the same text otherwise). Sent while the agent works, it waits
    /// for the turn to end.
    Prompt {
        /// As typed.
        shown: String,
        /// As the agent is told it.
        told: String,
    },
    /// The answer to the pending permission request (`Deny` also dismisses a question).
    Permission(PermissionAnswer),
    /// The answers to the pending question, one per item (a multiple choice's labels
    /// joined by `, `; typed text as typed).
    Answer(Vec<String>),
    /// Esc: drop the agent's call (the session goes on), or leave a pending request
    /// unanswered.
    Interrupt,
    /// `/clear`: save this conversation and start a new one (a new backend session).
    Clear,
    /// `/compact`: compact the backend's session before the next message, where it can.
    Compact,
    /// `/model`: talk to this model from the next message on.
    Model(String),
    /// `/provider`: talk to this adapter from the next message on (a new backend session).
    Provider(String),
    /// An entry the view adds itself (a workflow run started from the chat).
    Note(Entry),
    /// A workflow run shown in the chat changed.
    UpdateRun {
        /// The run.
        run_id: String,
        /// Its status now.
        status: String,
        /// What it ended with, once it ended.
        outcome: Option<String>,
    },
}

/// The view's side of a conversation. Dropping it (or [`ChatHandle::close`]) ends the
/// actor, which drops any call in flight and saves the session.
#[derive(Debug)]
pub(crate) struct ChatHandle {
    transcript: Arc<Mutex<Transcript>>,
    changed: watch::Receiver<u64>,
    commands: mpsc::UnboundedSender<Command>,
    task: JoinHandle<()>,
    session_id: String,
}

impl ChatHandle {
    /// The transcript to draw (lock it briefly: the agent's events are folded in under
    /// the same lock).
    pub(crate) fn transcript(&self) -> Arc<Mutex<Transcript>> {
        Arc::clone(&self.transcript)
    }

    /// A counter bumped on every change of the transcript: redraw when it moves.
    pub(crate) fn changed(&self) -> watch::Receiver<u64> {
        self.changed.clone()
    }

    /// Sends a command (never blocks; ignored once the conversation has ended).
    pub(crate) fn send(&self, command: Command) {
        let _ = self.commands.send(command);
    }

    /// The id the session is saved under when it was opened (`atomic chat --resume ID`;
    /// `/clear` saves the rest under a new one, said in a notice).
    pub(crate) fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Ends the conversation: the returned task finishes once any call in flight is
    /// dropped and the session is saved (await it before the runtime shuts down).
    pub(crate) fn close(self) -> JoinHandle<()> {
        drop(self.commands);
        self.task
    }
}

/// Opens conversations.
pub(crate) struct Conversation;

impl Conversation {
    /// Opens a conversation in `setup.project` (resuming `setup.resume`), its actor
    /// spawned on `runtime`. May be called from inside the runtime or outside it.
    ///
    /// # Errors
    /// An adapter that is unknown, cannot converse, is not installed or not set up, a
    /// sandbox that cannot be given, a session that cannot be found, or a store that
    /// cannot be opened.
    pub(crate) fn open(setup: Setup, runtime: Handle) -> Result<ChatHandle, ChatError> {
        let mut sources = Sources::new();
        let (config, _problems) = setup.project.config(&mut sources);
        // The one read of the process environment: the only source of secrets.
        let env = Environment::from_process();
        let decls: Vec<_> = backend::CHAT_ADAPTERS
            .iter()
            .map(|adapter| backend::declaration_in(adapter, &env))
            .collect();
        let redactor = Redactor::for_workflow(&env, &decls);
        let tool_env = ToolEnv {
            spawner: crate::process::local(),
            sandbox: None,
            env: env.without_provider_keys(std::iter::empty()),
            redactor: redactor.clone(),
        };
        let backends = ProjectBackends {
            env: env.clone(),
            tool_env,
            prices: PriceTable::with_overrides(config.prices().to_vec()),
            root: setup.project.root.clone(),
        };
        let home = env
            .get("HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| setup.project.home.clone());
        let parts = Parts {
            backends: Arc::new(backends),
            redactor,
            sandbox: ChatSandbox::of(config.sandbox(), setup.project.root.clone(), home),
            configured_adapter: config.adapter().map(str::to_owned),
            configured_model: config.model().map(str::to_owned),
        };
        Self::start(setup, parts, &runtime)
    }

    /// Starts the conversation from its parts (tests give scripted backends).
    fn start(setup: Setup, parts: Parts, runtime: &Handle) -> Result<ChatHandle, ChatError> {
        let store = Arc::new(saved::open_store(&setup.project)?);
        let resumed = match &setup.resume {
            Some(prefix) => Some(blocking(runtime, saved::find(&store, prefix))?),
            None => None,
        };
        let adapter = setup
            .adapter
            .clone()
            .or_else(|| resumed.as_ref().map(|session| session.adapter.clone()))
            .or(parts.configured_adapter)
            .unwrap_or_else(|| DEFAULT_ADAPTER.to_owned());
        check_adapter(&adapter)?;
        let same_adapter = resumed
            .as_ref()
            .is_none_or(|session| session.adapter == adapter);
        let model = setup
            .model
            .clone()
            .or_else(|| {
                resumed
                    .as_ref()
                    .filter(|_| same_adapter)
                    .and_then(|session| session.model.clone())
            })
            .or(parts.configured_model);
        check_model(&adapter, model.as_deref())?;
        if let Some(sandbox) = &parts.sandbox {
            sandbox.check(&adapter)?;
        }
        let provider = parts.backends.build(&adapter)?;

        let (saving, mut transcript, backend_session, allowed_tools) = match resumed {
            Some(session) => {
                let transcript: Transcript =
                    serde_json::from_value(session.transcript).unwrap_or_default();
                let saving = Saving {
                    store: Arc::clone(&store),
                    redactor: parts.redactor.clone(),
                    id: session.id,
                    created_at: session.created_at,
                };
                let (backend_session, tools) = if same_adapter {
                    (session.backend_session, session.allowed_tools)
                } else {
                    (None, Vec::new())
                };
                (saving, transcript, backend_session, tools)
            }
            None => (
                Saving::fresh(Arc::clone(&store), parts.redactor.clone()),
                Transcript::default(),
                None,
                Vec::new(),
            ),
        };
        transcript.status.adapter.clone_from(&adapter);
        transcript.status.model.clone_from(&model);
        if setup.resume.is_some() {
            let how = if same_adapter {
                "the agent's session goes on"
            } else {
                "on another adapter: it starts a new session, and is told the conversation so far with your next message"
            };
            transcript.notice(format!("Resumed chat `{}`; {how}.", saving.id), false);
        }
        let board = Arc::new(Board::new(transcript));
        let (commands, received) = mpsc::unbounded_channel();
        let session_id = saving.id.clone();
        let actor = Actor {
            board: Arc::clone(&board),
            backends: parts.backends,
            provider,
            adapter,
            model,
            backend_session,
            allowed_tools,
            sandbox: parts.sandbox,
            saving,
            root: setup.project.root.clone(),
            compact_next: false,
            paused: None,
            queued: VecDeque::new(),
            calls: 0,
            save_failed: false,
        };
        let task = runtime.spawn(actor.run(received));
        Ok(ChatHandle {
            transcript: board.shared(),
            changed: board.watch(),
            commands,
            task,
            session_id,
        })
    }
}

/// What a conversation is built from besides its [`Setup`].
struct Parts {
    /// Builds the providers.
    backends: Arc<dyn Backends>,
    /// The environment's secrets, kept out of saved sessions.
    redactor: Redactor,
    /// The project's sandbox.
    sandbox: Option<ChatSandbox>,
    /// The project's `adapter` (or `--provider` given to the project).
    configured_adapter: Option<String>,
    /// The project's `--model`.
    configured_model: Option<String>,
}

/// Runs `future` to its end on `runtime` from synchronous code, inside the runtime or
/// outside it (on a thread of its own, so a runtime thread is never blocked on itself).
fn blocking<T: Send>(runtime: &Handle, future: impl Future<Output = T> + Send) -> T {
    std::thread::scope(|scope| {
        scope
            .spawn(|| runtime.block_on(future))
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}
