//! `possibly-unset`: a value is read on a path where it may not have been written yet.
//!
//! ## What it does
//! Definite assignment over the workflow's control flow (see `flow` and `assigned`): a
//! state field without a `default`, or `outputs.<id>` of a node, is set once a node writes
//! it. A read is reported when some way of reaching it skips every write: a `while` loop
//! that ran zero times, a `decision` route that jumps past the writer, a `race`/`any`
//! parallel whose winning branch did not write it, an empty `for-each`, a node that failed
//! and was skipped by `on-error "skip"`, or a backward `goto` to before the writer.
//! `until` loops count as having run once. Reads of a sibling branch's output are left to
//! `sibling-branch-read`. Reads that test for the value (`state.x is none`, `is defined`,
//! `is undefined`, `state.x | default(…)`, and bare truth tests such as `when "state.x"`,
//! `until="not state.x"` or `{% if state.x %}`, which the runtime evaluates as false when
//! unset) are not reported.
//!
//! ## Why is this bad?
//! An unset value renders as nothing, so the agent or condition silently sees a hole.
//!
//! ## Example
//! ```kdl
//! decision "route" { when "input.quick" goto="gate"; otherwise; }
//! agent "review" { prompt "Review"; }
//! decision "gate" { when "outputs.review | length > 0" goto="ship"; otherwise goto="end"; }
//! ```
//!
//! ## Use instead
//! Give the field a `default`, or make the writer run on every path before the read.

use std::collections::HashSet;

use crate::diagnostic::{Code, Diagnostic};

use super::super::assigned::{Assigned, Key};
use super::super::driver::Facts;
use super::super::flow::{Cfg, Effect, PointKind};
use super::super::model::{Role, has_output};
use super::super::reads::{Read, relative};
use crate::ir::Template;

/// Reports reads that may happen before any write.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let reads = tracked_reads(facts);
    if reads.is_empty() {
        return;
    }
    let mut keys: Vec<Key> = reads.iter().map(|read| read.key).collect();
    keys.sort();
    keys.dedup();
    let assigned = Assigned::compute(&facts.model, &facts.cfg, &keys);
    let mut reported = HashSet::new();
    for read in reads {
        if assigned.holds(read.point, read.key) || !reported.insert((read.point, read.key)) {
            continue;
        }
        out.push(diagnostic(facts, &assigned, &read));
    }
}

/// A read of a value that can be unset, at a point of the graph.
struct TrackedRead<'r> {
    read: &'r Read,
    key: Key,
    point: usize,
    node: crate::ir::NodeIdx,
}

fn tracked_reads<'f>(facts: &'f Facts<'_>) -> Vec<TrackedRead<'f>> {
    let workflow = facts.workflow;
    let mut reads = Vec::new();
    for site in &facts.model.sites {
        let point = match site.role {
            Role::Until | Role::While => facts.cfg.test_point(site.node),
            _ => None,
        }
        .unwrap_or(Cfg::entry(site.node));
        for read in site.reads() {
            let key = match (read.root(), read.member()) {
                ("state", Some(name)) => workflow
                    .state
                    .iter()
                    .position(|field| field.name.value == name && field.default.is_none())
                    .map(Key::Field),
                ("outputs", Some(id)) => facts
                    .model
                    .node(id)
                    .filter(|&target| {
                        has_output(&workflow.node(target).kind)
                            && facts.model.sibling_branches(site.node, target).is_none()
                    })
                    .map(Key::Output),
                _ => None,
            };
            if let Some(key) = key
                && !is_guarded(site.template, site.is_expr, read)
            {
                reads.push(TrackedRead {
                    read,
                    key,
                    point,
                    node: site.node,
                });
            }
        }
    }
    reads
}

