//! Lookups over the grammar, for the checker and the language server.

use super::{ArgumentSpec, ChildSpec, Grammar, NodeSpec, PropertySpec};

impl Grammar {
    /// The node kind with this id (`agent`, `tool/output`, …).
    #[must_use]
    pub fn node(&self, id: &str) -> Option<&NodeSpec> {
        self.index
            .get(id)
            .and_then(|&position| self.nodes.get(position))
    }

    /// The `workflow` node, the only one allowed at the top level.
    #[must_use]
    pub fn workflow(&self) -> &NodeSpec {
        self.node("workflow")
            .expect("the grammar defines `workflow` (tested)")
    }

    /// The `tool` node at the top of a custom tool file (`.atomic/tools/*.kdl`).
    #[must_use]
    pub fn custom_tool(&self) -> &NodeSpec {
        self.node("custom-tool")
            .expect("the grammar defines `custom-tool` (tested)")
    }

    /// Every node kind of the workflow language with this KDL name, in any context (the
    /// custom tool file's kinds are not written in workflows).
    pub fn nodes_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a NodeSpec> {
        self.nodes
            .iter()
            .filter(move |node| node.name == name && !node.in_tool_file())
    }

    /// The statement kinds (`agent`, `tool`, `decision`, …).
    pub fn statements(&self) -> impl Iterator<Item = &NodeSpec> {
        self.nodes.iter().filter(|node| node.statement)
    }

    /// The child called `name` that `parent` accepts, with how it may appear.
    #[must_use]
    pub fn child<'a>(
        &'a self,
        parent: &'a NodeSpec,
        name: &str,
    ) -> Option<(&'a ChildSpec, &'a NodeSpec)> {
        let &(child, spec) = parent.child_index.get(name)?;
        Some((parent.children.get(child)?, self.nodes.get(spec)?))
    }

    /// Every child `parent` accepts, with its spec.
    pub fn children<'a>(
        &'a self,
        parent: &'a NodeSpec,
    ) -> impl Iterator<Item = (&'a ChildSpec, &'a NodeSpec)> {
        parent
            .child_specs
            .iter()
            .filter_map(|&(child, spec)| Some((parent.children.get(child)?, self.nodes.get(spec)?)))
    }

    /// Whether `parent` holds statements (so an unknown child is an unknown node kind).
    #[must_use]
    pub fn accepts_statements(&self, parent: &NodeSpec) -> bool {
        self.children(parent).any(|(_, spec)| spec.statement)
    }
}

impl NodeSpec {
    /// Whether this kind belongs to custom tool files rather than workflows.
    #[must_use]
    pub fn in_tool_file(&self) -> bool {
        self.id == "custom-tool" || self.id.starts_with("custom-tool/")
    }

    /// The property called `name`.
    #[must_use]
    pub fn property(&self, name: &str) -> Option<&PropertySpec> {
        self.properties
            .iter()
            .find(|property| property.name == name)
    }

    /// The argument at `position`, counting a variadic last argument for every position
    /// after it.
    #[must_use]
    pub fn argument(&self, position: usize) -> Option<&ArgumentSpec> {
        self.arguments.get(position).or_else(|| {
            self.arguments
                .last()
                .filter(|last| last.variadic && position >= self.arguments.len())
        })
    }

