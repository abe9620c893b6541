//! The conversation's actor: one task that owns the provider and the backend's session,
//! takes the view's [`Command`]s in order, and runs each turn — the agent's events folded
//! into the transcript as they stream, a permission request or a question paused at and
//! continued with the person's answer, Esc dropping the call — saving the session after
//! each.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::mpsc::UnboundedReceiver;

use crate::cli::chat::transcript::{Entry, Pending, Transcript};
use crate::ir::PermissionMode;
use crate::providers::{
    AgentEvent, AgentReply, AgentRequest, Answered, Approvals, CallId, Continuation, Grants,
    PermissionAnswer, PermissionAsk, Prompt, Provider, ProviderError,
};
use crate::runtime::{Asker, continuation_prompt};
use crate::workspace::Workspace;

use super::Command;
use super::backend::{Backends, asks_people, check_adapter, keeps_sessions};
use super::board::Board;
use super::history::with_history;
use super::question::{answered_prompt, dismissed_prompt, question_of};
use super::sandbox::ChatSandbox;
use super::saved::{Held, Saving};

/// Whether the actor goes on after a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    /// Take the next command.
    Go,
    /// The view is gone: save and stop.
    Quit,
}

/// How a call ended.
enum Ended {
    /// The provider answered (or failed).
    Done(Result<AgentReply, ProviderError>),
    /// Esc: the call was dropped.
    Interrupted,
    /// The view dropped its handle mid-call.
    Closed,
}

/// The conversation's state, owned by its task.
pub(super) struct Actor {
    /// What the view draws.
    pub(super) board: Arc<Board>,
    /// Builds providers (`/provider`).
    pub(super) backends: Arc<dyn Backends>,
    /// The agent.
    pub(super) provider: Arc<dyn Provider>,
    /// Its adapter.
    pub(super) adapter: String,
    /// The model asked for (the adapter's default when `None`).
    pub(super) model: Option<String>,
    /// The backend's session the next call continues.
    pub(super) backend_session: Option<String>,
    /// Tools the person allowed for the rest of the session.
    pub(super) allowed_tools: Vec<String>,
    /// The project's sandbox, when it configures one.
    pub(super) sandbox: Option<ChatSandbox>,
    /// Where the session is saved.
    pub(super) saving: Saving,
    /// The project root: where the agent works.
    pub(super) root: PathBuf,
    /// `/compact` was asked: the next call compacts the session first.
    pub(super) compact_next: bool,
    /// The request the last call paused at, awaiting the person's answer.
    pub(super) paused: Option<PermissionAsk>,
    /// Commands that came while a call ran, taken after it.
    pub(super) queued: VecDeque<Command>,
    /// Calls made, for their ids.
    pub(super) calls: u32,
    /// Whether saving failed already (said once).
    pub(super) save_failed: bool,
}

impl Actor {
    /// Takes commands until the view's handle is dropped, then saves the session.
    pub(super) async fn run(mut self, mut commands: UnboundedReceiver<Command>) {
        loop {
            let command = match self.queued.pop_front() {
                Some(command) => command,
                None => match commands.recv().await {
                    Some(command) => command,
                    None => break,
                },
            };
            if self.handle(command, &mut commands).await == Flow::Quit {
                break;
            }
        }
        self.save().await;
    }

    async fn handle(
        &mut self,
        command: Command,
        commands: &mut UnboundedReceiver<Command>,
    ) -> Flow {
        match command {
            Command::Prompt { shown, told } => {
                // Writing instead of answering leaves the request unanswered; the session
                // goes on with what was written.
                self.unpause();
                let told = (told != shown).then_some(told);
                let upto = self.board.update(|transcript| {
                    let upto = transcript.entries.len();
                    transcript.push(Entry::User {
                        text: shown.clone(),
                        told: told.clone(),
                    });
                    upto
                });
                let said = told.unwrap_or(shown);
                let prompt = if self.backend_session.is_none() || !keeps_sessions(&self.adapter) {
                    self.board
                        .read(|transcript| with_history(&transcript.entries[..upto], &said))
                } else {
                    said
                };
                return self.call(commands, prompt, None).await;
            }
            Command::Permission(answer) => return self.answer_permission(answer, commands).await,
            Command::Answer(answers) => return self.answer_question(answers, commands).await,
            Command::Interrupt => {
                if self.paused.is_some() {
                    self.unpause();
                    self.notice("Left unanswered; the conversation goes on.", false);
                }
            }
            Command::Clear => self.clear().await,
            Command::Compact => self.compact(),
            Command::Model(model) => {
                self.model = Some(model.clone());
                self.board.update(|transcript| {
                    transcript.status.model = Some(model.clone());
                    transcript.notice(
                        format!("Model: `{model}`. The conversation goes on."),
                        false,
                    );
                });
            }
            Command::Provider(adapter) => self.switch(&adapter),
            Command::Note(entry) => self.board.update(|transcript| transcript.push(entry)),
            Command::UpdateRun {
                run_id,
                status,
                outcome,
            } => self.update_run(&run_id, status, outcome),
        }
        Flow::Go
    }

