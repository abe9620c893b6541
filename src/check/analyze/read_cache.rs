//! Scans each distinct template text once per analysis.
//!
//! Workflows repeat texts (`{{ input.target }}`, `{{ state.count + 1 }}`, the same `until`
//! condition in every loop), and parsing a template is most of what the analysis costs.
//! A text's scan does not depend on where it is written, so it is kept by text and only
//! positioned ([`place`]) per occurrence.

use std::collections::HashMap;

use super::reads::{Read, Scan, TemplateError, place, scan_expression, scan_template};
use crate::ir::Template;

/// Scans by text, for the lifetime of one analysis (templates and expressions apart: the
/// same text parses differently as either).
#[derive(Default)]
pub(super) struct ReadCache<'w> {
    templates: HashMap<&'w str, Scan>,
    expressions: HashMap<&'w str, Scan>,
}

impl<'w> ReadCache<'w> {
    /// What `template` reads, as [`super::template_reads`] or (`is_expr`)
    /// [`super::expression_reads`] would say.
    pub(super) fn reads(
        &mut self,
        template: &'w Template,
        is_expr: bool,
    ) -> Result<Vec<Read>, TemplateError> {
        let text = template.source.as_str();
        let scan = if is_expr {
            self.expressions
                .entry(text)
                .or_insert_with(|| scan_expression(text))
        } else {
            self.templates
                .entry(text)
                .or_insert_with(|| scan_template(text))
        };
        place(template, scan)
    }
}
