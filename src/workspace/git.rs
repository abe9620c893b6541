//! Running git. Every command of the snapshot store starts here, with the environment
//! cleared down: the inherited `GIT_*` variables (a hook's `GIT_DIR`, `GIT_INDEX_FILE`, …)
//! removed, the repository, work tree and index named explicitly, no system configuration,
//! no prompts, C messages, a fixed author, and the settings of [`SETTINGS`] over whatever
//! the repository's or the user's configuration says.

use std::ffi::OsStr;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::snapshot::{EMPTY_TREE, SnapshotError};

/// The empty tree of a SHA-256 repository.
const EMPTY_TREE_SHA256: &str = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321";

/// `-c` settings of every command, and why.
const SETTINGS: &[&str] = &[
    // Files are recorded and put back byte for byte (with `GIT_ATTR_SOURCE` set to the empty
    // tree and no attributes file: no filters, no end-of-line conversion).
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.attributesFile=/dev/null",
    // Nothing runs beside or after a command: no gc, no fsmonitor daemon, no hooks (a
    // `reference-transaction` hook would see refs/atomic move).
    "gc.auto=0",
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    // No reflog for refs/atomic, no signing prompt from commit-tree.
    "core.logAllRefUpdates=false",
    "commit.gpgSign=false",
    // Snapshots are written fast: zlib's fastest level for loose objects (git's default,
    // kept when a user's `core.compression` asks for smaller and slower).
    "core.looseCompression=1",
    // The private index is one whole file (a seeded split index would share its base).
    "core.splitIndex=false",
    // A private store created under a user's `init.defaultObjectFormat=sha256` is still
    // SHA-1, which `EMPTY_TREE` names (ignored by a git that does not know the setting).
    "init.defaultObjectFormat=sha1",
];

