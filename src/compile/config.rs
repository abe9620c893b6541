//! Project configuration, from `.atomic/config.kdl`: rule levels, and the adapter agent
//! providers run on (`atomic run --provider` overrides it):
//!
//! ```kdl
//! rules {
//!     rule "unused-input" level="off"
//!     rule "shell-command" level="error"
//! }
//! adapter "opencode"
//! temporal "127.0.0.1:7233" namespace="default" task-queue="atomic"
//! telemetry endpoint="http://127.0.0.1:4318" capture-content=#false
//! workspace "snapshot"   // or "off": the default for workflows that do not say
//! sandbox { network "registry.npmjs.org"; }   // the sandbox of workflows that declare none
//! prices {
//!     // USD per million tokens; cache prices default to the input price
//!     model "claude-sonnet-4-5" input=3.0 output=15.0 cache-read=0.3 cache-write=3.75
//! }
//! ```

use std::path::{Path, PathBuf};

use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::ir::{ModelPrice, PriceOverride, Sandbox, WorkspaceMode};
use crate::registry::agents::Roots;
use crate::source::{SourceId, Sources, Span, Spanned};
use crate::syntax::kdl::{self, Value};

use super::telemetry::{TelemetryConfig, parse_telemetry};

/// What a configured rule does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleLevel {
    /// Drop its diagnostics.
    Off,
    /// Report with this severity.
    On(Severity),
}

/// Rule levels configured for a project, and where declarations outside the workflow are
/// looked for: the user's custom tools, and discovered agents, skills and commands.
#[derive(Clone, Debug, Default)]
pub struct Config {
    levels: Vec<(Code, RuleLevel)>,
    user_dir: Option<PathBuf>,
    discovery: Roots,
    adapter: Option<String>,
    /// `--model`: the model every agent provider runs.
    model: Option<String>,
    temporal: Option<TemporalConfig>,
    prices: Vec<PriceOverride>,
    telemetry: Option<TelemetryConfig>,
    workspace: Option<WorkspaceMode>,
    sandbox: Option<Sandbox>,
}

/// Where runs go with `--temporal` and where `atomic worker` polls, from `temporal "…"`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TemporalConfig {
    /// The server, `HOST:PORT`.
    pub address: Option<String>,
    /// The namespace.
    pub namespace: Option<String>,
    /// The task queue.
    pub task_queue: Option<String>,
}

