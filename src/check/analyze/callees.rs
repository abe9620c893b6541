//! Called workflows: finds each `subgraph`'s file, loads it through [`Files`] and the
//! context's loader, and follows subgraphs of subgraphs to find recursion. Reports
//! `missing-subgraph` and `subgraph-recursion`, and passes on the errors of directly called
//! workflows (with their own source ids) so a broken callee is not silently unchecked.
//!
//! ## What it does
//! `missing-subgraph`: a subgraph's `workflow=` file cannot be read.
//! `subgraph-recursion`: following subgraphs from this workflow comes back to a file already
//! on the way (`a.kdl` → `b.kdl` → `a.kdl`).
//!
//! ## Why is this bad?
//! A missing file fails the run when the subgraph is reached; a recursive chain never ends.
//!
//! ## Example
//! ```kdl
//! subgraph "checks" workflow="./checks.kdl"   // checks.kdl calls this file again
//! ```
//!
//! ## Use instead
//! Put repeated steps in a `loop`; keep subgraph calls a tree.
//!
//! Paths: a subgraph's resolved `path` is used as written (it is already relative to the
//! calling file, see [`crate::ir::Subgraph::path`]); without one, a `workflow=` that looks
//! like a path (contains `/` or ends in `.kdl`) is resolved against the calling file's
//! directory. A bare name (a discovered workflow) without a resolved path is not followed:
//! discovery belongs to the caller of the checker. Recursion is followed at most
//! [`MAX_DEPTH`] calls deep.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{NodeIdx, NodeKind, Subgraph, Workflow};
use crate::source::ReadError;

use super::context::AnalyzeContext;

/// How deep subgraph calls are followed looking for recursion.
pub(crate) const MAX_DEPTH: usize = 32;

/// A loaded file.
#[derive(Clone, Debug)]
enum Loaded {
    /// Not there.
    Missing,
    /// There, but it cannot be read (a directory, not permitted, not UTF-8).
    Unreadable(ReadError),
    /// Read, but it has errors: not used for mapping checks.
    Broken,
    /// A clean workflow.
    Clean(Rc<Workflow>),
}

/// The workflows this one calls, by subgraph node.
#[derive(Debug, Default)]
pub(crate) struct Callees {
    /// Clean callees by calling node.
    pub by_node: HashMap<NodeIdx, Rc<Workflow>>,
}

struct Loader<'c, 'a> {
    cx: &'c mut AnalyzeContext<'a>,
    cache: HashMap<PathBuf, Loaded>,
}

impl Loader<'_, '_> {
    fn load(&mut self, path: &Path, out: Option<&mut Vec<Diagnostic>>) -> Loaded {
        if let Some(loaded) = self.cache.get(path) {
            return loaded.clone();
        }
        let loaded = match self.cx.files.read(path) {
            Err(ReadError::NotFound) => Loaded::Missing,
            Err(error) => Loaded::Unreadable(error),
            Ok(text) => {
                let outcome = (self.cx.load)(self.cx.sources, path, text);
                let clean = !outcome.has_errors();
                if let Some(out) = out {
                    out.extend(outcome.diagnostics.into_iter().filter(Diagnostic::is_error));
                }
                match outcome.value {
                    Some(workflow) if clean => Loaded::Clean(Rc::new(workflow)),
                    _ => Loaded::Broken,
                }
            }
        };
        self.cache.insert(path.to_owned(), loaded.clone());
        loaded
    }
}

/// Loads every workflow `workflow` calls and reports missing files and recursion.
pub(crate) fn load(
    workflow: &Workflow,
    cx: &mut AnalyzeContext<'_>,
    out: &mut Vec<Diagnostic>,
) -> Callees {
    let root = normalize(cx.path);
    let mut loader = Loader {
        cx,
        cache: HashMap::new(),
    };
    let mut callees = Callees::default();
    let mut acyclic = HashSet::new();
    for (idx, subgraph) in subgraphs(workflow) {
        let Some(path) = callee_path(&root, subgraph) else {
            continue;
        };
        if path == root {
            out.push(recursion(workflow, idx, subgraph, &[root.clone(), path]));
            continue;
        }
        match loader.load(&path, Some(out)) {
            Loaded::Missing => out.push(missing(subgraph, &path)),
            Loaded::Unreadable(error) => out.push(Diagnostic::unreadable(
                subgraph.workflow.span,
                "subgraph workflow",
                &path,
                &error,
            )),
            Loaded::Broken => {}
            Loaded::Clean(callee) => {
                let mut chain = vec![root.clone(), path.clone()];
                if let Some(cycle) = find_cycle(&mut loader, &callee, &mut chain, &mut acyclic) {
                    out.push(recursion(workflow, idx, subgraph, &cycle));
                }
                callees.by_node.insert(idx, callee);
            }
        }
    }
    callees
}

