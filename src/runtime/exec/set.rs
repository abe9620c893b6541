//! `set`: a pure state update from a template or expression.

use std::sync::Arc;

use crate::ir::{NodeIdx, Set};
use crate::runtime::NodeError;
use crate::runtime::frame::{Frame, Write};
use crate::runtime::shared::Shared;

pub(super) fn execute(
    shared: &Arc<Shared>,
    frame: &Frame,
    node: NodeIdx,
    set: &Set,
    seq: u64,
) -> Result<Vec<Write>, NodeError> {
    eval_sets(shared, frame, Some(node), std::slice::from_ref(set), seq)
}

/// Evaluates `set`s (a `set` node, or an `on-error "skip"` handler's fallbacks) into writes.
pub(crate) fn eval_sets(
    shared: &Arc<Shared>,
    frame: &Frame,
    node: Option<NodeIdx>,
    sets: &[Set],
    seq: u64,
) -> Result<Vec<Write>, NodeError> {
    let scope = shared.scope(frame, node, seq);
    sets.iter()
        .map(|set| {
            let field = shared
                .program
                .schema
                .find(&set.field.value)
                .ok_or_else(|| {
                    NodeError::fatal(format!("no state field `{}` is declared", set.field.value))
                })?;
            let value = shared.program.templates.eval_json(&set.value, &scope)?;
            Ok(Write::Field(field, value))
        })
        .collect()
}