impl Config {
    /// No configuration: every rule at its default severity.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Looks for the user's declarations (custom tools in `tools/`) in `dir`, the user's
    /// `~/.atomic`. Without it, only the project's are found.
    #[must_use]
    pub fn with_user_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.user_dir = dir;
        self
    }

    /// `sandbox { … }`: the sandbox of the steps of workflows that declare none.
    #[must_use]
    pub fn sandbox(&self) -> Option<&Sandbox> {
        self.sandbox.as_ref()
    }

    /// `workspace "…"`: whether runs of workflows that do not say record their files.
    #[must_use]
    pub fn workspace(&self) -> Option<WorkspaceMode> {
        self.workspace
    }

    /// The user's `~/.atomic`, when known.
    #[must_use]
    pub fn user_dir(&self) -> Option<&Path> {
        self.user_dir.as_deref()
    }

    /// Looks for `use="agent:…"`, `skill:…` and `command:…` definitions under `roots`
    /// (none by default, so every such name is unknown).
    #[must_use]
    pub fn with_discovery(mut self, roots: Roots) -> Self {
        self.discovery = roots;
        self
    }

    /// Where discovered definitions are looked for.
    #[must_use]
    pub fn discovery(&self) -> &Roots {
        &self.discovery
    }

    /// Runs every agent provider (an agent CLI or a model API) on `adapter` instead of the
    /// one the workflow names; `None` keeps a configured one.
    #[must_use]
    pub fn with_adapter(mut self, adapter: Option<String>) -> Self {
        if adapter.is_some() {
            self.adapter = adapter;
        }
        self
    }

    /// Runs every agent provider (and agent) on `model` (`--model`), judged and written
    /// for the adapter that runs it.
    #[must_use]
    pub fn with_model(mut self, model: Option<String>) -> Self {
        if model.is_some() {
            self.model = model;
        }
        self
    }

    /// The model `--model` chose, if any.
    #[must_use]
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The adapter agent providers are swapped to, if any.
    #[must_use]
    pub fn adapter(&self) -> Option<&str> {
        self.adapter.as_deref()
    }

    /// The configured Temporal server, if any.
    #[must_use]
    pub fn temporal(&self) -> Option<&TemporalConfig> {
        self.temporal.as_ref()
    }

    /// The `telemetry` block, if the project has one.
    #[must_use]
    pub fn telemetry(&self) -> Option<&TelemetryConfig> {
        self.telemetry.as_ref()
    }

    /// The model prices the project sets (`prices { model … }`), before atomic's shipped
    /// table.
    #[must_use]
    pub fn prices(&self) -> &[PriceOverride] {
        &self.prices
    }

    /// Sets one rule's level.
    pub fn set(&mut self, code: Code, level: RuleLevel) {
        self.levels.retain(|(existing, _)| *existing != code);
        self.levels.push((code, level));
    }

    /// Reads `.atomic/config.kdl` (already added to `sources` as `file`); problems in it
    /// are returned as diagnostics.
    pub fn parse(sources: &Sources, file: SourceId) -> (Self, Vec<Diagnostic>) {
        let parsed = kdl::parse(&sources.get(file).text, file);
        let mut diagnostics = parsed.diagnostics;
        let mut config = Self::new();
        for node in &parsed.document.nodes {
            if node.name.value == "adapter" {
                config.parse_adapter(node, &mut diagnostics);
                continue;
            }
            if node.name.value == "temporal" {
                config.parse_temporal(node, &mut diagnostics);
                continue;
            }
            if node.name.value == "workspace" {
                config.parse_workspace(node, &mut diagnostics);
                continue;
            }
            if node.name.value == "sandbox" {
                config.sandbox = Some(parse_sandbox(node, &mut diagnostics));
                continue;
            }
            if node.name.value == "telemetry" {
                config.telemetry = Some(parse_telemetry(node, &mut diagnostics));
                continue;
            }
            if node.name.value == "prices" {
                for model in node.children.iter().flat_map(|children| &children.nodes) {
                    config.parse_price(model, &mut diagnostics);
                }
                continue;
            }
            if node.name.value != "rules" {
                diagnostics.push(
                    Diagnostic::new(
                        Code::UnknownNodeKind,
                        node.name.span,
                        format!("unknown setting `{}`", node.name.value),
                    )
                    .label("not a configuration section")
                    .help(
                        "expected `rules`, `adapter`, `temporal`, `prices`, `telemetry`, `workspace` or `sandbox`",
                    ),
                );
                continue;
            }
            for rule in node.children.iter().flat_map(|children| &children.nodes) {
                config.parse_rule(rule, &mut diagnostics);
            }
        }
        (config, diagnostics)
    }

    fn parse_adapter(&mut self, node: &kdl::Node, diagnostics: &mut Vec<Diagnostic>) {
        let name = node.entries.iter().find(|entry| entry.key.is_none());
        match name.map(|entry| (&entry.value, entry.value_span)) {
            Some((Value::String(name), _)) if crate::ir::adapter_info(name).is_some() => {
                self.adapter = Some(name.to_string());
            }
            found => {
                let names: Vec<String> = crate::ir::ADAPTERS
                    .iter()
                    .map(|info| format!("`{}`", info.name))
                    .collect();
                diagnostics.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        found.map_or(node.span, |(_, span)| span),
                        "`adapter` needs the name of an adapter",
                    )
                    .label("not an adapter")
                    .help(format!("one of {}", names.join(", "))),
                );
            }
        }
    }

    fn parse_workspace(&mut self, node: &kdl::Node, diagnostics: &mut Vec<Diagnostic>) {
        let mode = node.entries.iter().find(|entry| entry.key.is_none());
        match mode.map(|entry| (&entry.value, entry.value_span)) {
            Some((Value::String(name), _)) if WorkspaceMode::named(name).is_some() => {
                self.workspace = WorkspaceMode::named(name);
            }
            found => diagnostics.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    found.map_or(node.span, |(_, span)| span),
                    "`workspace` needs `\"snapshot\"` or `\"off\"`",
                )
                .label("not a workspace mode")
                .help("`workspace \"snapshot\"` records the files around each step (the default); `workspace \"off\"` does not"),
            ),
        }
    }

    fn parse_temporal(&mut self, node: &kdl::Node, diagnostics: &mut Vec<Diagnostic>) {
        let mut temporal = TemporalConfig::default();
        for entry in &node.entries {
            let key = entry.key.as_ref().map(|key| key.value.as_str());
            let Value::String(text) = &entry.value else {
                diagnostics.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        entry.value_span,
                        "`temporal` takes strings",
                    )
                    .label("not a string")
                    .help(r#"write it as `temporal "HOST:PORT" namespace="default" task-queue="atomic"`"#),
                );
                continue;
            };
            let slot = match key {
                None => &mut temporal.address,
                Some("namespace") => &mut temporal.namespace,
                Some("task-queue") => &mut temporal.task_queue,
                Some(other) => {
                    diagnostics.push(
                        Diagnostic::new(
                            Code::UnknownProperty,
                            entry.span,
                            format!("`temporal` has no property `{other}`"),
                        )
                        .label("unknown property")
                        .help("expected the address, `namespace=` or `task-queue=`"),
                    );
                    continue;
                }
            };
            *slot = Some(text.to_string());
        }
        self.temporal = Some(temporal);
    }

    fn parse_price(&mut self, node: &kdl::Node, diagnostics: &mut Vec<Diagnostic>) {
        const FORM: &str = r#"write `model "<name>" input=<USD> output=<USD>` (per million tokens; optional `cache-read=`, `cache-write=`)"#;
        if node.name.value != "model" {
            diagnostics.push(
                Diagnostic::new(
                    Code::UnknownNodeKind,
                    node.name.span,
                    format!("unknown entry `{}` in `prices`", node.name.value),
                )
                .label("not a price")
                .help(FORM),
            );
            return;
        }
        let mut model = None;
        let (mut input, mut output, mut cache_read, mut cache_write) = (None, None, None, None);
        let mut valid = true;
        // Properties given, valid or not: a bad one is reported once, not also as missing.
        let mut given = Vec::new();
        for entry in &node.entries {
            let Some(key) = &entry.key else {
                match &entry.value {
                    Value::String(name) if model.is_none() && !name.trim().is_empty() => {
                        model = Some(name.to_string());
                    }
                    _ => {
                        diagnostics.push(
                            Diagnostic::new(
                                Code::InvalidValue,
                                entry.value_span,
                                "a price names one model, as a non-empty string",
                            )
                            .label("not a model name")
                            .help(FORM),
                        );
                        model = Some(String::new());
                        valid = false;
                    }
                }
                continue;
            };
            given.push(key.value.as_str());
            let slot = match key.value.as_str() {
                "input" => &mut input,
                "output" => &mut output,
                "cache-read" => &mut cache_read,
                "cache-write" => &mut cache_write,
                other => {
                    diagnostics.push(
                        Diagnostic::new(
                            Code::UnknownProperty,
                            entry.span,
                            format!("a price has no property `{other}`"),
                        )
                        .label("unknown property")
                        .maybe_help(
                            crate::diagnostic::did_you_mean(
                                other,
                                ["input", "output", "cache-read", "cache-write"],
                            )
                            .map(|near| format!("did you mean `{near}`?")),
                        ),
                    );
                    valid = false;
                    continue;
                }
            };
            let usd = match entry.value {
                Value::Integer(n) => Some(n as f64),
                Value::Float(x) => Some(x),
                _ => None,
            };
            match usd {
                Some(usd) if usd.is_finite() && usd >= 0.0 => *slot = Some(usd),
                _ => {
                    diagnostics.push(
                        Diagnostic::new(
                            Code::InvalidValue,
                            entry.value_span,
                            format!("`{}` must be a price in USD per million tokens", key.value),
                        )
                        .label("not a non-negative number")
                        .help(FORM),
                    );
                    valid = false;
                }
            }
        }
        let missing: Vec<&str> = [
            ("a model name", model.is_none()),
            ("`input=`", !given.contains(&"input")),
            ("`output=`", !given.contains(&"output")),
        ]
        .into_iter()
        .filter_map(|(what, missing)| missing.then_some(what))
        .collect();
        if !missing.is_empty() {
            diagnostics.push(
                Diagnostic::new(
                    Code::MissingProperty,
                    node.span,
                    format!("this price lacks {}", missing.join(" and ")),
                )
                .label("incomplete price")
                .help(FORM),
            );
            return;
        }
        if let (true, Some(model), Some(input), Some(output)) = (valid, model, input, output) {
            self.prices.retain(|known| known.model != model);
            self.prices.push(PriceOverride {
                model,
                price: ModelPrice {
                    input,
                    output,
                    cache_read,
                    cache_write,
                },
            });
        }
    }

    fn parse_rule(&mut self, rule: &kdl::Node, diagnostics: &mut Vec<Diagnostic>) {
        let name = rule.entries.iter().find(|entry| entry.key.is_none());
        let level = rule
            .entries
            .iter()
            .find(|entry| entry.key.as_ref().is_some_and(|key| key.value == "level"));
        let (Some(name), Some(level)) = (name, level) else {
            diagnostics.push(
                Diagnostic::new(
                    Code::MissingProperty,
                    rule.span,
                    "a rule needs a code and a level",
                )
                .label("incomplete rule")
                .help("write `rule \"<code>\" level=\"off|note|warning|error\"`"),
            );
            return;
        };
        let Value::String(code_name) = &name.value else {
            diagnostics.push(wrong_type(name.value_span, "a rule code"));
            return;
        };
        let Some(code) = Code::from_name(code_name) else {
            let names = Code::ALL.iter().map(|code| code.name());
            diagnostics.push(
                Diagnostic::new(
                    Code::UnknownRuleCode,
                    name.value_span,
                    format!("unknown rule code `{code_name}`"),
                )
                .label("no rule has this code")
                .maybe_help(
                    crate::diagnostic::did_you_mean(code_name, names)
                        .map(|near| format!("did you mean `{near}`?")),
                )
                .maybe_replace_with(
                    crate::diagnostic::did_you_mean(
                        code_name,
                        Code::ALL.iter().map(|code| code.name()),
                    )
                    .map(str::to_owned),
                ),
            );
            return;
        };
        let level = match &level.value {
            Value::String(text) if text == "off" => RuleLevel::Off,
            Value::String(text) if text == "note" => RuleLevel::On(Severity::Note),
            Value::String(text) if text == "warning" => RuleLevel::On(Severity::Warning),
            Value::String(text) if text == "error" => RuleLevel::On(Severity::Error),
            _ => {
                diagnostics.push(
                    Diagnostic::new(Code::InvalidValue, level.value_span, "invalid rule level")
                        .label("not a level")
                        .help("expected one of `off`, `note`, `warning` or `error`"),
                );
                return;
            }
        };
        let lowers = match level {
            RuleLevel::Off => true,
            RuleLevel::On(severity) => severity > code.default_severity(),
        };
        if lowers && !code.can_silence() {
            diagnostics.push(super::suppress::unsilenceable(code, name.value_span));
            return;
        }
        self.set(code, level);
    }

    /// Applies the configured levels to `diagnostics`.
    pub fn apply(&self, diagnostics: &mut Vec<Diagnostic>) {
        if self.levels.is_empty() {
            return;
        }
        diagnostics.retain_mut(|diagnostic| match self.level(diagnostic.code) {
            Some(RuleLevel::Off) => false,
            Some(RuleLevel::On(severity)) => {
                diagnostic.severity = severity;
                true
            }
            None => true,
        });
    }

    fn level(&self, code: Code) -> Option<RuleLevel> {
        self.levels
            .iter()
            .find(|(configured, _)| *configured == code)
            .map(|(_, level)| *level)
    }
}