/// The subgraph nodes of a workflow.
fn subgraphs(workflow: &Workflow) -> impl Iterator<Item = (NodeIdx, &Subgraph)> {
    workflow
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(index, node)| match &node.kind {
            NodeKind::Subgraph(subgraph) => Some((NodeIdx(index as u32), &**subgraph)),
            _ => None,
        })
}

/// Depth-first search for a call chain from `workflow` (the last file of `chain`) back to a
/// file on `chain`. Returns the chain with the repeated file appended.
fn find_cycle(
    loader: &mut Loader<'_, '_>,
    workflow: &Workflow,
    chain: &mut Vec<PathBuf>,
    acyclic: &mut HashSet<PathBuf>,
) -> Option<Vec<PathBuf>> {
    if chain.len() > MAX_DEPTH {
        return None;
    }
    let caller = chain.last().cloned().unwrap_or_default();
    for (_, subgraph) in subgraphs(workflow) {
        let Some(path) = callee_path(&caller, subgraph) else {
            continue;
        };
        if let Some(position) = chain.iter().position(|seen| *seen == path) {
            let mut cycle = chain[position..].to_vec();
            cycle.push(path);
            return Some(cycle);
        }
        if acyclic.contains(&path) {
            continue;
        }
        if let Loaded::Clean(callee) = loader.load(&path, None) {
            chain.push(path.clone());
            let found = find_cycle(loader, &callee, chain, acyclic);
            chain.pop();
            if found.is_some() {
                return found;
            }
        }
        acyclic.insert(path);
    }
    None
}

/// The file a subgraph calls, relative to the calling file `caller`.
pub(crate) fn callee_path(caller: &Path, subgraph: &Subgraph) -> Option<PathBuf> {
    if let Some(path) = &subgraph.path {
        return Some(normalize(Path::new(path)));
    }
    let written = subgraph.workflow.value.as_str();
    let is_path = written.contains('/') || written.contains('\\') || written.ends_with(".kdl");
    if !is_path {
        return None;
    }
    let dir = caller.parent().unwrap_or(Path::new(""));
    Some(normalize(&dir.join(written)))
}

