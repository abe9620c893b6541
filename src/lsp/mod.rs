//! The language server, `atomic lsp`: diagnostics as you type (the same [`compile`] as
//! `atomic check`, so the same codes, messages and help), hover, go to definition, find
//! references, completion, document symbols, rename and quick fixes, over stdio.
//!
//! Layout: `server` is the only transport code (tower-lsp-server); every feature is a plain
//! function over a [`Snapshot`] (one buffer parsed and indexed) or an [`Analysis`] (one
//! buffer compiled), so tests call them without a client. `documents` holds the open
//! buffers, `files` serves them over the disk to the compiler, `feedback` decides which
//! file shows whose diagnostics, `convert` turns spans into UTF-16 ranges and diagnostics
//! into the protocol's. It never imports the runtime or providers: no network, no runs.
//!
//! [`compile`]: crate::compile::compile

mod analysis;
mod code_action;
mod completion;
mod convert;
mod definition;
mod describe;
mod discovered;
mod documents;
mod feedback;
mod files;
mod hover;
mod index;
mod references;
mod rename;
mod server;
mod snapshot;
mod symbols;
#[cfg(test)]
mod testing;
mod tree;

pub use crate::disk::Disk;
pub use analysis::Analysis;
pub use code_action::code_actions;
pub use completion::completion;
pub use convert::{diagnostic, normalize, offset, path, position, range, uri};
pub use definition::definition;
pub use documents::{Document, Documents, apply as apply_change};
pub use feedback::Feedback;
pub use files::Overlay;
pub use hover::hover;
pub use index::{Index, Occurrence, SymbolKind, TemplateSite, Written};
pub use references::references;
pub use rename::{prepare_rename, rename};
pub use server::{Backend, DEBOUNCE, serve_stdio};
pub use snapshot::Snapshot;
pub use symbols::document_symbols;
