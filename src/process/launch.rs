//! [`Launch`]: what to start, described as data, so a spawner can start it as it is (the
//! local one) or wrapped (a sandbox).

use std::path::PathBuf;
use std::sync::Arc;

use super::confine::Confinement;

/// What becomes of one of a child's standard streams.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stdio {
    /// Connected to nothing (`/dev/null`).
    #[default]
    Null,
    /// A pipe the caller takes from the [`Child`](super::Child).
    Pipe,
    /// stderr only: read by the child handle into a bounded tail for error messages
    /// ([`Child::stderr_tail`](super::Child::stderr_tail)).
    Tail,
}

/// A program to start: its arguments, directory, whole environment and standard streams.
/// Nothing is inherited from atomic's own process: the environment is exactly
/// [`Launch::env`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The program: a path, or a name looked up on `PATH` (the child's own when
    /// [`Launch::env`] sets it, as `std::process::Command` does).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Where it runs (`None`: atomic's own directory).
    pub cwd: Option<PathBuf>,
    /// Its whole environment, in order (a later value of a name wins).
    pub env: Vec<(String, String)>,
    /// Standard input.
    pub stdin: Stdio,
    /// Standard output.
    pub stdout: Stdio,
    /// Standard error.
    pub stderr: Stdio,
    /// The sandbox it runs in (`None`: unconfined).
    pub confine: Option<Arc<Confinement>>,
}

impl Launch {
    /// `program` with no arguments, an empty environment, stdin and stdout piped and
    /// stderr kept as a tail: how agents, custom tools and MCP servers are started.
    #[must_use]
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            stdin: Stdio::Pipe,
            stdout: Stdio::Pipe,
            stderr: Stdio::Tail,
            confine: None,
        }
    }

    /// Runs it confined as `confinement` says (`None`: unconfined).
    #[must_use]
    pub fn confined(mut self, confinement: Option<Arc<Confinement>>) -> Self {
        self.confine = confinement;
        self
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Runs it in `dir`.
    #[must_use]
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Adds variables to its environment.
    #[must_use]
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.env.extend(
            vars.into_iter()
                .map(|(name, value)| (name.into(), value.into())),
        );
        self
    }

    /// Adds one variable to its environment.
    #[must_use]
    pub fn env(self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.envs([(name.into(), value.into())])
    }

    /// Sets what becomes of its standard input.
    #[must_use]
    pub fn stdin(mut self, stdin: Stdio) -> Self {
        self.stdin = stdin;
        self
    }

    /// Sets what becomes of its standard output.
    #[must_use]
    pub fn stdout(mut self, stdout: Stdio) -> Self {
        self.stdout = stdout;
        self
    }

    /// Sets what becomes of its standard error.
    #[must_use]
    pub fn stderr(mut self, stderr: Stdio) -> Self {
        self.stderr = stderr;
        self
    }

    /// The program as people read it in an error.
    #[must_use]
    pub fn program_name(&self) -> String {
        self.program.display().to_string()
    }
}
