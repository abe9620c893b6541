//! What [`analyze`](super::analyze) needs besides the workflow: where the file is, how to
//! read the files it refers to, and how to turn a called workflow's text into IR.

use std::path::Path;

use crate::diagnostic::Outcome;
use crate::ir::Workflow;
use crate::source::{Files, SourceId, Sources};

/// Turns the text of a called workflow (already read through [`Files`]) into IR: adds it
/// to [`Sources`] under `path`, parses it and resolves it. The diagnostics returned carry
/// the callee's own [`SourceId`], so they render against the callee's text.
pub type LoadWorkflow<'a> = dyn Fn(&mut Sources, &Path, String) -> Outcome<Workflow> + 'a;

/// The surroundings of one workflow being analysed.
pub struct AnalyzeContext<'a> {
    /// Every file of this compilation; called workflows are added to it.
    pub sources: &'a mut Sources,
    /// The workflow's own file.
    pub file: SourceId,
    /// The workflow's path; schema files and subgraph paths are relative to its directory.
    pub path: &'a Path,
    /// Read access to schema files and called workflows.
    pub files: &'a dyn Files,
    /// How called workflows are parsed and resolved.
    pub load: &'a LoadWorkflow<'a>,
}

impl<'a> AnalyzeContext<'a> {
    /// A context for the workflow in `file` at `path`.
    pub fn new(
        sources: &'a mut Sources,
        file: SourceId,
        path: &'a Path,
        files: &'a dyn Files,
        load: &'a LoadWorkflow<'a>,
    ) -> Self {
        Self {
            sources,
            file,
            path,
            files,
            load,
        }
    }

    /// The directory relative paths are resolved against.
    #[must_use]
    pub fn dir(&self) -> &'a Path {
        self.path.parent().unwrap_or(Path::new(""))
    }
}
