//! Where untrusted text flows: which state fields and `for-each` items may hold an agent's
//! reply, a person's answer or a workflow input.
//!
//! Sources: `outputs.<agent>` (a model's reply), `outputs.<wait>` (typed by a person, or
//! auto-approved), `input.*` (given by whoever starts the run). A state field is tainted
//! if any write to it is: an agent's or wait's `output`, a `set` (or `on-error` fallback)
//! whose value reads tainted data, or a subgraph `output` mapping from a tainted field of
//! the called workflow. A `for-each` item is tainted if its list expression is. Tool output
//! is not a source (it is what the command printed). The analysis is flow-insensitive: one
//! tainted write taints the field everywhere.
//!
//! A value that can only be a number or a boolean, or one of the workflow's own choices,
//! carries no text: a state field or input typed `integer`, `number` or `boolean` (writes
//! are converted to the type or fail), and a `wait` answer typed so or chosen from its
//! `choice`s, are never tainted.

use std::collections::HashMap;

use crate::ir::{AnswerType, NodeIdx, NodeKind, OnError, ValueType, Workflow};

use super::callees::Callees;
use super::model::{Model, Site};
use super::reads::Read;

/// What kind of untrusted data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    /// A workflow input.
    Input,
    /// A `wait` answer.
    Answer,
    /// An agent's reply.
    Agent,
}

/// Untrusted data and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Source {
    /// The kind.
    pub kind: Kind,
    /// Where it came from, for messages: "the reply of agent `review`".
    pub origin: String,
}

/// The tainted fields and `for-each` items of one workflow.
#[derive(Debug, Default)]
pub(crate) struct Taints {
    fields: HashMap<String, Source>,
    items: HashMap<NodeIdx, Source>,
}

impl Taints {
    /// Computes the taints of `model`; `callees` supplies called workflows (whose own
    /// subgraph outputs count as clean).
    pub(crate) fn compute(model: &Model<'_>, callees: Option<&Callees>) -> Self {
        let workflow = model.workflow;
        let mut callee_fields: HashMap<NodeIdx, Taints> = HashMap::new();
        if let Some(callees) = callees {
            for (&node, callee) in &callees.by_node {
                callee_fields.insert(node, Taints::compute(&Model::new(callee), None));
            }
        }
        let mut taints = Taints::default();
        let passes = workflow.state.len() + workflow.nodes.len() + 1;
        for _ in 0..passes {
            if !taints.pass(model, &callee_fields) {
                break;
            }
        }
        taints
    }

    /// One propagation pass; whether anything changed.
    fn pass(&mut self, model: &Model<'_>, callee_fields: &HashMap<NodeIdx, Taints>) -> bool {
        let workflow = model.workflow;
        let mut changed = false;
        for (index, node) in workflow.nodes.iter().enumerate() {
            let idx = NodeIdx(index as u32);
            let direct = match &node.kind {
                NodeKind::Agent(_) => Some(Source {
                    kind: Kind::Agent,
                    origin: format!("the reply of agent `{}`", node.id.value),
                }),
                NodeKind::Wait(wait) if !typed_answer(&wait.answer) => Some(Source {
                    kind: Kind::Answer,
                    origin: format!("the answer to `{}`", node.id.value),
                }),
                _ => None,
            };
            if let Some(source) = direct {
                for write in model.writes(idx).iter().filter(|write| !write.fallback) {
                    changed |= self.taint_field(workflow, &write.field.value, &source);
                }
            }
            if let NodeKind::Subgraph(subgraph) = &node.kind
                && let Some(callee) = callee_fields.get(&idx)
            {
                for (caller, callee_field) in &subgraph.outputs {
                    if let Some(source) = callee.fields.get(&callee_field.value) {
                        let source = source.clone();
                        changed |= self.taint_field(workflow, &caller.value, &source);
                    }
                }
            }
            let mut set_fields = Vec::new();
            if let NodeKind::Set(set) = &node.kind {
                set_fields.push(&set.field.value);
            }
            if let Some(OnError::Skip { fallback, .. }) = node.on_error.as_deref() {
                set_fields.extend(fallback.iter().map(|set| &set.field.value));
            }
            if let NodeKind::Parallel(parallel) = &node.kind
                && parallel.for_each.is_some()
                && !self.items.contains_key(&idx)
                && let Some(source) = self.site_taint(model, idx, |site| {
                    matches!(
                        site.role,
                        super::model::Role::ForEach | super::model::Role::TasksFile
                    )
                })
            {
                self.items.insert(idx, source);
                changed = true;
            }
            if set_fields.is_empty() {
                continue;
            }
            // The value of a set, or of each fallback set in order.
            let sites: Vec<&Site<'_>> = model
                .sites_of(idx)
                .iter()
                .filter(|site| {
                    matches!(
                        site.role,
                        super::model::Role::Value | super::model::Role::Fallback
                    )
                })
                .collect();
            for (field, site) in set_fields.into_iter().zip(sites) {
                let source = site
                    .reads()
                    .iter()
                    .find_map(|read| self.read(model, idx, read));
                if let Some(source) = source {
                    changed |= self.taint_field(workflow, field, &source);
                }
            }
        }
        changed
    }

