//! The eight adapters under test: for each, how a workflow declares it against the kit's
//! model, the environment that keeps its CLI inside the test's project, and the names and
//! inputs its agent's own tools take. Adding an adapter to atomic means adding it here and
//! passing every scenario.

use std::path::Path;

use serde_json::{Value, json};

use super::model::Move;
use crate::support::cli_project::CliProject;
use crate::support::tools::{agent_cli, required_tool};

/// The model key every subject's provider names (`api-key-env`), unless it reads its own.
pub(super) const KEY: &str = "sk-kit-5e1f0c77a2";

/// One adapter under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Subject {
    ClaudeCode,
    OpenCode,
    Copilot,
    Codex,
    Gemini,
    Acp,
    Anthropic,
    OpenAi,
}

/// A subject made ready in a project: its provider declaration and environment.
pub(super) struct Setup {
    /// `provider "model" …`, ready to paste into a workflow.
    pub(super) provider: String,
    /// Variables `atomic` runs with (the key included).
    pub(super) env: Vec<(String, String)>,
    /// The variable holding the model key.
    pub(super) key_var: &'static str,
}

impl Subject {
    /// `adapter="…"`.
    pub(super) fn adapter(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::OpenCode => "opencode",
            Self::Copilot => "copilot",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Acp => "acp",
            Self::Anthropic => "anthropic",
            Self::OpenAi => "openai",
        }
    }

    /// The adapter's row in atomic's table: what it declares it can do.
    pub(super) fn info(self) -> &'static atomic::ir::AdapterInfo {
        atomic::ir::adapter_info(self.adapter()).expect("a shipped adapter")
    }

    /// Whether its agent's commands can read the model key: the table's word, except for
    /// ACP, whose row speaks for any agent — the kit's reads `GEMINI_API_KEY`, which atomic
    /// holds (its gateway), so its commands see a placeholder.
    pub(super) fn commands_see_key(self) -> bool {
        self.info().commands_see_key && self != Self::Acp
    }

    /// Whether atomic runs the agent's tools itself (a model API): the kit then gives the
    /// agent the custom tools `shell` and `write-file`.
    pub(super) fn model_api(self) -> bool {
        matches!(self, Self::Anthropic | Self::OpenAi)
    }

    /// Makes the subject ready in `project` against the model at `url`; `None` when its CLI
    /// (or python3, for a model API's tools) is missing, which skips the scenario loudly.
    pub(super) fn setup(self, project: &CliProject, url: &str) -> Option<Setup> {
        let home = project.home().to_path_buf();
        std::fs::create_dir_all(&home).expect("home");
        let home_text = home.display().to_string();
        let mut env: Vec<(String, String)> = [
            ("HOME", home_text.clone()),
            ("XDG_CONFIG_HOME", format!("{home_text}/.config")),
            ("XDG_DATA_HOME", format!("{home_text}/.local/share")),
            ("XDG_STATE_HOME", format!("{home_text}/.local/state")),
            ("XDG_CACHE_HOME", format!("{home_text}/.cache")),
            ("NO_PROXY", "127.0.0.1,localhost".to_owned()),
            ("no_proxy", "127.0.0.1,localhost".to_owned()),
            ("KIT_MODEL_KEY", KEY.to_owned()),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
        let mut key_var = "KIT_MODEL_KEY";
        let bin = |program: &str, package: &str| {
            agent_cli(program, package).map(|path| path.display().to_string())
        };
        let provider = match self {
            Self::ClaudeCode => {
                let bin = bin("claude", "@anthropic-ai/claude-code")?;
                env.push((
                    "CLAUDE_CONFIG_DIR".to_owned(),
                    home.join("claude").display().to_string(),
                ));
                env.push((
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".to_owned(),
                    "1".to_owned(),
                ));
                format!(
                    r#"provider "model" adapter="claude-code" model="claude-sonnet-4-5" api-key-env="KIT_MODEL_KEY" base-url="{url}" {{
        option "bin" {bin:?}
    }}"#
                )
            }
            Self::OpenCode => {
                let bin = bin("opencode", "opencode-ai")?;
                let config = json!({
                    "autoupdate": false,
                    "share": "disabled",
                    "provider": {"anthropic": {"options": {
                        "baseURL": format!("{url}/v1"),
                        "apiKey": "{env:KIT_MODEL_KEY}",
                    }}},
                });
                env.push(("OPENCODE_DISABLE_MODELS_FETCH".to_owned(), "1".to_owned()));
                env.push(("OPENCODE_DISABLE_LSP_DOWNLOAD".to_owned(), "1".to_owned()));
                format!(
                    r#"provider "model" adapter="opencode" model="anthropic/claude-sonnet-4-5" api-key-env="KIT_MODEL_KEY" {{
        option "bin" {bin:?}
        option "config" {:?}
    }}"#,
                    config.to_string()
                )
            }
            Self::Copilot => {
                let bin = bin("copilot", "@github/copilot")?;
                // Copilot unpacks its runtime into the cache on first start: one cache for
                // every test.
                let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("copilot-cache");
                std::fs::create_dir_all(&cache).expect("copilot cache dir");
                env.retain(|(name, _)| name != "XDG_CACHE_HOME");
                env.push(("XDG_CACHE_HOME".to_owned(), cache.display().to_string()));
                env.push((
                    "COPILOT_HOME".to_owned(),
                    home.join("copilot").display().to_string(),
                ));
                format!(
                    r#"provider "model" adapter="copilot" model="claude-sonnet-4-5" api-key-env="KIT_MODEL_KEY" base-url="{url}" {{
        option "bin" {bin:?}
        option "provider-type" "anthropic"
    }}"#
                )
            }
            Self::Codex => {
                let bin = bin("codex", "@openai/codex")?;
                env.push(("TMPDIR".to_owned(), home.display().to_string()));
                format!(
                    r#"provider "model" adapter="codex" model="gpt-5" api-key-env="KIT_MODEL_KEY" base-url="{url}/v1" {{
        option "bin" {bin:?}
    }}"#
                )
            }
            Self::Gemini => {
                let bin = bin("gemini", "@google/gemini-cli")?;
                let gemini_home = home.join("gemini-home");
                std::fs::create_dir_all(&gemini_home).expect("gemini home");
                format!(
                    r#"provider "model" adapter="gemini" model="gemini-2.5-flash" api-key-env="KIT_MODEL_KEY" base-url="{url}" {{
        option "bin" {bin:?}
        option "home" {:?}
    }}"#,
                    gemini_home.display().to_string()
                )
            }
            Self::Acp => {
                // The Gemini CLI in ACP mode, which reads its key from `GEMINI_API_KEY`.
                let bin = bin("gemini", "@google/gemini-cli")?;
                let gemini_home = crate::support::fake_gemini::acp_home(&home);
                key_var = "GEMINI_API_KEY";
                env.push(("GEMINI_API_KEY".to_owned(), KEY.to_owned()));
                format!(
                    r#"provider "model" adapter="acp" api-key-env="GEMINI_API_KEY" {{
        command {bin:?} "--acp" "--skip-trust"
        option "env.GOOGLE_GEMINI_BASE_URL" {url:?}
        option "env.GEMINI_CLI_HOME" {:?}
    }}"#,
                    gemini_home.display().to_string()
                )
            }
            Self::Anthropic => {
                required_tool("python3", "apt install python3")?;
                write_custom_tools(project);
                format!(
                    r#"provider "model" adapter="anthropic" model="claude-sonnet-4-5" api-key-env="KIT_MODEL_KEY" base-url="{url}""#
                )
            }
            Self::OpenAi => {
                required_tool("python3", "apt install python3")?;
                write_custom_tools(project);
                format!(
                    r#"provider "model" adapter="openai" model="gpt-4o" api-key-env="KIT_MODEL_KEY" base-url="{url}/v1""#
                )
            }
        };
        Some(Setup {
            provider,
            env,
            key_var,
        })
    }

    /// The permission and tools that let a CLI's agent change files, run commands and call
    /// MCP tools without asking. Claude Code refuses `bypass` to root (CI runs as root), so
    /// it gets its tools by name.
    pub(super) fn act(self) -> (&'static str, &'static str) {
        match self {
            Self::ClaudeCode => (
                "permission=\"accept-edits\"",
                "tools \"Bash\" \"Write\" \"mcp__notes__note\"",
            ),
            _ => ("permission=\"bypass\"", ""),
        }
    }

    /// A call of the agent's shell with `command` (run from the workspace).
    pub(super) fn shell(self, command: &str) -> Move {
        let (name, input) = match self {
            Self::ClaudeCode => ("Bash", json!({"command": command})),
            Self::OpenCode => (
                "bash",
                json!({"command": command, "description": "runs the command"}),
            ),
            Self::Copilot => (
                "bash",
                json!({"command": command, "description": "runs the command", "mode": "sync", "initial_wait": 30}),
            ),
            Self::Codex => ("exec_command", json!({"cmd": command})),
            Self::Gemini | Self::Acp => ("run_shell_command", json!({"command": command})),
            Self::Anthropic | Self::OpenAi => ("shell", json!({"command": command})),
        };
        Move::Call(name.to_owned(), input)
    }

    /// A call of the agent's own file-writing tool, writing `text` to `file` (absolute).
    pub(super) fn write(self, file: &str, text: &str) -> Move {
        let (name, input) = match self {
            Self::ClaudeCode => ("Write", json!({"file_path": file, "content": text})),
            Self::OpenCode => ("write", json!({"filePath": file, "content": text})),
            Self::Copilot => ("create", json!({"path": file, "file_text": text})),
            // Codex writes with its commands.
            Self::Codex => {
                return self.shell(&format!("printf '%s' {} > {}", quoted(text), quoted(file)));
            }
            Self::Gemini | Self::Acp => ("write_file", json!({"file_path": file, "content": text})),
            Self::Anthropic | Self::OpenAi => ("write-file", json!({"path": file, "text": text})),
        };
        Move::Call(name.to_owned(), input)
    }

    /// The calls that set the agent's plan with its own tool, and the plan (as the run's
    /// `plan` event writes it) they leave; `None` where the wire carries no plan: Copilot's
    /// `session.todos_changed` is a signal without the list, the model APIs have no plan
    /// tool, and the Gemini CLI sends no ACP plan updates.
    pub(super) fn plan(self) -> Option<(Vec<Move>, Value)> {
        const CHECKS: &str = "Run the kit's checks";
        const SUMMARY: &str = "Write the summary";
        let both = |first: &str| json!([{"content": CHECKS, "status": first}, {"content": SUMMARY, "status": "pending"}]);
        let call = |name: &str, input: Value| Move::Call(name.to_owned(), input);
        Some(match self {
            // Its task tools (the default for the models it knows; `TodoWrite` otherwise).
            Self::ClaudeCode => (
                vec![
                    call(
                        "TaskCreate",
                        json!({"subject": CHECKS, "description": "every check the kit has", "activeForm": "Running the kit's checks"}),
                    ),
                    call(
                        "TaskUpdate",
                        json!({"taskId": "1", "status": "in_progress"}),
                    ),
                ],
                json!([{"content": CHECKS, "status": "in-progress", "active_form": "Running the kit's checks"}]),
            ),
            Self::OpenCode => (
                vec![call(
                    "todowrite",
                    json!({"todos": [
                        {"content": CHECKS, "status": "in_progress", "priority": "high"},
                        {"content": SUMMARY, "status": "pending", "priority": "low"}]}),
                )],
                both("in-progress"),
            ),
            Self::Gemini => (
                vec![call(
                    "write_todos",
                    json!({"todos": [
                        {"description": CHECKS, "status": "in_progress"},
                        {"description": SUMMARY, "status": "pending"}]}),
                )],
                both("in-progress"),
            ),
            // `codex exec --json` reduces the plan's statuses to completed or not.
            Self::Codex => (
                vec![call(
                    "update_plan",
                    json!({"plan": [
                        {"step": CHECKS, "status": "in_progress"},
                        {"step": SUMMARY, "status": "pending"}]}),
                )],
                both("pending"),
            ),
            Self::Copilot | Self::Acp | Self::Anthropic | Self::OpenAi => return None,
        })
    }

    /// Whether atomic knows the model the agent runs on, and so prices its calls: an ACP
    /// agent picks its own (the Gemini CLI offers no choice of model over ACP).
    pub(super) fn priced(self) -> bool {
        self != Self::Acp
    }

    /// The name the agent is offered the `note` tool of the MCP server `notes` under.
    pub(super) fn mcp_note(self) -> &'static str {
        match self {
            Self::ClaudeCode => "mcp__notes__note",
            Self::OpenCode => "notes_note",
            Self::Copilot => "notes-note",
            Self::Codex => "mcp__notes/note",
            Self::Gemini | Self::Acp => "mcp_notes_note",
            Self::Anthropic | Self::OpenAi => "notes__note",
        }
    }
}

/// `text` quoted for `sh`.
pub(super) fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The custom tools a model API's agent gets: `shell` and `write-file`, run by atomic.
fn write_custom_tools(project: &CliProject) {
    project.write(
        ".atomic/tools/shell.kdl",
        r#"tool "shell" description="Runs a shell command in the workspace and prints its output" {
    argument "command" description="The command"
    command "python3" "-c" "import json,subprocess,sys; a=json.load(sys.stdin); r=subprocess.run(a['command'], shell=True, capture_output=True, text=True); print(r.stdout + r.stderr)"
    timeout "60s"
}
"#,
    );
    project.write(
        ".atomic/tools/write-file.kdl",
        r#"tool "write-file" description="Writes text to a file" {
    argument "path" description="The file"
    argument "text" description="What it holds"
    command "python3" "-c" "import json,sys; a=json.load(sys.stdin); open(a['path'], 'w').write(a['text']); print('wrote ' + a['path'])"
    timeout "20s"
}
"#,
    );
}

/// A value's text, for messages.
pub(super) fn shown(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}
