//! Re-sending a failed model request: the one place HTTP adapters decide whether to retry,
//! and after how long. The tool-use loop asks it after every failed turn, so a retry sends
//! the conversation so far again (tool results included) and never re-runs a tool.
//!
//! The policy is the node's `retry` when it has one, else the SDKs' default
//! ([`RetryPolicy::model_requests`], with the provider option `max-retries` setting its
//! count; `0` turns request retries off). A server's `retry-after` is honoured, but never
//! beyond `max-retry-after` (60 s unless the provider sets it) nor past the node's timeout:
//! asked for more, the call fails at once, saying how long the server wanted.

use std::time::{Duration, Instant};

use crate::providers::{AgentRequest, ProviderError, RetryPolicy};

/// Longest `retry-after` honoured unless the provider sets `max-retry-after`.
pub(crate) const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// The provider's say in request retries (`option "max-retries"`, `"max-retry-after"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RetrySettings {
    /// Retries after the first attempt when the node has no `retry` (SDK default: 2).
    pub(crate) max_retries: Option<u32>,
    /// Longest `retry-after` honoured.
    pub(crate) max_retry_after: Duration,
}

impl Default for RetrySettings {
    fn default() -> Self {
        Self {
            max_retries: None,
            max_retry_after: DEFAULT_MAX_RETRY_AFTER,
        }
    }
}

/// The retry decisions of one agent call.
#[derive(Debug)]
pub(crate) struct RequestRetry {
    adapter: &'static str,
    policy: RetryPolicy,
    max_retry_after: Duration,
    deadline: Option<Instant>,
}

impl RequestRetry {
    /// The retries of `request` (started now) under the provider's `settings`.
    pub(crate) fn new(
        adapter: &'static str,
        request: &AgentRequest,
        settings: RetrySettings,
    ) -> Self {
        let policy = request.limits.retry.clone().unwrap_or_else(|| {
            let mut policy = RetryPolicy::model_requests();
            if let Some(retries) = settings.max_retries {
                policy.attempts = retries.saturating_add(1);
            }
            policy
        });
        Self {
            adapter,
            policy,
            max_retry_after: settings.max_retry_after,
            deadline: request
                .limits
                .timeout
                .map(|timeout| Instant::now() + timeout),
        }
    }

    /// After attempt `attempt` (1 is the first) failed with `error`: how long to wait
    /// before sending again, or the error to give up with. An error given up on after
    /// retries is [`ProviderError::Exhausted`], so the step is not retried for it again.
    pub(crate) fn after(
        &self,
        error: ProviderError,
        attempt: u32,
    ) -> Result<Duration, ProviderError> {
        let class = error.class();
        if !self.policy.retries(class) {
            return Err(error);
        }
        if attempt >= self.policy.attempts {
            return Err(exhausted(error, attempt));
        }
        let left = self
            .deadline
            .map(|deadline| deadline.saturating_duration_since(Instant::now()));
        if let Some(asked) = error.retry_after() {
            let limit = match left {
                Some(left) if left < self.max_retry_after => (
                    left,
                    format!("the {} left before the node's timeout", seconds(left)),
                ),
                _ => (
                    self.max_retry_after,
                    format!(
                        "the {} cap (provider option `max-retry-after`)",
                        seconds(self.max_retry_after)
                    ),
                ),
            };
            if asked > limit.0 {
                return Err(ProviderError::WaitTooLong {
                    adapter: self.adapter,
                    class,
                    asked,
                    limit_why: limit.1,
                });
            }
        }
        let wait = self
            .policy
            .backoff(attempt)
            .max(error.retry_after().unwrap_or_default());
        match left {
            // No time for the wait and another try: the node would time out mid-wait.
            Some(left) if wait >= left => Err(exhausted(error, attempt)),
            _ => Ok(wait),
        }
    }
}

fn exhausted(error: ProviderError, attempts: u32) -> ProviderError {
    if attempts <= 1 {
        return error;
    }
    ProviderError::Exhausted {
        attempts,
        last: Box::new(error),
    }
}

fn seconds(duration: Duration) -> String {
    format!("{:.0} s", duration.as_secs_f64().ceil())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ErrorClass;
    use crate::providers::Limits;

    fn server_error() -> ProviderError {
        ProviderError::server("a", 500, "boom".to_owned())
    }

    fn limited(after: u64) -> ProviderError {
        ProviderError::rate_limited("a", Some(Duration::from_secs(after)))
    }

    fn retry(request: &AgentRequest, settings: RetrySettings) -> RequestRetry {
        RequestRetry::new("a", request, settings)
    }

    #[test]
    fn two_retries_by_default_then_exhausted() {
        let retry = retry(&AgentRequest::default(), RetrySettings::default());
        assert!(retry.after(server_error(), 1).is_ok());
        assert!(retry.after(server_error(), 2).is_ok());
        let error = retry.after(server_error(), 3).expect_err("gave up");
        assert!(error.was_retried(), "{error:?}");
        assert_eq!(error.class(), ErrorClass::ServerError);
        assert!(
            error.to_string().ends_with("(gave up after 3 attempts)"),
            "{error}"
        );
    }

    #[test]
    fn the_provider_and_the_node_set_the_count() {
        let off = RetrySettings {
            max_retries: Some(0),
            ..RetrySettings::default()
        };
        let error = retry(&AgentRequest::default(), off)
            .after(server_error(), 1)
            .expect_err("off");
        assert!(!error.was_retried(), "one attempt is not a retry");
        let node = AgentRequest {
            limits: Limits {
                retry: Some(RetryPolicy {
                    attempts: 5,
                    backoff: Duration::from_millis(1),
                    factor: 1.0,
                    max_backoff: None,
                    jitter: false,
                    on: vec![ErrorClass::StreamCut],
                }),
                ..Limits::default()
            },
            ..AgentRequest::default()
        };
        let retry = retry(&node, off);
        let cut = || ProviderError::stream_cut("a", "eof".to_owned());
        assert_eq!(retry.after(cut(), 4).ok(), Some(Duration::from_millis(1)));
        assert!(
            retry.after(server_error(), 1).is_err(),
            "not in the node's classes"
        );
    }

    #[test]
    fn non_transient_failures_are_not_retried() {
        let retry = retry(&AgentRequest::default(), RetrySettings::default());
        let auth = ProviderError::Auth {
            adapter: "a",
            status: 401,
            message: "bad key".to_owned(),
            key_variable: None,
        };
        assert!(matches!(
            retry.after(auth, 1),
            Err(ProviderError::Auth { .. })
        ));
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_cap_and_the_deadline() {
        let retry = retry(&AgentRequest::default(), RetrySettings::default());
        assert!(retry.after(limited(3), 1).expect("retried") >= Duration::from_secs(3));
        let error = retry.after(limited(120), 1).expect_err("too long");
        assert_eq!(
            error.to_string(),
            "`a` asked to wait 120 s before retrying (rate-limit), longer than the 60 s cap (provider option `max-retry-after`)"
        );
        assert!(error.was_retried());
        let short = AgentRequest {
            limits: Limits {
                timeout: Some(Duration::from_secs(10)),
                ..Limits::default()
            },
            ..AgentRequest::default()
        };
        let error = super::RequestRetry::new("a", &short, RetrySettings::default())
            .after(limited(30), 1)
            .expect_err("past the node's timeout");
        assert!(
            error.to_string().contains("left before the node's timeout"),
            "{error}"
        );
    }
}
