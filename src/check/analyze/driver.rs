//! The entry point: builds the shared facts once, runs every rule, sorts what they found.

use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostic;
use crate::ir::{CustomTool, Workflow};
use crate::source::Files;

use super::callees::{self, Callees};
use super::context::AnalyzeContext;
use super::flow::Cfg;
use super::model::Model;
use super::rules;

/// What every rule may look at.
pub(crate) struct Facts<'w> {
    /// The workflow.
    pub workflow: &'w Workflow,
    /// Its templates, scopes and branches.
    pub model: Model<'w>,
    /// Its control-flow graph.
    pub cfg: Cfg,
    /// The workflows it calls.
    pub callees: Callees,
    /// Read access to other files.
    pub files: &'w dyn Files,
    /// The directory relative paths are resolved against.
    pub dir: PathBuf,
    /// The custom tools discovered for the workflow.
    pub tools: &'w [CustomTool],
}

impl Facts<'_> {
    /// `path` resolved against the workflow's directory.
    pub(crate) fn resolve(&self, path: &str) -> PathBuf {
        callees::normalize(&self.dir.join(Path::new(path)))
    }
}

/// Runs the data, safety and lint rules over a resolved workflow.
///
/// Reports templates that do not parse or read undeclared names, values read before they
/// are certainly written, parallel branches that read each other's outputs or race on one
/// field, schema files that are missing or invalid, subgraph calls that are missing,
/// recursive or mismatched, inconsistent `wait` answers, untrusted data in command lines,
/// retried side effects, inline secrets, shell commands, and unused declarations. Names the
/// resolver already reported (undefined nodes, fields, providers) are skipped here.
///
/// Called workflows are read through `cx.files`, added to `cx.sources` and resolved with
/// `cx.load`; their errors are returned too, with their own source ids. Diagnostics come
/// sorted by position.
pub fn analyze(workflow: &Workflow, cx: &mut AnalyzeContext<'_>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let callees = callees::load(workflow, cx, &mut out);
    let facts = Facts {
        workflow,
        model: Model::new(workflow),
        cfg: Cfg::new(workflow),
        callees,
        files: cx.files,
        dir: cx.dir().to_owned(),
        tools: cx.tools,
    };
    run_rules(&facts, &mut out);
    out.sort_by(|a, b| (a.span, a.code, &a.message).cmp(&(b.span, b.code, &b.message)));
    out.dedup();
    out
}

/// Every rule, in the order of the codes.
fn run_rules(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    rules::template_syntax::check(facts, out);
    rules::unknown_filter::check(facts, out);
    rules::undeclared_variable::check(facts, out);
    rules::undefined_output::check(facts, out);
    rules::possibly_unset::check(facts, out);
    rules::sibling_branch_read::check(facts, out);
    rules::parallel_write_conflict::check(facts, out);
    rules::schema_file::check(facts, out);
    rules::default_schema::check(facts, out);
    rules::subgraph_input_mismatch::check(facts, out);
    rules::subgraph_output_mismatch::check(facts, out);
    rules::invalid_answer_type::check(facts, out);
    rules::type_mismatch::check(facts, out);
    rules::undeclared_env::check(facts, out);
    rules::custom_tool_use::check(facts, out);
    rules::tainted_command::check(facts, out);
    rules::unguarded_side_effect::check(facts, out);
    rules::inline_secret::check(facts, out);
    rules::shell_command::check(facts, out);
    rules::isolation_needs_snapshots::check(facts, out);
    rules::parallel_shared_edits::check(facts, out);
    rules::unsandboxed_bypass::check(facts, out);
    rules::hook_cannot_block::check(facts, out);
    rules::unused_state_field::check(facts, out);
    rules::unused_input::check(facts, out);
    rules::unused_provider::check(facts, out);
    rules::unbounded_append::check(facts, out);
}
