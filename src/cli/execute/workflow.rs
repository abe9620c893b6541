//! Loading the workflow a run executes: resolve the name, compile it like `check` does
//! (diagnostics on stderr; errors stop here), and fingerprint the file so `resume` can
//! tell whether it changed.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cli::Exit;
use crate::cli::builtin;
use crate::cli::disk::Disk;
use crate::cli::project::Project;
use crate::cli::render::{self, locate, pretty::Style};
use crate::compile::{self, Config};
use crate::diagnostic::{Diagnostic, Severity};
use crate::ir::Workflow;
use crate::lower::Plan;
use crate::source::Sources;

/// A compiled workflow, ready to run.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// The sources read (the workflow and what it refers to), for locating nodes.
    pub(crate) sources: Sources,
    /// The executable plan.
    pub(crate) plan: Arc<Plan>,
    /// The file, absolute: recorded in the run so `resume` finds it from anywhere.
    pub(crate) path: PathBuf,
    /// The hash of the file's text and of the definitions its agents use.
    pub(crate) hash: String,
}

impl Loaded {
    /// The workflow.
    pub(crate) fn workflow(&self) -> &Workflow {
        self.plan.workflow()
    }

    /// The directory relative paths in the workflow start from.
    pub(crate) fn dir(&self) -> PathBuf {
        self.path
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    }

    /// `file:line:col` of node `id`, if the workflow has it.
    pub(crate) fn locate_node(&self, id: &str) -> Option<String> {
        let node = self.workflow().find_node(id)?;
        let span = self.workflow().node(node).id.span;
        let at = locate(&self.sources, span);
        Some(format!("{}:{}:{}", at.file, at.line, at.column))
    }
}

/// Resolves `flow` (a path or a discovered name) to a file.
///
/// # Errors
/// A message naming what was looked for.
pub(crate) fn resolve(project: &Project, flow: &Path) -> Result<PathBuf, String> {
    project.resolve_workflow(flow)
}

/// Compiles the workflow at `path`, printing its errors to stderr (and a line counting
/// its warnings, when `warnings`). Errors (or an unreadable file) end the command with
/// the exit code to use.
///
/// # Errors
/// The exit code: [`Exit::Fatal`] when the file cannot be read, [`Exit::Problems`] when
/// it has errors.
pub(crate) fn load(project: &Project, path: &Path, warnings: bool) -> Result<Loaded, Exit> {
    let mut sources = Sources::new();
    let (config, config_problems) = project.config(&mut sources);
    let compiled = match compile::compile_path(&mut sources, path, &Disk, &config) {
        Ok(compiled) => compiled,
        Err(error) => {
            eprintln!("error: cannot read `{}`: {error}", path.display());
            return Err(Exit::Fatal);
        }
    };
    let mut hash = content_hash(&sources.get(compiled.file).text);
    if let Some(workflow) = compiled.workflow() {
        hash = with_definitions(hash, workflow);
    }
    // A run on swapped adapters is another run than one on the written ones: `resume`
    // refuses to continue it on others.
    if let Some(adapter) = config.adapter() {
        hash = content_hash(&format!("{hash} adapter={adapter}"));
    }
    let mut diagnostics: Vec<Diagnostic> = config_problems;
    diagnostics.extend(compiled.diagnostics.iter().cloned());
    report(&sources, &diagnostics, path, warnings);
    let plan = match compiled.plan {
        Some(plan) if !diagnostics.iter().any(Diagnostic::is_error) => plan,
        _ => {
            if let Some(adapter) = config.adapter() {
                eprintln!(
                    "note: the workflow's agent providers were checked on `{adapter}` (`--provider`, or `adapter` in .atomic/config.kdl)"
                );
            }
            eprintln!("error: `{}` has errors; nothing was run", path.display());
            return Err(Exit::Problems);
        }
    };
    // A built-in's `<built-in>/` path is already the same from anywhere.
    let absolute = if builtin::is_built_in(path) {
        path.to_path_buf()
    } else {
        std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
    };
    Ok(Loaded {
        sources,
        plan: Arc::new(plan),
        path: absolute,
        hash,
    })
}

/// Compiles a workflow without printing: for subgraphs, whose problems become the
/// calling node's error.
///
/// # Errors
/// A message naming the file and its first error.
pub(crate) fn compile_quietly(path: &Path, config: &Config) -> Result<Plan, String> {
    let mut sources = Sources::new();
    let compiled = compile::compile_path(&mut sources, path, &Disk, config)
        .map_err(|error| format!("cannot read `{}`: {error}", path.display()))?;
    if let Some(error) = compiled.diagnostics.iter().find(|d| d.is_error()) {
        let at = locate(&sources, error.span);
        return Err(format!(
            "`{}` has errors: {}:{}:{}: {}",
            path.display(),
            at.file,
            at.line,
            at.column,
            error.message
        ));
    }
    compiled
        .plan
        .ok_or_else(|| format!("`{}` could not be compiled", path.display()))
}

/// Errors in full, as `check` shows them; warnings and notes in one line (a run is not
/// the place to lint; `check` is).
fn report(sources: &Sources, diagnostics: &[Diagnostic], path: &Path, warnings: bool) {
    let errors: Vec<Diagnostic> = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .cloned()
        .collect();
    if !errors.is_empty() {
        let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        let style = Style { color, width: 100 };
        eprint!("{}", render::pretty::render(sources, &errors, style));
        return;
    }
    if !warnings {
        return;
    }
    let warnings: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .collect();
    if warnings.is_empty() {
        return;
    }
    let mut codes: Vec<(String, usize)> = Vec::new();
    for warning in &warnings {
        let code = warning.code.qualified();
        match codes.iter_mut().find(|(known, _)| *known == code) {
            Some((_, count)) => *count += 1,
            None => codes.push((code, 1)),
        }
    }
    let codes: Vec<String> = codes
        .iter()
        .map(|(code, count)| {
            if *count == 1 {
                code.clone()
            } else {
                format!("{code} ×{count}")
            }
        })
        .collect();
    eprintln!(
        "warning: {} warning{} ({}); `atomic check {}` shows them",
        warnings.len(),
        if warnings.len() == 1 { "" } else { "s" },
        codes.join(", "),
        path.display()
    );
}

/// `hash` extended with the discovered definitions the workflow's agents use, so `resume`
/// notices an edited `.claude/agents/…` file as it notices an edited workflow. Unchanged
/// for a workflow that uses none, so runs recorded before discovery still resume.
fn with_definitions(hash: String, workflow: &Workflow) -> String {
    let definitions: Vec<&crate::ir::UsedDefinition> = workflow
        .nodes
        .iter()
        .filter_map(|node| match &node.kind {
            crate::ir::NodeKind::Agent(agent) => agent.definition.as_ref(),
            _ => None,
        })
        .collect();
    if definitions.is_empty() {
        return hash;
    }
    let text = serde_json::to_string(&definitions).unwrap_or_default();
    content_hash(&format!("{hash}\0{text}"))
}

/// A stable fingerprint of a workflow's text (64-bit FNV-1a, hex): enough to notice an
/// edit, not a security measure.
pub(crate) fn content_hash(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_stable_and_sensitive() {
        assert_eq!(content_hash(""), "cbf29ce484222325");
        assert_eq!(content_hash("a"), "af63dc4c8601ec8c");
        assert_ne!(
            content_hash("workflow \"a\""),
            content_hash("workflow \"b\"")
        );
    }
}
