//! `emit "<event>" { data "<key>" "<template>" … }`: a custom event into the run's `events`
//! stream and stored log.

use super::resolver::Resolver;
use crate::check::structure::Checked;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{Emit, Template};
use crate::source::Spanned;

/// The event. A missing name leaves it empty (already reported).
pub(super) fn resolve_emit(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Emit {
    let event = r
        .string(checked.arg(0))
        .unwrap_or_else(|| Spanned::new(String::new(), checked.name_span()));
    let mut data: Vec<(Spanned<String>, Template)> = Vec::new();
    for entry in checked.children_of("emit/data") {
        let (Some(key), Some(value)) = (r.string(entry.arg(0)), r.template(entry.arg(1))) else {
            continue;
        };
        if let Some((first, _)) = data.iter().find(|(first, _)| first.value == key.value) {
            r.report(
                Diagnostic::new(
                    Code::DuplicateChild,
                    key.span,
                    format!("`data \"{}\"` is given twice", key.value),
                )
                .label("given again")
                .with_label(first.span, "first given here")
                .help("keep one: the event carries one value per key"),
            );
            continue;
        }
        data.push((key, value));
    }
    Emit { event, data }
}