    fn taint_field(&mut self, workflow: &Workflow, field: &str, source: &Source) -> bool {
        if workflow
            .field(field)
            .is_some_and(|declared| scalar(&declared.ty))
        {
            return false;
        }
        match self.fields.get(field) {
            Some(existing) if existing.kind >= source.kind => false,
            _ => {
                self.fields.insert(field.to_owned(), source.clone());
                true
            }
        }
    }

    fn site_taint(
        &self,
        model: &Model<'_>,
        node: NodeIdx,
        which: impl Fn(&Site<'_>) -> bool,
    ) -> Option<Source> {
        model
            .sites_of(node)
            .iter()
            .filter(|site| which(site))
            .flat_map(|site| site.reads())
            .find_map(|read| self.read(model, node, read))
    }

    /// The untrusted data `read` (in a template of `node`) brings in, if any.
    pub(crate) fn read(&self, model: &Model<'_>, node: NodeIdx, read: &Read) -> Option<Source> {
        let workflow: &Workflow = model.workflow;
        match (read.root(), read.member()) {
            ("input", Some(name))
                if workflow.input(name).is_some_and(|input| scalar(&input.ty)) =>
            {
                None
            }
            ("input", Some(name)) => Some(Source {
                kind: Kind::Input,
                origin: format!("input `{name}`"),
            }),
            ("input", None) => Some(Source {
                kind: Kind::Input,
                origin: "the workflow inputs".to_owned(),
            }),
            ("outputs", Some(id)) => {
                let target = model.node(id)?;
                match &workflow.node(target).kind {
                    NodeKind::Agent(_) => Some(Source {
                        kind: Kind::Agent,
                        origin: format!("the reply of agent `{id}`"),
                    }),
                    NodeKind::Wait(wait) if !typed_answer(&wait.answer) => Some(Source {
                        kind: Kind::Answer,
                        origin: format!("the answer to `{id}`"),
                    }),
                    _ => None,
                }
            }
            ("state", Some(field)) => self.fields.get(field).map(|source| Source {
                kind: source.kind,
                origin: format!("`state.{field}`, which holds {}", source.origin),
            }),
            (root, _) => {
                let (parallel, _) = model
                    .scope(node)
                    .items
                    .iter()
                    .rev()
                    .find(|(_, name)| name == root)?;
                self.items.get(parallel).map(|source| Source {
                    kind: source.kind,
                    origin: format!("`{root}`, an item of {}", source.origin),
                })
            }
        }
    }
}

/// A type whose values carry no text.
fn scalar(ty: &ValueType) -> bool {
    matches!(
        ty,
        ValueType::Integer | ValueType::Number | ValueType::Boolean
    )
}

/// A `wait` answer that is a number, a boolean, or one of the workflow's own choices.
fn typed_answer(answer: &AnswerType) -> bool {
    !matches!(answer, AnswerType::String | AnswerType::Json(_))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::analyze::testing::Builder;
    use crate::ir::{AnswerType, Strategy, ValueType};

    fn taint_at(model: &Model<'_>, taints: &Taints, node: &str, path: &str) -> Option<Kind> {
        let idx = model.workflow.find_node(node).unwrap();
        let read = model
            .sites
            .iter()
            .filter(|site| site.node == idx)
            .flat_map(|site| site.reads())
            .find(|read| read.path == path)
            .unwrap();
        taints.read(model, idx, read).map(|source| source.kind)
    }

    #[test]
    fn agent_replies_flow_through_fields_and_sets() {
        let mut b = Builder::new();
        b.field("plan", ValueType::String, None);
        b.field("copy", ValueType::String, None);
        b.field("count", ValueType::Integer, Some(0.into()));
        // The set comes before the write it copies: flow-insensitive.
        b.set("copy", "{{ state.plan | upper }}");
        b.agent_to("planner", "go", "plan");
        b.set("count", "{{ state.count + 1 }}");
        b.tool(
            "use",
            &[
                "echo",
                "{{ state.copy }}",
                "{{ state.count }}",
                "{{ input.x }}",
            ],
        );
        let workflow = b.finish();
        let model = Model::new(&workflow);
        let taints = Taints::compute(&model, None);
        assert_eq!(
            taint_at(&model, &taints, "use", "state.copy"),
            Some(Kind::Agent)
        );
        assert_eq!(taint_at(&model, &taints, "use", "state.count"), None);
        assert_eq!(
            taint_at(&model, &taints, "use", "input.x"),
            Some(Kind::Input)
        );
    }

    #[test]
    fn answers_and_for_each_items_are_tainted() {
        let mut b = Builder::new();
        b.field("choice", ValueType::String, None);
        b.wait("ask", AnswerType::String, Some("choice"));
        b.parallel("each", Strategy::All, Some(("outputs.ask", "name")), |b| {
            b.branch("body", |b| {
                b.tool("touch", &["touch", "{{ name }}", "{{ index }}"]);
            });
        });
        let workflow = b.finish();
        let model = Model::new(&workflow);
        let taints = Taints::compute(&model, None);
        assert_eq!(
            taint_at(&model, &taints, "touch", "name"),
            Some(Kind::Answer)
        );
        assert_eq!(taint_at(&model, &taints, "touch", "index"), None);
    }
}
