//! A command's or skill's text made into what the agent is told, as Claude Code does it:
//! `$ARGUMENTS` is the whole argument string as typed, `$1`, `$2`… the words (a quoted
//! word whole; one not given is empty), and `` !`cmd` `` the standard output of `cmd`,
//! run by `sh -c` in the project root.
//!
//! Inside `` !`…` `` the arguments are the shell's own: the words are its positional
//! parameters (`"$1"`, `"$@"`) and the whole string is the variable `ARGUMENTS`, so what
//! a person typed is never pasted into a command line (`$1` there is a variable, quoted as
//! the command quotes it). What a command prints is not expanded again.
//!
//! Commands run through the process module (a process group of their own, ended with
//! everything they started at the time limit), with the environment tool nodes get (no
//! model-API keys), and in the project's sandbox when its configuration declares one
//! ([`Shell::for_project`]). A command that fails is an error with its stderr, never an
//! empty piece of text.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;

use crate::cli::project::Project;
use crate::ir::Sandbox;
use crate::process::{Confinement, Launch, Spawner, Stdio};
use crate::providers::Environment;
use crate::sandbox::{Reach, Refused, Running};
use crate::source::Sources;

/// How long a `` !`cmd` `` may run.
pub(crate) const COMMAND_LIMIT: Duration = Duration::from_secs(30);

/// Most bytes of a `` !`cmd` ``'s output kept; the rest is cut with a note.
pub(crate) const OUTPUT_LIMIT: usize = 64 * 1024;

/// Where and how `` !`cmd` `` runs.
#[derive(Clone, Debug)]
pub(crate) struct Shell {
    spawner: Arc<dyn Spawner>,
    root: PathBuf,
    env: Vec<(String, String)>,
    confine: Option<Arc<Confinement>>,
    limit: Duration,
    max_output: usize,
    /// The project's sandbox while this shell lives: its proxy and temp directory.
    sandbox: Option<Arc<Running>>,
    /// What the sandbox's proxy refused, for the error of a command that then failed.
    refused: Arc<Mutex<Vec<Refused>>>,
}

impl Shell {
    /// Runs commands in `root`, unconfined, with atomic's environment minus model-API
    /// keys, for at most [`COMMAND_LIMIT`], keeping [`OUTPUT_LIMIT`] bytes of output.
    #[must_use]
    pub(crate) fn new(root: impl Into<PathBuf>) -> Self {
        let env = Environment::from_process()
            .without_provider_keys([])
            .iter()
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect();
        Self {
            spawner: crate::process::local(),
            root: root.into(),
            env,
            confine: None,
            limit: COMMAND_LIMIT,
            max_output: OUTPUT_LIMIT,
            sandbox: None,
            refused: Arc::default(),
        }
    }

    /// A shell for `project`: in its root, inside the sandbox its `.atomic/config.kdl`
    /// declares (if any). Keep it for the chat's life: the sandbox's proxy runs while it
    /// does.
    ///
    /// # Errors
    /// When the configuration declares a sandbox this system cannot give.
    pub(crate) async fn for_project(project: &Project) -> Result<Self, String> {
        let mut sources = Sources::new();
        let (config, _problems) = project.config(&mut sources);
        Self::new(&project.root)
            .sandboxed(config.sandbox(), project.home.as_deref())
            .await
    }

    /// The same, started by `spawner` instead of the local one.
    #[must_use]
    #[cfg(test)]
    pub(crate) fn with_spawner(mut self, spawner: Arc<dyn Spawner>) -> Self {
        self.spawner = spawner;
        self
    }

    /// The same, with exactly `env` as the commands' environment.
    #[must_use]
    #[cfg(test)]
    pub(crate) fn with_env(mut self, env: Vec<(String, String)>) -> Self {
        self.env = env;
        self
    }

    /// The same, with another time limit and output bound.
    #[must_use]
    #[cfg(test)]
    pub(crate) fn with_limits(mut self, limit: Duration, max_output: usize) -> Self {
        self.limit = limit;
        self.max_output = max_output;
        self
    }

    /// The same, confined by `sandbox` (`None`, or `sandbox "none"`: as it is) as a tool
    /// step is: writing only in the project root and the sandbox's own paths, never
    /// reading the credential stores under `home`, reaching only the declared hosts.
    ///
    /// # Errors
    /// When this system cannot confine a process, or the sandbox's proxy cannot start.
    pub(crate) async fn sandboxed(
        mut self,
        sandbox: Option<&Sandbox>,
        home: Option<&Path>,
    ) -> Result<Self, String> {
        let Some(sandbox) = sandbox.filter(|sandbox| sandbox.confines()) else {
            return Ok(self);
        };
        Confinement::check().map_err(|error| {
            format!("the project's sandbox cannot confine `!` commands here: {error}")
        })?;
        let root = std::path::absolute(&self.root).unwrap_or_else(|_| self.root.clone());
        let reach = Reach::of(sandbox, &root, home, &[]);
        let refused = Arc::clone(&self.refused);
        let running = Running::start(
            &reach,
            Arc::new(move |refusal| {
                refused
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(refusal);
            }),
        )
        .await
        .map_err(|error| format!("the project's sandbox could not start: {error}"))?;
        self.env.extend(running.env.iter().cloned());
        self.confine = Some(Arc::clone(&running.confinement));
        self.sandbox = Some(Arc::new(running));
        Ok(self)
    }