    /// Runs one call: `prompt`, continuing the backend's session, with `answered` if it
    /// continues a request the person just answered.
    async fn call(
        &mut self,
        commands: &mut UnboundedReceiver<Command>,
        prompt: String,
        answered: Option<Answered>,
    ) -> Flow {
        self.calls += 1;
        let request = AgentRequest {
            call: CallId {
                node_id: "chat".to_owned(),
                index: self.calls,
            },
            prompt: Prompt {
                text: prompt,
                system: None,
            },
            model: self.model.clone(),
            session: Continuation {
                resume: self
                    .backend_session
                    .clone()
                    .filter(|_| keeps_sessions(&self.adapter)),
                compact: std::mem::take(&mut self.compact_next),
                fork: false,
            },
            workspace: Workspace::new(self.root.clone()),
            grants: Grants {
                permission: asks_people(&self.adapter).then_some(PermissionMode::Ask),
                approvals: Approvals {
                    tools: self.allowed_tools.clone(),
                    answered,
                },
                ..Grants::default()
            },
            ..AgentRequest::default()
        };
        let before = self.board.update(|transcript| {
            transcript.busy = true;
            transcript.status.clone()
        });
        // Held until the call ends: its proxy and temp directory go with it.
        let mut request = request;
        let _sandbox = match &self.sandbox {
            Some(sandbox) => {
                let board = Arc::clone(&self.board);
                let refused = Arc::new(move |refused: crate::sandbox::Refused| {
                    board.update(|transcript| {
                        transcript.notice(
                            format!(
                                "The sandbox refused `{}`: {}",
                                refused.target, refused.reason
                            ),
                            true,
                        );
                    });
                });
                match sandbox.start(&self.adapter, refused).await {
                    Ok((running, call)) => {
                        request.sandbox = Some(call);
                        Some(running)
                    }
                    Err(error) => {
                        self.board.update(|transcript| {
                            transcript.busy = false;
                            transcript.notice(format!("Not sent: {error}"), true);
                        });
                        return Flow::Go;
                    }
                }
            }
            None => None,
        };
        let started: Arc<Mutex<Option<String>>> = Arc::default();
        let ended = {
            let board = Arc::clone(&self.board);
            let seen = Arc::clone(&started);
            let before = before.clone();
            let sink = move |event: AgentEvent| {
                if let AgentEvent::SessionStart {
                    session_id: Some(id),
                    ..
                } = &event
                {
                    *seen.lock().unwrap_or_else(PoisonError::into_inner) = Some(id.clone());
                }
                board.update(|transcript| transcript.apply(&event, &before));
            };
            let provider = Arc::clone(&self.provider);
            let mut call = provider.run(&request, &sink);
            loop {
                tokio::select! {
                    result = &mut call => break Ended::Done(result),
                    command = commands.recv() => match command {
                        None => break Ended::Closed,
                        Some(Command::Interrupt) => break Ended::Interrupted,
                        Some(Command::Note(entry)) => self.board.update(|transcript| transcript.push(entry)),
                        Some(Command::UpdateRun { run_id, status, outcome }) => {
                            self.update_run(&run_id, status, outcome);
                        }
                        Some(other) => self.queued.push_back(other),
                    },
                }
            }
        };
        // A session the backend started continues even when its call did not finish.
        let started = started
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(id) = started.filter(|_| keeps_sessions(&self.adapter)) {
            self.backend_session = Some(id);
        }
        let flow = self.ended(ended, &before);
        self.save().await;
        flow
    }

