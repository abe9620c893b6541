//! The generic, data-driven pass: validates a KDL tree against the [grammar](super::grammar)
//! and yields a [`Checked`] view holding only what is known and well typed. It reports
//! unknown node kinds, properties and children ("expected one of …"), missing and extra
//! arguments, missing properties and children, duplicates, and values of the wrong type or
//! out of range (durations, versions, regexes, choices, bounds).
//!
//! It knows nothing about what the nodes mean; `resolve` builds the IR from the view.

mod checked;
mod document;
mod node;
mod value;

pub(crate) use checked::Checked;
pub(crate) use document::{check_custom_tool, check_statement, check_workflow, split_document};
