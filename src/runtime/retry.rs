//! Step retries: whether a failed step runs again and after how long (the policy's
//! backoff, never shorter than a backend's `retry-after`). The policy itself is shared with
//! the HTTP adapters' request retries (`providers::RetryPolicy`).

use std::time::Duration;

use super::NodeError;
pub(crate) use crate::providers::RetryPolicy;

/// The wait before attempt `attempt + 1` of a step after `error` ended attempt `attempt`,
/// or `None` when the failure is not retried: its class is not in the policy, the attempts
/// are used up, or the adapter already retried it under the same policy (a model request
/// retried until it gave up is not re-run as a whole step, which would repeat its tools).
/// `unit` (in `0..1`) is the jitter's draw, from the executor.
pub(crate) fn delay(
    policy: &RetryPolicy,
    error: &NodeError,
    attempt: u32,
    unit: f64,
) -> Option<Duration> {
    let class = error.class?;
    if error.retried || !policy.retries(class) || attempt >= policy.attempts {
        return None;
    }
    let delay = policy.backoff_with(attempt, unit);
    Some(error.retry_after.map_or(delay, |after| delay.max(after)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ErrorClass;

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
            .map(|attempt| delay(&policy, &error, attempt, 0.5))
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
        assert!(delay(&transient, &NodeError::new(ErrorClass::Schema, "x"), 1, 0.5).is_none());
        assert!(delay(&transient, &NodeError::fatal("template"), 1, 0.5).is_none());
        let schema = policy(vec![ErrorClass::Schema]);
        assert!(delay(&schema, &NodeError::new(ErrorClass::Schema, "x"), 1, 0.5).is_some());
        assert!(delay(&schema, &NodeError::new(ErrorClass::Timeout, "x"), 1, 0.5).is_none());
        let mut limited = NodeError::new(ErrorClass::RateLimit, "429");
        limited.retry_after = Some(Duration::from_secs(5));
        assert_eq!(
            delay(&transient, &limited, 1, 0.5),
            Some(Duration::from_secs(5))
        );
        let mut retried = NodeError::new(ErrorClass::ServerError, "500");
        retried.retried = true;
        assert_eq!(
            delay(&transient, &retried, 1, 0.5),
            None,
            "the adapter retried it"
        );
    }

    #[test]
    fn jitter_stays_within_half_either_way() {
        let mut policy = policy(Vec::new());
        policy.jitter = true;
        let error = NodeError::new(ErrorClass::Network, "reset");
        for _ in 0..100 {
            let wait = delay(&policy, &error, 1, 0.5).unwrap();
            assert!(
                wait >= Duration::from_millis(50) && wait < Duration::from_millis(150),
                "{wait:?}"
            );
        }
    }
}
