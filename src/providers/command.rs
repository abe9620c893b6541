//! The `command` adapter: any executable as a model. The prompt goes to its stdin, its
//! stdout (streamed as text deltas) is the reply; stderr is kept for error messages.
//!
//! ```kdl
//! provider "local" adapter="command" {
//!     command "python3" "bot.py" "--fast"   // argv, no shell
//!     option "timeout" "10m"                // kill it after this long (default: none)
//! }
//! ```
//!
//! The program runs in the request's working directory, in its own process group; a
//! cancelled call (its future dropped) kills the whole group. A non-zero exit is
//! [`ProviderError::ProcessExit`] with the end of stderr. The environment is the one atomic
//! was given minus secrets: only variables named with `option "pass-env"` or set with
//! `option "env.NAME"` are added to the usual base (PATH, HOME, locale, proxies), and the
//! variable `api-key-env=` names, if any.

use std::time::Duration;

use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::child;
use super::env::{ChildEnv, Environment, api_key, redact};
use super::options::Options;
use super::{
    AgentEvent, AgentReply, AgentRequest, EventSink, Provider, ProviderError, ProviderFuture,
};
use crate::ir::ProviderDecl;
use crate::process::{self, Launch, Spawner};

const ADAPTER: &str = "command";

/// How long a command may run when no `timeout` option is given: effectively unbounded;
/// node timeouts cancel the call from outside.
const NO_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

/// A provider that runs a program per call. `Debug` never shows the key.
#[derive(Clone)]
pub struct CommandProvider {
    argv: Vec<String>,
    env: ChildEnv,
    timeout: Duration,
    /// The `api-key-env=` value, scrubbed from error messages (stderr may echo it).
    secret: Option<String>,
    /// Starts the program.
    spawner: Arc<dyn Spawner>,
}