    /// The KDL names of its properties, for "expected one of".
    #[must_use]
    pub fn property_names(&self) -> Vec<&str> {
        self.properties
            .iter()
            .map(|property| property.name.as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::super::{ValueKind, grammar};
    use crate::ir::{self, ErrorClass, NodeKind};

    /// Fails to compile when a node kind is added to the IR without updating this list.
    fn kind_name(kind: &NodeKind) -> &'static str {
        match kind {
            NodeKind::Agent(_)
            | NodeKind::Tool(_)
            | NodeKind::Decision(_)
            | NodeKind::Wait(_)
            | NodeKind::Subgraph(_)
            | NodeKind::Parallel(_)
            | NodeKind::Loop(_)
            | NodeKind::Set(_)
            | NodeKind::Emit(_) => kind.name(),
        }
    }

    #[test]
    fn loads_and_is_consistent() {
        let grammar = grammar();
        let mut ids = BTreeSet::new();
        for node in &grammar.nodes {
            assert!(ids.insert(node.id.as_str()), "duplicate id {}", node.id);
            assert!(
                !node.doc.is_empty() && !node.doc.contains('\n'),
                "{}",
                node.id
            );
            for key in &node.include {
                assert!(
                    grammar.shared.contains_key(key),
                    "{}: include {key}",
                    node.id
                );
            }
            let variadic = node.arguments.iter().position(|arg| arg.variadic);
            if let Some(position) = variadic {
                assert_eq!(position + 1, node.arguments.len(), "{}", node.id);
            }
            let mut seen = BTreeSet::new();
            for property in &node.properties {
                assert!(
                    seen.insert(&property.name),
                    "{}: {}",
                    node.id,
                    property.name
                );
                assert_eq!(
                    property.kind == ValueKind::Enum,
                    !property.choices.is_empty(),
                    "{}: {}",
                    node.id,
                    property.name
                );
            }
            for argument in &node.arguments {
                assert_eq!(
                    argument.kind == ValueKind::Enum,
                    !argument.choices.is_empty()
                );
            }
        }
        // Children name existing nodes, one name per parent, and match `contexts`.
        for parent in &grammar.nodes {
            let mut names = BTreeSet::new();
            for child in &parent.children {
                let spec = grammar.node(&child.node).expect("child ids exist");
                assert!(names.insert(&spec.name), "{}: {}", parent.id, spec.name);
                assert!(
                    spec.contexts.contains(&parent.id),
                    "{} should list {} as a context",
                    spec.id,
                    parent.id
                );
            }
        }
        for node in &grammar.nodes {
            for context in &node.contexts {
                if context == "document" || context == "tool-file" {
                    continue;
                }
                let parent = grammar.node(context).expect("contexts exist");
                assert!(
                    parent.children.iter().any(|child| child.node == node.id),
                    "{} lists {context} as a context but is not its child",
                    node.id
                );
            }
        }
    }

    #[test]
    fn every_ir_construct_is_in_the_grammar() {
        let statements: Vec<&str> = grammar()
            .statements()
            .map(|node| node.name.as_str())
            .collect();
        let kinds = [
            NodeKind::Agent(Box::default()),
            NodeKind::Tool(Box::default()),
            NodeKind::Decision(Box::default()),
        ];
        for kind in &kinds {
            assert!(statements.contains(&kind_name(kind)));
        }
        for name in [
            "wait",
            "subgraph",
            "parallel",
            "loop",
            "task-loop",
            "set",
            "emit",
        ] {
            assert!(statements.contains(&name), "{name}");
        }
        assert_eq!(statements.len(), 10);
        for id in [
            "workflow",
            "description",
            "alias",
            "input",
            "env",
            "state",
            "field",
            "provider",
            "option",
            "command",
            "limits",
            "on",
            "on/run",
            "when",
            "otherwise",
            "choice",
            "auto-approve",
            "subgraph/input",
            "subgraph/output",
            "branch",
            "agent/output",
            "tool/output",
            "wait/output",
            "retry",
            "on-error",
            "on-error/set",
            "context",
            "tools",
            "prompt",
            "system",
            "run",
            "cwd",
            "tool/env",
            "stdin",
            "arg",
            "ok-codes",
        ] {
            assert!(grammar().node(id).is_some(), "{id}");
        }
    }

    #[test]
    fn enums_match_the_ir() {
        let choices = |node: &str, property: &str| -> Vec<String> {
            grammar()
                .node(node)
                .and_then(|node| node.property(property))
                .map(|property| property.choices.clone())
                .expect("property exists")
        };
        let reducers = [
            ir::Reducer::Replace,
            ir::Reducer::Append,
            ir::Reducer::Merge,
            ir::Reducer::MergeBy(String::new()),
            ir::Reducer::Sum,
            ir::Reducer::Max,
            ir::Reducer::Min,
            ir::Reducer::And,
            ir::Reducer::Or,
            ir::Reducer::IfDefined,
        ];
        let names: Vec<String> = reducers.iter().map(|r| r.name().to_owned()).collect();
        assert_eq!(choices("field", "reduce"), names);
        let classes: Vec<String> = ErrorClass::ALL
            .iter()
            .map(|c| c.name().to_owned())
            .collect();
        let retry = grammar().node("retry").expect("retry");
        assert_eq!(retry.arguments[0].choices, classes);
        let types = [
            ir::ValueType::String,
            ir::ValueType::Integer,
            ir::ValueType::Number,
            ir::ValueType::Boolean,
            ir::ValueType::Array,
            ir::ValueType::Object,
            ir::ValueType::Any,
        ];
        let names: Vec<String> = types.iter().map(|t| t.name().to_owned()).collect();
        assert_eq!(choices("field", "type"), names);
        assert_eq!(choices("input", "type"), names);
        let parse: Vec<String> = ["text", "json", "yes-no", "number", "lines"]
            .iter()
            .map(|mode| {
                let json = serde_json::to_value(
                    serde_json::from_value::<ir::ParseMode>(serde_json::Value::from(*mode))
                        .expect("parse mode"),
                )
                .expect("serialises");
                json.as_str().expect("string").to_owned()
            })
            .collect();
        assert_eq!(choices("tool/output", "parse"), parse);
        for mode in choices("agent", "permission") {
            serde_json::from_value::<ir::PermissionMode>(mode.into()).expect("permission mode");
        }
        for strategy in choices("parallel", "strategy") {
            serde_json::from_value::<ir::Strategy>(strategy.into()).expect("strategy");
        }
    }
}
