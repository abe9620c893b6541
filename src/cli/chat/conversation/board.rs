//! [`Board`]: the transcript the view draws, and the counter it watches to redraw. Every
//! change is made under the lock and announced after it, never blocking: the agent's
//! event sink changes it too.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;

use crate::cli::chat::transcript::Transcript;

/// The transcript shared with the view, and its change counter.
pub(super) struct Board {
    transcript: Arc<Mutex<Transcript>>,
    changed: watch::Sender<u64>,
}

impl Board {
    /// A board showing `transcript`.
    pub(super) fn new(transcript: Transcript) -> Self {
        Self {
            transcript: Arc::new(Mutex::new(transcript)),
            changed: watch::Sender::new(0),
        }
    }

    /// The transcript, for the view.
    pub(super) fn shared(&self) -> Arc<Mutex<Transcript>> {
        Arc::clone(&self.transcript)
    }

    /// A receiver of the change counter, for the view.
    pub(super) fn watch(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Changes the transcript and tells the view.
    pub(super) fn update<T>(&self, change: impl FnOnce(&mut Transcript) -> T) -> T {
        let result = change(&mut self.lock());
        self.changed
            .send_modify(|count| *count = count.wrapping_add(1));
        result
    }

    /// Reads the transcript.
    pub(super) fn read<T>(&self, look: impl FnOnce(&Transcript) -> T) -> T {
        look(&self.lock())
    }

    fn lock(&self) -> MutexGuard<'_, Transcript> {
        // A panic while the view drew is no reason to lose the conversation.
        self.transcript
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}
