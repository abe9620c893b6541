//! Blocks: where a walk runs, and what a resumed run recovers of the blocks it was inside.
//!
//! A step inside a block (a parallel branch, a subgraph) is committed with its block's
//! path as its scope. Its cursor carries the step's own writes, since a block's state is
//! not the run's: the block starts from the state it began with and replays its committed
//! writes in order, through the same reducers, to stand where it stopped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::providers::PermissionAnswer;
use crate::runtime::cursor::Cursor;
use crate::store::{OpenStep, PermissionPause};

/// A block's path: levels `<node>@<entry>#<branch>` (a parallel branch) or `<node>@<entry>`
/// (a subgraph) joined by `/`, where `<entry>` tells apart the entries into a block within
/// one run of its enclosing block (the enclosing walk's committed steps, plus one). Node ids
/// never hold `/`, `@` or `#`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct ScopePath(Option<Arc<str>>);

impl ScopePath {
    /// The run itself.
    pub(crate) fn top() -> Self {
        Self(None)
    }

    /// Branch `branch` of the parallel `node` entered as `entry`.
    pub(crate) fn branch(&self, node: &str, entry: &str, branch: u32) -> Self {
        self.child(&format!("{node}@{entry}#{branch}"))
    }

    /// The block of the task `key` of the task-loop `node` entered as `entry`: a branch
    /// named by the task's id (escaped: `%`, `/` and `!` are written `%25`, `%2F`, `%21`),
    /// not by a position, since the tasks a resumed loop picks need not come in the same
    /// order.
    pub(crate) fn task(&self, node: &str, entry: &str, key: &str) -> Self {
        let mut escaped = String::with_capacity(key.len());
        for c in key.chars() {
            match c {
                '%' => escaped.push_str("%25"),
                '/' => escaped.push_str("%2F"),
                '!' => escaped.push_str("%21"),
                c => escaped.push(c),
            }
        }
        self.child(&format!("{node}@{entry}#{escaped}"))
    }

    /// The scope beside this block where its task-loop records that the task ended:
    /// `<block>!status` (a task's escaped id holds no `!`).
    pub(crate) fn status(&self) -> Self {
        Self(Some(Arc::from(format!(
            "{}!status",
            self.0.as_deref().unwrap_or_default()
        ))))
    }

    /// The subgraph `node` entered as `entry`.
    pub(crate) fn subgraph(&self, node: &str, entry: &str) -> Self {
        self.child(&format!("{node}@{entry}"))
    }

    fn child(&self, level: &str) -> Self {
        Self(Some(Arc::from(match &self.0 {
            Some(parent) => format!("{parent}/{level}"),
            None => level.to_owned(),
        })))
    }

    /// A path as stored (`""`: the run itself).
    pub(crate) fn parse(path: &str) -> Self {
        if path.is_empty() {
            Self(None)
        } else {
            Self(Some(Arc::from(path)))
        }
    }

    /// The path as stored (`None`: the run itself).
    pub(crate) fn as_str(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// Whether this is the run itself.
    pub(crate) fn is_top(&self) -> bool {
        self.0.is_none()
    }
}

/// Whose tallies a step of `scope` updates: the path up to its innermost subgraph level
/// (each subgraph runs with tallies of its own), `""` for the run's.
fn owner(scope: &str) -> &str {
    let mut end = 0;
    let mut at = 0;
    for level in scope.split('/') {
        at += level.len();
        if !level.contains('#') {
            end = at;
        }
        at += 1; // the `/`
    }
    &scope[..end]
}

/// What a resumed run found of the blocks it was inside, handed out as each block starts
/// again; and the answer `atomic resume` brought for a wait in one of them.
#[derive(Debug, Default)]
pub(crate) struct Recovery {
    /// The open steps (scope, cursor), in commit order.
    steps: Vec<(String, Cursor)>,
    /// The scope of the wait being answered, and the answer.
    answer: Mutex<Option<(String, String)>>,
    /// The permission request being answered: its wait key, what was asked, the answer.
    permission: Mutex<Option<(String, PermissionPause, PermissionAnswer)>>,
}

impl Recovery {
    /// Reads the open steps of a checkpoint. A cursor that cannot be read is an error with
    /// its step's number.
    pub(crate) fn new(open: Vec<OpenStep>) -> Result<Self, (u64, serde_json::Error)> {
        let steps = open
            .into_iter()
            .map(|step| {
                serde_json::from_value(step.cursor)
                    .map(|cursor| (step.scope, cursor))
                    .map_err(|error| (step.seq, error))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            steps,
            answer: Mutex::default(),
            permission: Mutex::default(),
        })
    }