/// git with the cleared-down environment and the settings, in no repository yet.
fn git() -> Command {
    let mut command = Command::new("git");
    for (name, _) in std::env::vars_os() {
        if name.as_encoded_bytes().starts_with(b"GIT_") {
            command.env_remove(name);
        }
    }
    command.envs([
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("LC_ALL", "C"),
        ("GIT_AUTHOR_NAME", "atomic"),
        ("GIT_AUTHOR_EMAIL", "atomic@localhost"),
        ("GIT_COMMITTER_NAME", "atomic"),
        ("GIT_COMMITTER_EMAIL", "atomic@localhost"),
    ]);
    for setting in SETTINGS {
        command.arg("-c").arg(setting);
    }
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Runs `command`, writing `input` to its standard input (from another thread, so a
/// command that answers as it reads cannot block on a full pipe).
fn output(mut command: Command, input: Option<&[u8]>) -> Result<Output, SnapshotError> {
    if input.is_some() {
        command.stdin(Stdio::piped());
    }
    let mut child = command.spawn().map_err(|error| match error.kind() {
        io::ErrorKind::NotFound => SnapshotError::NoGit("`git` was not found on PATH".to_owned()),
        _ => SnapshotError::Git {
            command: "git".to_owned(),
            message: format!("cannot start it: {error}"),
        },
    })?;
    let stdin = child.stdin.take();
    let waited = std::thread::scope(|scope| {
        if let (Some(mut stdin), Some(input)) = (stdin, input) {
            // A command that fails early closes its end; its status says why.
            scope.spawn(move || drop(stdin.write_all(input)));
        }
        child.wait_with_output()
    });
    waited.map_err(|error| SnapshotError::Git {
        command: "git".to_owned(),
        message: format!("waiting for it failed: {error}"),
    })
}

/// The error of a command that exited with a failure.
pub(super) fn failed(args: &[&str], output: &Output) -> SnapshotError {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let message = match stderr.trim() {
        "" => format!("exited with {}", output.status),
        text => text.to_owned(),
    };
    SnapshotError::Git {
        command: format!("git {}", args.join(" ")),
        message,
    }
}

/// The repository a workspace's root is in, as git finds it from there.
pub(super) struct Found {
    /// Where objects and shared refs live (`.git` of the main work tree).
    pub(super) common_dir: PathBuf,
    /// The git dir of the work tree the root is in (its `index` seeds ours).
    pub(super) git_dir: PathBuf,
    /// The top of that work tree.
    pub(super) top: PathBuf,
    /// The root's path below the top: empty, or ending in `/`.
    pub(super) prefix: String,
    /// The empty tree in the repository's hash.
    pub(super) empty_tree: &'static str,
}

/// The repository `root` is in, `None` when it is in none.
pub(super) fn discover(root: &Path) -> Result<Option<Found>, SnapshotError> {
    let args = [
        "rev-parse",
        "--git-common-dir",
        "--git-dir",
        "--show-toplevel",
        "--show-prefix",
        "--show-object-format",
    ];
    let mut command = git();
    command.current_dir(root).args(args);
    let output = output(command, None)?;
    if !output.status.success() {
        if String::from_utf8_lossy(&output.stderr).contains("not a git repository") {
            return Ok(None);
        }
        return Err(failed(&args, &output));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let [common_dir, git_dir, top, prefix, format] = lines[..] else {
        return Err(SnapshotError::Git {
            command: format!("git {}", args.join(" ")),
            message: format!("unexpected output: {text:?}"),
        });
    };
    Ok(Some(Found {
        common_dir: root.join(common_dir),
        git_dir: root.join(git_dir),
        top: PathBuf::from(top),
        prefix: prefix.to_owned(),
        empty_tree: if format == "sha256" {
            EMPTY_TREE_SHA256
        } else {
            EMPTY_TREE
        },
    }))
}

/// Creates the bare repository `git_dir` (again, harmlessly, if another process just did).
pub(super) fn init(git_dir: &Path) -> Result<(), SnapshotError> {
    let mut command = git();
    command.args(["init", "--bare", "-q"]).arg(git_dir);
    let done = output(command, None)?;
    if done.status.success() {
        Ok(())
    } else {
        Err(failed(
            &["init", "--bare", "-q", &git_dir.display().to_string()],
            &done,
        ))
    }
}

/// A repository, a work tree and a private index: where every snapshot command runs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Repo {
    /// The git dir holding objects and refs.
    pub(super) git_dir: PathBuf,
    /// The work tree (the top of the project's, or the workspace root).
    pub(super) work_tree: PathBuf,
    /// The private index, the stat cache of the work tree.
    pub(super) index: PathBuf,
    /// The empty tree in the repository's hash (attributes are read from it: none).
    pub(super) empty_tree: &'static str,
}

impl Repo {
    /// git in this repository: the work tree is the current directory, so paths are
    /// relative to its top.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = git();
        command
            .current_dir(&self.work_tree)
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_INDEX_FILE", &self.index)
            .env("GIT_ATTR_SOURCE", self.empty_tree)
            .args(args);
        command
    }

    /// Runs git with `args`, whatever its exit status.
    pub(super) fn output(
        &self,
        args: &[&str],
        input: Option<&[u8]>,
    ) -> Result<Output, SnapshotError> {
        output(self.command(args), input)
    }

    /// Runs git with `args`: its standard output, or an error if it exited with a failure
    /// other than one of `allowed`.
    pub(super) fn run_allowing(
        &self,
        args: &[&str],
        input: Option<&[u8]>,
        allowed: &[i32],
    ) -> Result<Vec<u8>, SnapshotError> {
        let output = self.output(args, input)?;
        let allowed = output
            .status
            .code()
            .is_some_and(|code| allowed.contains(&code));
        if output.status.success() || allowed {
            Ok(output.stdout)
        } else {
            Err(failed(args, &output))
        }
    }

    /// Runs git with `args`: its standard output, or an error if it failed.
    pub(super) fn run(
        &self,
        args: &[&str],
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, SnapshotError> {
        self.run_allowing(args, input, &[])
    }

    /// Runs git with `args`: the first line of its output (an object id).
    pub(super) fn id(&self, args: &[&str], input: Option<&[u8]>) -> Result<String, SnapshotError> {
        let stdout = self.run(args, input)?;
        Ok(String::from_utf8_lossy(&stdout).trim().to_owned())
    }

    /// `git worktree add --detach PATH COMMIT`: a work tree and index of its own, so neither
    /// ours is named.
    pub(super) fn add_worktree(&self, path: &Path, commit: &str) -> Result<(), SnapshotError> {
        self.worktree(&["add", "--detach", "-q"], Some((path, commit)))
    }

    /// `git worktree ARGS [PATH [COMMIT]]`, run in the git dir (a worktree command reads
    /// no work tree of ours).
    pub(super) fn worktree(
        &self,
        args: &[&str],
        place: Option<(&Path, &str)>,
    ) -> Result<(), SnapshotError> {
        let mut command = git();
        command
            .current_dir(&self.git_dir)
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_ATTR_SOURCE", self.empty_tree)
            .arg("worktree")
            .args(args);
        let mut shown: Vec<String> = std::iter::once("worktree")
            .chain(args.iter().copied())
            .map(str::to_owned)
            .collect();
        if let Some((path, commit)) = place {
            command.arg(path);
            shown.push(path.display().to_string());
            if !commit.is_empty() {
                command.arg(commit);
                shown.push(commit.to_owned());
            }
        }
        let done = output(command, None)?;
        if done.status.success() {
            Ok(())
        } else {
            let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
            Err(failed(&shown, &done))
        }
    }
}

/// `bytes` (a path git printed with `-z`) as a path.
pub(super) fn path(bytes: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(OsStr::from_bytes(bytes))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
    }
}
