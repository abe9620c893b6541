//! `output` mappings: a node's raw results → parsed, validated state writes.

use serde_json::Value;

use crate::ir::{OutputMap, OutputSource, ParseMode};
use crate::runtime::frame::Write;
use crate::runtime::shared::Shared;
use crate::runtime::{NodeError, parse_output};

/// One raw result of a node, by `from=`.
pub(crate) enum Raw<'a> {
    /// Text, parsed by `parse=`.
    Text(&'a str),
    /// An already typed value (exit codes, typed answers); strings are still parsed when
    /// `parse=` asks for more than text.
    Typed(Value),
}

/// Maps each output through its parse mode and schema into a write of its field.
pub(crate) fn map_outputs<'a>(
    shared: &Shared,
    outputs: &[OutputMap],
    mut source: impl FnMut(OutputSource) -> Result<Raw<'a>, NodeError>,
) -> Result<Vec<Write>, NodeError> {
    let mut writes = Vec::with_capacity(outputs.len());
    for output in outputs {
        let value = match source(output.from)? {
            Raw::Text(text) => {
                let text = shared.program.patterns.extract(output, text)?;
                parse_output(output.parse, text)?
            }
            Raw::Typed(Value::String(text)) if output.parse != ParseMode::Text => {
                parse_output(output.parse, &text)?
            }
            Raw::Typed(value) => value,
        };
        if let Some(schema) = &output.schema {
            shared.program.schemas.validate(&schema.value, &value)?;
        }
        let field = shared
            .program
            .schema
            .find(&output.field.value)
            .ok_or_else(|| {
                NodeError::fatal(format!(
                    "no state field `{}` is declared",
                    output.field.value
                ))
            })?;
        writes.push(Write::Field(field, value));
    }
    Ok(writes)
}