    /// The committed steps of the block at `scope`, in order.
    pub(crate) fn steps_of(&self, scope: &ScopePath) -> Vec<&Cursor> {
        let Some(scope) = scope.as_str() else {
            return Vec::new();
        };
        self.steps
            .iter()
            .filter(|(at, _)| at == scope)
            .map(|(_, cursor)| cursor)
            .collect()
    }

    /// The marks a task-loop committed for its tasks (scopes `<prefix>…!status`, see
    /// [`ScopePath::status`]), in the order they were committed.
    pub(crate) fn marks_under(&self, prefix: &str) -> Vec<(&str, &Cursor)> {
        self.steps
            .iter()
            .filter(|(at, _)| at.starts_with(prefix) && at.ends_with("!status"))
            .map(|(at, cursor)| (at.as_str(), cursor))
            .collect()
    }

    /// The last cursor committed by a walk sharing the tallies of the walks at `scope`:
    /// the tallies to restore.
    pub(crate) fn latest_tally(&self, scope: &ScopePath) -> Option<&Cursor> {
        let wanted = scope.as_str().map_or("", owner);
        self.steps
            .iter()
            .rev()
            .find(|(at, _)| owner(at) == wanted)
            .map(|(_, cursor)| cursor)
    }

    /// The workspace snapshots the open steps' cursors name (each the last one committed
    /// by the walks sharing its tallies).
    pub(crate) fn files(&self) -> impl Iterator<Item = &String> {
        self.steps
            .iter()
            .filter_map(|(_, cursor)| cursor.files.as_ref())
    }

    /// The open waits: each scope whose last step paused at a wait.
    pub(crate) fn waiting(&self) -> Vec<&str> {
        let mut last: HashMap<&str, &Cursor> = HashMap::new();
        let mut order = Vec::new();
        for (scope, cursor) in &self.steps {
            if last.insert(scope, cursor).is_none() {
                order.push(scope.as_str());
            }
        }
        order
            .into_iter()
            .filter(|scope| last[scope].waiting)
            .collect()
    }

    /// Gives the block at `scope` the answer to its wait.
    pub(crate) fn set_answer(&self, scope: String, answer: String) {
        *self
            .answer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((scope, answer));
    }

    /// Gives the agent paused at the permission request `key` ([`PendingWait::key`]) its
    /// answer.
    ///
    /// [`PendingWait::key`]: crate::store::PendingWait::key
    pub(crate) fn set_permission(
        &self,
        key: String,
        pause: PermissionPause,
        answer: PermissionAnswer,
    ) {
        *self
            .permission
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((key, pause, answer));
    }

    /// The answer for the permission request of the agent at `key`, once.
    pub(crate) fn take_permission(&self, key: &str) -> Option<(PermissionPause, PermissionAnswer)> {
        self.permission
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take_if(|(at, _, _)| at == key)
            .map(|(_, pause, answer)| (pause, answer))
    }

    /// The answer for the wait of the block at `scope`, once.
    pub(crate) fn take_answer(&self, scope: &ScopePath) -> Option<String> {
        let mut answer = self
            .answer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match (&*answer, scope.as_str()) {
            (Some((at, _)), Some(scope)) if at == scope => answer.take().map(|(_, answer)| answer),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_is_owned_by_its_innermost_subgraph() {
        assert_eq!(owner("fan@3#2"), "");
        assert_eq!(owner("sub@2"), "sub@2");
        assert_eq!(owner("sub@2/fan@4#0"), "sub@2");
        assert_eq!(owner("fan@1#0/sub@2/inner@3#1"), "fan@1#0/sub@2");
    }

    #[test]
    fn paths_name_every_level() {
        let branch = ScopePath::top().branch("fan", "3", 2);
        assert_eq!(branch.as_str(), Some("fan@3#2"));
        assert_eq!(branch.subgraph("sub", "1").as_str(), Some("fan@3#2/sub@1"));
        assert!(ScopePath::top().is_top());
        let task = ScopePath::top().task("work", "2", "a/b!c%");
        assert_eq!(task.as_str(), Some("work@2#a%2Fb%21c%25"));
        assert_eq!(task.status().as_str(), Some("work@2#a%2Fb%21c%25!status"));
        assert_eq!(owner("work@2#a%2Fb!status"), "");
    }
}
