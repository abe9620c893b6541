//! `unknown-filter`: a template or expression uses a filter or test the runtime does not
//! have.
//!
//! ## What it does
//! Reports `{{ x | shout }}` and `x is shouty` when `shout`/`shouty` is neither one of
//! minijinja's built-in filters and tests nor one atomic adds (`fromjson`), asking the same
//! minijinja the runtime renders with ([`crate::check::template_env`]).
//!
//! ## Why is this bad?
//! minijinja finds filters only when it renders, so the run would fail at that step,
//! after everything before it has run (and been paid for).
//!
//! ## Example
//! ```kdl
//! set "title" "{{ state.title | shout }}"
//! ```
//!
//! ## Use instead
//! ```kdl
//! set "title" "{{ state.title | upper }}"
//! ```

use minijinja::machinery;

use crate::check::template_env::{Callee, SUGGESTIONS, is_known};
use crate::diagnostic::{Code, Diagnostic, did_you_mean};
use crate::ir::Template;

use super::super::driver::Facts;
use super::super::undeclared::{callees_in_expression, callees_in_template};

/// Reports filters and tests nobody registered: in every template and expression of the
/// nodes, and in the state's `migrate=` expressions.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    for site in facts.model.sites.iter().filter(|site| !site.inherited) {
        // Only a text that parsed can be judged.
        if site.reads.is_ok() {
            check_text(site.template, site.is_expr, out);
        }
    }
    for migrate in facts
        .model
        .workflow
        .state
        .iter()
        .filter_map(|field| field.migrate.as_ref())
    {
        check_text(migrate, true, out);
    }
}

/// The unknown filters and tests of one text (nothing for one that does not parse: another
/// rule says why).
fn check_text(template: &Template, is_expr: bool, out: &mut Vec<Diagnostic>) {
    let source = template.source.as_str();
    // Only a text with `|` or `is` can use a filter or a test: most texts are not parsed
    // again.
    if !(source.contains('|') || source.contains(" is ")) {
        return;
    }
    let callees = if is_expr {
        machinery::parse_expr(source).map(|ast| {
            callees_in_expression(&ast)
                .into_iter()
                .map(|(callee, name, range)| (callee, name.to_owned(), range))
                .collect::<Vec<_>>()
        })
    } else {
        machinery::parse(source, "<string>", Default::default()).map(|ast| {
            callees_in_template(&ast)
                .into_iter()
                .map(|(callee, name, range)| (callee, name.to_owned(), range))
                .collect::<Vec<_>>()
        })
    };
    let Ok(callees) = callees else {
        return;
    };
    for (callee, name, range) in callees {
        if is_known(callee, &name) {
            continue;
        }
        // The name's own place: its last occurrence in the expression using it.
        let at = source
            .get(range.clone())
            .and_then(|text| text.rfind(name.as_str()))
            .map_or(range.clone(), |offset| {
                range.start + offset..range.start + offset + name.len()
            });
        let what = match callee {
            Callee::Filter => "filter",
            Callee::Test => "test",
        };
        let near = did_you_mean(&name, SUGGESTIONS.iter().copied());
        let help = match near {
            Some(near) => format!("did you mean `{near}`?"),
            None => format!(
                "use one of minijinja's built-in {what}s (https://docs.rs/minijinja/latest/minijinja/{what}s/)"
            ),
        };
        out.push(
            Diagnostic::new(
                Code::UnknownFilter,
                template.span_of(at),
                format!("unknown {what} `{name}`"),
            )
            .label(format!("no {what} has this name"))
            .help(help)
            .maybe_replace_with(near.map(str::to_owned)),
        );
    }
}
