//! No child process gets a secret it was not meant to have: one `atomic run` with two HTTP
//! providers configured at once (their keys in custom variables) and the usual key
//! variables of other backends set, where a hook, a tool node, a custom tool run by the
//! `anthropic` agent's tool loop and a `command` provider each dump their environment. The
//! dumps are grepped for every key; a secret a custom tool prints is redacted before it
//! reaches the model.

use std::time::Duration;

use serde_json::json;

use crate::support::cli_project::{CliProject, stderr};
use crate::support::fake_anthropic::{FakeAnthropic, Turn as AnthropicTurn};
use crate::support::fake_openai::{FakeOpenAi, Turn as OpenAiTurn};
use crate::support::within;

const ANTHROPIC_KEY: &str = "sk-ant-test-ANTHROPIC-0001";
const OPENAI_KEY: &str = "sk-test-OPENAI-0002";
const COMMAND_KEY: &str = "cmd-test-COMMAND-0003";
/// Keys of backends the workflow does not use, in their well-known variables.
const STRAY_KEYS: &[(&str, &str)] = &[
    ("ANTHROPIC_API_KEY", "sk-ant-stray-0004"),
    ("OPENAI_API_KEY", "sk-stray-0005"),
    ("GEMINI_API_KEY", "gem-stray-0006"),
];
/// A secret that is not a provider key: tools keep it, but never echo it to a model.
const DEPLOY_TOKEN: &str = "deploy-token-0007-secret";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_child_gets_only_what_it_was_meant_to_have() {
    let anthropic = FakeAnthropic::start();
    anthropic.push(AnthropicTurn::tool_use("dump", json!({})));
    anthropic.push(AnthropicTurn::text("Dumped."));
    let openai = FakeOpenAi::start();
    openai.push(OpenAiTurn::text("Hello."));

    let project = CliProject::new();
    project.write(
        ".atomic/tools/dump.kdl",
        r#"tool "dump" description="Dumps its environment" { command "sh" "-c" "env > custom-tool.env; echo token=$DEPLOY_TOKEN"; }"#,
    );
    project.write(
        "model.sh",
        "#!/bin/sh\nenv > command-provider.env\ncat >/dev/null\necho answered\n",
    );
    project.write(
        "flow.kdl",
        &format!(
            r#"workflow "secrets" {{
    provider "claude" adapter="anthropic" model="claude-sonnet-4-5" api-key-env="MY_ANTHROPIC" base-url="{}"
    provider "gpt" adapter="openai" model="gpt-test" api-key-env="MY_OPENAI" base-url="{}/v1"
    provider "script" adapter="command" api-key-env="MY_COMMAND" {{ command "sh" "model.sh"; }}
    on "node.start" {{ run "sh" "-c" "env > hook.env"; }}
    agent "claude-agent" provider="claude" {{
        prompt "Dump your environment"
        tools "dump"
    }}
    agent "gpt-agent" provider="gpt" {{ prompt "Say hello"; }}
    agent "script-agent" provider="script" {{ prompt "Answer"; }}
    tool "dump-tool" {{ run "sh" "-c" "env > tool-node.env"; }}
}}
"#,
            anthropic.url(),
            openai.url()
        ),
    );

    let mut command = project.atomic();
    command
        .args(["run", "flow.kdl"])
        .env("MY_ANTHROPIC", ANTHROPIC_KEY)
        .env("MY_OPENAI", OPENAI_KEY)
        .env("MY_COMMAND", COMMAND_KEY)
        .env("DEPLOY_TOKEN", DEPLOY_TOKEN);
    for (name, value) in STRAY_KEYS {
        command.env(name, value);
    }
    let output = within(
        Duration::from_secs(60),
        tokio::task::spawn_blocking(move || command.output().expect("atomic run")),
    )
    .await
    .expect("the run finished");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    let every_key = [ANTHROPIC_KEY, OPENAI_KEY, COMMAND_KEY]
        .into_iter()
        .chain(STRAY_KEYS.iter().map(|(_, value)| *value));
    let dumps = [
        ("hook.env", vec![]),
        ("tool-node.env", vec![]),
        ("custom-tool.env", vec![]),
        // The command provider gets its own key, and only that.
        ("command-provider.env", vec![COMMAND_KEY]),
    ];
    let keys: Vec<&str> = every_key.collect();
    for (file, allowed) in &dumps {
        let dump = project.read(file);
        assert!(
            dump.contains("PATH="),
            "{file} is an environment dump: {dump}"
        );
        for key in &keys {
            assert_eq!(
                dump.contains(key),
                allowed.contains(key),
                "{file}: key {key} (allowed: {allowed:?})"
            );
        }
    }
    // Tools keep what is not a provider key (a deploy token they may need) …
    assert!(project.read("tool-node.env").contains(DEPLOY_TOKEN));
    // … but what they print is redacted before it goes to the model.
    let bodies = anthropic.message_bodies();
    assert_eq!(bodies.len(), 2);
    let sent = bodies[1]["messages"].to_string();
    assert!(sent.contains("token=[REDACTED]"), "{sent}");
    assert!(!sent.contains(DEPLOY_TOKEN), "{sent}");
}