    /// Whether commands run confined.
    #[must_use]
    #[cfg(test)]
    pub(crate) fn is_sandboxed(&self) -> bool {
        self.confine.is_some()
    }

    /// Runs `script` with `sh -c`, `words` as its positional parameters and `arguments`
    /// as `$ARGUMENTS`; its standard output without the final newlines.
    ///
    /// # Errors
    /// [`ExpandError`] when it cannot start, exits with a failure, or outlives the limit.
    pub(crate) async fn run(
        &self,
        script: &str,
        arguments: &str,
        words: &[String],
    ) -> Result<String, ExpandError> {
        let failed = |message: String| ExpandError {
            command: script.to_owned(),
            message,
        };
        let launch = Launch::new("sh")
            .args(["-c", script, "sh"])
            .args(words.iter().cloned())
            .cwd(&self.root)
            .envs(self.env.iter().cloned())
            .env("ARGUMENTS", arguments)
            .stdin(Stdio::Null)
            .stdout(Stdio::Pipe)
            .stderr(Stdio::Tail)
            .confined(self.confine.clone());
        self.refused
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
        // Dropping `child` (the limit, or the chat giving up) ends its whole group.
        let mut child = self
            .spawner
            .spawn(launch)
            .map_err(|error| failed(format!("it could not start: {}", error.reason())))?;
        let stdout = child.take_stdout();
        let mut out = Vec::new();
        let mut cut = false;
        let status = {
            let reading = read_bounded(stdout, self.max_output, &mut out, &mut cut);
            let finished = crate::process::read_until_exit(reading, child.wait());
            tokio::time::timeout(self.limit, finished).await
        };
        let status = match status {
            Ok(Ok(status)) => status,
            Ok(Err(error)) => return Err(failed(format!("it could not be waited for: {error}"))),
            Err(_) => {
                return Err(failed(format!(
                    "it did not finish within {} s, so it was stopped",
                    self.limit.as_secs_f64()
                )));
            }
        };
        if !status.success() {
            let code = status.code().map_or_else(
                || "was killed by a signal".to_owned(),
                |code| format!("exited with {code}"),
            );
            let stderr = child.stderr_tail();
            let mut message = if stderr.is_empty() {
                format!("it {code} and printed no error")
            } else {
                format!("it {code}: {stderr}")
            };
            let refused = self
                .refused
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .iter()
                .map(|refused| format!("{} ({})", refused.target, refused.reason))
                .collect::<Vec<_>>();
            if !refused.is_empty() {
                message.push_str(&format!(
                    " (the project's sandbox refused: {})",
                    refused.join(", ")
                ));
            }
            return Err(failed(message));
        }
        let mut text = String::from_utf8_lossy(&out)
            .trim_end_matches(['\n', '\r'])
            .to_owned();
        if cut {
            text.push_str(&format!("\n[output cut at {} KiB]", self.max_output / 1024));
        }
        Ok(text)
    }
}

/// Reads `pipe` to its end, keeping at most `max` bytes in `out` (`cut` says when more
/// came); the rest is read and dropped, so the command never blocks on a full pipe.
async fn read_bounded(
    pipe: Option<tokio::process::ChildStdout>,
    max: usize,
    out: &mut Vec<u8>,
    cut: &mut bool,
) {
    let Some(mut pipe) = pipe else {
        return;
    };
    let mut buffer = [0u8; 8192];
    loop {
        match pipe.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => {
                let room = max.saturating_sub(out.len());
                if read > room {
                    *cut = true;
                }
                out.extend_from_slice(&buffer[..read.min(room)]);
            }
        }
    }
}

/// A `` !`cmd` `` that failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ExpandError {
    /// The command, as written between the backticks.
    pub(crate) command: String,
    /// What went wrong, with its stderr.
    pub(crate) message: String,
}

impl std::fmt::Display for ExpandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the command `{}` failed: {}", self.command, self.message)
    }
}

