//! The completion request.

use tower_lsp_server::ls_types::{CompletionList, CompletionResponse, Position};

use super::context::context;
use super::items::items;
use crate::lsp::snapshot::Snapshot;

/// The completions at `position`; `None` where nothing fits (inside a comment, in the text
/// of a template).
#[must_use]
pub fn completion(snapshot: &Snapshot, position: Position) -> Option<CompletionResponse> {
    let offset = snapshot.offset(position);
    let items = items(snapshot, &context(snapshot, offset));
    if items.is_empty() {
        return None;
    }
    Some(CompletionResponse::List(CompletionList {
        is_incomplete: false,
        items,
    }))
}
