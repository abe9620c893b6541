//! A sandboxed tool, through the binary: what it may do still works (its workspace, its
//! private temp directory, an allowed host through the egress proxy), and what it may not
//! is refused — writing outside the workspace, reading a planted `~/.ssh/id_rsa`, reaching
//! a second loopback server directly or through the proxy (reported as `sandbox-denied`) —
//! while the model key never reaches it and a daemon it leaves is ended with the step.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::cli_project::{CliProject, stderr, stdout};

/// Whether this system can sandbox a step, and bash (for `/dev/tcp`) is here; a loud skip
/// otherwise.
fn can_sandbox() -> bool {
    #[allow(clippy::print_stderr, reason = "a skipped test says so")]
    if let Err(error) = atomic::process::Confinement::check() {
        eprintln!("SKIP: {error}");
        return false;
    }
    let bash = std::process::Command::new("bash")
        .arg("-c")
        .arg("true")
        .status()
        .is_ok_and(|status| status.success());
    #[allow(clippy::print_stderr, reason = "a skipped test says so")]
    if !bash {
        eprintln!("SKIP: bash is not installed; install bash to test sandboxed networking");
    }
    bash
}

/// A server on loopback answering every request `hello from <name>`; its port.
fn server(name: &'static str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let mut head = Vec::new();
            let mut byte = [0_u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            let body = format!("hello from {name}");
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

/// `bash` fetching `http://HOST:PORT/` through the step's proxy (`$HTTP_PROXY`), by hand.
fn through_proxy(host: &str, port: u16) -> String {
    format!(
        "p=${{HTTP_PROXY##*:}}; exec 3<>/dev/tcp/127.0.0.1/$p && printf 'GET http://{host}:{port}/ HTTP/1.1\\r\\nHost: {host}\\r\\n\\r\\n' >&3 && tail -n 1 <&3"
    )
}

#[test]
fn a_sandboxed_tool_does_its_work_and_nothing_else() {
    if !can_sandbox() {
        return;
    }
    let allowed = server("allowed");
    let other = server("other");
    let project = CliProject::new();
    let home = tempfile::tempdir().expect("a home");
    std::fs::create_dir_all(home.path().join(".ssh")).expect("mkdir");
    std::fs::write(home.path().join(".ssh/id_rsa"), "PRIVATE KEY").expect("plant a key");
    let outside = tempfile::tempdir().expect("a directory outside the project");
    let outside_file = outside.path().join("escaped.txt");
    let pid_file = project.path().join("daemon.pid");
    let flow = format!(
        r#"workflow "boxed" {{
    sandbox {{ network "localhost"; }}
    tool "work" {{ run "sh" "-c" "echo made > made.txt && echo t > $TMPDIR/t && cat $TMPDIR/t"; }}
    tool "escape" {{ run "sh" "-c" "echo out > {outside}"; on-error "skip" }}
    tool "steal" {{ run "sh" "-c" "cat $HOME/.ssh/id_rsa"; on-error "skip" }}
    tool "key" {{ run "sh" "-c" "echo key=${{ANTHROPIC_API_KEY:-none}}"; }}
    tool "fetch" {{ run "bash" "-c" "{fetch}"; }}
    tool "direct" {{ run "bash" "-c" "exec 3<>/dev/tcp/127.0.0.1/{other}"; on-error "skip" }}
    tool "proxied" {{ run "bash" "-c" "{proxied}"; }}
    tool "daemon" {{ run "sh" "-c" "(setsid sleep 300 >/dev/null 2>&1 & echo $! > {pids}) ; echo left"; }}
}}
"#,
        outside = outside_file.display(),
        fetch = through_proxy("localhost", allowed),
        other = other,
        proxied = through_proxy("127.0.0.1", other),
        pids = pid_file.display(),
    );
    project.write("boxed.kdl", &flow);
    let output = project
        .atomic()
        .env("HOME", home.path())
        .env("ANTHROPIC_API_KEY", "sk-ant-must-not-leak")
        .args(["run", "boxed.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    let run = project.last_run();
    let shown = project.show(&run);
    let output_of = |node: &str| -> Value {
        shown["steps"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|step| step["node_id"] == node)
            .map(|step| step["outputs"][node].clone())
            .unwrap_or(Value::Null)
    };
    let out = |node: &str| -> String {
        output_of(node)["stdout"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let failed = |node: &str| -> bool {
        let output = output_of(node);
        output.is_null() || output["exit_code"] != 0
    };

    // Allowed work.
    assert_eq!(project.read("made.txt"), "made\n");
    assert_eq!(out("work"), "t\n");
    assert_eq!(out("fetch"), "hello from allowed", "{shown}");
    // Refused: a write outside, a credential store, a port not the proxy's.
    assert!(
        !outside_file.exists(),
        "the tool wrote outside the workspace"
    );
    assert!(
        failed("escape") && failed("steal") && failed("direct"),
        "{shown}"
    );
    assert!(!format!("{shown}").contains("PRIVATE KEY"));
    // The model key stays in atomic.
    assert_eq!(out("key"), "key=none\n");
    // The proxy refused the other server's name, and said so.
    assert!(out("proxied").contains("not allowed"), "{}", out("proxied"));
    let events = project
        .atomic()
        .args(["runs", "show", &run, "--events"])
        .output()
        .expect("atomic runs show --events");
    let denied: Vec<Value> = stdout(&events)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "sandbox-denied")
        .collect();
    assert_eq!(denied.len(), 1, "{denied:?}");
    assert_eq!(denied[0]["node"], "proxied");
    assert_eq!(denied[0]["target"], format!("127.0.0.1:{other}"));
    // The daemon the step left went with it.
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("the daemon's pid")
        .trim()
        .parse()
        .expect("a pid");
    let gone = Instant::now();
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            gone.elapsed() < Duration::from_secs(10),
            "the daemon {pid} outlived its step"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sandbox_none_runs_unconfined_when_said() {
    if !can_sandbox() {
        return;
    }
    let project = CliProject::new();
    let outside = tempfile::tempdir().expect("a directory outside the project");
    let file = outside.path().join("free.txt");
    project.write(
        "free.kdl",
        &format!(
            r#"workflow "free" {{
    sandbox
    tool "boxed" {{ run "sh" "-c" "echo x > {file}"; on-error "skip" }}
    tool "free" {{
        run "sh" "-c" "echo x > {file}"
        sandbox "none"
    }}
}}
"#,
            file = file.display()
        ),
    );
    let output = project
        .atomic()
        .args(["run", "free.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let shown = project.show(&project.last_run());
    let boxed = shown["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|step| step["node_id"] == "boxed")
        .expect("the boxed step");
    assert_eq!(boxed["status"], "skipped", "{boxed}");
    assert_eq!(
        std::fs::read_to_string(&file).expect("written unconfined"),
        "x\n"
    );
}

#[test]
fn an_agent_works_in_its_cwd_which_must_exist() {
    let project = CliProject::new();
    std::fs::create_dir_all(project.path().join("crates/core")).expect("mkdir");
    let flow = |dir: &str| {
        format!(
            r#"workflow "where" {{
    provider "local" adapter="command" {{ command "sh" "-c" "cat > /dev/null; pwd"; }}
    state {{ field "place" type="string" default=""; }}
    agent "look" provider="local" {{
        prompt "where are you?"
        cwd "{dir}"
        output "place"
    }}
}}
"#
        )
    };
    project.write("where.kdl", &flow("crates/{{ 'core' }}"));
    let output = project
        .atomic()
        .args(["run", "where.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let place = project.show(&project.last_run())["state"]["place"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_owned();
    assert!(place.ends_with("/crates/core"), "{place}");

    project.write("where.kdl", &flow("crates/nowhere"));
    let output = project
        .atomic()
        .args(["run", "where.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("crates/nowhere is not a directory"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn check_reach_lists_what_each_step_may_touch() {
    let project = CliProject::new();
    project.write(
        "reach.kdl",
        r#"workflow "reach" {
    provider "claude" adapter="claude-code" api-key-env="ANTHROPIC_API_KEY"
    sandbox { network "registry.npmjs.org"; write "target"; }
    agent "fix" provider="claude" permission="accept-edits" {
        prompt "Fix it"
        tools "Bash" "Edit"
    }
    tool "publish" {
        run "npm" "publish"
        env "NPM_TOKEN" "{{ env.NPM_TOKEN }}"
        sandbox "none"
    }
    provider "oc" adapter="opencode" model="anthropic/claude-sonnet-4-5" api-key-env="OC_KEY"
    agent "plan" provider="oc" { prompt "Plan it"; }
    provider "own" adapter="acp" api-key-env="MY_AGENT_KEY" { command "my-agent"; }
    agent "chat" provider="own" { prompt "Hello"; }
    env "NPM_TOKEN"
}
"#,
    );
    let output = project
        .atomic()
        .args(["check", "--reach", "--format", "json", "reach.kdl"])
        .output()
        .expect("atomic check --reach");
    let reach: Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    let steps = reach[0]["steps"].as_array().expect("steps");
    let fix = &steps[0];
    assert_eq!(fix["node"], "fix");
    assert_eq!(fix["sandbox"], "workflow");
    assert_eq!(fix["permission"], "accept-edits");
    // Claude Code's key stays with atomic (its gateway): the agent is given no secret.
    assert_eq!(fix["secrets"], serde_json::json!([]));
    assert_eq!(fix["tools"], serde_json::json!(["Bash", "Edit"]));
    assert!(
        fix["writes"]
            .as_array()
            .expect("writes")
            .contains(&"target".into())
    );
    assert!(
        fix["writes"]
            .as_array()
            .expect("writes")
            .contains(&"~/.claude".into())
    );
    assert!(
        fix["hidden"]
            .as_array()
            .expect("hidden")
            .contains(&"~/.ssh".into())
    );
    assert!(
        !fix["hidden"]
            .as_array()
            .expect("hidden")
            .contains(&"~/.claude".into())
    );
    assert_eq!(
        fix["hosts"],
        serde_json::json!(["registry.npmjs.org", "127.0.0.1 (atomic's model gateway)"])
    );
    let publish = &steps[1];
    assert_eq!(publish["sandbox"], "none");
    assert_eq!(publish["writes"], serde_json::json!(["anywhere"]));
    assert_eq!(publish["secrets"], serde_json::json!(["NPM_TOKEN"]));
    // OpenCode's model (Anthropic's) is served through atomic's gateway: no secret.
    let plan = &steps[2];
    assert_eq!(plan["node"], "plan");
    assert_eq!(plan["secrets"], serde_json::json!([]));
    // An agent whose key variable atomic knows no endpoint for is given the key.
    let chat = &steps[3];
    assert_eq!(chat["node"], "chat");
    assert_eq!(chat["secrets"], serde_json::json!(["MY_AGENT_KEY"]));

    let text = project
        .atomic()
        .args(["check", "--reach", "reach.kdl"])
        .output()
        .expect("atomic check --reach");
    let text = stdout(&text);
    assert!(
        text.contains("agent `fix` (claude-code): sandbox workflow"),
        "{text}"
    );
    assert!(text.contains("tool `publish`: sandbox none"), "{text}");
}

#[test]
fn the_projects_sandbox_confines_workflows_that_declare_none() {
    if !can_sandbox() {
        return;
    }
    let project = CliProject::new();
    let outside = tempfile::tempdir().expect("a directory outside the project");
    let file = outside.path().join("escaped.txt");
    project.write(
        ".atomic/config.kdl",
        "sandbox { network \"example.org\"; }\n",
    );
    project.write(
        "plain.kdl",
        &format!(
            "workflow \"plain\" {{\n    tool \"escape\" {{ run \"sh\" \"-c\" \"echo x > {}\"; }}\n}}\n",
            file.display()
        ),
    );
    let output = project
        .atomic()
        .args(["run", "plain.kdl", "--quiet"])
        .output()
        .expect("atomic run");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("Permission denied"),
        "{}",
        stderr(&output)
    );
    assert!(!file.exists());
}
