//! Answers: where a resumed run starts given the answer it brings (its own wait, a
//! paused block's wait, an agent's permission request), and the check every answer gets
//! against its wait's type before anything runs, so a refused answer leaves the run paused
//! as it was. [`check_pending_answer`] makes the same judgement without running anything,
//! for an engine that must refuse an answer before it records it (Temporal's validator).

use std::borrow::Cow;
use std::sync::Arc;

use super::ResumeError;
use super::wait_choice::{choose_wait, keys, unrecorded_wait};
use crate::ir::NodeKind;
use crate::lower::Plan;
use crate::providers::PermissionAnswer;
use crate::runtime::cursor::Cursor;
use crate::runtime::shared::Shared;
use crate::runtime::walk::{Recovery, ScopePath, Start};
use crate::runtime::{RunContext, RunError};
use crate::store::{Checkpoint, PendingWait, RunId, RunStatus};

/// Where a resumed run starts: at its own wait with the answer, at an `auto-approve` wait
/// that answers itself, or at its next step (the answer, if any, handed to the paused block
/// or asking agent it is for, checked first). Refuses an answer nothing waits for, and a
/// run paused at waits that gets none.
pub(super) fn start_of(
    shared: &Shared,
    run_id: &RunId,
    checkpoint: &Checkpoint,
    cursor: &Cursor,
    recovery: &Recovery,
    answer: Option<&str>,
    wait: Option<&str>,
) -> Result<Start, RunError> {
    let plan = &shared.program.plan;
    let node_at = |at| plan.node(at).map_or("?", |node| node.id.value.as_str());
    let recorded = &checkpoint.run.waits;
    let block_waits = recovery.waiting();
    let asking = recorded.iter().any(|pending| pending.permission.is_some());
    let not_paused = || ResumeError::NotPaused {
        run: Some(run_id.clone()),
    };
    Ok(match (cursor.next, cursor.waiting, answer) {
        // Paused at its own wait, nothing else can be pending: `--wait` may only name it.
        (Some(at), true, Some(answer)) => {
            let own = [unrecorded_wait(node_at(at).to_owned(), None)];
            choose_wait(Some(run_id), &own, wait)?;
            Start::Answer(at, answer.to_owned())
        }
        // An `auto-approve` wait answers itself at the deadline it was first given.
        (Some(at), true, None) if let Some(answer_at) = cursor.auto_answer_at => {
            Start::AutoWait(at, answer_at)
        }
        (Some(at), true, None) => {
            return Err(ResumeError::AnswerNeeded {
                run: run_id.clone(),
                waits: vec![node_at(at).to_owned()],
            }
            .into());
        }
        (Some(at), false, Some(answer)) if asking || !block_waits.is_empty() => {
            let pending = pending_elsewhere(recorded, recovery, &block_waits);
            let chosen = choose_wait(Some(run_id), &pending, wait)?;
            match &chosen.permission {
                // An agent paused at a permission request: its next call gets the answer.
                Some(pause) => {
                    let answer = parse_permission(chosen, answer)?;
                    recovery.set_permission(chosen.key(), (**pause).clone(), answer);
                }
                None if !block_waits.is_empty() => {
                    let scope = chosen.scope.clone().unwrap_or_default();
                    check_block_answer(plan, &shared.ctx, &scope, &chosen.node_id, answer)?;
                    recovery.set_answer(scope, answer.to_owned());
                }
                None => return Err(not_paused().into()),
            }
            Start::At(at)
        }
        (_, false, Some(_)) => return Err(not_paused().into()),
        (Some(at), false, None) => {
            // Waits that answer themselves need nobody; the others do.
            let stuck = checkpoint.run.status == RunStatus::Paused
                && recorded
                    .iter()
                    .all(|pending| pending.auto_answer_at.is_none());
            if stuck && (!block_waits.is_empty() || asking) {
                return Err(ResumeError::AnswerNeeded {
                    run: run_id.clone(),
                    waits: keys(recorded),
                }
                .into());
            }
            Start::At(at)
        }
        (None, _, _) => Start::At(plan.end()),
    })
}