impl std::fmt::Debug for CommandProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandProvider")
            .field("argv", &self.argv)
            .field("env", &self.env)
            .field("timeout", &self.timeout)
            .field("secret", &self.secret.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl CommandProvider {
    /// Runs `argv` with `env`.
    ///
    /// # Errors
    /// [`ProviderError::Config`] when `argv` is empty.
    pub fn new(argv: Vec<String>, env: ChildEnv) -> Result<Self, ProviderError> {
        if argv.is_empty() {
            return Err(ProviderError::config(
                ADAPTER,
                "needs a `command \"program\" \"arg\"…` child".to_owned(),
            ));
        }
        Ok(Self {
            argv,
            env,
            timeout: NO_TIMEOUT,
            secret: None,
            spawner: process::local(),
        })
    }

    /// Builds the provider a `provider … adapter="command"` declares.
    ///
    /// # Errors
    /// [`ProviderError::Config`]: no `command` child, or a malformed option.
    pub fn from_decl(
        decl: &ProviderDecl,
        env: &Environment,
        spawner: Arc<dyn Spawner>,
    ) -> Result<Self, ProviderError> {
        let argv = decl.command.iter().map(|arg| arg.value.clone()).collect();
        let mut child_env = ChildEnv::new(env, &[], &[], &[]);
        child_env.apply_options(ADAPTER, env, &decl.options)?;
        let key_name = decl.api_key_env.as_ref().map(|name| name.value.as_str());
        let secret = api_key(ADAPTER, env, key_name)?;
        if let (Some(name), Some(key)) = (key_name, &secret) {
            child_env.set(name, key.clone());
        }
        let timeout = Options::provider(&decl.options).duration(ADAPTER, "timeout")?;
        let mut provider = Self::new(argv, child_env).map_err(|_| {
            ProviderError::config(
                ADAPTER,
                format!(
                    "provider `{}` needs a `command \"program\" \"arg\"…` child",
                    decl.name.value
                ),
            )
        })?;
        provider.timeout = timeout.unwrap_or(NO_TIMEOUT);
        provider.secret = secret;
        provider.spawner = spawner;
        Ok(provider)
    }

    async fn call(
        &self,
        request: &AgentRequest,
        events: &dyn EventSink,
    ) -> Result<AgentReply, ProviderError> {
        let mut launch = Launch::new(&self.argv[0])
            .args(self.argv[1..].iter().cloned())
            .envs(self.env.iter());
        if !request.workspace.root().as_os_str().is_empty() {
            launch = launch.cwd(request.workspace.root());
        }
        if let Some(sandbox) = &request.sandbox {
            launch = launch
                .envs(sandbox.env.iter().cloned())
                .confined(Some(std::sync::Arc::clone(&sandbox.confinement)));
        }
        let mut group = child::spawn(ADAPTER, self.spawner.as_ref(), launch)?;
        let stdin = group.take_stdin();
        let stdout = group.take_stdout();
        events.emit(AgentEvent::SessionStart {
            session_id: None,
            model: request.model.clone(),
        });

        let write = async {
            if let Some(mut stdin) = stdin {
                // A program that exits without reading its input is not an error here;
                // its exit status says whether it worked.
                let _ = stdin.write_all(request.prompt.text.as_bytes()).await;
                let _ = stdin.shutdown().await;
            }
        };
        let read = async {
            let mut text = String::new();
            let Some(mut stdout) = stdout else {
                return Ok(text);
            };
            let mut pending = Vec::new();
            let mut chunk = vec![0_u8; 8192];
            loop {
                let read = stdout.read(&mut chunk).await.map_err(|error| {
                    ProviderError::stream_cut(ADAPTER, format!("reading stdout: {error}"))
                })?;
                if read == 0 {
                    break;
                }
                pending.extend_from_slice(&chunk[..read]);
                let delta = take_utf8(&mut pending);
                if !delta.is_empty() {
                    text.push_str(&delta);
                    events.emit(AgentEvent::TextDelta { text: delta });
                }
            }
            if !pending.is_empty() {
                let rest = String::from_utf8_lossy(&pending).into_owned();
                text.push_str(&rest);
                events.emit(AgentEvent::TextDelta { text: rest });
            }
            Ok(text)
        };
        let output = tokio::time::timeout(self.timeout, async {
            let ((), text) = tokio::join!(write, read);
            text
        })
        .await;
        let text = match output {
            Ok(text) => text?,
            Err(_) => {
                group.end();
                return Err(ProviderError::timeout(ADAPTER, self.timeout));
            }
        };
        let status = child::wait(ADAPTER, &mut group, self.timeout).await?;
        if !status.success() {
            return Err(ProviderError::process_exit(
                ADAPTER,
                status.code(),
                group.stderr_tail(),
            ));
        }
        let text = text
            .strip_suffix('\n')
            .map(|t| t.strip_suffix('\r').unwrap_or(t))
            .unwrap_or(&text)
            .to_owned();
        events.emit(AgentEvent::MessageComplete { text: text.clone() });
        events.emit(AgentEvent::SessionEnd { session_id: None });
        Ok(AgentReply {
            text,
            turns: 1,
            ..AgentReply::default()
        })
    }
}

/// Takes the longest valid UTF-8 prefix of `bytes` (a chunk may end inside a character);
/// invalid sequences in the middle become U+FFFD.
fn take_utf8(bytes: &mut Vec<u8>) -> String {
    let valid = match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(error) if error.error_len().is_none() => error.valid_up_to(),
        Err(_) => bytes.len(),
    };
    let taken: Vec<u8> = bytes.drain(..valid).collect();
    String::from_utf8_lossy(&taken).into_owned()
}

