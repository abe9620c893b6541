//! `unused-state-field`: a state field is never read.
//!
//! ## What it does
//! Reports a declared state field that no template or expression reads (`state.<name>`,
//! or the whole `state` object, which reads every field).
//!
//! ## Why is this bad?
//! A field nothing reads is either dead weight in every checkpoint or a sign that a read
//! was misspelled. If the field is the workflow's result (read by a caller's subgraph
//! `output` or after the run), silence this rule for it.
//!
//! ## Example
//! ```kdl
//! state { field "notes" type="string" default=""; }
//! ```
//!
//! ## Use instead
//! Read it (`{{ state.notes }}`) or remove it.

use std::collections::HashSet;

use crate::diagnostic::{Code, Diagnostic};

use super::super::driver::Facts;

/// Reports fields no template reads.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let mut read = HashSet::new();
    for site in &facts.model.sites {
        for path in site.reads() {
            match (path.root(), path.member()) {
                ("state", None) => return,
                ("state", Some(field)) => {
                    read.insert(field);
                }
                _ => {}
            }
        }
    }
    for field in &facts.workflow.state {
        if read.contains(field.name.value.as_str()) {
            continue;
        }
        out.push(
            Diagnostic::new(
                Code::UnusedStateField,
                field.name.span,
                format!("state field `{}` is never read", field.name.value),
            )
            .label("declared here")
            .help(format!(
                "read it with `{{{{ state.{} }}}}`, or remove it if nothing needs it",
                field.name.value
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
    fn reports_fields_no_template_reads() {
        let mut b = Builder::new();
        b.field("used", ValueType::String, Some("".into()));
        b.field("written", ValueType::String, Some("".into()));
        b.set("written", "{{ state.used }}");
        let found = run(&b.finish());
        assert_eq!(
            messages(&found, Code::UnusedStateField),
            ["state field `written` is never read"]
        );
        assert_eq!(
            found
                .iter()
                .find(|d| d.code == Code::UnusedStateField)
                .unwrap()
                .help
                .as_deref(),
            Some("read it with `{{ state.written }}`, or remove it if nothing needs it")
        );
    }

    #[test]
    fn reading_the_whole_state_uses_every_field() {
        let mut b = Builder::new();
        b.field("a", ValueType::String, Some("".into()));
        b.agent("dump", "{{ state | tojson }}");
        assert!(messages(&run(&b.finish()), Code::UnusedStateField).is_empty());
    }
}
