//! The one façade over the static stages: parse → resolve → analyze → lower. `atomic check`,
//! `run`, `graph` and the language server all call [`compile`], so they never disagree.
//!
//! Custom tools are discovered (`registry`) for a workflow that names any, before the
//! data rules, which check its uses against them; the plan carries the tools it uses.
//! Discovered agents, skills and commands named by `use=` are read here, through `files`,
//! and copied into the IR (see `registry::agents`).
//!
//! Gating: syntax and structure are always reported (the parser and resolver recover);
//! data rules run on whatever workflow the resolver built; lowering and its flow rules run
//! only on a workflow without errors, because the graph's invariants need a valid IR.
//! Suppression comments and configured severities are applied before that gate, so `check`
//! and `run` judge the same diagnostics; errors that leave a workflow unable to run cannot
//! be silenced.

mod config;
mod suppress;
mod telemetry;

pub use config::{Config, RuleLevel, TemporalConfig};
pub use telemetry::TelemetryConfig;

use std::path::Path;

use crate::check;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir;
use crate::lower::{self, Plan};
use crate::registry;
use crate::source::{Files, ReadError, SourceId, Sources, Span, Spanned};
use crate::syntax;

/// Everything one compilation produced.
#[derive(Debug)]
pub struct Compiled {
    /// The file compiled.
    pub file: SourceId,
    /// The executable plan, only when there were no errors.
    pub plan: Option<Plan>,
    /// The resolved workflow (possibly partial) when no plan was built; editors use it.
    pub workflow: Option<ir::Workflow>,
    /// Every diagnostic, sorted by file and position.
    pub diagnostics: Vec<Diagnostic>,
}

impl Compiled {
    /// Whether any diagnostic is an error.
    #[must_use]
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The workflow, from the plan if one was built.
    #[must_use]
    pub fn workflow(&self) -> Option<&ir::Workflow> {
        self.plan
            .as_ref()
            .map(Plan::workflow)
            .or(self.workflow.as_ref())
    }
}

/// Compiles the workflow in `file` (already added to `sources`). Other files it refers to
/// (subgraphs, schemas) are read through `files` and added to `sources`.
pub fn compile(
    sources: &mut Sources,
    file: SourceId,
    files: &dyn Files,
    config: &Config,
) -> Compiled {
    // The tree owns its strings: the source need not be copied out of `sources`.
    let syntax::kdl::KdlParse {
        document,
        comments,
        mut diagnostics,
    } = syntax::kdl::parse(&sources.get(file).text, file);
    let path = sources.get(file).path.clone();

    // Resolving consumes the tree, freeing it statement by statement (suppression needs
    // only the comments): it is about as large as the IR.
    let resolved = check::resolve(sources, file, document);
    diagnostics.extend(resolved.diagnostics);
    // One report of nesting too deep: the checker's limit is reached before the parser's.
    if let Some(first) = diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.code == Code::NestingTooDeep)
        .map(|diagnostic| diagnostic.span.start)
        .min()
    {
        diagnostics.retain(|diagnostic| {
            diagnostic.code != Code::NestingTooDeep || diagnostic.span.start == first
        });
    }
    let mut workflow = resolved.value;
    if let (Some(resolved), Some(adapter)) = (&mut workflow, config.adapter()) {
        // What the written adapters were asked is no longer the question; what the
        // swapped-to adapter is asked is, said as a swap.
        let swappable =
            |provider: &ir::ProviderDecl| SWAPPABLE.contains(&provider.adapter.value.as_str());
        let written = check::agent_features(resolved, swappable);
        diagnostics.retain(|diagnostic| !written.contains(diagnostic));
        let before: Vec<(String, String)> = resolved
            .providers
            .iter()
            .filter(|provider| swappable(provider))
            .map(|provider| (provider.name.value.clone(), provider.adapter.value.clone()))
            .collect();
        swap_adapter(resolved, adapter);
        let swapped_to = |provider: &ir::ProviderDecl| {
            before.iter().any(|(name, _)| *name == provider.name.value)
        };
        diagnostics.extend(
            check::agent_features(resolved, swapped_to)
                .into_iter()
                .map(|diagnostic| said_as_swap(diagnostic, adapter)),
        );
    }
    if let Some(resolved) = &mut workflow {
        diagnostics.extend(judge_models(resolved, config));
        diagnostics.extend(registry::agents::attach_definitions(
            resolved,
            files,
            config.discovery(),
        ));
    }
    // The custom tools the workflow names, walked for once: discovery, the severity of
    // tool-file problems and the plan's tools all go by them.
    let uses: Vec<String> = workflow
        .as_ref()
        .map(|workflow| {
            workflow
                .custom_tool_uses()
                .into_iter()
                .map(|name| name.value.clone())
                .collect()
        })
        .unwrap_or_default();
    let compare = workflow
        .as_ref()
        .is_some_and(ir::Workflow::offers_cli_tools);
    let tools = custom_tools(
        sources,
        files,
        &path,
        &uses,
        compare,
        config,
        &mut diagnostics,
    );
    if let Some(resolved) = &workflow {
        let mut cx = check::AnalyzeContext::new(sources, file, &path, files).with_tools(&tools);
        let mut analyzed = check::analyze(resolved, &mut cx);
        // Unused-declaration lints on a workflow the resolver rejected mostly echo its
        // errors (a misspelled provider leaves the real one unused): keep them for later.
        if diagnostics.iter().any(Diagnostic::is_error) {
            analyzed.retain(|diagnostic| diagnostic.code.group() != "lint");
        }
        diagnostics.extend(analyzed);
    }

    if let Some(workflow) = &mut workflow {
        workflow.custom_tools = used_tools(&uses, tools);
    }

    drop_syntax_echoes(sources, &mut diagnostics);

    // Suppression comments and configured levels apply before the plan is gated, in this
    // one place: what `check` reports is exactly what decides whether `run` may run. An
    // error that leaves the workflow unable to run cannot be silenced (`Code::can_silence`).
    let (suppressions, mut problems) = suppress::read(sources, file, &comments);
    config.apply(&mut problems);
    let settle = |diagnostics: &mut Vec<Diagnostic>| {
        suppressions.apply(diagnostics, sources);
        config.apply(diagnostics);
    };
    settle(&mut diagnostics);
    let mut plan = None;
    if !diagnostics.iter().any(Diagnostic::is_error)
        && let Some(resolved) = workflow.take()
    {
        let mut lowered = lower::lower(resolved);
        settle(&mut lowered.diagnostics);
        diagnostics.extend(lowered.diagnostics);
        if diagnostics.iter().any(Diagnostic::is_error) {
            workflow = lowered.value.map(Plan::into_workflow);
        } else {
            plan = lowered.value;
        }
    }
    diagnostics.extend(problems);
    for fix in diagnostics.iter_mut().filter_map(|d| d.fix.as_mut()) {
        fix.settle(sources);
    }
    diagnostics.sort_by_key(|d| (d.span, d.code));
    diagnostics.dedup();
    Compiled {
        file,
        plan,
        workflow,
        diagnostics,
    }
}