    /// Folds how a call ended into the conversation.
    fn ended(&mut self, ended: Ended, before: &crate::cli::chat::transcript::Status) -> Flow {
        match ended {
            Ended::Done(Ok(reply)) => {
                if let Some(id) = reply.session_id.filter(|_| keeps_sessions(&self.adapter)) {
                    self.backend_session = Some(id);
                }
                self.board.update(|transcript| {
                    transcript.finish_reply();
                    transcript.busy = false;
                    let mut usage = before.usage;
                    usage.add(reply.usage);
                    transcript.status.usage = usage;
                    transcript.status.cost_usd = match (before.cost_usd, reply.cost_usd) {
                        (Some(a), Some(b)) => Some(a + b),
                        (a, b) => a.or(b),
                    };
                });
                Flow::Go
            }
            Ended::Done(Err(ProviderError::AwaitingPermission {
                ask, session_id, ..
            })) => {
                if session_id.is_some() {
                    self.backend_session = session_id;
                }
                self.pause(*ask);
                Flow::Go
            }
            Ended::Done(Err(error)) => {
                let message = self.saving.redactor.redact(&error.to_string()).into_owned();
                self.board.update(|transcript| {
                    transcript.finish_reply();
                    transcript.busy = false;
                    transcript.notice(message, true);
                });
                Flow::Go
            }
            Ended::Interrupted | Ended::Closed => {
                self.board.update(|transcript| {
                    transcript.finish_reply();
                    transcript.busy = false;
                    transcript.notice("Interrupted; the conversation goes on.", false);
                });
                if matches!(ended, Ended::Closed) {
                    Flow::Quit
                } else {
                    Flow::Go
                }
            }
        }
    }

    /// The call stopped at `ask`: the person is asked, inline.
    fn pause(&mut self, ask: PermissionAsk) {
        self.board.update(|transcript| {
            transcript.finish_reply();
            transcript.busy = false;
            match question_of(&ask) {
                Some(question) => {
                    transcript.pending = Some(Pending::Question(question.clone()));
                    transcript.push(Entry::Question {
                        question,
                        answers: Vec::new(),
                    });
                }
                None => {
                    transcript.pending = Some(Pending::Permission(ask.clone()));
                    transcript.push(Entry::Permission {
                        ask: ask.clone(),
                        answer: None,
                    });
                }
            }
        });
        self.paused = Some(ask);
    }

    /// Forgets the request paused at (its entry stays, unanswered).
    fn unpause(&mut self) {
        if self.paused.take().is_some() {
            self.board.update(|transcript| transcript.pending = None);
        }
    }

    /// The person answered a permission request (or dismissed a question with `deny`).
    async fn answer_permission(
        &mut self,
        answer: PermissionAnswer,
        commands: &mut UnboundedReceiver<Command>,
    ) -> Flow {
        let Some(ask) = self.paused.take() else {
            self.notice("Nothing is asking for permission now.", false);
            return Flow::Go;
        };
        if let Some(question) = question_of(&ask) {
            if answer.allows() {
                self.paused = Some(ask);
                self.notice("The agent asked a question: choose an answer.", false);
                return Flow::Go;
            }
            self.board.update(|transcript| transcript.pending = None);
            return self.call(commands, dismissed_prompt(&question), None).await;
        }
        if answer == PermissionAnswer::AllowRun && !self.allowed_tools.contains(&ask.tool) {
            self.allowed_tools.push(ask.tool.clone());
        }
        self.board.update(|transcript| {
            transcript.pending = None;
            let asked = transcript
                .entries
                .iter_mut()
                .rev()
                .find_map(|entry| match entry {
                    Entry::Permission {
                        answer: open @ None,
                        ..
                    } => Some(open),
                    _ => None,
                });
            if let Some(open) = asked {
                *open = Some(answer);
            }
        });
        let prompt = continuation_prompt(&ask, answer, Asker::Chat);
        self.call(commands, prompt, Some(Answered { ask, answer }))
            .await
    }

    /// The person answered the agent's question: one answer per item.
    async fn answer_question(
        &mut self,
        answers: Vec<String>,
        commands: &mut UnboundedReceiver<Command>,
    ) -> Flow {
        let asked = self.paused.take_if(|ask| question_of(ask).is_some());
        let Some((ask, question)) = asked.and_then(|ask| question_of(&ask).map(|q| (ask, q)))
        else {
            self.notice("The agent asked no question to answer now.", false);
            return Flow::Go;
        };
        self.board.update(|transcript| {
            transcript.pending = None;
            let asked = transcript
                .entries
                .iter_mut()
                .rev()
                .find_map(|entry| match entry {
                    Entry::Question { answers: open, .. } if open.is_empty() => Some(open),
                    _ => None,
                });
            if let Some(open) = asked {
                open.clone_from(&answers);
            }
        });
        // Told plainly (a CLI restarted on its session does not ask again by itself), and
        // carried in the tool's input should the agent ask the same again.
        let prompt = answered_prompt(&question, &answers);
        let answered = Answered {
            ask: ask.answered_with(&answers),
            answer: PermissionAnswer::Allow,
        };
        self.call(commands, prompt, Some(answered)).await
    }

