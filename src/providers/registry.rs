//! Building providers from their declarations: one match arm per adapter.

use std::path::Path;
use std::sync::Arc;

use super::acp::Acp;
use super::anthropic::AnthropicProvider;
use super::budget::Budgeted;
use super::command::CommandProvider;
use super::env::{Environment, ToolEnv};
use super::in_process::InProcess;
use super::openai::OpenAiProvider;
use super::opencode::OpenCode;
use super::prices::PriceTable;
use super::record::{CassetteRecorder, Recording};
use super::replay::Replay;
use super::{Provider, ProviderError};
use crate::ir::{ADAPTERS, OptionProblem, ProviderDecl};
use crate::process::Spawner;

/// What building a provider may need from outside the workflow.
#[derive(Clone, Debug)]
pub struct ProviderContext<'a> {
    /// The workflow file's directory: relative cassette and command paths start here.
    pub workflow_dir: &'a Path,
    /// The environment atomic was started with; the only source of secrets.
    pub env: &'a Environment,
    /// Set by `atomic run --record FILE`: every provider built is wrapped to record into it.
    pub recorder: Option<Arc<CassetteRecorder>>,
    /// Where the custom tools an agent's tool loop runs get their environment (the run's
    /// without provider keys) and which secrets are redacted from their output.
    pub tool_env: ToolEnv,
    /// The model prices budgets are metered with: the shipped table and the project's
    /// `prices` (`PriceTable::default()`: the shipped table alone).
    pub prices: Arc<PriceTable>,
    /// Starts the programs providers run themselves (agent CLIs, `command` programs,
    /// `opencode serve`); the tools an agent's loop runs are started by
    /// [`ToolEnv::spawner`].
    pub spawner: Arc<dyn Spawner>,
}

impl<'a> ProviderContext<'a> {
    /// A context for building providers of a workflow in `workflow_dir` with `env`: no
    /// recording, the shipped prices, tools given `env` without provider keys, every
    /// program started unconfined.
    #[must_use]
    pub fn new(workflow_dir: &'a Path, env: &'a Environment) -> Self {
        Self {
            workflow_dir,
            env,
            recorder: None,
            tool_env: ToolEnv::default(),
            prices: Arc::default(),
            spawner: crate::process::local(),
        }
    }
}

/// Builds the provider `decl` declares, as a run uses it: the adapter
/// ([`build_adapter`]), recording into `cx.recorder` when set, inside the budget guard.
///
/// # Errors
/// [`ProviderError::Config`]: an unknown adapter, one not built into this atomic yet, or a
/// misconfigured declaration (missing cassette, command, key…).
pub fn build(
    decl: &ProviderDecl,
    cx: &ProviderContext<'_>,
) -> Result<Arc<dyn Provider>, ProviderError> {
    let provider = build_adapter(decl, cx)?;
    let provider = match &cx.recorder {
        Some(recorder) => Arc::new(Recording::new(provider, Arc::clone(recorder))),
        None => provider,
    };
    Ok(Arc::new(Budgeted::new(provider, Arc::clone(&cx.prices))))
}

