//! Node ids: validation, and the generated ids of `set` statements (`set-<field>`, then
//! `set-<field>-2`, `-3`, … skipping ids written anywhere in the workflow).

use std::collections::{HashMap, HashSet};

use super::resolver::Resolver;
use crate::check::grammar::NodeSpec;
use crate::check::value::is_node_id;
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Spanned;
use crate::syntax::kdl::{Node, Value};

/// Hands out generated ids that collide with no written one.
#[derive(Default)]
pub(super) struct IdAllocator {
    taken: HashSet<String>,
    counts: HashMap<String, u32>,
}

impl IdAllocator {
    /// Notes the id written on `statement` (of kind `spec`), so no generated id takes it.
    /// Every statement of the workflow passes here before any id is generated.
    pub(super) fn take_written(&mut self, spec: &NodeSpec, statement: &Node) {
        let written = if spec.id == "set" || spec.id == "emit" {
            statement
                .entries
                .iter()
                .find(|entry| entry.key.as_ref().is_some_and(|key| key.value == "id"))
        } else {
            statement.entries.iter().find(|entry| entry.key.is_none())
        };
        if let Some(Value::String(id)) = written.map(|entry| &entry.value) {
            self.taken.insert(id.as_str().to_owned());
        }
    }

    /// The next id for a `<prefix>` statement (`set`, `emit`) naming `name` first:
    /// `<prefix>-<name>`, then `-2`, `-3`, … past ids already taken.
    pub(super) fn generated_id(&mut self, prefix: &str, name: &str) -> String {
        let count = self.counts.entry(format!("{prefix}-{name}")).or_insert(0);
        loop {
            *count += 1;
            let id = if *count == 1 {
                format!("{prefix}-{name}")
            } else {
                format!("{prefix}-{name}-{count}")
            };
            if self.taken.insert(id.clone()) {
                return id;
            }
        }
    }
}

/// Reports an id that is not `[A-Za-z_][A-Za-z0-9_-]*` or is the reserved `end`; `what`
/// names the thing identified ("node", "provider").
pub(super) fn check_id(r: &mut Resolver<'_>, id: &Spanned<String>, what: &str) {
    if id.value == "end" {
        r.report(
            Diagnostic::new(
                Code::InvalidId,
                id.span,
                format!("`end` is reserved and cannot be a {what} id"),
            )
            .label("reserved")
            .help("`goto=\"end\"` always means the end of the workflow; choose another name"),
        );
    } else if !is_node_id(&id.value) {
        r.report(
            Diagnostic::new(
                Code::InvalidId,
                id.span,
                format!("`{}` is not a valid {what} id", id.value),
            )
            .label("not an identifier")
            .help("use letters, digits, `_` and `-`, starting with a letter or `_`"),
        );
    }
}
