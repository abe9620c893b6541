//! Retry policy: which failures are retried and how long to wait before each retry
//! (exponential backoff with jitter, never shorter than a backend's `retry-after`).

use std::time::Duration;

use rand::Rng;

use super::NodeError;
use crate::ir::{ErrorClass, Node, OnError};

/// A node's retry policy.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RetryPolicy {
    pub(crate) attempts: u32,
    pub(crate) backoff: Duration,
    pub(crate) factor: f64,
    pub(crate) max_backoff: Option<Duration>,
    pub(crate) jitter: bool,
    pub(crate) on: Vec<ErrorClass>,
}

impl RetryPolicy {
    /// The node's `retry`, or the default policy of `on-error "retry"` (3 attempts, 1 s
    /// doubling, jittered), or none.
    pub(crate) fn of(node: &Node) -> Option<Self> {
        if let Some(retry) = &node.retry {
            return Some(Self {
                attempts: retry.attempts.max(1),
                backoff: retry.backoff.to_std(),
                factor: if retry.factor.is_finite() && retry.factor > 0.0 {
                    retry.factor
                } else {
                    1.0
                },
                max_backoff: retry.max_backoff.map(crate::ir::Duration::to_std),
                jitter: retry.jitter,
                on: retry.on.clone(),
            });
        }
        matches!(node.on_error.as_deref(), Some(OnError::Retry { .. })).then(|| Self {
            attempts: 3,
            backoff: Duration::from_secs(1),
            factor: 2.0,
            max_backoff: None,
            jitter: true,
            on: Vec::new(),
        })
    }

    /// The wait before attempt `attempt + 1` after `error` ended attempt `attempt`, or
    /// `None` when the failure is not retried.
    pub(crate) fn delay(&self, error: &NodeError, attempt: u32) -> Option<Duration> {
        let class = error.class?;
        let retried = if self.on.is_empty() {
            class.is_transient()
        } else {
            self.on.contains(&class)
        };
        if !retried || attempt >= self.attempts {
            return None;
        }
        let exponent = i32::try_from(attempt.saturating_sub(1)).unwrap_or(i32::MAX);
        let mut seconds = self.backoff.as_secs_f64() * self.factor.powi(exponent);
        if let Some(max) = self.max_backoff {
            seconds = seconds.min(max.as_secs_f64());
        }
        if self.jitter {
            seconds *= rand::rng().random_range(0.5..1.5);
        }
        let delay = Duration::try_from_secs_f64(seconds.max(0.0)).unwrap_or(Duration::MAX);
        Some(error.retry_after.map_or(delay, |after| delay.max(after)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(on: Vec<ErrorClass>) -> RetryPolicy {
        RetryPolicy {
            attempts: 4,
            backoff: Duration::from_millis(100),
            factor: 2.0,
            max_backoff: Some(Duration::from_millis(300)),
            jitter: false,
            on,
        }
    }

    #[test]
    fn backs_off_exponentially_up_to_the_cap() {
        let policy = policy(Vec::new());
        let error = NodeError::new(ErrorClass::Timeout, "slow");
        let delays: Vec<Option<Duration>> = (1..=4)
            .map(|attempt| policy.delay(&error, attempt))
            .collect();
        assert_eq!(
            delays,
            [
                Some(Duration::from_millis(100)),
                Some(Duration::from_millis(200)),
                Some(Duration::from_millis(300)),
                None
            ]
        );
    }

    #[test]
    fn retries_only_chosen_classes_and_honours_retry_after() {
        let transient = policy(Vec::new());
        assert!(
            transient
                .delay(&NodeError::new(ErrorClass::Schema, "x"), 1)
                .is_none()
        );
        assert!(transient.delay(&NodeError::fatal("template"), 1).is_none());
        let schema = policy(vec![ErrorClass::Schema]);
        assert!(
            schema
                .delay(&NodeError::new(ErrorClass::Schema, "x"), 1)
                .is_some()
        );
        assert!(
            schema
                .delay(&NodeError::new(ErrorClass::Timeout, "x"), 1)
                .is_none()
        );
        let mut limited = NodeError::new(ErrorClass::RateLimit, "429");
        limited.retry_after = Some(Duration::from_secs(5));
        assert_eq!(transient.delay(&limited, 1), Some(Duration::from_secs(5)));
    }

    #[test]
    fn jitter_stays_within_half_either_way() {
        let mut policy = policy(Vec::new());
        policy.jitter = true;
        let error = NodeError::new(ErrorClass::Network, "reset");
        for _ in 0..100 {
            let delay = policy.delay(&error, 1).unwrap();
            assert!(
                delay >= Duration::from_millis(50) && delay < Duration::from_millis(150),
                "{delay:?}"
            );
        }
    }
}