    /// `/clear`: the session so far is saved and closed; a new one starts, empty, on the
    /// same adapter and model, in a new backend session.
    async fn clear(&mut self) {
        self.save().await;
        let had = self.board.read(|transcript| !transcript.entries.is_empty());
        let fresh = Saving::fresh(Arc::clone(&self.saving.store), self.saving.redactor.clone());
        let before = std::mem::replace(&mut self.saving, fresh);
        self.backend_session = None;
        self.allowed_tools.clear();
        self.compact_next = false;
        self.paused = None;
        let (adapter, model) = (self.adapter.clone(), self.model.clone());
        self.board.update(|transcript| {
            let status = crate::cli::chat::transcript::Status {
                adapter,
                model,
                ..Default::default()
            };
            *transcript = Transcript {
                status,
                ..Transcript::default()
            };
            if had {
                transcript.notice(
                    format!(
                        "A new conversation. The last one is saved: `atomic chat --resume {}`.",
                        before.id
                    ),
                    false,
                );
            }
        });
    }

    /// `/compact`: where the backend can, the next call compacts its session first.
    fn compact(&mut self) {
        let message = if !self.provider.can_compact() {
            format!(
                "The `{}` adapter cannot compact a conversation; /clear starts a new one.",
                self.adapter
            )
        } else if self.backend_session.is_none() {
            "Nothing to compact yet.".to_owned()
        } else {
            self.compact_next = true;
            "The conversation is compacted before your next message.".to_owned()
        };
        self.notice(message, false);
    }

    /// `/provider`: another adapter, in a new backend session, told the conversation so
    /// far with the next message.
    fn switch(&mut self, adapter: &str) {
        let built = check_adapter(adapter)
            .and_then(|()| match &self.sandbox {
                Some(sandbox) => sandbox.check(adapter),
                None => Ok(()),
            })
            .and_then(|()| self.backends.build(adapter));
        let provider = match built {
            Ok(provider) => provider,
            Err(error) => return self.notice(error.to_string(), true),
        };
        self.provider = provider;
        adapter.clone_into(&mut self.adapter);
        self.backend_session = None;
        self.allowed_tools.clear();
        self.compact_next = false;
        self.paused = None;
        self.model = None;
        self.board.update(|transcript| {
            transcript.pending = None;
            transcript.status.adapter = adapter.to_owned();
            transcript.status.model = None;
            transcript.notice(
                format!(
                    "Now talking to `{adapter}` (its default model; /model to choose one). It starts a new session, and is told the conversation so far with your next message."
                ),
                false,
            );
        });
    }

    /// A workflow run started from the chat changed.
    /// Updates the entry of run `run_id`; the entry of a run that has no id yet (it was
    /// just started) takes the first id it hears.
    fn update_run(&self, run_id: &str, status: String, outcome: Option<String>) {
        self.board.update(|transcript| {
            let shown = transcript
                .entries
                .iter_mut()
                .rev()
                .find_map(|entry| match entry {
                    Entry::Run {
                        run_id: id,
                        status,
                        outcome,
                        ..
                    } if id == run_id || id.is_empty() => Some((id, status, outcome)),
                    _ => None,
                });
            if let Some((shown_id, shown_status, shown_outcome)) = shown {
                if shown_id.is_empty() {
                    run_id.clone_into(shown_id);
                }
                *shown_status = status;
                if outcome.is_some() {
                    *shown_outcome = outcome;
                }
            }
        });
    }

    fn notice(&self, text: impl Into<String>, error: bool) {
        let text = text.into();
        self.board
            .update(|transcript| transcript.notice(text, error));
    }

    /// Saves the session; a failure is said once.
    async fn save(&mut self) {
        let transcript = self.board.read(Clone::clone);
        let held = Held {
            adapter: &self.adapter,
            model: self.model.as_deref(),
            backend_session: self.backend_session.as_deref(),
            allowed_tools: &self.allowed_tools,
        };
        let saved = self.saving.save(&transcript, &held).await;
        if let Err(error) = saved
            && !std::mem::replace(&mut self.save_failed, true)
        {
            self.notice(
                format!("The conversation could not be saved: {error}"),
                true,
            );
        }
    }
}
