//! `decision "<id>" { when "<expr>" goto="<id>" max=N; otherwise goto="<id>" }`.

use super::resolver::{Resolver, exact};
use crate::check::structure::Checked;
use crate::diagnostic::{Code, Diagnostic, Fix};
use crate::ir::{Decision, Jump, Route};
use crate::source::Sources;
use crate::syntax::kdl::Node;

/// The routes; targets are resolved later (they are [`Jump::Next`] here).
pub(super) fn resolve_decision(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Decision {
    let routes = exact(checked.children_of("when").filter_map(|when| {
        let condition = r.template(when.arg(0))?;
        let target = r.string(when.prop("goto"))?;
        Some(Route {
            when: Some(condition),
            target: Some(target),
            jump: Jump::Next,
            max: r.integer(when.prop("max")),
            span: when.node.span,
        })
    }));
    let otherwise = checked.child("otherwise").map(|otherwise| Route {
        when: None,
        target: r.string(otherwise.prop("goto")),
        jump: Jump::Next,
        max: r.integer(otherwise.prop("max")),
        span: otherwise.node.span,
    });
    if otherwise.is_none() {
        let fix = add_otherwise(r.sources, checked.node);
        r.report(
            Diagnostic::new(Code::MissingOtherwise, checked.name_span(), "`decision` has no `otherwise`")
                .label("routing is not total")
                .help("add `otherwise goto=\"<id>\"` (or a bare `otherwise` to continue with the next statement)")
                .maybe_fix(fix),
        );
    }
    Decision { routes, otherwise }
}

/// `otherwise goto="end"` before the decision's closing `}`: on a line of its own,
/// indented one level past the decision, or after the last route of a one-line block.
fn add_otherwise(sources: &Sources, decision: &Node) -> Option<Fix> {
    let block = decision.children.as_ref()?.span;
    let file = &sources.get(block.source).text;
    let close = (block.end as usize).checked_sub(1)?;
    if file.as_bytes().get(close) != Some(&b'}') {
        return None;
    }
    let title = "Add `otherwise goto=\"end\"`";
    let within = |from: usize, to: usize| {
        block.slice(from - block.start as usize..to - block.start as usize)
    };
    let close_line = file[..close].rfind('\n').map_or(0, |newline| newline + 1);
    if close_line > block.start as usize && file[close_line..close].trim().is_empty() {
        let start = decision.span.start as usize;
        let line_start = file[..start].rfind('\n').map_or(0, |newline| newline + 1);
        let before = &file[line_start..start];
        let indent = &before[..before.len() - before.trim_start().len()];
        return Some(Fix::edit(
            title,
            within(close_line, close_line),
            format!("{indent}    otherwise goto=\"end\"\n"),
        ));
    }
    // `{ when …; }` on one line: `…; otherwise goto="end"; }`.
    let before = file[..close].trim_end_matches(' ');
    let separator = if before.ends_with(';') || before.ends_with('{') {
        " "
    } else {
        "; "
    };
    Some(Fix::edit(
        title,
        within(before.len(), close),
        format!("{separator}otherwise goto=\"end\"; "),
    ))
}