/// Removes `.` and resolves `..` lexically (the files need not exist).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                let last = out.components().next_back();
                if matches!(last, Some(Component::Normal(_))) {
                    out.pop();
                } else if !matches!(last, Some(Component::RootDir | Component::Prefix(_))) {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` written relative to `dir` (both lexically normalized), for short messages.
fn relative_to(path: &Path, dir: &Path) -> PathBuf {
    let path_parts: Vec<Component<'_>> = path.components().collect();
    let dir_parts: Vec<Component<'_>> = dir.components().collect();
    let common = path_parts
        .iter()
        .zip(&dir_parts)
        .take_while(|(a, b)| a == b)
        .count();
    if dir_parts[common..]
        .iter()
        .any(|part| !matches!(part, Component::Normal(_)))
    {
        return path.to_path_buf();
    }
    let mut out = PathBuf::new();
    for _ in common..dir_parts.len() {
        out.push("..");
    }
    for part in &path_parts[common..] {
        out.push(part);
    }
    out
}

fn missing(subgraph: &Subgraph, path: &Path) -> Diagnostic {
    Diagnostic::new(
        Code::MissingSubgraph,
        subgraph.workflow.span,
        format!(
            "subgraph workflow `{}` does not exist",
            subgraph.workflow.value
        ),
    )
    .label(format!("no readable file at `{}`", path.display()))
    .help("check the path; it is relative to the directory of this workflow")
}

fn recursion(
    workflow: &Workflow,
    idx: NodeIdx,
    subgraph: &Subgraph,
    chain: &[PathBuf],
) -> Diagnostic {
    let dir = chain
        .first()
        .and_then(|root| root.parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let names: Vec<String> = chain
        .iter()
        .map(|path| format!("`{}`", relative_to(path, &dir).display()))
        .collect();
    let id = &workflow.node(idx).id.value;
    Diagnostic::new(
        Code::SubgraphRecursion,
        subgraph.workflow.span,
        format!("subgraph `{id}` recurses: {}", names.join(" → ")),
    )
    .label("this call never ends")
    .help("subgraph calls must not form a cycle; repeat steps with a `loop` instead")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::analyze::testing::{Builder, messages, run_with_callees};

    #[test]
    fn normalizes_lexically() {
        assert_eq!(
            normalize(Path::new("a/./b/../c.kdl")),
            PathBuf::from("a/c.kdl")
        );
        assert_eq!(normalize(Path::new("../x.kdl")), PathBuf::from("../x.kdl"));
        assert_eq!(normalize(Path::new("/x/../../y")), PathBuf::from("/y"));
    }

    #[test]
    fn chains_are_shown_relative_to_the_caller() {
        let dir = Path::new("a/b");
        assert_eq!(
            relative_to(Path::new("a/b/c.kdl"), dir),
            PathBuf::from("c.kdl")
        );
        assert_eq!(
            relative_to(Path::new("a/x/c.kdl"), dir),
            PathBuf::from("../x/c.kdl")
        );
        assert_eq!(
            relative_to(Path::new("c.kdl"), Path::new("")),
            PathBuf::from("c.kdl")
        );
        assert_eq!(
            relative_to(Path::new("/x/c.kdl"), Path::new("../y")),
            PathBuf::from("/x/c.kdl")
        );
    }

    #[test]
    fn paths_are_relative_to_the_caller_and_names_are_not_followed() {
        let mut b = Builder::new();
        let by_path = b.subgraph("a", "./sub/checks.kdl");
        let by_name = b.subgraph("b", "checks");
        let workflow = b.finish();
        let caller = Path::new("flows/main.kdl");
        let subgraph = |idx: NodeIdx| match &workflow.node(idx).kind {
            NodeKind::Subgraph(subgraph) => subgraph.clone(),
            _ => unreachable!(),
        };
        assert_eq!(
            callee_path(caller, &subgraph(by_path)),
            Some(PathBuf::from("flows/sub/checks.kdl"))
        );
        assert_eq!(callee_path(caller, &subgraph(by_name)), None);
    }

    #[test]
    fn reports_missing_files() {
        let mut b = Builder::new();
        b.subgraph("checks", "./checks.kdl");
        let diagnostics = run_with_callees(&b.finish(), &[]);
        assert_eq!(
            messages(&diagnostics, Code::MissingSubgraph),
            ["subgraph workflow `./checks.kdl` does not exist"]
        );
    }

    #[test]
    fn reports_recursion_across_files_with_the_chain() {
        let mut main = Builder::new();
        main.subgraph("checks", "./checks.kdl");
        let mut checks = Builder::new();
        checks.subgraph("deeper", "./deeper.kdl");
        let mut deeper = Builder::new();
        deeper.subgraph("back", "checks.kdl");
        let diagnostics = run_with_callees(
            &main.finish(),
            &[
                ("checks.kdl", checks.finish()),
                ("deeper.kdl", deeper.finish()),
            ],
        );
        assert_eq!(
            messages(&diagnostics, Code::SubgraphRecursion),
            ["subgraph `checks` recurses: `checks.kdl` → `deeper.kdl` → `checks.kdl`"]
        );
    }

    #[test]
    fn reports_a_workflow_calling_itself() {
        let mut main = Builder::new();
        main.subgraph("again", "./flow.kdl");
        let diagnostics = run_with_callees(&main.finish(), &[]);
        assert_eq!(
            messages(&diagnostics, Code::SubgraphRecursion),
            ["subgraph `again` recurses: `flow.kdl` → `flow.kdl`"]
        );
    }

    #[test]
    fn a_shared_callee_is_not_recursion() {
        let mut main = Builder::new();
        main.subgraph("one", "./a.kdl");
        main.subgraph("two", "./b.kdl");
        let mut a = Builder::new();
        a.subgraph("leaf", "./leaf.kdl");
        let mut b = Builder::new();
        b.subgraph("leaf", "./leaf.kdl");
        let diagnostics = run_with_callees(
            &main.finish(),
            &[
                ("a.kdl", a.finish()),
                ("b.kdl", b.finish()),
                ("leaf.kdl", Builder::new().finish()),
            ],
        );
        assert!(messages(&diagnostics, Code::SubgraphRecursion).is_empty());
        assert!(messages(&diagnostics, Code::MissingSubgraph).is_empty());
    }
}
