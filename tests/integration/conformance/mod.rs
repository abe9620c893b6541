//! The conformance kit: one behavioural suite, written once, that every agent adapter
//! passes through `atomic run` — the real CLI (installed pinned by `./test`) or the real
//! HTTP client — against one fake model on 127.0.0.1 that speaks each backend's wire
//! ([`model`]). The scenarios ([`scenarios`]) are the behaviours a workflow relies on; the
//! subjects ([`subjects`]) are the adapters. Where an adapter declares in its row of
//! `ir::ADAPTERS` that it cannot do something (`permission="ask"`, editing by default, a
//! blocking `agent.tool.before`, keeping the key from its commands), the kit asserts that
//! declaration against the real backend, and `atomic check` refusing the feature's use.
//!
//! Every scenario also checks the run's events: each `tool-start` carries its input and is
//! completed once, refused tools included, and each call reports its usage.
//!
//! A new adapter is added by adding it to [`subjects::Subject`] and to the list at the end
//! of this file, and passing every scenario.

mod model;
mod plan;
mod scenarios;
mod subjects;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::support::cli_project::{CliProject, stderr, stdout};
use model::{Brain, KitModel};
use subjects::{Setup, Subject};

/// Upper bound for one `atomic` command in the kit (a CLI's first start unpacks itself).
const COMMAND_LIMIT: Duration = Duration::from_secs(150);

/// One scenario's world: a project, the model and the subject made ready in it.
struct Kit {
    subject: Subject,
    project: CliProject,
    model: KitModel,
    setup: Setup,
}

impl Kit {
    /// A fresh project with the model thinking with `brain`; `None` skips (a missing CLI).
    fn new(subject: Subject, brain: Brain) -> Option<Self> {
        Self::in_project(subject, CliProject::new(), brain)
    }

    /// [`Kit::new`] in a project made beforehand.
    fn in_project(subject: Subject, project: CliProject, brain: Brain) -> Option<Self> {
        let model = KitModel::start(subjects::KEY, brain);
        let setup = subject.setup(&project, &model.url())?;
        Some(Self {
            subject,
            project,
            model,
            setup,
        })
    }

    /// Writes `flow.kdl`: the subject's provider and `body` (nodes, state) in workflow
    /// `kit`.
    fn flow(&self, body: &str) {
        self.project.write(
            "flow.kdl",
            &format!(
                "workflow \"kit\" {{\n    {}\n{body}\n}}\n",
                self.setup.provider
            ),
        );
    }

    /// `atomic ARGS` in the project with the subject's environment, off the async runtime.
    async fn atomic(&self, args: &[&str]) -> std::process::Output {
        self.project
            .atomic_async(args, &self.setup.env, COMMAND_LIMIT)
            .await
    }

    /// `atomic run flow.kdl ARGS`, asserting its exit code.
    async fn run(&self, args: &[&str], code: i32) -> std::process::Output {
        let mut all = vec!["run", "flow.kdl"];
        all.extend_from_slice(args);
        let output = self.atomic(&all).await;
        assert_eq!(
            output.status.code(),
            Some(code),
            "`{}`: atomic {all:?} exited {:?}\n{}{}\nturns: {:#?}",
            self.subject.adapter(),
            output.status.code(),
            stdout(&output),
            stderr(&output),
            self.model.transcript()
        );
        output
    }

    /// The newest run's id.
    fn last_run(&self) -> String {
        self.project.last_run()
    }

    /// The newest run's state.
    fn state(&self) -> Value {
        self.project.show(&self.last_run())["state"].clone()
    }

    /// A run's agent events, checked against the contract every adapter keeps.
    fn agent_events(&self, run: &str) -> Vec<Value> {
        events_of(&self.project, run, self.subject)
    }

    /// The absolute path of `name` in the project.
    fn file(&self, name: &str) -> String {
        self.project.path().join(name).display().to_string()
    }
}

/// The agent events (the provider's: `tool-start`, …) of `run` in `project`, checked
/// against the contract every adapter keeps.
fn events_of(project: &CliProject, run: &str, subject: Subject) -> Vec<Value> {
    let output = project
        .atomic()
        .args(["runs", "show", run, "--events"])
        .output()
        .expect("atomic runs show --events");
    let events: Vec<Value> = stdout(&output)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "agent")
        .map(|event| event["event"].clone())
        .collect();
    assert_events_keep_the_contract(subject, &events);
    events
}

/// Each `tool-start` has its input (never null) and one `tool-complete` of its id; calls
/// reported usage (a call paused to ask a person may end before its backend reports any).
fn assert_events_keep_the_contract(subject: Subject, events: &[Value]) {
    let adapter = subject.adapter();
    let mut open: BTreeMap<String, usize> = BTreeMap::new();
    for event in events {
        let id = event["id"].as_str().unwrap_or_default().to_owned();
        match event["type"].as_str() {
            Some("tool-start") => {
                assert!(
                    !event["input"].is_null(),
                    "`{adapter}`: a tool started without its input: {event}"
                );
                *open.entry(id).or_default() += 1;
            }
            Some("tool-complete") => {
                let starts = open.get_mut(&id).unwrap_or_else(|| {
                    panic!("`{adapter}`: a tool completed that never started: {event}")
                });
                assert!(*starts > 0, "`{adapter}`: a tool completed twice: {event}");
                *starts -= 1;
            }
            _ => {}
        }
    }
    let unfinished: Vec<&String> = open
        .iter()
        .filter(|(_, starts)| **starts > 0)
        .map(|(id, _)| id)
        .collect();
    assert!(
        unfinished.is_empty(),
        "`{adapter}`: tools started and never completed: {unfinished:?}\n{events:#?}"
    );
    let sessions = events
        .iter()
        .filter(|event| event["type"] == "session-start")
        .count();
    let usages = events
        .iter()
        .filter(|event| event["type"] == "usage")
        .count();
    assert!(
        sessions == 0 || usages > 0,
        "`{adapter}`: {sessions} calls but no usage reports\n{events:#?}"
    );
}

