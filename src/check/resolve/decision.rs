//! `decision "<id>" { when "<expr>" goto="<id>" max=N; otherwise goto="<id>" }`.

use super::resolver::{Resolver, exact};
use crate::check::structure::Checked;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Decision, Jump, Route};

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
        r.report(
            Diagnostic::new(Code::MissingOtherwise, checked.name_span(), "`decision` has no `otherwise`")
                .label("routing is not total")
                .help("add `otherwise goto=\"<id>\"` (or a bare `otherwise` to continue with the next statement)"),
        );
    }
    Decision { routes, otherwise }
}
