//! Runtime errors: [`NodeError`] (one attempt of one node failed, classified for
//! `retry-on` and `on-error`) and [`RunError`] (the run could not be set up or continued).
//! Neither is a diagnostic: they name node ids, which the CLI resolves to spans.

use std::time::Duration;

use crate::ir::ErrorClass;
use crate::providers::ProviderError;
use crate::runtime::state::StateError;
use crate::runtime::template::TemplateError;
use crate::runtime::{FailureClass, ResumeError};
use crate::store::StoreError;

/// Why one attempt of a node failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct NodeError {
    /// The `retry-on` class; `None` for failures no retry can fix (a template that does
    /// not render, a write its reducer refuses). `on-error` handles both.
    pub class: Option<ErrorClass>,
    /// What happened, lowercase, names in backticks.
    pub message: String,
    /// How long the backend asked us to wait before retrying.
    pub retry_after: Option<Duration>,
    /// The adapter already retried it under the step's policy (a model request); the
    /// step is not run again for it.
    pub retried: bool,
    /// The files it is about (a `conflict`'s paths), which a recovery node reads as
    /// `error.paths`.
    pub paths: Vec<String>,
}

impl NodeError {
    /// An error of `class`.
    pub fn new(class: ErrorClass, message: impl Into<String>) -> Self {
        Self {
            class: Some(class),
            message: message.into(),
            retry_after: None,
            retried: false,
            paths: Vec::new(),
        }
    }

    /// An error no retry can fix.
    pub fn fatal(message: impl Into<String>) -> Self {
        Self {
            class: None,
            message: message.into(),
            retry_after: None,
            retried: false,
            paths: Vec::new(),
        }
    }

    /// The class events and recovery nodes see: `error` for unclassified failures.
    #[must_use]
    pub fn failure_class(&self) -> FailureClass {
        self.class.into()
    }

    /// The value templates see as `error` at a recovery node.
    #[must_use]
    pub fn to_json(&self, node: &str) -> serde_json::Value {
        let mut error = serde_json::json!({
            "node": node,
            "class": self.failure_class().name(),
            "message": self.message,
        });
        if !self.paths.is_empty() {
            error["paths"] = self.paths.clone().into();
        }
        error
    }
}

impl From<ProviderError> for NodeError {
    fn from(error: ProviderError) -> Self {
        Self {
            class: Some(error.class()),
            retry_after: error.retry_after(),
            retried: error.was_retried(),
            message: error.to_string(),
            paths: Vec::new(),
        }
    }
}

impl From<TemplateError> for NodeError {
    fn from(error: TemplateError) -> Self {
        Self::fatal(error.message)
    }
}

impl From<StateError> for NodeError {
    fn from(error: StateError) -> Self {
        Self::fatal(error.to_string())
    }
}

/// Why a run could not be started or continued. A node failing is not one of these: it
/// ends the run with [`RunEnd::Failed`](super::RunEnd::Failed).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The checkpoint store failed; the run stopped without losing committed steps.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The workspace's files could not be recorded or put back; the run stopped without
    /// losing committed steps and can be resumed.
    #[error("the workspace's files: {0}")]
    Workspace(String),
    /// A template did not compile when the run was set up.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// Something the run needs is missing or invalid: a provider, a schema file, an input.
    #[error("{0}")]
    Setup(String),
    /// The run cannot be resumed (finished, or its checkpoint does not fit the workflow),
    /// or the answer it was given is for no wait it is paused at.
    #[error(transparent)]
    Resume(#[from] ResumeError),
    /// The answer to a `wait` does not fit its declared type; the run stays paused.
    #[error("the answer to `{node}` is not valid: {message}")]
    BadAnswer {
        /// The wait's id.
        node: String,
        /// What was wrong.
        message: String,
    },
}
