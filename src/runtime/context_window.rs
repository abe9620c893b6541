//! An agent's context-window policy (`context warn=… act=… action=…`) at run time.
//!
//! While a call runs, [`ContextWatch`] keeps the latest `context-window` fraction its provider
//! reports and says when the warning threshold is first reached. After the call, a fraction at
//! or over `act` leaves a [`PendingContextAction`] on the session. The action happens when that
//! session is next continued (`session="<node>"`): an adapter cannot step into a call that is
//! running, because a CLI's own tool loop runs to its end.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::shared::Tally;
use crate::ir::{ContextAction, ContextPolicy};

/// What the next continuation of a session does, recorded when a call filled its window
/// past `act`. Kept in the cursor beside the session ids, so it survives a resume.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingContextAction {
    /// The node whose call reached `act` (its policy asked for `action`).
    pub node: String,
    /// What it asked for.
    pub action: SessionAction,
    /// The fraction that call reported.
    pub fraction: f64,
}

/// What is done to a full session before it is continued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionAction {
    /// The provider summarises the session before the prompt.
    Compact,
    /// A new session is started instead.
    Fresh,
}

impl SessionAction {
    /// The name in events.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Compact => "compact",
            Self::Fresh => "fresh",
        }
    }

    /// What is actually done by a provider that can (or cannot) compact: a session that
    /// cannot be summarised is replaced.
    #[must_use]
    pub fn for_provider(self, can_compact: bool) -> Self {
        match self {
            Self::Compact if can_compact => Self::Compact,
            _ => Self::Fresh,
        }
    }
}

impl std::fmt::Display for SessionAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// The thresholds in force for one agent. An agent without a `context` child warns at the
/// default and never acts: resuming a session is what its author asked for, and dropping or
/// summarising it is a choice the workflow must make in writing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Thresholds {
    pub(crate) warn: f64,
    pub(crate) act: f64,
    pub(crate) action: ContextAction,
}

impl Thresholds {
    pub(crate) fn of(policy: Option<&ContextPolicy>) -> Self {
        policy.map_or(
            Self {
                warn: ContextPolicy::DEFAULT_WARN,
                act: ContextPolicy::DEFAULT_ACT,
                action: ContextAction::None,
            },
            |policy| Self {
                warn: policy.warn,
                act: policy.act,
                action: policy.action,
            },
        )
    }

    /// What the session must undergo before its next continuation, after a call whose
    /// latest fraction was `fraction`.
    pub(crate) fn pending(self, node: &str, fraction: f64) -> Option<PendingContextAction> {
        let action = match self.action {
            ContextAction::None => return None,
            ContextAction::Compact => SessionAction::Compact,
            ContextAction::Fresh => SessionAction::Fresh,
        };
        (fraction >= self.act).then(|| PendingContextAction {
            node: node.to_owned(),
            action,
            fraction,
        })
    }
}

/// The fractions one call reports. Shared with the provider's event sink, which may be
/// called from another task, hence the lock.
#[derive(Debug)]
pub(crate) struct ContextWatch {
    warn: f64,
    seen: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    latest: Option<f64>,
    warned: bool,
}

impl ContextWatch {
    pub(crate) fn new(warn: f64) -> Self {
        Self {
            warn,
            seen: Mutex::new(Seen::default()),
        }
    }

    /// Records a reported fraction; `true` the first time one reaches `warn`, so a call
    /// warns once however many times its backend reports.
    pub(crate) fn observe(&self, fraction: f64) -> bool {
        let mut seen = self.lock();
        seen.latest = Some(fraction);
        let first = fraction >= self.warn && !seen.warned;
        seen.warned |= first;
        first
    }

    /// The last fraction reported, if any.
    pub(crate) fn latest(&self) -> Option<f64> {
        self.lock().latest
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Seen> {
        // Two plain values: a panic elsewhere cannot leave them inconsistent.
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// How a call continues the session its `session=` names.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Continuation {
    /// The session id named (the other node's latest), before any action.
    pub(crate) named: Option<String>,
    /// What is done to it first, and the fraction that asked for it.
    pub(crate) action: Option<(SessionAction, f64)>,
}

impl Continuation {
    /// The session to resume: none when a fresh one replaces it.
    pub(crate) fn resume_session(&self) -> Option<String> {
        match self.action {
            Some((SessionAction::Fresh, _)) => None,
            _ => self.named.clone(),
        }
    }

    /// Whether the provider compacts the session before the prompt.
    pub(crate) fn compact(&self) -> bool {
        matches!(self.action, Some((SessionAction::Compact, _)))
    }
}

impl Tally {
    /// How a call continues the session of node `from` (if any), applying the action
    /// pending on that session as `provider` can.
    pub(crate) fn continuation(&self, from: Option<&str>, can_compact: bool) -> Continuation {
        let named = from.and_then(|from| self.sessions.get(from)).cloned();
        let action = named
            .as_ref()
            .and_then(|session| self.context_actions.get(session))
            .map(|pending| (pending.action.for_provider(can_compact), pending.fraction));
        Continuation { named, action }
    }

    /// Records a finished call of `node`: its session, the action its window now asks for,
    /// and the end of the action it took. Only a successful call settles anything, so a
    /// retried attempt takes the same action again.
    pub(crate) fn settle(
        &mut self,
        node: &str,
        continued: &Continuation,
        session: Option<&String>,
        thresholds: Thresholds,
        fraction: Option<f64>,
    ) {
        if let (Some(named), Some((action, _))) = (&continued.named, continued.action) {
            self.context_actions.remove(named);
            // Whoever named the replaced session continues the fresh one from now on, so a
            // loop does not go back to the full session on its next turn.
            if let (SessionAction::Fresh, Some(session)) = (action, session) {
                for (_, id) in self.sessions.iter_mut().filter(|(_, id)| *id == named) {
                    id.clone_from(session);
                }
            }
        }
        let Some(session) = session else {
            return;
        };
        self.sessions.insert(node.to_owned(), session.clone());
        match fraction.map(|fraction| thresholds.pending(node, fraction)) {
            Some(Some(pending)) => {
                self.context_actions.insert(session.clone(), pending);
            }
            // A newer reading below `act` (or from a node that does not act) stands.
            Some(None) => {
                self.context_actions.remove(session);
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_warns_once_at_the_threshold() {
        let watch = ContextWatch::new(0.5);
        assert!(!watch.observe(0.2));
        assert!(watch.observe(0.5));
        assert!(!watch.observe(0.7));
        assert_eq!(watch.latest(), Some(0.7));
    }

    #[test]
    fn only_an_acting_policy_over_act_leaves_an_action() {
        let none = Thresholds::of(None);
        assert_eq!((none.warn, none.action), (0.45, ContextAction::None));
        assert_eq!(none.pending("a", 0.99), None);
        let fresh = Thresholds {
            warn: 0.1,
            act: 0.5,
            action: ContextAction::Fresh,
        };
        assert_eq!(fresh.pending("a", 0.49), None);
        assert_eq!(
            fresh.pending("a", 0.5).map(|pending| pending.action),
            Some(SessionAction::Fresh)
        );
    }

    #[test]
    fn compacting_falls_back_to_a_fresh_session() {
        assert_eq!(
            SessionAction::Compact.for_provider(true),
            SessionAction::Compact
        );
        assert_eq!(
            SessionAction::Compact.for_provider(false),
            SessionAction::Fresh
        );
        assert_eq!(
            SessionAction::Fresh.for_provider(true),
            SessionAction::Fresh
        );
    }
}
