//! `loop "<id>" until="<expr>" | while="<expr>" max=N { … }`.

use super::ids::IdAllocator;
use super::resolver::Resolver;
use super::statement::resolve_block;
use crate::check::structure::Checked;
use crate::diagnostic::{Code, Diagnostic, Fix};
use crate::ir::{Loop, NodeIdx};

/// The loop's condition, bound and body.
pub(super) fn resolve_loop(
    r: &mut Resolver<'_>,
    ids: &mut IdAllocator,
    checked: &Checked<'_>,
    idx: NodeIdx,
) -> Loop {
    let until = r.template(checked.prop("until"));
    let mut while_ = r.template(checked.prop("while"));
    if let (Some(until), Some(second)) = (&until, &while_) {
        r.report(
            Diagnostic::new(
                Code::InvalidValue,
                second.span,
                "`loop` has both `until` and `while`",
            )
            .label("`while` condition")
            .with_label(until.span, "`until` condition")
            .help("keep one: `until` is tested after each iteration, `while` before"),
        );
        while_ = None;
    }
    let max = r.integer(checked.prop("max"));
    if max.is_none() && !checked.wrote("max") {
        r.report(
            Diagnostic::new(
                Code::MissingLoopMax,
                checked.name_span(),
                "`loop` has no `max`",
            )
            .label("unbounded loop")
            .help("every loop must be bounded: add `max=N`, the most iterations it may run")
            .with_fix(add_max(checked)),
        );
    }
    let body = resolve_block(r, ids, checked, Some(idx));
    if body.nodes.is_empty() {
        r.report(empty_block(checked, "loop"));
    }
    Loop {
        until,
        while_,
        max,
        body,
    }
}

/// `empty-block` for a block statement with no statements inside.
pub(super) fn empty_block(checked: &Checked<'_>, what: &str) -> Diagnostic {
    Diagnostic::new(
        Code::EmptyBlock,
        checked.name_span(),
        format!("`{what}` has no statements"),
    )
    .label(format!("empty `{what}`"))
    .help("add statements to its block, or remove it")
}

/// ` max=10` after the loop's last argument or property.
fn add_max(checked: &Checked<'_>) -> Fix {
    let node = checked.node;
    let last = node
        .entries
        .last()
        .map_or(node.name.span, |entry| entry.span);
    let end = last.slice(last.len()..last.len());
    Fix::edit("Add `max=10`", end, " max=10")
}

#[cfg(test)]
mod tests {
    use crate::check::testing::codes;
    use crate::diagnostic::Code;

    #[test]
    fn conditions_and_bounds() {
        let flow = |head: &str| {
            format!(
                "workflow \"w\" {{ state {{ field \"n\"; }}; loop \"l\" {head} {{ set \"n\" \"1\"; }} }}"
            )
        };
        assert_eq!(codes(&flow("while=\"true\" max=2")), []);
        assert_eq!(
            codes(&flow("until=\"a\" while=\"b\" max=2")),
            [Code::InvalidValue]
        );
        assert_eq!(codes(&flow("until=\"a\"")), [Code::MissingLoopMax]);
        // A written but invalid `max` is reported once, as what it is.
        assert_eq!(codes(&flow("max=0")), [Code::InvalidValue]);
        assert_eq!(codes(&flow("max=99999999999")), [Code::InvalidValue]);
    }
}