/// Removes what a syntax error already explains: a text that does not parse loses the
/// entries or statements around the error, so "needs a prompt" on the line of a broken
/// `prompt=`, or "has no statements" in a file whose statements did not parse, would only
/// echo it.
fn drop_syntax_echoes(sources: &Sources, diagnostics: &mut Vec<Diagnostic>) {
    let broken: Vec<Span> = diagnostics
        .iter()
        // Blocks cut off for nesting too deep are as unread as broken text.
        .filter(|d| d.is_error() && (d.code.group() == "syntax" || d.code == Code::NestingTooDeep))
        .map(|d| d.span)
        .collect();
    if broken.is_empty() {
        return;
    }
    let line_of = |span: Span| {
        let text = &sources.get(span.source).text;
        let at = (span.start as usize).min(text.len());
        text[..at].bytes().filter(|&byte| byte == b'\n').count()
    };
    diagnostics.retain(|d| match d.code {
        Code::EmptyBlock => !broken.iter().any(|error| error.source == d.span.source),
        Code::MissingProperty => !broken
            .iter()
            .any(|error| error.source == d.span.source && line_of(*error) == line_of(d.span)),
        _ => true,
    });
}

/// Adapters a run may swap (`--provider`): the agent CLIs and the model APIs. Recorded
/// (`replay`), in-process and `command` providers are kept: they are test and glue
/// backends, not a choice of agent.
const SWAPPABLE: &[&str] = &[
    "claude-code",
    "opencode",
    "copilot",
    "codex",
    "gemini",
    "anthropic",
    "openai",
];

/// Puts `--model` on every agent provider and its agents, then judges each `model=` by the
/// catalogue against the adapter that runs it (a swapped provider's said as a swap),
/// writing the ones that are fine as their backend needs them.
fn judge_models(workflow: &mut ir::Workflow, config: &Config) -> Vec<Diagnostic> {
    let swappable: Vec<String> = workflow
        .providers
        .iter()
        .filter(|provider| SWAPPABLE.contains(&provider.adapter.value.as_str()))
        .map(|provider| provider.name.value.clone())
        .collect();
    if let Some(model) = config.model() {
        for provider in &mut workflow.providers {
            if swappable.contains(&provider.name.value) {
                provider.model = Some(Spanned::new(model.to_owned(), provider.name.span));
            }
        }
        let on_swappable: Vec<bool> = workflow
            .nodes
            .iter()
            .map(|node| match &node.kind {
                ir::NodeKind::Agent(agent) => workflow
                    .agent_provider_name(agent)
                    .is_some_and(|name| swappable.contains(&name.value)),
                _ => false,
            })
            .collect();
        for (node, on) in workflow.nodes.iter_mut().zip(on_swappable) {
            if let (true, ir::NodeKind::Agent(agent)) = (on, &mut node.kind)
                && let Some(written) = &mut agent.model
            {
                written.value = model.to_owned();
            }
        }
    }
    let swapped = config.adapter();
    check::check_models(workflow, |name| {
        swapped.filter(|_| swappable.iter().any(|s| s == name))
    })
}