impl Provider for CommandProvider {
    fn adapter(&self) -> &'static str {
        ADAPTER
    }

    fn run<'a>(
        &'a self,
        request: &'a AgentRequest,
        events: &'a dyn EventSink,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            self.call(request, events)
                .await
                .map_err(|error| redact(error, self.secret.as_deref()))
        })
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::sync::Mutex;
    use std::time::Instant;

    use super::*;
    use crate::providers::{CallId, Prompt};

    fn sh(script: &str) -> CommandProvider {
        let env = ChildEnv::new(&Environment::from_process(), &[], &[], &[]);
        CommandProvider::new(vec!["sh".into(), "-c".into(), script.into()], env).unwrap()
    }

    fn request(prompt: &str) -> AgentRequest {
        AgentRequest {
            call: CallId {
                node_id: "n".into(),
                ..CallId::default()
            },
            prompt: Prompt {
                text: prompt.into(),
                ..Prompt::default()
            },
            ..AgentRequest::default()
        }
    }

    #[tokio::test]
    async fn prompt_in_reply_out() {
        let seen = Mutex::new(Vec::new());
        let sink = |event: AgentEvent| seen.lock().unwrap().push(event);
        let reply = sh("tr a-z A-Z")
            .run(&request("hello\n"), &sink)
            .await
            .unwrap();
        assert_eq!(reply.text, "HELLO");
        let seen = seen.into_inner().unwrap();
        assert!(
            seen.contains(&AgentEvent::MessageComplete {
                text: "HELLO".into()
            }),
            "{seen:?}"
        );
        let streamed: String = seen
            .iter()
            .filter_map(|event| match event {
                AgentEvent::TextDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(streamed, "HELLO\n");
    }

    #[tokio::test]
    async fn a_failing_program_reports_its_exit_code_and_stderr() {
        let sink = |_: AgentEvent| {};
        let error = sh("cat >/dev/null; echo 'model unavailable' >&2; exit 3")
            .run(&request("x"), &sink)
            .await
            .unwrap_err();
        let ProviderError::ProcessExit { code, stderr, .. } = &error else {
            panic!("{error}")
        };
        assert_eq!((*code, stderr.as_str()), (Some(3), "model unavailable"));
        assert_eq!(error.class(), crate::ir::ErrorClass::ProcessExit);
    }

    #[tokio::test]
    async fn a_missing_program_is_a_config_error() {
        let env = ChildEnv::new(&Environment::default(), &[], &[], &[]);
        let provider = CommandProvider::new(vec!["/nonexistent/model".into()], env).unwrap();
        let error = provider
            .run(&request("x"), &|_: AgentEvent| {})
            .await
            .unwrap_err();
        assert!(matches!(error, ProviderError::Config { .. }), "{error}");
    }

    #[tokio::test]
    async fn the_environment_holds_no_unlisted_secrets() {
        let env = Environment::default()
            .with("PATH", "/usr/bin:/bin")
            .with("OPENAI_API_KEY", "sk-secret")
            .with("VISIBLE", "yes");
        let mut decl = crate::providers::registry::test_decl("c", "command");
        decl.command = ["sh", "-c", "echo \"${OPENAI_API_KEY:-none} $VISIBLE\""]
            .map(|arg| crate::source::Spanned::new(arg.to_owned(), crate::source::Span::default()))
            .to_vec();
        decl.options = serde_json::json!({"pass-env": "VISIBLE"})
            .as_object()
            .unwrap()
            .clone();
        let provider = CommandProvider::from_decl(&decl, &env, crate::process::local()).unwrap();
        let reply = provider
            .run(&request(""), &|_: AgentEvent| {})
            .await
            .unwrap();
        assert_eq!(reply.text, "none yes");
    }

    #[tokio::test]
    async fn the_timeout_option_kills_a_slow_program() {
        let mut provider = sh("sleep 30");
        provider.timeout = Duration::from_millis(100);
        let started = Instant::now();
        let error = provider
            .run(&request("x"), &|_: AgentEvent| {})
            .await
            .unwrap_err();
        assert!(matches!(error, ProviderError::Timeout { .. }), "{error}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    /// Dropping the call's future (cancellation, a lost race, a node timeout) kills the
    /// program and what it started.
    #[tokio::test]
    async fn cancelling_a_call_kills_the_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        let script = format!("sleep 30 & echo $$ $! > {}; wait", pids.display());
        let provider = sh(&script);
        let request = request("x");
        let sink = |_: AgentEvent| {};
        let call = provider.run(&request, &sink);
        let deadline = Instant::now() + Duration::from_secs(10);
        let read_pids = || {
            std::fs::read_to_string(&pids)
                .ok()
                .filter(|text| text.ends_with('\n'))
        };
        let cancelled = tokio::time::timeout(Duration::from_secs(10), async {
            tokio::select! {
                _ = call => panic!("the call finished by itself"),
                () = async {
                    while read_pids().is_none() {
                        assert!(Instant::now() < deadline, "the program never started");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                } => {}
            }
        });
        cancelled.await.unwrap(); // the select dropped the call here
        let pids: Vec<u32> = read_pids()
            .unwrap()
            .split_whitespace()
            .map(|pid| pid.parse().unwrap())
            .collect();
        assert_eq!(pids.len(), 2);
        let alive = |pid: u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| !stat.contains(") Z "))
        };
        while pids.iter().any(|pid| alive(*pid)) {
            assert!(
                Instant::now() < deadline,
                "{pids:?} survived the cancelled call"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    #[test]
    fn utf8_split_across_chunks_is_kept_whole() {
        let mut bytes = "é".as_bytes()[..1].to_vec();
        assert_eq!(take_utf8(&mut bytes), "");
        bytes.extend_from_slice(&"é".as_bytes()[1..]);
        assert_eq!(take_utf8(&mut bytes), "é");
        assert!(bytes.is_empty());
    }
}