/// Builds the adapter `decl` declares, alone: its options checked against the adapter
/// table, no recording, no budget guard (what an embedding application or a test of one
/// adapter wants).
///
/// # Errors
/// As [`build`].
pub fn build_adapter(
    decl: &ProviderDecl,
    cx: &ProviderContext<'_>,
) -> Result<Arc<dyn Provider>, ProviderError> {
    let name = decl.adapter.value.as_str();
    check_options(decl)?;
    let Some((_, build)) = BUILDERS.iter().find(|(adapter, _)| *adapter == name) else {
        return Err(ProviderError::config(
            "provider",
            format!(
                "unknown adapter `{name}` for provider `{}`; expected one of {}",
                decl.name.value,
                ADAPTERS
                    .iter()
                    .map(|a| format!("`{}`", a.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    };
    build(decl, cx)
}

/// Builds one adapter's provider from its declaration.
type Build = fn(&ProviderDecl, &ProviderContext<'_>) -> Result<Arc<dyn Provider>, ProviderError>;

/// Every adapter's builder, one shape for all, by the name `adapter=` gives (the same names as
/// [`ADAPTERS`], a test holds them together).
const BUILDERS: &[(&str, Build)] = &[
    ("replay", |decl, cx| {
        Ok(Arc::new(Replay::from_decl(decl, cx.workflow_dir)?))
    }),
    ("command", |decl, cx| {
        Ok(Arc::new(CommandProvider::from_decl(
            decl,
            cx.env,
            Arc::clone(&cx.spawner),
        )?))
    }),
    ("in-process", |decl, _| {
        Ok(Arc::new(InProcess::from_decl(decl)?))
    }),
    ("anthropic", |decl, cx| {
        let provider =
            AnthropicProvider::from_decl(decl, &|var| cx.env.get(var).map(str::to_owned))?;
        Ok(Arc::new(provider.with_tool_env(cx.tool_env.clone())))
    }),
    ("openai", |decl, cx| {
        let provider = OpenAiProvider::from_decl(decl, &|var| cx.env.get(var).map(str::to_owned))?;
        Ok(Arc::new(provider.with_tool_env(cx.tool_env.clone())))
    }),
    ("claude-code", |decl, cx| {
        Ok(Arc::new(super::claude_code::provider(decl, cx)?))
    }),
    ("opencode", |decl, cx| {
        Ok(Arc::new(OpenCode::new(decl, cx)?))
    }),
    ("copilot", |decl, cx| {
        Ok(Arc::new(super::copilot::provider(decl, cx)?))
    }),
    ("gemini", |decl, cx| {
        Ok(Arc::new(super::gemini::provider(decl, cx)?))
    }),
    ("codex", |decl, cx| {
        Ok(Arc::new(super::codex::provider(decl, cx)?))
    }),
    ("acp", |decl, cx| Ok(Arc::new(Acp::new(decl, cx)?))),
];

/// Refuses the provider's options its adapter does not read, or of the wrong kind, by the
/// table `atomic check` uses ([`crate::ir::AdapterInfo::check_option`]): a misspelt option
/// is never silently ignored, whichever way the workflow reached here.
fn check_options(decl: &ProviderDecl) -> Result<(), ProviderError> {
    let Some(info) = crate::ir::adapter_info(&decl.adapter.value) else {
        return Ok(());
    };
    for (name, value) in &decl.options {
        let message = match info.check_option(name, value, false) {
            Ok(()) => continue,
            Err(OptionProblem::Unknown { known }) => {
                let hint = crate::diagnostic::did_you_mean(name, known.iter().copied())
                    .map_or_else(
                        || format!("it reads {}", crate::diagnostic::expected_one_of(&known)),
                        |near| format!("did you mean `{near}`?"),
                    );
                format!("unknown option `{name}`; {hint}")
            }
            Err(OptionProblem::ProviderOnly) => {
                format!("option `{name}` belongs on the provider, not an agent")
            }
            Err(OptionProblem::WrongKind(kind)) => {
                format!(
                    "option `{name}` must be {}, found `{value}`",
                    kind.describe()
                )
            }
        };
        return Err(ProviderError::config(info.name, message));
    }
    Ok(())
}

/// A declaration with only a name and an adapter, for tests.
#[cfg(test)]
pub(crate) fn test_decl(name: &str, adapter: &str) -> ProviderDecl {
    ProviderDecl::bare(name, adapter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::redact::Redactor;

    fn cx<'a>(dir: &'a Path, env: &'a Environment) -> ProviderContext<'a> {
        ProviderContext::new(dir, env)
    }

    #[test]
    fn every_adapter_in_the_catalogue_has_a_builder_and_no_other() {
        let built: Vec<&str> = BUILDERS.iter().map(|(name, _)| *name).collect();
        let listed: Vec<&str> = ADAPTERS.iter().map(|info| info.name).collect();
        let mut sorted = (built.clone(), listed.clone());
        sorted.0.sort_unstable();
        sorted.1.sort_unstable();
        assert_eq!(sorted.0, sorted.1);
    }

    #[test]
    fn builds_the_core_adapters() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("c.cassette"), "{\"cassette\":1}\n").unwrap();
        let env = Environment::default();
        let mut replay = test_decl("r", "replay");
        replay.cassette = Some(crate::source::Spanned::new(
            "c.cassette".into(),
            crate::source::Span::default(),
        ));
        let mut command = test_decl("c", "command");
        command.command = vec![crate::source::Spanned::new(
            "cat".into(),
            crate::source::Span::default(),
        )];
        for (decl, adapter) in [
            (replay, "replay"),
            (command, "command"),
            (test_decl("i", "in-process"), "in-process"),
        ] {
            let provider = build(&decl, &cx(dir.path(), &env)).unwrap();
            assert_eq!(provider.adapter(), adapter);
        }
    }

    #[test]
    fn builds_the_http_adapters_with_keys_from_the_environment() {
        let env = Environment::default().with("ANTHROPIC_API_KEY", "sk-ant-0123456789abcdef");
        let with_key = cx(Path::new("."), &env);
        let provider = build(&test_decl("claude", "anthropic"), &with_key).unwrap();
        assert_eq!(provider.adapter(), "anthropic");
        assert!(!format!("{provider:?}").contains("0123456789abcdef"));
        let provider = build(&test_decl("local", "openai"), &with_key).unwrap();
        assert_eq!(provider.adapter(), "openai");

        let empty = Environment::default();
        let error = build(
            &test_decl("claude", "anthropic"),
            &cx(Path::new("."), &empty),
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("`ANTHROPIC_API_KEY` is not set"),
            "{error}"
        );
        let mut keyed = test_decl("local", "openai");
        keyed.api_key_env = Some(crate::source::Spanned::new(
            "LOCAL_KEY".into(),
            crate::source::Span::default(),
        ));
        let error = build(&keyed, &cx(Path::new("."), &empty)).unwrap_err();
        assert!(
            error.to_string().contains("`LOCAL_KEY` is not set"),
            "{error}"
        );
    }

    #[test]
    fn unknown_and_unbuilt_adapters_are_config_errors() {
        let env = Environment::default();
        let cx = cx(Path::new("."), &env);
        let error = build(&test_decl("x", "nonesuch"), &cx).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("unknown adapter `nonesuch` for provider `x`"),
            "{error}"
        );
        assert!(error.to_string().contains("`replay`"), "{error}");
        // Agent CLIs not on PATH: a config error naming the npm package.
        let no_path = Environment::default().with("PATH", "/nonexistent-atomic-bin");
        let cli_cx = ProviderContext {
            env: &no_path,
            ..cx.clone()
        };
        for (adapter, package) in [
            ("claude-code", "@anthropic-ai/claude-code"),
            ("opencode", "opencode-ai"),
            ("copilot", "@github/copilot"),
            ("gemini", "@google/gemini-cli"),
            ("codex", "@openai/codex"),
        ] {
            let error = build(&test_decl("x", adapter), &cli_cx).unwrap_err();
            assert!(matches!(error, ProviderError::Config { .. }), "{error}");
            assert!(error.to_string().contains(package), "{error}");
        }
        let error = build(&test_decl("x", "replay"), &cx).unwrap_err();
        assert!(error.to_string().contains("needs `cassette="), "{error}");
    }

    #[test]
    fn options_the_adapter_does_not_read_are_refused_when_it_is_built() {
        let env = Environment::default();
        let mut decl = test_decl("i", "in-process");
        decl.options = serde_json::json!({"replys": ["a"]})
            .as_object()
            .unwrap()
            .clone();
        let error = build(&decl, &cx(Path::new("."), &env)).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("unknown option `replys`; did you mean `reply`?"),
            "{error}"
        );
        decl.options = serde_json::json!({"latency": "soon"})
            .as_object()
            .unwrap()
            .clone();
        let error = build(&decl, &cx(Path::new("."), &env)).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("option `latency` must be a duration"),
            "{error}"
        );
    }

    #[test]
    fn a_recorder_wraps_every_provider() {
        let dir = tempfile::tempdir().unwrap();
        let env = Environment::default();
        let recorder =
            CassetteRecorder::create(&dir.path().join("r.cassette"), None, Redactor::new());
        let cx = ProviderContext {
            recorder: Some(Arc::new(recorder.unwrap())),
            ..cx(dir.path(), &env)
        };
        let provider = build(&test_decl("i", "in-process"), &cx).unwrap();
        assert_eq!(provider.adapter(), "in-process");
        // Recorded inside the budget guard, which wraps every provider.
        assert!(
            format!("{provider:?}").starts_with("Budgeted { inner: Recording"),
            "{provider:?}"
        );
    }
}
