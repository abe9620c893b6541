//! Renderers of diagnostics, one file per output format. All read the same
//! [`Diagnostic`](crate::diagnostic::Diagnostic) values.

pub mod json;
pub mod pretty;
pub mod sarif;

mod location;

pub use location::{Location, locate};
