//! `unguarded-side-effect`: a step with side effects may run twice but is not declared
//! idempotent.
//!
//! ## What it does
//! Reports a `tool` with a `retry` policy (more than one attempt) or `on-error "retry"`, and
//! an `agent` that may edit files (`permission="accept-edits"` or `"bypass"`) with the same,
//! unless the node says `idempotent=#true`.
//!
//! ## Why is this bad?
//! A retried attempt repeats whatever the failed one already did: a second deploy, a
//! duplicate comment, a file edited twice.
//!
//! ## Example
//! ```kdl
//! tool "deploy" { run "./deploy.sh"; retry attempts=3; }
//! ```
//!
//! ## Use instead
//! ```kdl
//! tool "deploy" idempotent=#true { run "./deploy.sh" "--if-changed"; retry attempts=3; }
//! ```

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{NodeKind, OnError, PermissionMode};

use super::super::driver::Facts;

/// Reports retried side effects without an idempotency declaration.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    for node in &facts.workflow.nodes {
        if node.idempotent {
            continue;
        }
        let what = match &node.kind {
            NodeKind::Tool(_) => "tool",
            NodeKind::Agent(agent)
                if agent.permission.as_ref().is_some_and(|mode| {
                    matches!(
                        mode.value,
                        PermissionMode::AcceptEdits | PermissionMode::Bypass
                    )
                }) =>
            {
                "agent that may edit files"
            }
            _ => continue,
        };
        let retried = node
            .retry
            .as_ref()
            .filter(|retry| retry.attempts > 1)
            .map(|retry| retry.span)
            .or(match node.on_error.as_deref() {
                Some(OnError::Retry { span }) => Some(*span),
                _ => None,
            });
        let Some(span) = retried else {
            continue;
        };
        out.push(
            Diagnostic::new(
                Code::UnguardedSideEffect,
                span,
                format!(
                    "{what} `{}` may run more than once but is not declared idempotent",
                    node.id.value
                ),
            )
            .label("a retry repeats what a failed attempt already did")
            .with_label(
                node.id.span,
                format!("`{}` has side effects", node.id.value),
            )
            .help("mark it `idempotent=#true` if running it twice is safe, or remove the retry"),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, run};
    use crate::diagnostic::Code;
    use crate::ir::{Duration, OnError, PermissionMode, Retry};
    use crate::source::Spanned;

    fn retry(b: &mut Builder, attempts: u32) -> Retry {
        Retry {
            attempts,
            backoff: Duration(1000),
            factor: 2.0,
            max_backoff: None,
            jitter: false,
            on: Vec::new(),
            span: b.span(10),
        }
    }

    #[test]
    fn reports_retried_tools_and_editing_agents() {
        let mut b = Builder::new();
        let deploy = b.tool("deploy", &["./deploy.sh"]);
        let policy = retry(&mut b, 3);
        b.node_mut(deploy).retry = Some(Box::new(policy));
        let safe = b.tool("safe", &["true"]);
        let policy = retry(&mut b, 3);
        b.node_mut(safe).retry = Some(Box::new(policy));
        b.node_mut(safe).idempotent = true;
        let once = b.tool("once", &["true"]);
        let policy = retry(&mut b, 1);
        b.node_mut(once).retry = Some(Box::new(policy));
        let editor = b.agent("edit", "x");
        let span = b.span(5);
        b.agent_mut(editor).permission = Some(Spanned::new(PermissionMode::Bypass, span));
        let span = b.span(5);
        b.on_error(editor, OnError::Retry { span });
        let reader = b.agent("read", "x");
        let policy = retry(&mut b, 3);
        b.node_mut(reader).retry = Some(Box::new(policy));
        assert_eq!(
            messages(&run(&b.finish()), Code::UnguardedSideEffect),
            [
                "tool `deploy` may run more than once but is not declared idempotent",
                "agent that may edit files `edit` may run more than once but is not declared idempotent",
            ]
        );
    }
}