/// A report about an agent whose provider was swapped to `adapter`, saying so.
fn said_as_swap(mut diagnostic: Diagnostic, adapter: &str) -> Diagnostic {
    let swap = format!(
        "its provider runs on `{adapter}` instead of the adapter written (`--provider`, or \
         `adapter` in `.atomic/config.kdl`)"
    );
    diagnostic.message = format!("{}: {swap}", diagnostic.message);
    diagnostic.help = Some(match diagnostic.help.take() {
        Some(help) => format!("{help}, or swap to one that does (`--provider ADAPTER`)"),
        None => "swap to an adapter that supports it (`--provider ADAPTER`)".to_owned(),
    });
    diagnostic
}

/// Runs every agent provider of `workflow` on `adapter` instead of the one written: the
/// checks that follow judge the workflow as if it had been written so.
fn swap_adapter(workflow: &mut ir::Workflow, adapter: &str) {
    for provider in &mut workflow.providers {
        if SWAPPABLE.contains(&provider.adapter.value.as_str()) {
            provider.adapter.value = adapter.to_owned();
        }
    }
}

/// The custom tools the workflow may use (see [`registry`]), when it names any or offers a
/// CLI agent tools (whose names must not be custom tools'): a workflow that does neither
/// does not list the tool directories nor hear about broken tool files.
fn custom_tools(
    sources: &mut Sources,
    files: &dyn Files,
    path: &Path,
    uses: &[String],
    compare: bool,
    config: &Config,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<ir::CustomTool> {
    if uses.is_empty() && !compare {
        return Vec::new();
    }
    let dirs = registry::tool_dirs(files, path, config.user_dir());
    let discovered = registry::discover_tools(sources, files, &dirs);
    let tools = discovered.value.unwrap_or_default();
    diagnostics.extend(unused_tool_files_warn(uses, &tools, discovered.diagnostics));
    tools
}

/// Problems in tool files the workflow does not use are warnings: another workflow's broken
/// tool must not stop this one. They stay errors while a tool the workflow names is missing,
/// because the broken file may be the one meant to declare it.
fn unused_tool_files_warn(
    uses: &[String],
    tools: &[ir::CustomTool],
    problems: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    let declared = |name: &String| tools.iter().any(|tool| tool.name.value == *name);
    if !uses.iter().all(declared) {
        return problems;
    }
    let used_files: Vec<_> = tools
        .iter()
        .filter(|tool| uses.contains(&tool.name.value))
        .map(|tool| tool.name.span.source)
        .collect();
    problems
        .into_iter()
        .map(|mut problem| {
            if problem.is_error() && !used_files.contains(&problem.span.source) {
                problem.severity = crate::diagnostic::Severity::Warning;
            }
            problem
        })
        .collect()
}

/// The tools among `tools` that the workflow names (`uses`), sorted by name: what its plan
/// carries.
fn used_tools(uses: &[String], tools: Vec<ir::CustomTool>) -> Vec<ir::CustomTool> {
    tools
        .into_iter()
        .filter(|tool| uses.contains(&tool.name.value))
        .collect()
}

/// Reads a workflow file from disk-like `files`, adds it to `sources` and compiles it. A
/// file that is not UTF-8 is a problem in the file: it compiles to one `not-utf8`
/// diagnostic at its first bad byte (its text, decoded lossily, is the source shown).
///
/// # Errors
/// The file cannot be read at all (missing, a directory, not permitted): a fatal error for
/// the caller to report with the reason.
pub fn compile_path(
    sources: &mut Sources,
    path: &Path,
    files: &dyn Files,
    config: &Config,
) -> Result<Compiled, ReadError> {
    match files.read(path) {
        Ok(text) => {
            let file = sources.add(path, text);
            Ok(compile(sources, file, files, config))
        }
        Err(ReadError::NotUtf8(bad)) => {
            let file = sources.add(path, bad.text.clone());
            Ok(Compiled {
                file,
                plan: None,
                workflow: None,
                diagnostics: vec![Diagnostic::not_utf8(bad.first_bad(file), &bad)],
            })
        }
        Err(error) => Err(error),
    }
}

/// The `unreadable-file` diagnostic of a workflow file that cannot be read, for renderers
/// that report every input (JSON, SARIF): the file is added to `sources` empty.
pub fn unreadable_input(sources: &mut Sources, path: &Path, error: &ReadError) -> Diagnostic {
    let file = sources.add(path, String::new());
    Diagnostic::unreadable(Span::new(file, 0, 0), "workflow", path, error)
}
