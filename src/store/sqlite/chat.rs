//! Chat sessions in the SQLite store (table `chat_sessions`, migration 8): saved whole
//! after each turn, listed newest first, found by an id prefix.

use rusqlite::{OptionalExtension, params};

use super::SqliteStore;
use super::db::Db;
use super::rows::{corrupt, timestamp};
use crate::store::{ChatSession, ChatSummary, StoreError, StoreFuture};

/// The columns of a summary, in the order [`summary`] reads them.
const SUMMARY_COLUMNS: &str = "id, title, adapter, model, updated_at, turns";

impl SqliteStore {
    /// Saves `session`, replacing what its id held (its creation time is kept).
    pub fn save_chat(&self, session: ChatSession) -> StoreFuture<'static, ()> {
        self.worker.call(move |db| db.save_chat(&session))
    }

    /// Saved sessions whose id starts with `prefix` (every one for an empty prefix),
    /// newest first, at most `limit`.
    pub fn chat_sessions(
        &self,
        prefix: &str,
        limit: u32,
    ) -> StoreFuture<'static, Vec<ChatSummary>> {
        let prefix = prefix.to_owned();
        self.worker.call(move |db| db.chat_sessions(&prefix, limit))
    }

    /// The saved session `id` (a whole id), if there is one.
    pub fn load_chat(&self, id: &str) -> StoreFuture<'static, Option<ChatSession>> {
        let id = id.to_owned();
        self.worker.call(move |db| db.load_chat(&id))
    }
}

impl Db {
    fn save_chat(&self, session: &ChatSession) -> Result<(), StoreError> {
        let tools = serde_json::to_string(&session.allowed_tools)
            .map_err(|error| corrupt(&session.id, error.to_string()))?;
        let transcript = serde_json::to_string(&session.transcript)
            .map_err(|error| corrupt(&session.id, error.to_string()))?;
        self.conn
            .prepare_cached(
                "INSERT INTO chat_sessions (id, created_at, updated_at, adapter, model,
                     backend_session, allowed_tools, title, turns, transcript)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                 ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at,
                     adapter = excluded.adapter, model = excluded.model,
                     backend_session = excluded.backend_session,
                     allowed_tools = excluded.allowed_tools, title = excluded.title,
                     turns = excluded.turns, transcript = excluded.transcript",
            )?
            .execute(params![
                session.id,
                millis(session.created_at.0),
                millis(session.updated_at.0),
                session.adapter,
                session.model,
                session.backend_session,
                tools,
                session.title,
                session.turns,
                transcript,
            ])?;
        Ok(())
    }

    fn chat_sessions(&self, prefix: &str, limit: u32) -> Result<Vec<ChatSummary>, StoreError> {
        let rows = self
            .conn
            .prepare_cached(&format!(
                "SELECT {SUMMARY_COLUMNS} FROM chat_sessions
                 WHERE substr(id, 1, length(?1)) = ?1
                 ORDER BY updated_at DESC, id DESC LIMIT ?2"
            ))?
            .query_map(params![prefix, limit], summary)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    fn load_chat(&self, id: &str) -> Result<Option<ChatSession>, StoreError> {
        type Row = (
            String,
            i64,
            i64,
            String,
            Option<String>,
            Option<String>,
            String,
            String,
            u32,
            String,
        );
        let row: Option<Row> = self
            .conn
            .prepare_cached(
                "SELECT id, created_at, updated_at, adapter, model, backend_session,
                     allowed_tools, title, turns, transcript
                 FROM chat_sessions WHERE id = ?1",
            )?
            .query_row([id], |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                    row.get(5)?,
                    row.get(6)?,
                    row.get(7)?,
                    row.get(8)?,
                    row.get(9)?,
                ))
            })
            .optional()?;
        let Some((
            id,
            created,
            updated,
            adapter,
            model,
            backend_session,
            tools,
            title,
            turns,
            transcript,
        )) = row
        else {
            return Ok(None);
        };
        let undecodable = |what: &str, error: serde_json::Error| {
            corrupt(
                &id,
                format!("chat session's {what} does not decode: {error}"),
            )
        };
        let allowed_tools =
            serde_json::from_str(&tools).map_err(|error| undecodable("allowed tools", error))?;
        let transcript =
            serde_json::from_str(&transcript).map_err(|error| undecodable("transcript", error))?;
        Ok(Some(ChatSession {
            allowed_tools,
            transcript,
            created_at: timestamp(created),
            updated_at: timestamp(updated),
            id,
            adapter,
            model,
            backend_session,
            title,
            turns,
        }))
    }
}

