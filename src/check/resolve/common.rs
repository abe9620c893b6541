//! What every statement accepts: `retry`, `on-error`, `goto=` / `goto-max=`.

use super::resolver::Resolver;
use super::set::resolve_set;
use crate::check::structure::Checked;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Duration, ErrorClass, Jump, OnError, Retry, Route};
use crate::source::Spanned;

/// The `retry` child, with defaults: 3 attempts, `1s` backoff, factor 2, jitter on.
pub(super) fn retry(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Option<Retry> {
    let retry = checked.child("retry")?;
    let on = retry
        .args_from(0)
        .filter_map(|arg| r.string(Some(arg)))
        .filter_map(|name| {
            ErrorClass::ALL
                .iter()
                .copied()
                .find(|class| class.name() == name.value)
        })
        .collect();
    Some(Retry {
        attempts: r.integer(retry.prop("attempts")).map_or(3, |n| n.value),
        backoff: r
            .duration(retry.prop("backoff"))
            .map_or(Duration(1_000), |d| d.value),
        factor: r.number(retry.prop("factor")).map_or(2.0, |f| f.value),
        max_backoff: r.duration(retry.prop("max-backoff")).map(|d| d.value),
        jitter: r.boolean(retry.prop("jitter")).unwrap_or(true),
        on,
        span: retry.node.span,
    })
}

/// The `on-error` child. The `goto` target is resolved later (it is [`Jump::Next`] here).
pub(super) fn on_error(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Option<OnError> {
    let on_error = checked.child("on-error")?;
    let action = r.string(on_error.arg(0))?;
    let span = on_error.node.span;
    let target = r.string(on_error.arg(1));
    if action.value != "goto"
        && let Some(entry) = on_error
            .node
            .entries
            .iter()
            .filter(|entry| entry.key.is_none())
            .nth(1)
    {
        r.report(
            Diagnostic::new(
                Code::UnexpectedArgument,
                entry.span,
                format!("`on-error \"{}\"` takes no target", action.value),
            )
            .label("extra argument")
            .help("only `on-error \"goto\" \"<recovery node>\"` names a target"),
        );
    }
    if action.value != "skip" {
        for set in on_error.children_of("on-error/set") {
            r.report(
                Diagnostic::new(
                    Code::UnknownChild,
                    set.name_span(),
                    format!("`set` has no effect with `on-error \"{}\"`", action.value),
                )
                .label("fallback write")
                .help("fallback writes apply only to `on-error \"skip\"`"),
            );
        }
    }
    Some(match action.value.as_str() {
        "retry" => OnError::Retry { span },
        "skip" => OnError::Skip {
            fallback: on_error
                .children_of("on-error/set")
                .filter_map(|set| resolve_fallback(r, set))
                .collect(),
            span,
        },
        "goto" => {
            let Some(target) = target else {
                if !on_error.has_arg(1) {
                    r.report(
                        Diagnostic::new(
                            Code::MissingProperty,
                            on_error.name_span(),
                            "`on-error \"goto\"` needs a target",
                        )
                        .label("no target")
                        .help("name a node marked `recovery=#true`: `on-error \"goto\" \"<id>\"`"),
                    );
                }
                return None;
            };
            OnError::Goto {
                target,
                jump: Jump::Next,
                span,
            }
        }
        _ => OnError::Abort { span },
    })
}

fn resolve_fallback(r: &mut Resolver<'_>, set: &Checked<'_>) -> Option<crate::ir::Set> {
    let resolved = resolve_set(r, set);
    (!resolved.field.value.is_empty()).then_some(resolved)
}

/// `goto=` with `goto-max=`. The target is resolved later (it is [`Jump::Next`] here).
pub(super) fn goto(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Option<Route> {
    let max = r.integer(checked.prop("goto-max"));
    let Some(target) = r.string(checked.prop("goto")) else {
        if let (Some(max), false) = (&max, checked.wrote("goto")) {
            r.report(
                Diagnostic::new(Code::InvalidValue, max.span, "`goto-max` without `goto`")
                    .label("bounds no jump")
                    .help("add `goto=\"<id>\"`, or remove `goto-max`"),
            );
        }
        return None;
    };
    let span = checked.entry_span("goto").unwrap_or(target.span);
    Some(Route {
        when: None,
        target: Some(target),
        jump: Jump::Next,
        max,
        span,
    })
}

/// The `as=` name of a for-each item or a task (`what`: "item", "task"): a plain name that
/// hides nothing the body reads. Otherwise it is reported and `default` stands in for it, so
/// the body's reads are still checked.
pub(super) fn item_name(
    r: &mut Resolver<'_>,
    name: Spanned<String>,
    what: &str,
    default: &str,
) -> Spanned<String> {
    let invalid = |message: String, label: &str, help: String| {
        Diagnostic::new(Code::InvalidId, name.span, message)
            .label(label)
            .help(help)
    };
    // What is reported, and whether `default` stands in (a name that is no name, or hides
    // a root) or the name is kept (it is usable; it only hides an outer item).
    let (diagnostic, stand_in) = if !crate::check::is_name(&name.value) {
        let diagnostic = invalid(
            format!("`{}` is not a valid {what} name", name.value),
            "not a name",
            "templates read it as a variable: use letters, digits and `_`".to_owned(),
        );
        (diagnostic, true)
    } else if let Some(why) = crate::check::hidden_by_as(&name.value) {
        let diagnostic = invalid(
            format!("`{}` cannot name the {what}", name.value),
            "a name the body already reads",
            why,
        );
        (diagnostic, true)
    } else if let Some(outer) = r
        .items_in_scope
        .iter()
        .find(|outer| outer.value == name.value)
    {
        let diagnostic = invalid(
            format!("`{}` already names an enclosing item", name.value),
            &format!("hides the outer `{}` from this body", name.value),
            format!(
                "give this {what} another name (`as=\"inner_{}\"`): the body could no longer read the outer one",
                name.value
            ),
        )
        .with_label(outer.span, "the outer one");
        (diagnostic, false)
    } else {
        return name;
    };
    r.report(diagnostic);
    if stand_in {
        Spanned::new(default.to_owned(), name.span)
    } else {
        name
    }
}

/// Resolves a body with `name` (a for-each item or a task) in scope: nested bodies must
/// not reuse it.
pub(super) fn with_item<T>(
    r: &mut Resolver<'_>,
    name: &Spanned<String>,
    body: impl FnOnce(&mut Resolver<'_>) -> T,
) -> T {
    r.items_in_scope.push(name.clone());
    let resolved = body(r);
    r.items_in_scope.pop();
    resolved
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, only, resolve_text};
    use crate::diagnostic::Code;
    use crate::ir::{Duration, ErrorClass, Jump, OnError};

    fn flow(body: &str) -> String {
        format!(
            "workflow \"w\" {{\nstate {{ field \"n\"; }}\ntool \"t\" {{ run \"x\"; {body} }}\nset \"n\" \"1\" recovery=#true id=\"fix\"\n}}"
        )
    }

    #[test]
    fn retry_defaults_and_classes() {
        let (outcome, _) = resolve_text(&flow("retry \"timeout\" \"tool-exit\""));
        let workflow = outcome.value.unwrap();
        let retry = workflow.nodes[0].retry.clone().unwrap();
        assert_eq!(
            (retry.attempts, retry.backoff, retry.factor, retry.jitter),
            (3, Duration(1_000), 2.0, true)
        );
        assert_eq!(retry.on, [ErrorClass::Timeout, ErrorClass::ToolExit]);
    }

    #[test]
    fn on_error_actions() {
        let (outcome, _) = resolve_text(&flow("on-error \"goto\" \"fix\""));
        assert_eq!(outcome.diagnostics, vec![]);
        let workflow = outcome.value.unwrap();
        let Some(OnError::Goto { jump, .. }) = workflow.nodes[0].on_error.as_deref() else {
            panic!()
        };
        assert_eq!(*jump, Jump::Node(workflow.find_node("fix").unwrap()));
        assert_eq!(codes(&flow("on-error \"goto\"")), [Code::MissingProperty]);
        assert_eq!(
            codes(&flow("on-error \"retry\" \"fix\"")),
            [Code::UnexpectedArgument]
        );
        assert_eq!(
            codes(&flow("on-error \"abort\" { set \"n\" \"1\"; }")),
            [Code::UnknownChild]
        );
        assert_eq!(
            codes(&flow("on-error \"goto\" \"end\"")),
            [Code::NotARecoveryNode]
        );
        assert_eq!(
            codes(&flow("on-error \"goto\" \"fx\"")),
            [Code::UndefinedNode]
        );
        let (diagnostic, at) = only(
            &flow("on-error \"skip\" { set \"m\" \"1\"; }"),
            Code::UndefinedStateField,
        );
        assert_eq!(at, "\"m\"");
        assert!(diagnostic.help.is_some());
    }
}
