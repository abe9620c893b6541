//! Waits: pausing (committed as a step of its own), answering (another step), and
//! `auto-approve` waits that answer themselves. A wait of the run itself pauses the run in
//! the commit; a wait in a block pauses that block only, and the run pauses once its
//! other blocks have ended.

use std::sync::Arc;
use std::time::Instant;

use super::attempt::deadline;
use super::commit::Record;
use super::{Stop, Walker};
use crate::ir::{NodeIdx, NodeKind};
use crate::lower::StepIdx;
use crate::runtime::exec;
use crate::runtime::shared::Shared;
use crate::runtime::{NodeError, RunEvent};
use crate::store::{self, PendingWait, StepStatus, Timestamp};

impl Walker<'_> {
    /// At a wait: answers it itself after `auto-approve`'s delay (returning where to go
    /// next), or commits the pause (returning the pending wait of the run itself, or
    /// stopping a block's walk with it).
    pub(super) async fn wait(&mut self, at: StepIdx) -> Result<Result<StepIdx, PendingWait>, Stop> {
        let shared = self.shared;
        let node = shared
            .program
            .plan
            .step(at)
            .node
            .expect("a wait step has a node");
        let NodeKind::Wait(wait) = &shared.workflow().node(node).kind else {
            return Err(Stop::Failed {
                node: shared.id(node).clone(),
                error: NodeError::fatal("not a wait"),
            });
        };
        self.check_limits()?;
        // A dry run answers at once, with the auto-approve answer or a canned one.
        if shared.ctx.dry_run {
            let answer = exec::canned_answer(wait);
            shared.emit(RunEvent::WaitAutoApprove {
                node: shared.id(node).clone(),
                after_ms: 0,
                answer: answer.clone(),
            });
            return self.give_answer(at, node, &answer).await.map(Ok);
        }
        let question = match exec::pending_wait(shared, &self.frame, node, self.step_no()) {
            Ok(question) => question,
            Err(error) => {
                return self
                    .fail(at, node, error, 1, self.shared.ctx.executor.now())
                    .await
                    .map(Ok);
            }
        };
        let id = shared.id(node).clone();
        if let Some(auto) = &wait.auto_approve {
            return self.auto_answer(at, node, id, question, auto).await;
        }
        let pending = self.pending_record(&id, &question);
        if self.scope.is_top() {
            self.emit_paused(self.step_no(), &id, &question);
        }
        self.commit_pause(at, &id, pending.clone()).await?;
        self.paused(pending)
    }

    /// A walk stopped at `pending`: the run's own walk returns it, a block's stops.
    fn paused(&self, pending: PendingWait) -> Result<Result<StepIdx, PendingWait>, Stop> {
        if self.scope.is_top() {
            Ok(Err(pending))
        } else {
            Err(Stop::Paused(vec![pending]))
        }
    }

    /// The pending wait at `node` again, for a block resumed without its answer.
    pub(super) fn pending_again(&self, node: NodeIdx) -> Result<PendingWait, Stop> {
        let question = exec::pending_wait(self.shared, &self.frame, node, self.step_no()).map_err(
            |error| Stop::Failed {
                node: self.shared.id(node).clone(),
                error,
            },
        )?;
        Ok(self.pending_record(self.shared.id(node), &question))
    }

    /// Tells the sinks the run is paused at `id` (step `step`) with `question`.
    fn emit_paused(&self, step: u64, id: &Arc<str>, question: &exec::Question) {
        self.shared.emit(RunEvent::RunPaused {
            run_id: self.shared.program.run_id.to_string(),
            step,
            node: id.clone(),
            wait: None,
            header: question.header.clone(),
            prompt: question.prompt.clone(),
            answer: question.answer.clone(),
            choices: question.choices.clone(),
        });
    }

    /// Commits the pause at the wait `at` as its own step, with what `atomic resume` needs.
    async fn commit_pause(
        &mut self,
        at: StepIdx,
        id: &str,
        pending: PendingWait,
    ) -> Result<(), Stop> {
        self.commit(Record {
            node: Arc::from(id),
            status: StepStatus::Waiting,
            attempts: 1,
            started_at: self.shared.ctx.executor.now(),
            delta: store::StateDelta::new(),
            outputs: store::State::new(),
            writes: Vec::new(),
            next: Some(at),
            waiting: true,
            error: None,
            wait: Some(pending),
        })
        .await
    }

    /// Answers the wait at `at` with `answer` given by the workflow itself (auto-approve,
    /// a dry run) or checked before the run resumed (a wait in a block); an answer the
    /// wait's type refuses fails the node.
    pub(super) async fn give_answer(
        &mut self,
        at: StepIdx,
        node: NodeIdx,
        answer: &str,
    ) -> Result<StepIdx, Stop> {
        match self.answer(at, node, answer).await? {
            Ok(next) => Ok(next),
            Err(message) => {
                self.fail(
                    at,
                    node,
                    NodeError::fatal(message),
                    1,
                    self.shared.ctx.executor.now(),
                )
                .await
            }
        }
    }

    /// An `auto-approve` wait: the pause is committed first, with its deadline, so a run
    /// stopped while it waits (a crash, Ctrl-C) is still paused there, answers itself at
    /// the first deadline when resumed, and can be answered sooner with `atomic resume
    /// RUN --answer …`. This process then waits out the delay and gives the answer;
    /// Ctrl-C while it waits leaves the run paused (exit 4) rather than cancelled.
    async fn auto_answer(
        &mut self,
        at: StepIdx,
        node: NodeIdx,
        id: Arc<str>,
        mut question: exec::Question,
        auto: &crate::ir::AutoApprove,
    ) -> Result<Result<StepIdx, PendingWait>, Stop> {
        let shared = self.shared;
        let answer = auto.answer.value.clone();
        let answer_at = match self.resumed_auto_at.take() {
            Some(answer_at) => answer_at,
            None => {
                let answer_at = self
                    .shared
                    .ctx
                    .executor
                    .now()
                    .0
                    .saturating_add(auto.after.value.0);
                let mut pending = self.pending_record(&id, &question);
                pending.auto_answer = Some(answer.clone());
                pending.auto_answer_at = Some(Timestamp(answer_at));
                self.commit_pause(at, &id, pending).await?;
                answer_at
            }
        };
        let after_ms = answer_at.saturating_sub(self.shared.ctx.executor.now().0);
        shared.emit(RunEvent::WaitAutoApprove {
            node: id.clone(),
            after_ms,
            answer: answer.clone(),
        });
        tokio::select! {
            biased;
            () = shared.ctx.cancel.cancelled() => {
                if self.scope.is_top() {
                    self.emit_paused(shared.journal.ledger.last(), &id, &question);
                }
                question.auto_answer = Some((answer.clone(), Timestamp(answer_at)));
                let mut pending = self.pending_record(&id, &question);
                pending.auto_answer = Some(answer);
                pending.auto_answer_at = Some(Timestamp(answer_at));
                return self.paused(pending);
            }
            () = deadline(shared.program.deadline.as_ref()) => return Err(Stop::Limit(self.timeout_message())),
            () = shared.ctx.executor.timer(std::time::Duration::from_millis(after_ms)) => {}
        }
        self.give_answer(at, node, &answer).await.map(Ok)
    }

    /// Applies an answer to the wait at `at` and commits it as its own step. The inner
    /// error is a bad answer (nothing was applied).
    pub(crate) async fn answer(
        &mut self,
        at: StepIdx,
        node: NodeIdx,
        answer: &str,
    ) -> Result<Result<StepIdx, String>, Stop> {
        let shared = self.shared;
        let writes = match exec::answer_writes(shared, node, answer) {
            Ok(writes) => writes,
            Err(message) => return Ok(Err(message)),
        };
        let now = self.shared.ctx.executor.now();
        Ok(self
            .complete(
                at,
                node,
                super::attempt::Succeeded {
                    writes,
                    attempts: 1,
                    files: None,
                },
                Instant::now(),
                now,
            )
            .await?
            .map_err(|error| error.message))
    }

    /// What the store keeps about a pause, for `atomic resume` and `atomic runs`.
    fn pending_record(&self, id: &str, question: &exec::Question) -> PendingWait {
        pending_record(self.shared, &self.scope, id, question)
    }
}