/// One row of [`SUMMARY_COLUMNS`].
fn summary(row: &rusqlite::Row<'_>) -> rusqlite::Result<ChatSummary> {
    Ok(ChatSummary {
        id: row.get(0)?,
        title: row.get(1)?,
        adapter: row.get(2)?,
        model: row.get(3)?,
        updated_at: timestamp(row.get(4)?),
        turns: row.get(5)?,
    })
}

/// Milliseconds as SQLite stores integers.
fn millis(at: u64) -> i64 {
    i64::try_from(at).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::schema;
    use super::super::{DB_PATH, SqliteOptions, SqliteStore};
    use crate::store::{ChatSession, Timestamp};

    fn session(id: &str, updated: u64) -> ChatSession {
        ChatSession {
            id: id.to_owned(),
            created_at: Timestamp(1),
            updated_at: Timestamp(updated),
            adapter: "claude-code".to_owned(),
            model: Some("sonnet".to_owned()),
            backend_session: Some("b-1".to_owned()),
            allowed_tools: vec!["Bash".to_owned()],
            title: format!("session {id}"),
            turns: 2,
            transcript: json!({"entries": [{"kind": "user", "text": "hi"}]}),
        }
    }

    #[tokio::test]
    async fn a_saved_session_is_listed_newest_first_and_loaded_whole() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open_project(dir.path(), SqliteOptions::default()).unwrap();
        store.save_chat(session("aaa1", 10)).await.unwrap();
        store.save_chat(session("aab2", 30)).await.unwrap();
        store.save_chat(session("bbb3", 20)).await.unwrap();
        // Saving again replaces, keeping the creation time.
        let mut again = session("aaa1", 40);
        again.created_at = Timestamp(99);
        again.turns = 3;
        store.save_chat(again).await.unwrap();

        let all = store.chat_sessions("", 10).await.unwrap();
        let ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["aaa1", "aab2", "bbb3"]);
        assert_eq!(all[0].turns, 3);
        let prefixed = store.chat_sessions("aa", 10).await.unwrap();
        assert_eq!(prefixed.len(), 2);
        assert_eq!(store.chat_sessions("", 1).await.unwrap().len(), 1);

        let loaded = store.load_chat("aaa1").await.unwrap().unwrap();
        assert_eq!(loaded.created_at, Timestamp(1), "creation time kept");
        assert_eq!(loaded.turns, 3);
        assert_eq!(loaded.allowed_tools, ["Bash"]);
        assert_eq!(loaded.transcript, session("x", 0).transcript);
        assert!(
            store.load_chat("aa").await.unwrap().is_none(),
            "whole ids only"
        );
    }

    #[tokio::test]
    async fn a_store_from_before_chat_sessions_gains_the_table() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join(DB_PATH);
        std::fs::create_dir_all(db.parent().unwrap()).unwrap();
        let mut conn = rusqlite::Connection::open(&db).unwrap();
        schema::create_at_version(&mut conn, 7).unwrap();
        conn.execute(
            "INSERT INTO runs (id, workflow, path, hash, inputs, status, created_at, updated_at)
             VALUES ('r1', 'w', 'w.kdl', 'h', '{}', 'completed', 1, 1)",
            [],
        )
        .unwrap();
        let has_table = |conn: &rusqlite::Connection| -> bool {
            conn.query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'chat_sessions'",
                [],
                |row| row.get::<_, i64>(0),
            )
            .unwrap()
                == 1
        };
        assert!(!has_table(&conn));
        drop(conn);

        let store = SqliteStore::open(&db, SqliteOptions::default()).unwrap();
        store.save_chat(session("c1", 5)).await.unwrap();
        assert_eq!(store.chat_sessions("", 10).await.unwrap().len(), 1);
        drop(store);
        let conn = rusqlite::Connection::open(&db).unwrap();
        assert!(has_table(&conn));
        let runs: i64 = conn
            .query_row("SELECT count(*) FROM runs", [], |row| row.get(0))
            .unwrap();
        assert_eq!(runs, 1, "the runs stored before are kept");
    }
}
