//! `unused-input`: a workflow input is never read.
//!
//! ## What it does
//! Reports a declared `input` that no template or expression reads (`input.<name>`, or the
//! whole `input` object, which reads every input).
//!
//! ## Why is this bad?
//! Callers must supply a value that changes nothing, or a read of it is misspelled.
//!
//! ## Example
//! ```kdl
//! input "target" type="string"
//! agent "review" { prompt "Review the code"; }
//! ```
//!
//! ## Use instead
//! ```kdl
//! input "target" type="string"
//! agent "review" { prompt "Review {{ input.target }}"; }
//! ```

use std::collections::HashSet;

use crate::diagnostic::{Code, Diagnostic};

use super::super::driver::Facts;

/// Reports inputs no template reads.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    // A template that does not parse may read anything.
    if facts.model.sites.iter().any(|site| site.reads.is_err()) {
        return;
    }
    let mut read = HashSet::new();
    for site in &facts.model.sites {
        for path in site.reads() {
            match (path.root(), path.member()) {
                ("input", None) => return,
                ("input", Some(name)) => {
                    read.insert(name);
                }
                _ => {}
            }
        }
    }
    for input in &facts.workflow.inputs {
        if read.contains(input.name.value.as_str()) {
            continue;
        }
        out.push(
            Diagnostic::new(
                Code::UnusedInput,
                input.name.span,
                format!("input `{}` is never read", input.name.value),
            )
            .label("declared here")
            .help(format!(
                "read it with `{{{{ input.{} }}}}`, or remove it",
                input.name.value
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, run};
    use crate::diagnostic::Code;
    use crate::ir::ValueType;

    #[test]
    fn reports_inputs_no_template_reads() {
        let mut b = Builder::new();
        b.input("target", ValueType::String, None);
        b.input("spare", ValueType::String, None);
        b.agent("review", "{{ input.target }}");
        assert_eq!(
            messages(&run(&b.finish()), Code::UnusedInput),
            ["input `spare` is never read"]
        );
    }
}