/// Whether the read tests for a value rather than using it: `state.x is none`,
/// `is defined`, `is undefined` (with or without `not`), `state.x | default(…)`, or a bare
/// truth test (a condition that is just `state.x` or `not state.x`, `{% if state.x %}`),
/// which the runtime evaluates as false when the value is unset.
fn is_guarded(template: &Template, is_expr: bool, read: &Read) -> bool {
    let Some(range) = relative(template, read.span) else {
        return false;
    };
    let (Some(before), Some(rest)) = (
        template.source.get(..range.start),
        template.source.get(range.end..),
    ) else {
        return false;
    };
    if is_truth_test(before, rest, is_expr) {
        return true;
    }
    let rest = rest.trim_start();
    if let Some(test) = rest.strip_prefix("is ") {
        let test = test.trim_start();
        let test = test.strip_prefix("not ").map_or(test, str::trim_start);
        return ["none", "defined", "undefined"].iter().any(|name| {
            test.starts_with(name)
                && !test[name.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        });
    }
    if let Some(filter) = rest.strip_prefix('|') {
        let filter = filter.trim_start();
        return filter.starts_with("default")
            || filter.starts_with("d(")
            || filter == "d"
            || filter.starts_with("d ");
    }
    false
}

fn is_truth_test(before: &str, after: &str, is_expr: bool) -> bool {
    let before = before.trim_end();
    let before = before
        .strip_suffix("not")
        .filter(|rest| rest.is_empty() || rest.ends_with(char::is_whitespace))
        .map_or(before, str::trim_end);
    if is_expr {
        return before.is_empty() && after.trim().is_empty();
    }
    let after = after.trim_start();
    let closes = after.starts_with("%}") || after.starts_with("-%}");
    let opens = ["if", "elif"].iter().any(|keyword| {
        before.strip_suffix(keyword).is_some_and(|rest| {
            let rest = rest.trim_end();
            rest.ends_with("{%") || rest.ends_with("{%-")
        })
    });
    closes && opens
}

fn diagnostic(facts: &Facts<'_>, assigned: &Assigned, read: &TrackedRead<'_>) -> Diagnostic {
    let workflow = facts.workflow;
    let cfg = &facts.cfg;
    let reader = &workflow.node(read.node).id.value;
    let value = match read.key {
        Key::Field(field) => format!("state.{}", workflow.state[field].name.value),
        Key::Output(node) => format!("outputs.{}", workflow.node(node).id.value),
    };
    // When some ways in write it and others do not, name one that does not.
    let arrivals = assigned.arrivals(cfg, read.point, read.key);
    let missing = arrivals
        .iter()
        .find(|(_, written)| !written)
        .filter(|_| arrivals.iter().any(|(_, written)| *written))
        .map(|&(edge, _)| cfg.edges[edge]);
    let mut message = format!("`{value}` may be unset when `{reader}` is reached");
    let mut secondary = None;
    match missing.map(|edge| (edge.effect, cfg.points[edge.from])) {
        Some((Effect::Skipped(node), _)) => {
            let node = workflow.node(node);
            message.push_str(&format!(" after `{}` fails and is skipped", node.id.value));
            secondary = Some((
                node.id.span,
                "`on-error \"skip\"` continues without its outputs".to_owned(),
            ));
        }
        Some((_, kind)) if !matches!(kind, PointKind::Start | PointKind::End) => {
            if let Some(from) = kind.node().filter(|&from| from != read.node) {
                let node = workflow.node(from);
                message.push_str(&format!(" via `{}`", node.id.value));
                secondary = Some((
                    node.id.span,
                    format!("`{reader}` can be reached from here without `{value}` being written"),
                ));
            }
        }
        _ => {}
    }
    let mut diagnostic =
        Diagnostic::new(Code::PossiblyUnset, read.read.span, message).label("read here");
    if let Some((span, label)) = secondary {
        diagnostic = diagnostic.with_label(span, label);
    }
    let help = match read.key {
        Key::Field(_) => "give the field a default or write it on every path before".to_owned(),
        Key::Output(node) => format!(
            "make sure `{}` runs on every path before `{reader}`, or read a state field with a default",
            workflow.node(node).id.value
        ),
    };
    diagnostic.help(help)
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, only, run};
    use crate::diagnostic::Code;
    use crate::ir::{OnError, Strategy, ValueType};

    #[test]
    fn straight_line_reads_before_and_after_the_write() {
        let mut b = Builder::new();
        b.field("plan", ValueType::String, None);
        b.field("notes", ValueType::String, Some("".into()));
        b.agent(
            "early",
            "{{ state.plan }} {{ state.notes }} {{ outputs.late }}",
        );
        b.agent_to("late", "x", "plan");
        b.agent("after", "{{ state.plan }} {{ outputs.late }}");
        let found = run(&b.finish());
        assert_eq!(
            messages(&found, Code::PossiblyUnset),
            [
                "`state.plan` may be unset when `early` is reached",
                "`outputs.late` may be unset when `early` is reached",
            ]
        );
        let diagnostic = &only(found, Code::PossiblyUnset)[0];
        assert_eq!(
            diagnostic.help.as_deref(),
            Some("give the field a default or write it on every path before")
        );
    }

    #[test]
    fn a_decision_jumping_past_the_writer_is_named() {
        let mut b = Builder::new();
        b.input("quick", ValueType::Boolean, None);
        b.decision("route", &[("input.quick", "gate")], Some("next"));
        b.agent("review", "x");
        b.decision(
            "gate",
            &[("outputs.review | length > 2", "end")],
            Some("next"),
        );
        let found = only(run(&b.finish()), Code::PossiblyUnset);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].message,
            "`outputs.review` may be unset when `gate` is reached via `route`"
        );
        assert_eq!(found[0].labels.len(), 1);
    }

    #[test]
    fn loops_race_and_skip() {
        let mut b = Builder::new();
        b.field("a", ValueType::String, None);
        b.field("b", ValueType::String, None);
        b.field("c", ValueType::String, None);
        b.loop_("once", Some("state.a"), None, 3, |b| {
            b.set("a", "1");
        });
        b.loop_("maybe", None, Some("true"), 3, |b| {
            b.set("b", "1");
        });
        b.parallel("race", Strategy::Race, None, |b| {
            b.branch("x", |b| {
                b.set("c", "1");
            });
            b.branch("y", |b| {
                b.agent("y", "x");
            });
        });
        let flaky = b.agent_to("flaky", "x", "a");
        let span = b.span(1);
        b.on_error(
            flaky,
            OnError::Skip {
                fallback: Vec::new(),
                span,
            },
        );
        b.agent(
            "use",
            "{{ state.a }} {{ state.b }} {{ state.c }} {{ outputs.flaky }}",
        );
        let found = run(&b.finish());
        assert_eq!(
            messages(&found, Code::PossiblyUnset),
            [
                "`state.b` may be unset when `use` is reached",
                "`state.c` may be unset when `use` is reached",
                "`outputs.flaky` may be unset when `use` is reached after `flaky` fails and is skipped",
            ]
        );
    }

    #[test]
    fn parallel_all_writes_count_after_the_join() {
        let mut b = Builder::new();
        b.parallel("all", Strategy::All, None, |b| {
            b.branch("x", |b| {
                b.agent("left", "x");
            });
            b.branch("y", |b| {
                b.agent("right", "x");
            });
        });
        b.agent(
            "use",
            "{{ outputs.left }} {{ outputs.right }} {{ outputs.all.winner }}",
        );
        assert!(only(run(&b.finish()), Code::PossiblyUnset).is_empty());
    }

    #[test]
    fn use_inherits_prompts_and_outputs_like_the_runtime() {
        let mut b = Builder::new();
        b.field("findings", ValueType::Array, None);
        // `early` runs `review`'s prompt before `plan` exists, and writes `findings`.
        let early = b.agent("early", "");
        b.agent_mut(early).prompt = None;
        let name = b.name("review");
        b.agent_mut(early).use_ = Some(name);
        // Written only through `early`'s inherited `output`.
        b.agent("after", "{{ state.findings }}");
        b.agent("plan", "x");
        b.agent_to("review", "{{ outputs.plan }} {{ bogus }}", "findings");
        let found = run(&b.finish());
        assert_eq!(
            messages(&found, Code::PossiblyUnset),
            ["`outputs.plan` may be unset when `early` is reached"]
        );
        // The inherited text's own problems are reported once, at its owner.
        assert_eq!(messages(&found, Code::UndeclaredVariable).len(), 1);
    }

    #[test]
    fn guarded_reads_are_not_reported() {
        let mut b = Builder::new();
        b.field("latest", ValueType::Any, None);
        b.loop_("poll", None, Some("state.latest is none"), 3, |b| {
            b.set("latest", "1");
        });
        b.agent(
            "a",
            "{{ state.latest | default('none') }} {{ state.latest is not defined }}",
        );
        b.agent(
            "c",
            "{% if state.latest %}{{ 1 }}{%- elif not state.latest -%}{% endif %}",
        );
        b.decision("d", &[("not state.latest", "end")], Some("next"));
        b.agent(
            "b",
            "{{ state.latest is nonesuch }} {{ state.latest | dict }}",
        );
        b.decision("e", &[("state.latest > 3", "end")], Some("next"));
        let found = run(&b.finish());
        assert_eq!(
            messages(&found, Code::PossiblyUnset),
            [
                "`state.latest` may be unset when `b` is reached",
                "`state.latest` may be unset when `e` is reached"
            ]
        );
    }

    #[test]
    fn until_conditions_see_the_body_and_while_conditions_do_not() {
        let mut b = Builder::new();
        b.field("done", ValueType::Boolean, None);
        b.loop_("u", Some("state.done"), None, 3, |b| {
            b.set("done", "true");
        });
        b.loop_("w", None, Some("outputs.probe != 'ok'"), 3, |b| {
            b.tool("probe", &["true"]);
        });
        let found = run(&b.finish());
        assert_eq!(
            messages(&found, Code::PossiblyUnset),
            ["`outputs.probe` may be unset when `w` is reached"]
        );
    }
}