/// One piece of a body.
#[derive(Debug, PartialEq, Eq)]
enum Piece<'a> {
    /// Text as written.
    Text(&'a str),
    /// `$ARGUMENTS`.
    Arguments,
    /// `$N`, from 1.
    Word(usize),
    /// `` !`cmd` ``.
    Command(&'a str),
}

/// `body` in pieces. `$` followed by anything else, and a `` !` `` never closed, are
/// text.
fn pieces(body: &str) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    let mut text_from = 0;
    let mut at = 0;
    let bytes = body.as_bytes();
    while at < bytes.len() {
        let (piece, len) = match bytes[at] {
            b'$' if body[at + 1..].starts_with("ARGUMENTS") => (Piece::Arguments, 10),
            b'$' if bytes.get(at + 1).is_some_and(|b| (b'1'..=b'9').contains(b)) => {
                let digits = body[at + 1..]
                    .bytes()
                    .take_while(u8::is_ascii_digit)
                    .count();
                match body[at + 1..at + 1 + digits].parse::<usize>() {
                    Ok(n) => (Piece::Word(n), 1 + digits),
                    Err(_) => {
                        at += 1;
                        continue;
                    }
                }
            }
            b'!' if body[at + 1..].starts_with('`') => match body[at + 2..].find('`') {
                Some(end) => (Piece::Command(&body[at + 2..at + 2 + end]), end + 3),
                None => {
                    at += 1;
                    continue;
                }
            },
            _ => {
                at += 1;
                continue;
            }
        };
        if text_from < at {
            pieces.push(Piece::Text(&body[text_from..at]));
        }
        pieces.push(piece);
        at += len;
        text_from = at;
    }
    if text_from < body.len() {
        pieces.push(Piece::Text(&body[text_from..]));
    }
    pieces
}

/// Whether `body` reads arguments word by word (`$1`… outside commands; `$1`, `$@`, `$*`
/// or `$#` inside one), so the arguments must be split into words. A body that only
/// reads `$ARGUMENTS` takes the text as typed, apostrophes and all.
#[must_use]
pub(crate) fn reads_words(body: &str) -> bool {
    pieces(body).iter().any(|piece| match piece {
        Piece::Word(_) => true,
        Piece::Command(script) => {
            let bytes = script.as_bytes();
            bytes.windows(2).any(|pair| {
                pair[0] == b'$' && (pair[1].is_ascii_digit() || b"@*#{".contains(&pair[1]))
            })
        }
        Piece::Text(_) | Piece::Arguments => false,
    })
}

/// Whether `body` reads its arguments at all: `$ARGUMENTS` or `$N`, or a command that
/// reads `$ARGUMENTS` or its positional parameters. A body that does not is sent with the
/// arguments after it (see [`super::parse`]).
#[must_use]
pub(crate) fn reads_arguments(body: &str) -> bool {
    reads_words(body)
        || pieces(body).iter().any(|piece| match piece {
            Piece::Arguments => true,
            Piece::Command(script) => script.contains("ARGUMENTS"),
            Piece::Text(_) | Piece::Word(_) => false,
        })
}

