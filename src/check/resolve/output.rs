//! `output "<field>" parse=… schema=… from=… match=…` on agents, tools and waits.

use super::resolver::{Resolver, exact};
use crate::check::structure::Checked;
use crate::ir::{OutputMap, OutputSource, ParseMode};

/// The `output` children of `checked` (kind `id`: `agent/output`, `tool/output`, …).
pub(super) fn resolve_outputs(r: &Resolver<'_>, checked: &Checked<'_>, id: &str) -> Vec<OutputMap> {
    exact(
        checked
            .children_of(id)
            .filter_map(|output| resolve_output(r, output)),
    )
}

fn resolve_output(r: &Resolver<'_>, output: &Checked<'_>) -> Option<OutputMap> {
    let field = r.string(output.arg(0))?;
    let parse = match r
        .string(output.prop("parse"))
        .as_deref()
        .map(String::as_str)
    {
        Some("json") => ParseMode::Json,
        Some("yes-no") => ParseMode::YesNo,
        Some("number") => ParseMode::Number,
        Some("lines") => ParseMode::Lines,
        _ => ParseMode::Text,
    };
    let from = match r.string(output.prop("from")).as_deref().map(String::as_str) {
        Some("stderr") => OutputSource::Stderr,
        Some("exit-code") => OutputSource::ExitCode,
        _ => OutputSource::Result,
    };
    Some(OutputMap {
        field,
        parse,
        schema: r.string(output.prop("schema")),
        from,
        pattern: r.string(output.prop("match")),
        span: output.node.span,
    })
}
