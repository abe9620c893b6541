//! The run's clock: where the interpreter reads wall-clock time (step start and end
//! times, `auto-approve` deadlines). It comes in through the [`RunContext`](super::RunContext)
//! so that another executor can supply its own (Temporal's workflow time is deterministic
//! on replay) and tests can fix it. Timers still sleep on tokio's clock.

use std::fmt::Debug;

use crate::store::Timestamp;

/// A source of wall-clock time.
pub trait Clock: Debug + Send + Sync {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// The system's clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}