/// The waits an answer may be for other than the run's own: those on record; for a run
/// stopped before it recorded its pause (a crash), the waits its paused blocks' cursors
/// stand at.
fn pending_elsewhere<'w>(
    recorded: &'w [PendingWait],
    recovery: &Recovery,
    block_waits: &[&str],
) -> Cow<'w, [PendingWait]> {
    if !recorded.is_empty() {
        return Cow::Borrowed(recorded);
    }
    let found = block_waits
        .iter()
        .filter_map(|scope| {
            let node = recovery
                .steps_of(&ScopePath::parse(scope))
                .last()
                .and_then(|cursor| cursor.next_key.as_deref().map(str::to_owned))?;
            Some(unrecorded_wait(node, Some((*scope).to_owned())))
        })
        .collect();
    Cow::Owned(found)
}

/// `answer` to the permission request `pending`, if it is one of its answers.
fn parse_permission(pending: &PendingWait, answer: &str) -> Result<PermissionAnswer, RunError> {
    PermissionAnswer::parse(answer).map_err(|message| RunError::BadAnswer {
        node: pending.node_id.clone(),
        message,
    })
}

/// Checks `answer` for one of a paused run's `waits` (the one `wait` names, or the only
/// one) against its type, running nothing: for an engine that must refuse an answer before
/// it records it (Temporal's update validator), with the error `resume` would give.
///
/// # Errors
/// [`RunError::BadAnswer`] for an answer that does not fit; [`RunError::Resume`] when no
/// wait, or several, fit `wait`.
pub fn check_pending_answer(
    plan: &Arc<Plan>,
    ctx: &RunContext,
    waits: &[PendingWait],
    answer: &str,
    wait: Option<&str>,
) -> Result<(), RunError> {
    let chosen = choose_wait(None, waits, wait)?;
    if chosen.permission.is_some() {
        return parse_permission(chosen, answer).map(drop);
    }
    check_block_answer(
        plan,
        ctx,
        chosen.scope.as_deref().unwrap_or_default(),
        &chosen.node_id,
        answer,
    )
}

/// Checks an answer for the wait `node` in the block at `scope` (empty: the run's own)
/// before anything runs, so a refused answer leaves the run paused as it was.
fn check_block_answer(
    plan: &Arc<Plan>,
    ctx: &RunContext,
    scope: &str,
    node: &str,
    answer: &str,
) -> Result<(), RunError> {
    // Follow the path through the subgraphs it enters to the workflow the wait is in.
    let mut plan = plan.clone();
    let mut base = ctx.base_dir.clone();
    for level in scope.split('/').filter(|level| !level.is_empty()) {
        // A parallel branch runs in the workflow it is part of.
        if level.contains('#') {
            continue;
        }
        let name = level.split('@').next().unwrap_or_default();
        let Some(NodeKind::Subgraph(subgraph)) = kind_of(&plan, name) else {
            return Err(ResumeError::NotASubgraph {
                scope: scope.to_owned(),
                node: name.to_owned(),
            }
            .into());
        };
        let loader = ctx
            .subgraphs
            .as_ref()
            .ok_or(ResumeError::NoSubgraphLoader)?;
        let path = base.join(subgraph.file());
        plan = loader
            .load(&path)
            .map_err(|message| ResumeError::SubgraphUnloadable { message })?;
        if let Some(dir) = path.parent() {
            base = dir.to_path_buf();
        }
    }
    let Some(NodeKind::Wait(wait)) = kind_of(&plan, node) else {
        return Err(ResumeError::NoSuchWaitNode {
            node: node.to_owned(),
            scope: scope.to_owned(),
        }
        .into());
    };
    crate::runtime::exec::check_answer(wait, &base, ctx.files.as_ref(), answer).map_err(|message| {
        RunError::BadAnswer {
            node: node.to_owned(),
            message,
        }
    })
}

