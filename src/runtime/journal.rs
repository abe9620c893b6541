//! An agent call's progress journal over the checkpoint store: the HTTP adapters' tool
//! loop saves the conversation after each round of tool calls, and a run resumed after a
//! crash gives the same call (same node, same call index) its saved conversation back, so
//! the tools that ran are not run again. In a run that records its files, the files are
//! recorded first (a snapshot marked `before`): a resume puts the files back to where the
//! saved conversation stands, not to before the whole step, so what those tools did stays
//! done once.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use crate::providers::{CallJournal, JournalBackend};
use crate::store::{RunId, Store};
use crate::workspace::snapshot::{Mark, Snapshots};

/// The journal of one call, stored under `<node>#<call index>`.
pub(crate) struct StoreJournal {
    store: Arc<dyn Store>,
    run: RunId,
    key: String,
    /// Whether the store may hold progress of this call (loaded or saved): only then is
    /// there anything to clear, so a call without tools costs no store write.
    touched: AtomicBool,
    /// Where and on which chain the files are recorded before each save.
    files: Option<(Arc<Snapshots>, String)>,
}

impl StoreJournal {
    /// The journal of call `call_index` of `node` in `run`.
    pub(crate) fn new(store: Arc<dyn Store>, run: RunId, node: &str, call_index: u32) -> Self {
        Self {
            store,
            run,
            key: format!("{node}#{call_index}"),
            touched: AtomicBool::new(false),
            files: None,
        }
    }

    /// The same journal, recording the files before each save (in the store, on the
    /// chain: the run's, or its branch's).
    pub(crate) fn with_files(mut self, recorder: Option<(Arc<Snapshots>, String)>) -> Self {
        self.files = recorder;
        self
    }

    /// As the handle a request carries.
    pub(crate) fn handle(self: &Arc<Self>) -> CallJournal {
        CallJournal(Arc::clone(self) as Arc<dyn JournalBackend>)
    }

    /// Forgets the progress: the call finished, and its result is in the step.
    pub(crate) async fn clear(&self) {
        if !self.touched.load(Ordering::Relaxed) {
            return;
        }
        if let Err(error) = self.store.clear_progress(&self.run, &self.key).await {
            tracing::warn!(%error, key = %self.key, "could not clear a call's progress");
        }
    }
}

impl JournalBackend for StoreJournal {
    fn load(&self) -> Pin<Box<dyn Future<Output = Option<Value>> + Send + '_>> {
        Box::pin(async move {
            match self.store.load_progress(&self.run, &self.key).await {
                Ok(progress) => {
                    if progress.is_some() {
                        self.touched.store(true, Ordering::Relaxed);
                    }
                    progress
                }
                Err(error) => {
                    tracing::warn!(%error, key = %self.key, "could not read a call's progress");
                    None
                }
            }
        })
    }

    fn save(
        &self,
        progress: Value,
    ) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send + '_>> {
        self.touched.store(true, Ordering::Relaxed);
        Box::pin(async move {
            if let Some((snapshots, chain)) = &self.files {
                let (snapshots, chain, key) =
                    (Arc::clone(snapshots), chain.clone(), self.key.clone());
                tokio::task::spawn_blocking(move || {
                    snapshots.take(
                        &chain,
                        Mark::Before,
                        Some(&key),
                        "the call's progress saved",
                    )
                })
                .await
                .map_err(|error| error.to_string())?
                .map_err(|error| format!("the workspace's files: {error}"))?;
            }
            self.store
                .save_progress(&self.run, &self.key, progress)
                .await
                .map_err(|error| error.to_string())
        })
    }
}
