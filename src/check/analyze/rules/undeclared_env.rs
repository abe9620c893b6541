//! `undeclared-env`: a template reads `env.NAME` without `env "NAME"` in the workflow.
//!
//! ## What it does
//! Templates may read only the environment variables the workflow declares with
//! `env "NAME"`. This rule reports every `env.NAME` read that is not declared.
//!
//! ## Why is this bad?
//! Declaring what a workflow reads from the environment makes its inputs visible and keeps
//! secrets from leaking into prompts by accident; an undeclared variable renders as nothing.
//!
//! ## Example
//! ```kdl
//! tool "deploy" { run "deploy" "--region" "{{ env.REGION }}"; }
//! ```
//!
//! ## Use instead
//! ```kdl
//! env "REGION"
//! tool "deploy" { run "deploy" "--region" "{{ env.REGION }}"; }
//! ```

use std::collections::HashSet;

use crate::diagnostic::{Code, Diagnostic, Fix, did_you_mean};

use super::super::driver::Facts;

/// Reports reads of undeclared environment variables.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let declared = &facts.workflow.env;
    for site in facts.model.sites.iter().filter(|site| !site.inherited) {
        let mut seen = HashSet::new();
        for read in site.reads() {
            let ("env", Some(name)) = (read.root(), read.member()) else {
                continue;
            };
            if !seen.insert(name) || declared.iter().any(|env| env.value == name) {
                continue;
            }
            let near = did_you_mean(name, declared.iter().map(|env| env.value.as_str()));
            let help = match near {
                Some(near) => format!("did you mean `env.{near}`?"),
                None => format!("declare it in the workflow: `env \"{name}\"`"),
            };
            out.push(
                Diagnostic::new(
                    Code::UndeclaredEnv,
                    read.span,
                    format!("environment variable `{name}` is not declared"),
                )
                .label("read here")
                .help(help)
                .maybe_fix(
                    near.zip(read.head_span())
                        .map(|(near, span)| Fix::rename(span, format!("env.{near}"))),
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, only, run};
    use crate::diagnostic::Code;

    #[test]
    fn reports_undeclared_names_only() {
        let mut b = Builder::new();
        b.env("REGION");
        b.tool(
            "deploy",
            &[
                "deploy",
                "{{ env.REGION }}",
                "{{ env.REGOIN }}",
                "{{ env.TOKEN }}",
            ],
        );
        let found = only(run(&b.finish()), Code::UndeclaredEnv);
        assert_eq!(found.len(), 2);
        assert_eq!(
            found[0].message,
            "environment variable `REGOIN` is not declared"
        );
        assert_eq!(found[0].help.as_deref(), Some("did you mean `env.REGION`?"));
        assert_eq!(
            found[1].help.as_deref(),
            Some("declare it in the workflow: `env \"TOKEN\"`")
        );
    }
}