/// The kind of the node `id` of `plan`'s workflow.
fn kind_of<'p>(plan: &'p Plan, id: &str) -> Option<&'p NodeKind> {
    plan.workflow()
        .nodes
        .iter()
        .find(|node| node.id.value == id)
        .map(|node| &node.kind)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::check_pending_answer;
    use crate::providers::{Answered, PermissionAnswer, PermissionAsk, ProviderError};
    use crate::runtime::executor::Scripted;
    use crate::runtime::testing::{Harness, plan, run_id};
    use crate::runtime::{ResumeError, RunEnd, RunError};
    use crate::store::{RunStatus, Store};

    /// The keys of the waits a run paused at.
    fn waits(end: &RunEnd) -> Vec<String> {
        match end {
            RunEnd::Paused { waits } => waits.iter().map(crate::store::PendingWait::key).collect(),
            other => panic!("not paused: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_bad_answer_leaves_the_run_paused_and_commits_nothing() {
        let plan = plan(
            r#"workflow "w" {
    provider "p" adapter="in-process"
    state {
        field "notes" type="string" default=""
        field "ship" type="boolean" default=#false
    }
    agent "prepare" provider="p" prompt="prepare" { output "notes"; }
    wait "approve" prompt="Ship it?" answer="yes-no" { output "ship"; }
}"#,
        );
        let h = Harness::new();
        h.executor.reply("prepare", "ready");
        let paused = h.start(&plan).await.unwrap();
        assert_eq!(waits(&paused.end), ["approve"]);
        let before = h.store.checkpoint(&run_id()).await.unwrap();

        let refused = h.resume(&plan, Some("perhaps"), None).await.unwrap_err();
        assert!(
            matches!(&refused, RunError::BadAnswer { node, .. } if node == "approve"),
            "{refused}"
        );
        let after = h.store.checkpoint(&run_id()).await.unwrap();
        assert_eq!(after.run.status, RunStatus::Paused);
        assert_eq!(after.seq, before.seq, "a refused answer commits nothing");

        let unanswered = h.resume(&plan, None, None).await.unwrap_err();
        assert_eq!(
            unanswered.to_string(),
            "run `r1` is paused at `approve`: pass an answer (`atomic resume r1 --answer …`)"
        );
        let misnamed = h
            .resume(&plan, Some("yes"), Some("ship"))
            .await
            .unwrap_err();
        assert_eq!(
            misnamed.to_string(),
            "run `r1` has no pending wait `ship`; it is paused at `approve`"
        );

        let done = h.resume(&plan, Some("yes"), None).await.unwrap();
        assert_eq!(done.end, RunEnd::Completed);
        assert_eq!(done.state, json!({"notes": "ready", "ship": true}));
        assert_eq!(
            h.executor.trace(),
            ["prepare"],
            "nothing before the wait re-ran"
        );
    }

    /// A for-each of two items whose branches each wait.
    const TWO_WAITS: &str = r#"workflow "w" {
    state {
        field "items" type="array" default="[\"x\", \"y\"]"
        field "answers" type="array" reduce="append" default="[]"
    }
    parallel "each" for-each="state.items" as="it" {
        wait "ok" prompt="Keep {{ it }}?" answer="integer" { output "answers"; }
    }
}"#;

    #[tokio::test]
    async fn several_pending_waits_need_the_wait_named() {
        let plan = plan(TWO_WAITS);
        let h = Harness::new();
        let paused = h.start(&plan).await.unwrap();
        assert_eq!(waits(&paused.end), ["each@1#0/ok", "each@1#1/ok"]);

        let unnamed = h.resume(&plan, Some("1"), None).await.unwrap_err();
        assert!(
            matches!(unnamed, RunError::Resume(ResumeError::SeveralWaits { .. })),
            "{unnamed}"
        );
        assert_eq!(
            unnamed.to_string(),
            "run `r1` is paused at `each@1#0/ok`, `each@1#1/ok`: name the one to answer with `--wait`"
        );
        // A node id both branches share names neither.
        let ambiguous = h.resume(&plan, Some("1"), Some("ok")).await.unwrap_err();
        assert!(
            matches!(
                ambiguous,
                RunError::Resume(ResumeError::SeveralWaits { .. })
            ),
            "{ambiguous}"
        );
        // The answer is checked against the named wait's type before anything runs.
        let bad = h
            .resume(&plan, Some("lots"), Some("each@1#1/ok"))
            .await
            .unwrap_err();
        assert!(matches!(bad, RunError::BadAnswer { .. }), "{bad}");

        let second = h
            .resume(&plan, Some("2"), Some("each@1#1/ok"))
            .await
            .unwrap();
        assert_eq!(waits(&second.end), ["each@1#0/ok"], "the other still waits");
        let done = h.resume(&plan, Some("1"), None).await.unwrap();
        assert_eq!(done.end, RunEnd::Completed);
        assert_eq!(done.state["answers"], json!([1, 2]), "merged in item order");
    }

    #[tokio::test]
    async fn check_pending_answer_judges_as_resume_does() {
        let plan = plan(TWO_WAITS);
        let h = Harness::new();
        let paused = h.start(&plan).await.unwrap();
        let RunEnd::Paused { waits } = paused.end else {
            panic!("not paused: {:?}", paused.end)
        };
        let ctx = h.context();
        let check = |answer, wait| check_pending_answer(&plan, &ctx, &waits, answer, wait);
        assert!(check("2", Some("each@1#1/ok")).is_ok());
        assert!(matches!(
            check("lots", Some("each@1#1/ok")),
            Err(RunError::BadAnswer { .. })
        ));
        assert_eq!(
            check("2", None).unwrap_err().to_string(),
            "the run is paused at `each@1#0/ok`, `each@1#1/ok`: name the one to answer with `--wait`"
        );
        assert_eq!(
            check("2", Some("nope")).unwrap_err().to_string(),
            "the run has no pending wait `nope`; it is paused at `each@1#0/ok`, `each@1#1/ok`"
        );
        assert!(matches!(
            check_pending_answer(&plan, &ctx, &[], "2", None),
            Err(RunError::Resume(ResumeError::NotPaused { run: None }))
        ));
    }

    #[tokio::test]
    async fn a_permission_answer_reaches_the_agents_next_call() {
        let plan = plan(
            r#"workflow "w" {
    provider "p" adapter="in-process"
    state { field "fixed" type="string" default=""; }
    agent "fix" provider="p" permission="ask" prompt="fix it" { output "fixed"; }
}"#,
        );
        let ask = PermissionAsk {
            tool: "Bash".to_owned(),
            input: json!({"command": "make"}),
        };
        let h = Harness::new();
        h.executor.agent(
            "fix",
            Scripted::Fails(ProviderError::awaiting_permission(
                "in-process",
                ask.clone(),
                Some("session-1".to_owned()),
            )),
        );
        let paused = h.start(&plan).await.unwrap();
        assert_eq!(waits(&paused.end), ["fix"]);

        let refused = h.resume(&plan, Some("maybe"), None).await.unwrap_err();
        assert!(matches!(refused, RunError::BadAnswer { .. }), "{refused}");
        assert_eq!(
            h.executor.trace(),
            ["fix"],
            "a refused answer calls nothing"
        );

        h.executor.reply("fix", "fixed it");
        let done = h.resume(&plan, Some("allow"), None).await.unwrap();
        assert_eq!(done.end, RunEnd::Completed);
        assert_eq!(done.state["fixed"], json!("fixed it"));
        let calls = h.executor.agent_calls();
        let [first, next] = calls.as_slice() else {
            panic!("two calls: {calls:#?}")
        };
        assert_eq!(first.grants.approvals.answered, None);
        assert_eq!(
            next.grants.approvals.answered,
            Some(Answered {
                ask,
                answer: PermissionAnswer::Allow
            })
        );
        assert_eq!(next.session.resume.as_deref(), Some("session-1"));
        assert!(
            next.prompt.text.contains("approved your request"),
            "{}",
            next.prompt.text
        );
    }

    #[tokio::test]
    async fn an_answer_nothing_waits_for_is_refused() {
        let plan = plan(
            r#"workflow "w" {
    provider "p" adapter="in-process"
    state { field "a" type="string" default=""; }
    agent "first" provider="p" prompt="one" { output "a"; }
}"#,
        );
        let h = Harness::new();
        h.executor.agent("first", Scripted::Hangs);
        h.crash(h.start(&plan)).await;
        let error = h.resume(&plan, Some("yes"), None).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            "run `r1` is not paused at a wait; it takes no answer"
        );
        assert_eq!(h.executor.trace(), ["first"], "nothing ran");
    }
}
