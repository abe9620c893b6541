//! Which pending wait an answer goes to. A paused run may wait at its own `wait`, at one
//! per paused block (a parallel branch, a subgraph), or at agents' permission requests;
//! `atomic resume --answer` (and Temporal's `answer` update) answers one of them. Every
//! path that takes an answer chooses here, so they agree on the rules: the wait `--wait`
//! names (its key, or its node id when that is unique), else the only one pending.

use super::ResumeError;
use crate::store::{PendingWait, RunId};

/// The wait among `pending` an answer is for: the one `named` names, or the only one.
/// `run` is the run's id for messages (`None`: "the run").
///
/// # Errors
/// [`ResumeError::NotPaused`] when nothing is pending, [`ResumeError::NoSuchWait`] when
/// `named` names none of them, [`ResumeError::SeveralWaits`] when more than one is left to
/// choose from.
pub(super) fn choose_wait<'w>(
    run: Option<&RunId>,
    pending: &'w [PendingWait],
    named: Option<&str>,
) -> Result<&'w PendingWait, ResumeError> {
    if pending.is_empty() {
        return Err(ResumeError::NotPaused { run: run.cloned() });
    }
    let chosen: Vec<&PendingWait> = match named {
        Some(name) => PendingWait::named(pending, name),
        None => pending.iter().collect(),
    };
    match chosen.as_slice() {
        [one] => Ok(one),
        [] => Err(ResumeError::NoSuchWait {
            run: run.cloned(),
            named: named.unwrap_or_default().to_owned(),
            waits: keys(pending),
        }),
        _ => Err(ResumeError::SeveralWaits {
            run: run.cloned(),
            waits: keys(pending),
        }),
    }
}

/// A wait known only by where it is (its node, its block), for a run stopped before its
/// pause was recorded (a crash) or a wait read from the run's cursor.
pub(super) fn unrecorded_wait(node_id: String, scope: Option<String>) -> PendingWait {
    PendingWait {
        node_id,
        header: None,
        prompt: String::new(),
        answer: String::new(),
        choices: Vec::new(),
        schema: None,
        auto_answer: None,
        auto_answer_at: None,
        scope,
        permission: None,
    }
}

/// The keys of `waits`, for messages.
pub(super) fn keys(waits: &[PendingWait]) -> Vec<String> {
    waits.iter().map(PendingWait::key).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(scope: Option<&str>, node: &str) -> PendingWait {
        unrecorded_wait(node.to_owned(), scope.map(str::to_owned))
    }

    fn run() -> RunId {
        RunId::new("r1")
    }

    #[test]
    fn the_only_wait_needs_no_name() {
        let pending = [wait(Some("fan@1#0"), "ok")];
        let chosen = choose_wait(Some(&run()), &pending, None).unwrap();
        assert_eq!(chosen.key(), "fan@1#0/ok");
    }

    #[test]
    fn a_wait_is_named_by_its_key_or_its_unique_node_id() {
        let pending = [wait(Some("fan@1#0"), "ok"), wait(Some("fan@1#1"), "check")];
        let by_key = choose_wait(None, &pending, Some("fan@1#0/ok")).unwrap();
        assert_eq!(by_key.key(), "fan@1#0/ok");
        let by_node = choose_wait(None, &pending, Some("check")).unwrap();
        assert_eq!(by_node.key(), "fan@1#1/check");
    }

    #[test]
    fn several_waits_need_a_name_and_the_message_lists_them_all() {
        let pending = [wait(Some("fan@1#0"), "ok"), wait(Some("fan@1#1"), "ok")];
        let unnamed = choose_wait(Some(&run()), &pending, None).unwrap_err();
        assert_eq!(
            unnamed.to_string(),
            "run `r1` is paused at `fan@1#0/ok`, `fan@1#1/ok`: name the one to answer with `--wait`"
        );
        let shared_node_id = choose_wait(None, &pending, Some("ok")).unwrap_err();
        assert_eq!(
            shared_node_id.to_string(),
            "the run is paused at `fan@1#0/ok`, `fan@1#1/ok`: name the one to answer with `--wait`"
        );
    }

    #[test]
    fn a_name_that_matches_nothing_lists_what_is_pending() {
        let pending = [wait(None, "approve")];
        let error = choose_wait(Some(&run()), &pending, Some("ship")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "run `r1` has no pending wait `ship`; it is paused at `approve`"
        );
    }

    #[test]
    fn nothing_pending_takes_no_answer() {
        let error = choose_wait(None, &[], Some("approve")).unwrap_err();
        assert!(
            matches!(error, ResumeError::NotPaused { run: None }),
            "{error}"
        );
    }
}
