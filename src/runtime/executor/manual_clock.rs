//! [`ManualClock`]: time that moves only when a test moves it. Timers started on it resolve
//! when the clock passes their deadline, so a test sees exactly which waits the interpreter
//! asked for (retry back-off, node timeouts, `auto-approve` delays) and decides when each
//! ends, with no real time passing and no dependence on tokio's paused clock.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio::sync::{Notify, oneshot};

use super::Clock;
use crate::store::Timestamp;

/// 2024-01-01T00:00:00Z, where every manual clock starts: a real-looking time, the same in
/// every test.
const START_MS: u64 = 1_704_067_200_000;

/// A clock for tests. Cloning an `Arc` of it shares it between the executor and the test.
#[derive(Debug, Default)]
pub(crate) struct ManualClock {
    inner: Mutex<Inner>,
    /// Woken whenever a timer starts, for [`ManualClock::next_timer`].
    started: Notify,
}

#[derive(Debug, Default)]
struct Inner {
    /// Time since [`START_MS`].
    elapsed: Duration,
    /// Timers not yet due: their deadline (as `elapsed`) and who awaits them.
    pending: Vec<(Duration, oneshot::Sender<()>)>,
}

impl ManualClock {
    /// A clock at its start, with no timers.
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long the clock has moved since it started.
    pub(crate) fn elapsed(&self) -> Duration {
        self.lock().elapsed
    }

    /// A timer that resolves once the clock has moved `duration` on from now (at once for
    /// none).
    pub(crate) fn timer(&self, duration: Duration) -> BoxFuture<'static, ()> {
        if duration.is_zero() {
            return std::future::ready(()).boxed();
        }
        let (fire, fired) = oneshot::channel();
        {
            let mut inner = self.lock();
            let due = inner.elapsed + duration;
            inner.pending.push((due, fire));
        }
        self.started.notify_waiters();
        // A clock dropped with the timer pending never fires it: the timer never ends.
        async move {
            if fired.await.is_err() {
                std::future::pending::<()>().await;
            }
        }
        .boxed()
    }

    /// Moves the clock on by `by`, firing every timer whose deadline it passes.
    pub(crate) fn advance(&self, by: Duration) {
        let mut inner = self.lock();
        inner.elapsed += by;
        let now = inner.elapsed;
        let (due, pending): (Vec<_>, Vec<_>) =
            inner.pending.drain(..).partition(|(at, _)| *at <= now);
        inner.pending = pending;
        drop(inner);
        for (_, fire) in due {
            // Its awaiter may be gone (a step dropped by a `select`): nothing to wake.
            let _ = fire.send(());
        }
    }

    /// Waits until a timer is pending and returns how long until the first one is due: a
    /// test calls this while the run it drives is blocked on a timer, then
    /// [`advance`](Self::advance)s by it.
    pub(crate) async fn next_timer(&self) -> Duration {
        loop {
            // Registered before the check, so a timer started in between still wakes it.
            let started = self.started.notified();
            {
                let inner = self.lock();
                let now = inner.elapsed;
                let first = inner
                    .pending
                    .iter()
                    .filter(|(_, fire)| !fire.is_closed())
                    .map(|(at, _)| *at)
                    .min();
                if let Some(first) = first {
                    return first.saturating_sub(now);
                }
            }
            started.await;
        }
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        let elapsed = u64::try_from(self.elapsed().as_millis()).unwrap_or(u64::MAX);
        Timestamp(START_MS.saturating_add(elapsed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_timer_fires_only_when_the_clock_passes_its_deadline() {
        let clock = ManualClock::new();
        let mut timer = clock.timer(Duration::from_secs(2));
        assert_eq!(clock.next_timer().await, Duration::from_secs(2));
        clock.advance(Duration::from_millis(1999));
        assert!((&mut timer).now_or_never().is_none(), "not yet due");
        assert_eq!(clock.next_timer().await, Duration::from_millis(1));
        clock.advance(Duration::from_millis(1));
        assert!(timer.now_or_never().is_some(), "due at its deadline");
        assert_eq!(clock.now(), Timestamp(START_MS + 2000));
    }

    #[tokio::test]
    async fn a_dropped_timer_is_not_waited_for() {
        let clock = ManualClock::new();
        drop(clock.timer(Duration::from_secs(1)));
        let later = clock.timer(Duration::from_secs(5));
        assert_eq!(clock.next_timer().await, Duration::from_secs(5));
        drop(later);
    }
}