/// `body` with `$ARGUMENTS` as `arguments`, `$N` as `words[N-1]` (empty when not given)
/// and each `` !`cmd` `` as its output, run one after another by `shell`.
///
/// # Errors
/// The first command that fails.
pub(crate) async fn expand(
    body: &str,
    arguments: &str,
    words: &[String],
    shell: &Shell,
) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(body.len());
    for piece in pieces(body) {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Arguments => out.push_str(arguments),
            Piece::Word(n) => out.push_str(words.get(n - 1).map_or("", String::as_str)),
            Piece::Command(script) => out.push_str(&shell.run(script, arguments, words).await?),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(items: &[&str]) -> Vec<String> {
        items.iter().map(|item| (*item).to_owned()).collect()
    }

    fn shell(dir: &Path) -> Shell {
        Shell::new(dir)
    }

    #[test]
    fn bodies_are_cut_into_pieces() {
        assert_eq!(
            pieces("a $ARGUMENTS b $1$12 $0 $x !`ls` !`open"),
            [
                Piece::Text("a "),
                Piece::Arguments,
                Piece::Text(" b "),
                Piece::Word(1),
                Piece::Word(12),
                Piece::Text(" $0 $x "),
                Piece::Command("ls"),
                Piece::Text(" !`open"),
            ]
        );
        assert!(reads_words("fix $2"));
        assert!(reads_words("!`git log \"$1\"`"));
        assert!(!reads_words(
            "review $ARGUMENTS, it's fine; $ARGUMENTS again"
        ));
        assert!(!reads_words("cost: 5$"));
        assert!(reads_arguments("say $ARGUMENTS"));
        assert!(reads_arguments("!`echo \"$ARGUMENTS\"`"));
        assert!(!reads_arguments("plain text and !`date`"));
    }

    #[tokio::test]
    async fn arguments_and_words_are_put_in() {
        let dir = tempfile::tempdir().unwrap();
        let text = expand(
            "Fix $1 in $2 ($3). All: $ARGUMENTS",
            r#""the parser" src/lib.rs"#,
            &words(&["the parser", "src/lib.rs"]),
            &shell(dir.path()),
        )
        .await
        .unwrap();
        assert_eq!(
            text,
            r#"Fix the parser in src/lib.rs (). All: "the parser" src/lib.rs"#
        );
    }

    #[tokio::test]
    async fn commands_are_replaced_by_their_output_in_the_project_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("marker.txt"), "here\n").unwrap();
        let text = expand(
            "Say !`echo hi`; file !`cat marker.txt`; first !`printf '%s|' \"$1\" \"$ARGUMENTS\"`",
            "a b; rm -rf x",
            &words(&["a b;", "rm"]),
            &shell(dir.path()),
        )
        .await
        .unwrap();
        assert_eq!(text, "Say hi; file here; first a b;|a b; rm -rf x|");
        assert!(dir.path().join("marker.txt").exists());
    }

    #[tokio::test]
    async fn a_failing_command_is_an_error_with_its_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let error = expand(
            "before !`echo out; echo broken pipe >&2; exit 3` after",
            "",
            &[],
            &shell(dir.path()),
        )
        .await
        .unwrap_err();
        assert_eq!(error.command, "echo out; echo broken pipe >&2; exit 3");
        assert_eq!(error.message, "it exited with 3: broken pipe");
        assert!(
            error.to_string().starts_with("the command `echo out;"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn commands_are_bounded_in_time_and_output() {
        let dir = tempfile::tempdir().unwrap();
        let quick = shell(dir.path()).with_limits(Duration::from_millis(300), 1024);
        let error = quick.run("sleep 20", "", &[]).await.unwrap_err();
        assert!(
            error.message.contains("did not finish within 0.3 s"),
            "{error}"
        );
        let text = quick.run("yes | head -c 100000", "", &[]).await.unwrap();
        assert!(text.ends_with("[output cut at 1 KiB]"), "{text}");
        assert!(text.len() < 1100);
    }

    #[tokio::test]
    async fn the_environment_is_exactly_the_shells() {
        let dir = tempfile::tempdir().unwrap();
        let shell = shell(dir.path()).with_env(vec![
            ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
            ("VISIBLE".to_owned(), "yes".to_owned()),
        ]);
        let text = shell
            .run("echo \"${VISIBLE}-${ANTHROPIC_API_KEY:-none}\"", "", &[])
            .await
            .unwrap();
        assert_eq!(text, "yes-none");
    }

    /// Starts launches unconfined (a test binary is not atomic's confining helper), keeping
    /// what each was to be confined by.
    #[derive(Debug, Default)]
    struct Recording(Mutex<Vec<Launch>>);

    impl Spawner for Recording {
        fn spawn(
            &self,
            launch: Launch,
        ) -> Result<crate::process::Child, crate::process::SpawnError> {
            self.0.lock().unwrap().push(launch.clone());
            crate::process::LocalSpawner.spawn(launch.confined(None))
        }
    }

    #[tokio::test]
    async fn the_projects_sandbox_confines_commands() {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Sandbox {
            none: false,
            write: vec![crate::source::Spanned::new(
                "out/".to_owned(),
                crate::source::Span::default(),
            )],
            hide: Vec::new(),
            network: Vec::new(),
            span: crate::source::Span::default(),
        };
        let unconfined = Sandbox {
            none: true,
            ..sandbox.clone()
        };
        let shell = Shell::new(dir.path())
            .sandboxed(Some(&unconfined), None)
            .await
            .unwrap();
        assert!(!shell.is_sandboxed());
        let shell = match Shell::new(dir.path())
            .sandboxed(Some(&sandbox), Some(dir.path()))
            .await
        {
            Ok(shell) => shell,
            Err(error) => {
                // No Landlock here: said, never run unconfined.
                assert!(Confinement::check().is_err());
                assert!(error.contains("cannot confine"), "{error}");
                return;
            }
        };
        assert!(shell.is_sandboxed());
        let recording = Arc::new(Recording::default());
        let shell = shell.with_spawner(Arc::clone(&recording) as Arc<dyn Spawner>);
        let proxy = shell.run("echo \"$HTTPS_PROXY\"", "", &[]).await.unwrap();
        assert!(proxy.starts_with("http://127.0.0.1:"), "{proxy}");
        let launches = recording.0.lock().unwrap();
        let confinement = launches[0].confine.as_ref().expect("confined");
        let root = std::path::absolute(dir.path()).unwrap();
        assert!(confinement.writable.contains(&root));
        assert!(confinement.writable.contains(&root.join("out/")));
        assert!(confinement.hidden.contains(&root.join(".ssh")));
    }
}
