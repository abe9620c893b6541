//! Retry policy: which failure classes are retried, how many attempts, and the backoff
//! before each (exponential, jittered). One shape serves both levels that retry:
//!
//! - the HTTP adapters re-send a failed **model request** (`http::RequestRetry`), with the
//!   conversation so far, so tools that already ran are not run again;
//! - the runtime re-runs a failed **step** (`runtime::retry`) for what a request retry
//!   cannot fix (bad output, schema failures, agent CLIs, tool nodes).
//!
//! A node's `retry` sets both; without one, model requests get the official SDKs' default
//! ([`RetryPolicy::model_requests`]) and steps are not retried.

use std::time::Duration;

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::ir::{ErrorClass, Node, OnError};

/// How a failure is retried.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RetryPolicy {
    /// Total attempts, the first included (1: no retry).
    pub attempts: u32,
    /// The delay before the first retry.
    pub backoff: Duration,
    /// The delay's multiplier per retry.
    pub factor: f64,
    /// The longest single delay.
    pub max_backoff: Option<Duration>,
    /// Randomise each delay by ±50%.
    pub jitter: bool,
    /// The classes retried; empty: [`ErrorClass::is_transient`].
    pub on: Vec<ErrorClass>,
}

impl RetryPolicy {
    /// The node's `retry`, or the default policy of `on-error "retry"` (3 attempts, 1 s
    /// doubling, jittered), or none.
    #[must_use]
    pub fn of(node: &Node) -> Option<Self> {
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

    /// What the Anthropic and OpenAI SDKs do for a model request when nothing else is
    /// configured: 2 retries of rate limits, overload, server errors (5xx, 408, 409),
    /// connection failures and timeouts, 0.5 s doubling up to 8 s, jittered. A stream cut
    /// mid-reply is not retried (the SDKs do not either).
    #[must_use]
    pub fn model_requests() -> Self {
        Self {
            attempts: 3,
            backoff: Duration::from_millis(500),
            factor: 2.0,
            max_backoff: Some(Duration::from_secs(8)),
            jitter: true,
            on: vec![
                ErrorClass::RateLimit,
                ErrorClass::Overloaded,
                ErrorClass::ServerError,
                ErrorClass::Network,
                ErrorClass::Timeout,
            ],
        }
    }

    /// Whether failures of `class` are retried.
    #[must_use]
    pub fn retries(&self, class: ErrorClass) -> bool {
        if self.on.is_empty() {
            class.is_transient()
        } else {
            self.on.contains(&class)
        }
    }

    /// The backoff before attempt `attempt + 1` (attempt 1 is the first).
    #[must_use]
    pub fn backoff(&self, attempt: u32) -> Duration {
        self.backoff_with(attempt, rand::rng().random_range(0.0..1.0))
    }

    /// [`backoff`](Self::backoff) with the jitter's draw given: `unit` in `0..1` (an
    /// engine that replays a run draws it deterministically).
    #[must_use]
    pub fn backoff_with(&self, attempt: u32, unit: f64) -> Duration {
        let exponent = i32::try_from(attempt.saturating_sub(1)).unwrap_or(i32::MAX);
        let mut seconds = self.backoff.as_secs_f64() * self.factor.powi(exponent);
        if let Some(max) = self.max_backoff {
            seconds = seconds.min(max.as_secs_f64());
        }
        if self.jitter {
            seconds *= 0.5 + unit.clamp(0.0, 1.0);
        }
        Duration::try_from_secs_f64(seconds.max(0.0)).unwrap_or(Duration::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backs_off_exponentially_up_to_the_cap() {
        let policy = RetryPolicy {
            attempts: 4,
            backoff: Duration::from_millis(100),
            factor: 2.0,
            max_backoff: Some(Duration::from_millis(300)),
            jitter: false,
            on: Vec::new(),
        };
        let delays: Vec<Duration> = (1..=4).map(|attempt| policy.backoff(attempt)).collect();
        assert_eq!(
            delays,
            [100, 200, 300, 300].map(Duration::from_millis).to_vec()
        );
    }

    #[test]
    fn model_requests_retry_what_the_sdks_retry() {
        let policy = RetryPolicy::model_requests();
        assert_eq!(policy.attempts, 3, "two retries");
        for class in [
            ErrorClass::RateLimit,
            ErrorClass::Overloaded,
            ErrorClass::ServerError,
            ErrorClass::Network,
            ErrorClass::Timeout,
        ] {
            assert!(policy.retries(class), "{class:?}");
        }
        for class in [
            ErrorClass::StreamCut,
            ErrorClass::Auth,
            ErrorClass::Provider,
            ErrorClass::BadOutput,
        ] {
            assert!(!policy.retries(class), "{class:?}");
        }
        for attempt in 1..=10 {
            assert!(policy.backoff(attempt) <= Duration::from_secs(12));
        }
    }
}
