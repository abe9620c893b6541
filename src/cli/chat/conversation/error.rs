//! [`ChatError`]: why a chat could not start, said so a newcomer knows what to do.

use crate::store::StoreError;

use super::SessionSummary;

/// Why `atomic chat` could not open its conversation.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ChatError {
    /// `--provider` (or the project's `adapter`) names no adapter atomic has.
    #[error(
        "there is no adapter `{name}`; atomic chat can talk to {}",
        quoted(known)
    )]
    UnknownAdapter {
        /// What was asked for.
        name: String,
        /// Every adapter the chat can talk to.
        known: Vec<&'static str>,
    },
    /// The adapter cannot hold a conversation (it replays or runs a fixed program).
    #[error(
        "the `{name}` adapter cannot hold a conversation; atomic chat can talk to {}",
        quoted(known)
    )]
    NotConversational {
        /// The adapter.
        name: String,
        /// Every adapter the chat can talk to.
        known: Vec<&'static str>,
    },
    /// A model API needs a model to be named.
    #[error(
        "the `{adapter}` adapter needs a model: pass `--model`, e.g. `atomic chat --provider {adapter} --model {example}`"
    )]
    NoModel {
        /// The adapter.
        adapter: String,
        /// A model it serves.
        example: &'static str,
    },
    /// The adapter could not be set up (its CLI is not installed, its key is not set…).
    #[error("the `{adapter}` adapter cannot be used: {message}")]
    Provider {
        /// The adapter.
        adapter: String,
        /// What is wrong and what to do (the provider's own words).
        message: String,
    },
    /// The project configures a sandbox the chat's adapter or this system cannot give.
    #[error("{0}")]
    Sandbox(String),
    /// `--resume PREFIX` matches no saved session.
    #[error(
        "no saved chat session starts with `{prefix}`; {}",
        recent_sessions(recent)
    )]
    UnknownSession {
        /// What was given.
        prefix: String,
        /// The newest saved sessions.
        recent: Vec<SessionSummary>,
    },
    /// `--resume PREFIX` matches several saved sessions.
    #[error(
        "`{prefix}` matches several saved chat sessions: {}; type more of the id",
        recent_sessions(matches)
    )]
    AmbiguousSession {
        /// What was given.
        prefix: String,
        /// The sessions it matches.
        matches: Vec<SessionSummary>,
    },
    /// The project's store could not be opened, read or written.
    #[error("{0}")]
    Store(#[from] StoreError),
}

/// `` `a`, `b`, `c` ``.
fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sessions a person could have meant, one a line, or how to start one.
fn recent_sessions(sessions: &[SessionSummary]) -> String {
    if sessions.is_empty() {
        return "no chat has been saved in this project yet (start one with `atomic chat`)"
            .to_owned();
    }
    let lines: Vec<String> = sessions
        .iter()
        .map(|session| {
            format!(
                "\n  {}  {}  ({})",
                session.id, session.title, session.adapter
            )
        })
        .collect();
    format!("the newest are:{}", lines.concat())
}
