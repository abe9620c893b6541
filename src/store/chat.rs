//! `atomic chat`'s saved conversations: one record per session, kept beside the runs in
//! the project's store so `atomic chat --resume` finds them again.

use serde_json::Value;

use super::Timestamp;

/// One saved chat session, whole: what `--resume` loads.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatSession {
    /// Its id: short and sortable by creation time, like a run's.
    pub id: String,
    /// When it started.
    pub created_at: Timestamp,
    /// When it was last saved.
    pub updated_at: Timestamp,
    /// The adapter it talks to.
    pub adapter: String,
    /// The model asked for, if any.
    pub model: Option<String>,
    /// The backend's session to continue (an agent CLI's session id), if any.
    pub backend_session: Option<String>,
    /// Tools the person allowed for the rest of the session.
    pub allowed_tools: Vec<String>,
    /// The first prompt, cut: how a list of sessions names it.
    pub title: String,
    /// Prompts sent so far.
    pub turns: u32,
    /// The transcript as JSON, secrets already redacted by the caller.
    pub transcript: Value,
}

/// A saved session as a list of sessions shows it (no transcript).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatSummary {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The adapter it talks to.
    pub adapter: String,
    /// The model asked for, if any.
    pub model: Option<String>,
    /// When it was last saved.
    pub updated_at: Timestamp,
    /// Prompts sent so far.
    pub turns: u32,
}