fn wrong_type(span: Span, expected: &str) -> Diagnostic {
    Diagnostic::new(Code::WrongType, span, format!("expected {expected}")).label("wrong type")
}

/// `sandbox ["none"] { write …; hide …; network …; }`, as in a workflow.
fn parse_sandbox(node: &kdl::Node, diagnostics: &mut Vec<Diagnostic>) -> Sandbox {
    let none = node
        .entries
        .iter()
        .find(|entry| entry.key.is_none())
        .is_some_and(|entry| matches!(&entry.value, Value::String(mode) if mode == "none"));
    let mut sandbox = Sandbox {
        none,
        write: Vec::new(),
        hide: Vec::new(),
        network: Vec::new(),
        span: node.name.span,
    };
    for child in node.children.iter().flat_map(|children| &children.nodes) {
        let list = match child.name.value.as_str() {
            "write" => &mut sandbox.write,
            "hide" => &mut sandbox.hide,
            "network" => &mut sandbox.network,
            other => {
                diagnostics.push(
                    Diagnostic::new(
                        Code::UnknownChild,
                        child.name.span,
                        format!("`sandbox` has no `{other}`"),
                    )
                    .label("not a sandbox setting")
                    .help("expected `write`, `hide` or `network`"),
                );
                continue;
            }
        };
        for entry in child.entries.iter().filter(|entry| entry.key.is_none()) {
            match &entry.value {
                Value::String(text) => list.push(Spanned::new(text.to_string(), entry.value_span)),
                _ => diagnostics.push(
                    Diagnostic::new(Code::WrongType, entry.value_span, "expected a string")
                        .label("not a string")
                        .help("write the path or host in quotes"),
                ),
            }
        }
    }
    sandbox
}