/// Each adapter's page states the limits its row declares, in the words `atomic list
/// adapters` uses: the kit asserts them, so the pages say what is true.
#[test]
fn every_adapter_page_states_the_limits_the_kit_checks() {
    const HEADING: &str = "## Limits the conformance kit checks";
    for subject in ALL {
        let page = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs/providers")
            .join(format!("{}.md", subject.adapter()));
        let text = std::fs::read_to_string(&page).expect("the adapter's page");
        let section = text
            .split_once(HEADING)
            .map(|(_, rest)| rest.split("\n## ").next().unwrap_or_default())
            .unwrap_or_else(|| panic!("{} has no `{HEADING}` section", page.display()));
        let stated: Vec<&str> = section
            .lines()
            .filter_map(|line| line.strip_prefix("- "))
            .collect();
        let mut declared = subject.info().limits();
        if declared.is_empty() {
            declared.push("none");
        }
        assert_eq!(stated, declared, "{}", page.display());
    }
}

/// The claude-code ask round trip (pause, `--answer allow`, the same session writes the
/// file) a hundred times under CPU load: two busy loops run beside it. A benchmark-style
/// loop, not part of `./test` (it takes minutes); BENCHMARKS.md gives the command and the
/// last result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a hundred rounds under load: run it by name (see BENCHMARKS.md)"]
async fn claude_code_ask_round_trip_a_hundred_times_under_load() {
    struct Load(Vec<std::process::Child>);
    impl Drop for Load {
        fn drop(&mut self) {
            for child in &mut self.0 {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
    let _load = Load(
        (0..2)
            .map(|_| {
                std::process::Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .spawn()
                    .expect("a busy loop")
            })
            .collect(),
    );
    let rounds: usize = std::env::var("ATOMIC_ASK_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let started = std::time::Instant::now();
    let mut failures = Vec::new();
    for round in 0..rounds {
        if let Err(why) = scenarios::one_ask_round(Subject::ClaudeCode).await {
            failures.push(format!("round {round}: {why}"));
        }
    }
    #[allow(clippy::print_stderr, reason = "the loop's result is its report")]
    {
        eprintln!(
            "claude-code ask round trips: {}/{rounds} passed in {:.1?}",
            rounds - failures.len(),
            started.elapsed()
        );
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Every subject, in the order of the list below.
const ALL: [Subject; 8] = [
    Subject::ClaudeCode,
    Subject::OpenCode,
    Subject::Copilot,
    Subject::Codex,
    Subject::Gemini,
    Subject::Acp,
    Subject::Anthropic,
    Subject::OpenAi,
];

/// The scenarios, one test each, for every subject: `conformance::<adapter>::<scenario>`.
macro_rules! kit {
    ($($module:ident => $subject:ident),* $(,)?) => {$(
        mod $module {
            use super::scenarios;
            use super::subjects::Subject;

            const SUBJECT: Subject = Subject::$subject;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_text_reply_reaches_state() {
                scenarios::a_text_reply_reaches_state(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn json_output_follows_its_schema() {
                scenarios::json_output_follows_its_schema(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_permitted_edit_changes_the_file() {
                scenarios::a_permitted_edit_changes_the_file(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn edits_by_default_only_where_declared() {
                scenarios::edits_by_default_only_where_declared(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn isolated_branches_merge_the_agents_edits() {
                scenarios::isolated_branches_merge_the_agents_edits(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_forks_agent_never_extends_the_original_session() {
                scenarios::a_forks_agent_never_extends_the_original_session(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_sandboxed_agent_edits_its_workspace_and_nothing_else() {
                scenarios::a_sandboxed_agent_edits_its_workspace_and_nothing_else(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn usage_and_cost_are_recorded() {
                scenarios::usage_and_cost_are_recorded(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_refused_key_is_auth_naming_the_variable() {
                scenarios::a_refused_key_is_auth_naming_the_variable(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_timeout_leaves_no_process_behind() {
                scenarios::a_timeout_leaves_no_process_behind(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_cancel_leaves_no_process_behind() {
                scenarios::a_cancel_leaves_no_process_behind(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn asking_a_person_pauses_and_continues_or_is_refused() {
                scenarios::asking_a_person_pauses_and_continues_or_is_refused(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_declared_mcp_server_is_reached_without_the_key() {
                scenarios::a_declared_mcp_server_is_reached_without_the_key(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_recording_replays_to_the_same_state() {
                scenarios::a_recording_replays_to_the_same_state(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn swaps_to_it_are_checked_as_swapped() {
                scenarios::swaps_to_it_are_checked_as_swapped(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_before_tool_hook_binds_as_declared() {
                scenarios::a_before_tool_hook_binds_as_declared(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn budgets_bind_priced_calls() {
                scenarios::budgets_bind_priced_calls(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn its_commands_see_the_key_only_where_declared() {
                scenarios::its_commands_see_the_key_only_where_declared(SUBJECT).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn the_agents_plan_reaches_the_run_events() {
                super::plan::the_agents_plan_reaches_the_run_events(SUBJECT).await;
            }
        }
    )*};
}

kit! {
    claude_code => ClaudeCode,
    opencode => OpenCode,
    copilot => Copilot,
    codex => Codex,
    gemini => Gemini,
    acp => Acp,
    anthropic => Anthropic,
    openai => OpenAi,
}
