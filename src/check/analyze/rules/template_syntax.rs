//! `template-syntax`: a template or expression does not parse.
//!
//! ## What it does
//! Parses every prompt, command argument, `set` value and condition with minijinja and
//! reports the first syntax error of each, pointing at the offending text.
//!
//! ## Why is this bad?
//! The run would fail when it reaches the node, after spending whatever came before.
//!
//! ## Example
//! ```kdl
//! agent "review" { prompt "Review {{ input.target }"; }
//! decision "gate" { when "{{ state.ok }}" goto="ship"; otherwise; }
//! ```
//!
//! ## Use instead
//! ```kdl
//! agent "review" { prompt "Review {{ input.target }}"; }
//! decision "gate" { when "state.ok" goto="ship"; otherwise; }
//! ```

use crate::diagnostic::{Code, Diagnostic};

use super::super::driver::Facts;

/// Reports every site whose text does not parse.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    for site in facts.model.sites.iter().filter(|site| !site.inherited) {
        let Err(error) = &site.reads else {
            continue;
        };
        let node = &facts.workflow.node(site.node).id.value;
        let kind = if site.is_expr {
            "expression"
        } else {
            "template"
        };
        let help = if site.is_expr && site.template.source.contains("{{") {
            "conditions are bare expressions: write `state.ok`, not `{{ state.ok }}`"
        } else if site.is_expr {
            "write a minijinja expression, e.g. `state.rounds < 3 and not state.approved`"
        } else {
            "`{{ … }}` prints an expression, `{% … %}` holds a statement such as `if` or `for`"
        };
        out.push(
            Diagnostic::new(
                Code::TemplateSyntax,
                error.span,
                format!(
                    "the {} of `{node}` is not a valid {kind}",
                    site.role.describe()
                ),
            )
            .label(error.message.clone())
            .help(help),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, only, run};
    use crate::diagnostic::Code;

    #[test]
    fn reports_templates_and_expressions_that_do_not_parse() {
        let mut b = Builder::new();
        b.input("target", crate::ir::ValueType::String, None);
        let review = b.agent("review", "Review {{ input.target }");
        b.decision("gate", &[("{{ input.target }}", "end")], Some("next"));
        let workflow = b.finish();
        let found = only(run(&workflow), Code::TemplateSyntax);
        assert_eq!(found.len(), 2, "{found:#?}");
        assert_eq!(
            found[0].message,
            "the prompt of `review` is not a valid template"
        );
        let crate::ir::NodeKind::Agent(agent) = &workflow.node(review).kind else {
            unreachable!()
        };
        let prompt = agent.prompt.as_ref().unwrap().span;
        assert!(found[0].span.start > prompt.start && found[0].span.end <= prompt.end);
        assert_eq!(
            found[1].message,
            "the condition of `gate` is not a valid expression"
        );
        assert!(
            found[1]
                .help
                .as_deref()
                .unwrap()
                .contains("bare expressions")
        );
    }

    #[test]
    fn valid_templates_pass() {
        let mut b = Builder::new();
        b.input("target", crate::ir::ValueType::String, None);
        b.agent(
            "review",
            "{% if input.target %}Review {{ input.target }}{% endif %}",
        );
        assert!(only(run(&b.finish()), Code::TemplateSyntax).is_empty());
    }
}
