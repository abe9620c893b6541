//! Why a store operation failed.

/// A store failure. Messages name the run and what to do where there is something to do.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No run has this id (or no run starts with this prefix).
    #[error("no run `{0}`")]
    NotFound(String),
    /// A run with this id exists already.
    #[error("run `{0}` already exists")]
    AlreadyExists(String),
    /// A prefix matched more than one run.
    #[error("run id `{prefix}` is ambiguous: it matches {}", matches.join(", "))]
    Ambiguous {
        /// What was given.
        prefix: String,
        /// The first few ids it matches.
        matches: Vec<String>,
    },
    /// A step was committed out of order: another process is probably driving this run.
    #[error(
        "run `{run}` was moved on by another process: its next step is {expected}, this process's was {got}; nothing of this process's step was committed"
    )]
    Conflict {
        /// The run.
        run: String,
        /// The next sequence number the store expected.
        expected: u64,
        /// The sequence number given.
        got: u64,
    },
    /// Another live process is running the run.
    #[error(
        "run `{run}` is being run by {owner} (since {since}); wait for it to end, or stop it with `atomic cancel {run}`"
    )]
    Owned {
        /// The run.
        run: String,
        /// Who holds it: `pid 4242 on build-01`.
        owner: String,
        /// When it took the run.
        since: String,
    },
    /// This process's hold on the run was taken over by another (it was judged dead).
    #[error("run `{run}` was taken over by {owner}; this process stops driving it")]
    LeaseLost {
        /// The run.
        run: String,
        /// Who holds it now.
        owner: String,
    },
    /// The database file could not be created, opened or written.
    #[error("checkpoint store `{path}`: {message}")]
    Io {
        /// The database file.
        path: String,
        /// The cause.
        message: String,
    },
    /// SQLite reported an error.
    #[error("checkpoint store: {0}")]
    Sqlite(String),
    /// Runs kept by a server (a Temporal cluster) could not be read from it.
    #[error("{place}: {message}")]
    Remote {
        /// The server, as people name it.
        place: String,
        /// What failed and what to do.
        message: String,
    },
    /// The database was written by a newer atomic.
    #[error(
        "checkpoint store `{path}` has schema version {found}, newer than this atomic understands ({supported}); upgrade atomic"
    )]
    TooNew {
        /// The database file.
        path: String,
        /// Its `user_version`.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// Stored data does not decode (hand-edited or damaged database).
    #[error("run `{run}` has corrupt checkpoint data: {message}")]
    Corrupt {
        /// The run.
        run: String,
        /// What was wrong.
        message: String,
    },
    /// The database file is not a usable atomic store: not SQLite at all, damaged or cut
    /// short, or another program's database.
    #[error(
        "checkpoint store{} is damaged: {reason}; move it aside{} and atomic starts a new one (its runs cannot be resumed)",
        if path.is_empty() { String::new() } else { format!(" `{path}`") },
        if path.is_empty() { String::new() } else { format!(" (`mv {path} {path}.broken`)") }
    )]
    Damaged {
        /// The database file (empty when the failing operation did not know it).
        path: String,
        /// What SQLite or atomic found.
        reason: String,
    },
    /// Another process held the database past the busy timeout.
    #[error("checkpoint store: the database is busy (another atomic process holds it); try again")]
    Busy,
    /// The store's worker thread has stopped.
    #[error("checkpoint store is closed")]
    Closed,
}

impl StoreError {
    /// This error with the database file named, where it is about the file.
    #[must_use]
    pub fn at(self, file: &std::path::Path) -> Self {
        match self {
            Self::Damaged { path, reason } if path.is_empty() => Self::Damaged {
                path: file.display().to_string(),
                reason,
            },
            other => other,
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        match error.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                Self::Busy
            }
            Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt) => {
                Self::Damaged {
                    path: String::new(),
                    reason: error.to_string(),
                }
            }
            _ => Self::Sqlite(error.to_string()),
        }
    }
}
