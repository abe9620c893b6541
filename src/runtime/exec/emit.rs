//! `emit`: render the event's data and raise it as a `custom` event (the `events` stream
//! and the stored log). It writes nothing.

use serde_json::{Map, Value};

use crate::ir::{Emit, NodeIdx};
use crate::runtime::frame::{Frame, Write};
use crate::runtime::shared::Shared;
use crate::runtime::{NodeError, RunEvent};

pub(super) fn execute(
    shared: &Shared,
    frame: &Frame,
    node: NodeIdx,
    emit: &Emit,
    seq: u64,
) -> Result<Vec<Write>, NodeError> {
    let scope = shared.scope(frame, Some(node), seq);
    let mut data = Map::new();
    for (key, template) in &emit.data {
        data.insert(
            key.value.clone(),
            shared.program.templates.eval_json(template, &scope)?,
        );
    }
    shared.emit(RunEvent::Custom {
        node: shared.id(node).clone(),
        name: emit.event.value.clone(),
        data: Value::Object(data),
    });
    Ok(Vec::new())
}