fn pending_record(
    shared: &Shared,
    scope: &super::ScopePath,
    id: &str,
    question: &exec::Question,
) -> PendingWait {
    PendingWait {
        node_id: id.to_owned(),
        header: question.header.clone(),
        prompt: question.prompt.clone(),
        answer: question.answer.clone(),
        choices: question
            .choices
            .iter()
            .map(|choice| store::WaitChoice {
                value: choice.value.clone(),
                label: choice.label.clone(),
                description: choice.description.clone(),
            })
            .collect(),
        schema: question
            .schema
            .as_ref()
            .map(|schema| shared.ctx.base_dir.join(schema).display().to_string()),
        auto_answer: question
            .auto_answer
            .as_ref()
            .map(|(answer, _)| answer.clone()),
        auto_answer_at: question.auto_answer.as_ref().map(|(_, at)| *at),
        scope: scope.as_str().map(str::to_owned),
        permission: None,
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;
    use std::time::Duration;

    use serde_json::json;

    use crate::runtime::RunEnd;
    use crate::runtime::testing::{Harness, Progress, plan};

    #[tokio::test]
    async fn an_auto_approve_wait_resumed_later_waits_only_what_is_left_of_its_first_deadline() {
        let plan = plan(
            r#"workflow "w" {
    state { field "ship" type="boolean" default=#false; }
    wait "approve" prompt="Ship?" answer="yes-no" {
        output "ship"
        auto-approve after="60s" answer="yes"
    }
}"#,
        );
        let h = Harness::new();
        {
            let mut run = pin!(h.start(&plan));
            let Progress::Waiting(delay) = h.until_timer(run.as_mut()).await else {
                panic!("the wait waits out its delay")
            };
            assert_eq!(delay, Duration::from_secs(60));
            // The process dies 20 s in, and comes back 15 s later.
            h.clock.advance(Duration::from_secs(20));
        }
        h.clock.advance(Duration::from_secs(15));

        let done = h.with_time(h.resume(&plan, None, None)).await.unwrap();
        assert_eq!(done.end, RunEnd::Completed);
        assert_eq!(done.state["ship"], json!(true));
        assert_eq!(
            h.executor.timers(),
            [Duration::from_secs(60), Duration::from_secs(25)],
            "the resumed run keeps the first deadline"
        );
        assert_eq!(h.clock.elapsed(), Duration::from_secs(60));
    }
}
