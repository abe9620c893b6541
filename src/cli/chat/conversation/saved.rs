//! Chat sessions kept in the project's store: saved after every turn (the transcript
//! with the environment's secrets redacted), listed for `--resume`, found by an id
//! prefix.

use std::sync::Arc;

use crate::cli::chat::transcript::{Entry, Transcript};
use crate::cli::project::Project;
use crate::providers::Redactor;
use crate::store::{
    ChatSession, ChatSummary, RunId, SqliteOptions, SqliteStore, Timestamp, project_db_path,
};

use super::ChatError;

/// How many sessions `--resume` lists, and an unknown id's message names.
const LISTED: u32 = 20;

/// A title longer than this is cut (with `…`).
const TITLE_CHARS: usize = 60;

/// A saved session, as `atomic chat --resume` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SessionSummary {
    /// Its id (`--resume` takes any unambiguous prefix).
    pub(crate) id: String,
    /// The first prompt, cut.
    pub(crate) title: String,
    /// The adapter it talks to.
    pub(crate) adapter: String,
    /// The model asked for, if any.
    pub(crate) model: Option<String>,
    /// When it was last saved (`crate::store::utc` writes it for people).
    pub(crate) updated_at: Timestamp,
    /// Prompts sent.
    pub(crate) turns: u32,
}

impl From<ChatSummary> for SessionSummary {
    fn from(summary: ChatSummary) -> Self {
        Self {
            id: summary.id,
            title: summary.title,
            adapter: summary.adapter,
            model: summary.model,
            updated_at: summary.updated_at,
            turns: summary.turns,
        }
    }
}

/// The project's saved chat sessions, newest first (none when the project has no store
/// yet: nothing is created for a listing).
///
/// # Errors
/// The store exists but cannot be opened or read.
pub(crate) async fn list_sessions(project: &Project) -> Result<Vec<SessionSummary>, ChatError> {
    if !project_db_path(&project.root).exists() {
        return Ok(Vec::new());
    }
    let store = open_store(project)?;
    recent(&store).await
}

/// Opens (creating if needed) the project's store.
///
/// # Errors
/// The database cannot be created or opened.
pub(super) fn open_store(project: &Project) -> Result<SqliteStore, ChatError> {
    SqliteStore::open_project(&project.root, SqliteOptions::default())
        .map_err(|error| ChatError::Store(error.at(&project_db_path(&project.root))))
}

/// The newest saved sessions.
async fn recent(store: &SqliteStore) -> Result<Vec<SessionSummary>, ChatError> {
    let listed = store.chat_sessions("", LISTED).await?;
    Ok(listed.into_iter().map(SessionSummary::from).collect())
}

/// The one saved session whose id is or starts with `prefix`.
///
/// # Errors
/// No session matches (the newest are listed), or several do.
pub(super) async fn find(store: &SqliteStore, prefix: &str) -> Result<ChatSession, ChatError> {
    let prefix = prefix.trim();
    let matches = store.chat_sessions(prefix, LISTED).await?;
    let id = match matches.as_slice() {
        [] => {
            return Err(ChatError::UnknownSession {
                prefix: prefix.to_owned(),
                recent: recent(store).await?.into_iter().take(5).collect(),
            });
        }
        [only] => only.id.clone(),
        several => match several.iter().find(|session| session.id == prefix) {
            Some(exact) => exact.id.clone(),
            None => {
                return Err(ChatError::AmbiguousSession {
                    prefix: prefix.to_owned(),
                    matches: matches.into_iter().map(SessionSummary::from).collect(),
                });
            }
        },
    };
    store
        .load_chat(&id)
        .await?
        .ok_or_else(|| ChatError::UnknownSession {
            prefix: prefix.to_owned(),
            recent: Vec::new(),
        })
}

/// Where the conversation is saved, and the secrets kept out of it.
pub(super) struct Saving {
    /// The project's store.
    pub(super) store: Arc<SqliteStore>,
    /// The environment's secrets.
    pub(super) redactor: Redactor,
    /// The session's id.
    pub(super) id: String,
    /// When the session started.
    pub(super) created_at: Timestamp,
}

/// What is saved besides the transcript.
pub(super) struct Held<'a> {
    /// The adapter.
    pub(super) adapter: &'a str,
    /// The model asked for.
    pub(super) model: Option<&'a str>,
    /// The backend's session to continue.
    pub(super) backend_session: Option<&'a str>,
    /// Tools allowed for the session.
    pub(super) allowed_tools: &'a [String],
}

impl Saving {
    /// A new session's saving, under a fresh id.
    pub(super) fn fresh(store: Arc<SqliteStore>, redactor: Redactor) -> Self {
        Self {
            store,
            redactor,
            id: RunId::generate().as_str().to_owned(),
            created_at: Timestamp::now(),
        }
    }

    /// Saves the conversation (nothing while it is empty: an opened and closed chat
    /// leaves nothing behind).
    ///
    /// # Errors
    /// The store could not be written.
    pub(super) async fn save(
        &self,
        transcript: &Transcript,
        held: &Held<'_>,
    ) -> Result<(), ChatError> {
        if transcript.entries.is_empty() {
            return Ok(());
        }
        let mut saved = serde_json::to_value(transcript).unwrap_or_default();
        self.redactor.redact_value(&mut saved);
        let redact = |text: &str| self.redactor.redact(text).into_owned();
        let session = ChatSession {
            id: self.id.clone(),
            created_at: self.created_at,
            updated_at: Timestamp::now(),
            adapter: held.adapter.to_owned(),
            model: held.model.map(str::to_owned),
            backend_session: held.backend_session.map(str::to_owned),
            allowed_tools: held.allowed_tools.to_vec(),
            title: redact(&title(transcript)),
            turns: turns(transcript),
            transcript: saved,
        };
        self.store.save_chat(session).await?;
        Ok(())
    }
}

/// The first thing the person said, on one line, cut.
fn title(transcript: &Transcript) -> String {
    let first = transcript.entries.iter().find_map(|entry| match entry {
        Entry::User { text, .. } => Some(text.as_str()),
        _ => None,
    });
    let line = first
        .unwrap_or("(no prompt yet)")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    match line.char_indices().nth(TITLE_CHARS) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line,
    }
}

/// Prompts the person sent.
fn turns(transcript: &Transcript) -> u32 {
    let sent = transcript
        .entries
        .iter()
        .filter(|entry| matches!(entry, Entry::User { .. }))
        .count();
    u32::try_from(sent).unwrap_or(u32::MAX)
}
