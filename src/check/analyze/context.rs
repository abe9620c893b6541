//! What [`analyze`](super::analyze) needs besides the workflow: where the file is, how to
//! read the files it refers to, and how to turn a called workflow's text into IR.

use std::path::Path;

use crate::diagnostic::Outcome;
use crate::ir::{CustomTool, Workflow};
use crate::source::{Files, SourceId, Sources};
use crate::syntax;

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
    /// The custom tools discovered for the workflow (`.atomic/tools/*.kdl`).
    pub tools: &'a [CustomTool],
}

impl<'a> AnalyzeContext<'a> {
    /// A context for the workflow in `file` at `path`; called workflows are parsed and
    /// resolved with [`load_workflow`].
    pub fn new(
        sources: &'a mut Sources,
        file: SourceId,
        path: &'a Path,
        files: &'a dyn Files,
    ) -> Self {
        Self {
            sources,
            file,
            path,
            files,
            load: &load_workflow,
            tools: &[],
        }
    }

    /// The custom tools `tool use=` nodes and agents may name (none by default).
    #[must_use]
    pub fn with_tools(mut self, tools: &'a [CustomTool]) -> Self {
        self.tools = tools;
        self
    }

    /// Uses `load` to turn called workflows into IR (tests pass IR built in code).
    #[must_use]
    pub fn with_loader(mut self, load: &'a LoadWorkflow<'a>) -> Self {
        self.load = load;
        self
    }

    /// The directory relative paths are resolved against.
    #[must_use]
    pub fn dir(&self) -> &'a Path {
        self.path.parent().unwrap_or(Path::new(""))
    }
}

/// The standard [`LoadWorkflow`]: adds the text to `sources`, parses it with
/// [`syntax::kdl::parse`] and resolves it with [`check::resolve`](crate::check::resolve).
pub fn load_workflow(sources: &mut Sources, path: &Path, text: String) -> Outcome<Workflow> {
    let file = sources.add(path, text);
    let parsed = syntax::kdl::parse(&sources.get(file).text, file);
    let mut diagnostics = parsed.diagnostics;
    let resolved = crate::check::resolve(sources, file, parsed.document);
    diagnostics.extend(resolved.diagnostics);
    Outcome::new(resolved.value, diagnostics)
}
