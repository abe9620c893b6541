//! `unused-state-field`: a state field is neither read nor written.
//!
//! ## What it does
//! Reports a declared state field that no template or expression reads (`state.<name>`,
//! or the whole `state` object, which reads every field) and no node writes (an `output`,
//! a `set`, a subgraph `output` mapping, an `on-error` fallback). A field that is written
//! but never read is not reported: it is a result of the run (shown by `atomic runs`,
//! streamed with `--stream values`, copied out by a calling workflow's subgraph `output`).
//!
//! ## Why is this bad?
//! A field nothing touches is dead weight in every checkpoint, or the sign of a misspelled
//! name somewhere else.
//!
//! ## Example
//! ```kdl
//! state { field "notes" type="string" default=""; }
//! ```
//!
//! ## Use instead
//! Use it (`set "notes" "…"`, `{{ state.notes }}`) or remove it.

use std::collections::HashSet;

use crate::diagnostic::{Code, Diagnostic};

use crate::ir::NodeIdx;

use super::super::driver::Facts;

/// Reports fields no template reads.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    // A template that does not parse may read anything.
    if facts.model.sites.iter().any(|site| site.reads.is_err()) {
        return;
    }
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
    let mut written = HashSet::new();
    for index in 0..facts.workflow.nodes.len() {
        for write in facts.model.writes(NodeIdx(index as u32)) {
            written.insert(write.field.value.as_str());
        }
    }
    for field in &facts.workflow.state {
        let name = field.name.value.as_str();
        if read.contains(name) || written.contains(name) {
            continue;
        }
        out.push(
            Diagnostic::new(
                Code::UnusedStateField,
                field.name.span,
                format!("state field `{}` is never used", field.name.value),
            )
            .label("neither read nor written")
            .help(format!(
                "write it (`set \"{0}\" …`, `output \"{0}\"`) and read it (`{{{{ state.{0} }}}}`), or remove it",
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
    fn reports_fields_neither_read_nor_written() {
        let mut b = Builder::new();
        b.field("read", ValueType::String, Some("".into()));
        b.field("written", ValueType::String, Some("".into()));
        b.field("idle", ValueType::String, Some("".into()));
        b.set("written", "{{ state.read }}");
        let found = run(&b.finish());
        assert_eq!(
            messages(&found, Code::UnusedStateField),
            ["state field `idle` is never used"]
        );
        assert_eq!(
            found
                .iter()
                .find(|d| d.code == Code::UnusedStateField)
                .unwrap()
                .help
                .as_deref(),
            Some(
                "write it (`set \"idle\" …`, `output \"idle\"`) and read it (`{{ state.idle }}`), or remove it"
            )
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
