//! [`Snapshots`]: a workspace's files recorded as git objects, so a run can put them back
//! (before a retry, after a failure, on resume, rewind and undo) and show what each step
//! changed.
//!
//! **Why the git CLI.** git already knows how to walk a work tree fast — a stat cache (the
//! index) so unchanged files are not read, `.gitignore` and `.git/info/exclude`, symlinks
//! and the executable bit — and stores files deduplicated with the project's history.
//! Driving the `git` program (std's `Command`, one child per step of the work) needs no
//! library that must track git's formats and extensions; what it costs is measured in
//! BENCHMARKS.md ("Workspace snapshots").
//!
//! **Where things live.** In a git repository, the objects go to its object store (shared by
//! its linked work trees) and the refs under `refs/atomic/`: `refs/atomic/runs/<run>` is the
//! head of a run's chain of snapshot commits, each marked ([`Mark`]) with why it was taken,
//! its step and a note in its message; other refs (`refs/atomic/rewind/<run>`, …) point at
//! snapshots kept aside. Outside any repository (or in one that ignores the root, as a home
//! directory kept in git with `*` in its `.gitignore` does), a private bare repository at
//! `<root>/.atomic/snapshots.git` holds them, created on first use. The stat cache is a
//! private index per workspace root, `<git dir>/atomic/index-<hash of the root>`, seeded
//! from the project's own index (copied, never written) so the first snapshot of a large
//! checkout hashes only what changed. One recorder at a time writes it (`workspace/lock.rs`).
//!
//! **What is recorded.** The files under the root, tracked or not, as `git add -A` sees
//! them: ignored files are left out, so are untracked empty directories; a file git cannot
//! read is skipped (the snapshot keeps what the index had of it); a git repository nested in
//! the workspace is recorded as its commit (a gitlink), not its files, and a restore leaves
//! its directory alone. Symlinks and the executable bit are kept. The root's `.atomic/` is
//! never recorded, restored or removed, nor is `.git`. Files are stored byte for byte:
//! attributes (filters, end-of-line conversion) are not applied. When the root is a
//! directory below the top of a repository, git works from the top (so the `.gitignore`
//! files above the root apply) limited to the root, and the snapshots' trees hold paths
//! relative to the root.
//!
//! **What is never touched.** The project's HEAD, index, branches, tags, stash, reflogs,
//! hooks and configuration: commits are made with `git commit-tree` (not `commit`) and
//! refs moved with `git update-ref` (compare-and-swap on a run's head), with no reflog.
//! Their objects stay as long as their refs; [`Snapshots::forget_run`] lets git collect a
//! run's.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::git::{self, Repo};
use super::lock::Lock;
use chain::{atomic_ref, parse_entry, run_ref};

mod chain;
mod error;
mod merge;
mod put_back;

pub use error::SnapshotError;
pub use merge::Merged;

/// How often a snapshot looks again at a tree whose files moved while git read it.
const VANISHED_TRIES: u32 = 20;

/// How many loose objects [`Snapshots::pack`] waits for.
pub const PACK_AFTER: u64 = 256;

/// The empty tree id (a first step's "before"; SHA-1, the id every git repository but a
/// SHA-256 one uses, where the store maps it to its own).
pub const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// The snapshot store of one workspace (see the module).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Snapshots {
    repo: Repo,
    /// The workspace root's path below the work tree's top: empty, or ending in `/`.
    prefix: String,
    /// The project's own index, copied to seed the private one.
    seed: Option<PathBuf>,
}

/// One recorded state of the files: a snapshot commit and its tree (hex ids).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The commit, in the run's chain.
    pub commit: String,
    /// Its tree: the files.
    pub tree: String,
}

/// What [`Snapshots::restore`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restored {
    /// What was there before, kept (marked [`Mark::Abandoned`]).
    pub kept: Snapshot,
    /// The files as put back (marked [`Mark::Restored`]).
    pub restored: Snapshot,
    /// The paths put back, sorted.
    pub paths: Vec<String>,
}

/// Why a snapshot was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mark {
    /// The files a run started with.
    Start,
    /// Before a step's attempt.
    Before,
    /// After a step succeeded.
    After,
    /// What was there before files were put back (a failed attempt's edits, …).
    Abandoned,
    /// Just after files were put back.
    Restored,
    /// Files kept as they were (changed while a run was stopped, a step paused mid-way).
    Kept,
    /// Taken by a rewind.
    Rewind,
    /// Taken by the undo of a rewind.
    Undo,
}

impl Mark {
    const ALL: [Self; 8] = [
        Self::Start,
        Self::Before,
        Self::After,
        Self::Abandoned,
        Self::Restored,
        Self::Kept,
        Self::Rewind,
        Self::Undo,
    ];

    /// Its name, as written in a snapshot's message and in JSON.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Before => "before",
            Self::After => "after",
            Self::Abandoned => "abandoned",
            Self::Restored => "restored",
            Self::Kept => "kept",
            Self::Rewind => "rewind",
            Self::Undo => "undo",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|mark| mark.name() == name)
    }
}

impl fmt::Display for Mark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A snapshot in a run's chain, with what its message says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The snapshot.
    pub snapshot: Snapshot,
    /// Why it was taken.
    pub mark: Mark,
    /// The step it was taken for, if any.
    pub step: Option<String>,
    /// A note for people.
    pub note: String,
}

/// A file that differs between two snapshots.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// Its path, relative to the workspace root, `/`-separated.
    pub path: String,
    /// How it differs.
    pub status: ChangeStatus,
    /// Lines added; `None` for a binary file.
    pub added: Option<u64>,
    /// Lines removed; `None` for a binary file.
    pub removed: Option<u64>,
}

/// How a file differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeStatus {
    /// It is new.
    Added,
    /// Its content or mode changed.
    Modified,
    /// It is gone.
    Deleted,
    /// It changed kind (a file became a symlink, …).
    TypeChanged,
}

impl fmt::Display for ChangeStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Added => "added",
            Self::Modified => "modified",
            Self::Deleted => "deleted",
            Self::TypeChanged => "type-changed",
        })
    }
}

impl Snapshots {
    /// Opens (creating the private repository if needed) the snapshot store of the
    /// workspace rooted at `root`.
    ///
    /// # Errors
    /// [`SnapshotError::NoGit`] when git cannot be run, [`SnapshotError::NotWritable`]
    /// naming the path when the store cannot be written, others when git fails.
    pub fn open(root: &Path) -> Result<Self, SnapshotError> {
        let root = fs::canonicalize(root).map_err(|error| SnapshotError::io(root, &error))?;
        let index = index_name(&root);
        let in_repository = match git::discover(&root)? {
            Some(found) => Some(Self {
                repo: Repo {
                    index: found.common_dir.join("atomic").join(&index),
                    git_dir: found.common_dir,
                    work_tree: found.top,
                    empty_tree: found.empty_tree,
                },
                prefix: found.prefix,
                seed: Some(found.git_dir.join("index")),
            }),
            None => None,
        };
        let snapshots = match in_repository {
            Some(snapshots) if !snapshots.root_is_ignored()? => snapshots,
            _ => Self::private(root, index)?,
        };
        snapshots.check_writable()?;
        Ok(snapshots)
    }

    /// The store of a workspace in no repository (or in one that ignores it, as a home
    /// directory kept in git with `*` in its `.gitignore` does): `.atomic/snapshots.git`.
    fn private(root: PathBuf, index: String) -> Result<Self, SnapshotError> {
        let git_dir = root.join(".atomic").join("snapshots.git");
        if !git_dir.join("HEAD").is_file() {
            create_private(&git_dir)?;
        }
        Ok(Self {
            repo: Repo {
                index: git_dir.join("atomic").join(index),
                git_dir,
                work_tree: root,
                empty_tree: EMPTY_TREE,
            },
            prefix: String::new(),
            seed: None,
        })
    }

    /// Whether the repository ignores the workspace's root, a directory below its top.
    fn root_is_ignored(&self) -> Result<bool, SnapshotError> {
        let Some(root) = self.prefix.strip_suffix('/') else {
            return Ok(false);
        };
        let args = ["check-ignore", "-q", "--", root];
        let output = self.repo.output(&args, None)?;
        match output.status.code() {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => Err(git::failed(&args, &output)),
        }
    }

    /// Where the objects go (the git dir), for messages.
    #[must_use]
    pub fn git_dir(&self) -> &Path {
        &self.repo.git_dir
    }

    /// Records the work tree now as a commit on run `run`'s chain (`refs/atomic/runs/<run>`),
    /// marked `mark` for `step` with `note`.
    ///
    /// # Errors
    /// [`SnapshotError::Conflict`] when the chain moved meanwhile; others when git fails.
    pub fn take(
        &self,
        run: &str,
        mark: Mark,
        step: Option<&str>,
        note: &str,
    ) -> Result<Snapshot, SnapshotError> {
        let chain = run_ref(run)?;
        // Held to the chain's move too: two steps of one run (parallel branches) recording
        // at once each find the other's snapshot as their parent.
        let _lock = Lock::take(&self.repo.index)?;
        let tree = self.record()?;
        let parent = self.resolve(&chain)?;
        self.commit(&chain, parent, tree, mark, step, note)
    }

    /// The run's newest entry, if it has snapshots.
    ///
    /// # Errors
    /// When git fails or the chain holds a commit atomic did not make.
    pub fn head(&self, run: &str) -> Result<Option<Entry>, SnapshotError> {
        Ok(self.entries(run, 1)?.into_iter().next())
    }

    /// The run's entries, newest first, at most `limit`.
    ///
    /// # Errors
    /// When git fails or the chain holds a commit atomic did not make.
    pub fn entries(&self, run: &str, limit: usize) -> Result<Vec<Entry>, SnapshotError> {
        let Some(head) = self.resolve(&run_ref(run)?)? else {
            return Ok(Vec::new());
        };
        if limit == 0 {
            return Ok(Vec::new());
        }
        let count = format!("-n{limit}");
        let args = [
            "log",
            "--no-show-signature",
            "--first-parent",
            "-z",
            "--format=%H%n%T%n%B",
            &count,
            &head,
            "--",
        ];
        let stdout = self.repo.run(&args, None)?;
        String::from_utf8_lossy(&stdout)
            .split('\0')
            .filter(|record| !record.is_empty())
            .map(|record| {
                parse_entry(record).ok_or_else(|| SnapshotError::Git {
                    command: format!("git {}", args.join(" ")),
                    message: format!("not a snapshot of atomic's: {record:?}"),
                })
            })
            .collect()
    }

    /// Makes the work tree equal `tree` (a tree or snapshot id), touching only files that
    /// differ: what is there first kept as a snapshot marked [`Mark::Abandoned`], files of
    /// `tree` written, files absent from it removed (`.atomic/` is untouched, and so are
    /// ignored files but one at a path `tree` holds a file at), then the result recorded as
    /// [`Mark::Restored`]; both for `step` with `note`, on the chain `run`.
    ///
    /// # Errors
    /// When git fails or a file cannot be written or removed.
    pub fn restore(
        &self,
        run: &str,
        tree: &str,
        step: Option<&str>,
        note: &str,
    ) -> Result<Restored, SnapshotError> {
        let chain = run_ref(run)?;
        let target = self.object(tree)?;
        let _lock = Lock::take(&self.repo.index)?;
        let now = self.record()?;
        let parent = self.resolve(&chain)?;
        let kept = self.commit(&chain, parent, now, Mark::Abandoned, step, note)?;
        let differences = self.differences(&kept.tree, target)?;
        if !differences.is_empty() {
            self.put_back(&differences)?;
        }
        // The index is the files as put back: no `add -A` needed to record them.
        let restored = self.write_tree()?;
        let parent = Some(kept.commit.clone());
        let restored = self.commit(&chain, parent, restored, Mark::Restored, step, note)?;
        let mut paths: Vec<String> = differences
            .iter()
            .map(|difference| String::from_utf8_lossy(&difference.path).into_owned())
            .collect();
        paths.sort();
        Ok(Restored {
            kept,
            restored,
            paths,
        })
    }

    /// The files that differ between two trees (or snapshots), sorted by path; renames are
    /// a deletion and an addition.
    ///
    /// # Errors
    /// When an id is not an object of the store, or git fails.
    pub fn changes(&self, from_tree: &str, to_tree: &str) -> Result<Vec<Change>, SnapshotError> {
        let (from, to) = (self.object(from_tree)?, self.object(to_tree)?);
        let args = [
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--raw",
            "--numstat",
            from,
            to,
        ];
        let stdout = self.repo.run(&args, None)?;
        let mut changes = Vec::new();
        let mut counts = std::collections::HashMap::new();
        let mut fields = stdout.split(|byte| *byte == 0);
        while let Some(field) = fields.next() {
            let field = String::from_utf8_lossy(field);
            if let Some(raw) = field.strip_prefix(':') {
                let path = String::from_utf8_lossy(fields.next().unwrap_or_default()).into_owned();
                let status = match raw.rsplit(' ').next() {
                    Some("A") => ChangeStatus::Added,
                    Some("D") => ChangeStatus::Deleted,
                    Some("T") => ChangeStatus::TypeChanged,
                    _ => ChangeStatus::Modified,
                };
                changes.push((path, status));
            } else if let Some((added, rest)) = field.split_once('\t')
                && let Some((removed, path)) = rest.split_once('\t')
            {
                counts.insert(path.to_owned(), (added.parse().ok(), removed.parse().ok()));
            }
        }
        let mut changes: Vec<Change> = changes
            .into_iter()
            .map(|(path, status)| {
                let (added, removed) = counts.get(&path).copied().unwrap_or_default();
                Change {
                    path,
                    status,
                    added,
                    removed,
                }
            })
            .collect();
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(changes)
    }

    /// The unified diff between two trees (or snapshots); `color` gives git's coloured
    /// output.
    ///
    /// # Errors
    /// When an id is not an object of the store, or git fails.
    pub fn patch(
        &self,
        from_tree: &str,
        to_tree: &str,
        color: bool,
    ) -> Result<String, SnapshotError> {
        let (from, to) = (self.object(from_tree)?, self.object(to_tree)?);
        let color = if color {
            "--color=always"
        } else {
            "--no-color"
        };
        let args = [
            "diff-tree",
            "-r",
            "-p",
            "--no-renames",
            "--no-ext-diff",
            color,
            from,
            to,
        ];
        let stdout = self.repo.run(&args, None)?;
        Ok(String::from_utf8_lossy(&stdout).into_owned())
    }

    /// The paths at which the work tree differs from `tree` (or a snapshot) now, sorted;
    /// takes no snapshot.
    ///
    /// # Errors
    /// When git fails.
    pub fn changed_since(&self, tree: &str) -> Result<Vec<String>, SnapshotError> {
        let then = self.object(tree)?;
        let now = {
            let _lock = Lock::take(&self.repo.index)?;
            self.record()?
        };
        let mut paths: Vec<String> = self
            .differences(then, &now)?
            .iter()
            .map(|difference| String::from_utf8_lossy(&difference.path).into_owned())
            .collect();
        paths.sort();
        Ok(paths)
    }

    /// The tree of snapshot `commit`.
    ///
    /// # Errors
    /// When it is not a commit of the store.
    pub fn tree_of(&self, commit: &str) -> Result<String, SnapshotError> {
        let tree = format!("{}^{{tree}}", self.object(commit)?);
        self.repo
            .id(&["rev-parse", "--verify", "--quiet", &tree], None)
    }

    /// Points `refs/atomic/<name>` at `commit` (`rewind/<run>` keeps what a rewind
    /// replaced).
    ///
    /// # Errors
    /// [`SnapshotError::BadName`], or when git fails (`commit` is not in the store).
    pub fn set_ref(&self, name: &str, commit: &str) -> Result<(), SnapshotError> {
        let reference = atomic_ref(name)?;
        let commit = self.object(commit)?;
        self.repo
            .run(&["update-ref", &reference, commit], None)
            .map(drop)
    }

    /// Where `refs/atomic/<name>` points, if it exists.
    ///
    /// # Errors
    /// [`SnapshotError::BadName`], or when git fails.
    pub fn get_ref(&self, name: &str) -> Result<Option<String>, SnapshotError> {
        self.resolve(&atomic_ref(name)?)
    }

    /// Deletes `refs/atomic/<name>` (nothing when it does not exist).
    ///
    /// # Errors
    /// [`SnapshotError::BadName`], or when git fails.
    pub fn delete_ref(&self, name: &str) -> Result<(), SnapshotError> {
        let reference = atomic_ref(name)?;
        self.repo
            .run(&["update-ref", "-d", &reference], None)
            .map(drop)
    }

    /// Packs the loose objects snapshots leave once there are [`PACK_AFTER`] or more: each
    /// is a file of its own (a block of the file system at the least, 4 KB on most), and a
    /// step's commits and trees are a few of them, where packed they share a file and
    /// their deltas. Only loose objects are packed (`repack -d`, not `-a`), so the cost
    /// follows what runs added, not the repository's size. Returns whether it packed.
    ///
    /// # Errors
    /// When git fails.
    pub fn pack(&self) -> Result<bool, SnapshotError> {
        let counted = self.repo.run(&["count-objects"], None)?;
        let loose = String::from_utf8_lossy(&counted)
            .split_whitespace()
            .next()
            .and_then(|count| count.parse::<u64>().ok())
            .unwrap_or(0);
        if loose < PACK_AFTER {
            return Ok(false);
        }
        self.repo
            .run(&["repack", "-d", "-q", "--no-write-bitmap-index"], None)?;
        Ok(true)
    }

    /// Deletes run `run`'s refs — its chain and every `refs/atomic/<kind>/<run>` (and below
    /// it) — so git may collect their objects; returns how many went.
    ///
    /// # Errors
    /// [`SnapshotError::BadName`], or when git fails.
    pub fn forget_run(&self, run: &str) -> Result<usize, SnapshotError> {
        if run.contains('/') {
            return Err(SnapshotError::BadName(run.to_owned()));
        }
        run_ref(run)?;
        let listed = self.repo.run(
            &["for-each-ref", "--format=%(refname)", "refs/atomic/"],
            None,
        )?;
        let listed = String::from_utf8_lossy(&listed);
        let gone: Vec<&str> = listed
            .lines()
            .filter(|reference| {
                let Some(rest) = reference.strip_prefix("refs/atomic/") else {
                    return false;
                };
                rest.split_once('/').is_some_and(|(_, name)| {
                    name == run
                        || name
                            .strip_prefix(run)
                            .is_some_and(|below| below.starts_with('/'))
                })
            })
            .collect();
        if !gone.is_empty() {
            let commands: String = gone
                .iter()
                .map(|reference| format!("delete {reference}\n"))
                .collect();
            self.repo
                .run(&["update-ref", "--stdin"], Some(commands.as_bytes()))?;
        }
        Ok(gone.len())
    }

    /// Adds a git worktree at `path` (which must not exist, or be empty) checked out,
    /// detached, at snapshot `commit`: the workspace's files as they were then.
    ///
    /// # Errors
    /// When git fails.
    pub fn add_worktree(&self, path: &Path, commit: &str) -> Result<(), SnapshotError> {
        let commit = self.object(commit)?;
        let _lock = self.worktrees_lock()?;
        self.repo.add_worktree(path, commit)
    }

    /// Held while worktrees are added, removed or pruned: a `prune` beside an `add` in
    /// flight takes the new worktree's record for a stale one (the branches of a parallel
    /// start theirs at once, and other atomic processes may share the repository).
    pub(super) fn worktrees_lock(&self) -> Result<Lock, SnapshotError> {
        let ours = self.repo.git_dir.join("atomic");
        fs::create_dir_all(&ours).map_err(|error| SnapshotError::io(&ours, &error))?;
        Lock::take(&ours.join("worktrees"))
    }

    /// Checks the store can be written: its `atomic/` directory and its objects.
    fn check_writable(&self) -> Result<(), SnapshotError> {
        let ours = self.repo.git_dir.join("atomic");
        fs::create_dir_all(&ours).map_err(|error| SnapshotError::io(&ours, &error))?;
        let objects = self.repo.git_dir.join("objects");
        let probe = objects.join(format!("atomic-probe-{}", std::process::id()));
        fs::write(&probe, b"").map_err(|error| SnapshotError::NotWritable {
            path: objects,
            reason: error.to_string(),
        })?;
        let _ = fs::remove_file(&probe);
        Ok(())
    }

    /// Writes the work tree's files into the store and returns their tree (the lock held).
    fn record(&self) -> Result<String, SnapshotError> {
        if !self.repo.index.exists() {
            self.seed()?;
        }
        let scope = match self.prefix.as_str() {
            "" => ".".to_owned(),
            prefix => pathspec(prefix, ""),
        };
        let private = pathspec(&format!("{}.atomic", self.prefix), "exclude");
        // The half-written side of a file the run replaces atomically (`<name>.atomic-tmp`,
        // at any depth: a pathspec's `*` crosses `/`).
        let half_written = ":(exclude)*.atomic-tmp";
        // `--ignore-errors`: a file git cannot read is skipped (status 1), not the snapshot.
        let add = [
            "add",
            "-A",
            "--ignore-errors",
            "--",
            &scope,
            &private,
            half_written,
        ];
        // A file that goes between git's listing and its reading (a temporary file renamed
        // over another, as the run's own task files are written) fails the whole `add`:
        // a second look finds the tree as it settled.
        let mut tries = 0;
        loop {
            let output = self.repo.output(&add, None)?;
            let vanished = String::from_utf8_lossy(&output.stderr).contains("unable to stat");
            match output.status.code() {
                Some(0 | 1) => break,
                _ if vanished && tries < VANISHED_TRIES => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                _ => return Err(git::failed(&add, &output)),
            }
        }
        self.write_tree()
    }

    /// The tree of the workspace's part of the private index.
    fn write_tree(&self) -> Result<String, SnapshotError> {
        if self.prefix.is_empty() {
            return self.repo.id(&["write-tree"], None);
        }
        let below = format!("--prefix={}", self.prefix);
        let output = self.repo.output(&["write-tree", &below], None)?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
        } else if String::from_utf8_lossy(&output.stderr).contains("not found") {
            // Nothing recorded below the root.
            Ok(self.repo.empty_tree.to_owned())
        } else {
            Err(git::failed(&["write-tree", &below], &output))
        }
    }

    /// Seeds the private index with a copy of the project's (with its modification time, so
    /// git's racy-entry check still holds), unless it has entries a plain `add -A` would
    /// misread (assumed unchanged, skip-worktree, unmerged): then the first snapshot
    /// starts from an empty index. Entries of the root's `.atomic/` are dropped.
    fn seed(&self) -> Result<(), SnapshotError> {
        let Some(theirs) = &self.seed else {
            return Ok(());
        };
        let index = &self.repo.index;
        let mut copy = index.as_os_str().to_owned();
        copy.push(".seed");
        let copy = PathBuf::from(copy);
        let copied = fs::copy(theirs, &copy)
            .and_then(|_| fs::metadata(theirs)?.modified())
            .and_then(|modified| {
                fs::File::options()
                    .write(true)
                    .open(&copy)?
                    .set_modified(modified)
            })
            .and_then(|()| fs::rename(&copy, index));
        if copied.is_err() {
            // No index yet (a new repository) or not readable: start from none.
            let _ = fs::remove_file(&copy);
            return Ok(());
        }
        let listed = self.repo.run(&["ls-files", "-v", "-z"], None)?;
        let entries = || {
            listed
                .split(|byte| *byte == 0)
                .filter(|entry| !entry.is_empty())
        };
        if !entries().all(|entry| entry.starts_with(b"H ")) {
            return fs::remove_file(index).map_err(|error| SnapshotError::io(index, &error));
        }
        let private = format!("H {}.atomic/", self.prefix);
        if entries().any(|entry| entry.starts_with(private.as_bytes())) {
            let path = pathspec(&format!("{}.atomic", self.prefix), "");
            let args = [
                "rm",
                "--cached",
                "-r",
                "-q",
                "--ignore-unmatch",
                "--",
                &path,
            ];
            self.repo.run(&args, None)?;
        }
        Ok(())
    }

    /// `id` checked to be an object id, the SHA-1 empty tree mapped to the store's.
    fn object<'a>(&'a self, id: &'a str) -> Result<&'a str, SnapshotError> {
        if id == EMPTY_TREE {
            return Ok(self.repo.empty_tree);
        }
        if id.len() < 4 || !id.bytes().all(|byte| byte.is_ascii_hexdigit()) {
            return Err(SnapshotError::BadId(id.to_owned()));
        }
        Ok(id)
    }
}

/// `path` (from the work tree's top) as a pathspec with `magic` (none, or `exclude`):
/// `literal` only when it has characters git would read as a pattern or as magic, since
/// any magic but `exclude` takes git off its fast path (measured: 16 → 24 ms per `add -A`
/// of 10,000 files).
fn pathspec(path: &str, magic: &str) -> String {
    let literal = path.starts_with(':') || path.contains(['*', '?', '[', '\\']);
    match (magic, literal) {
        ("", false) => path.to_owned(),
        ("", true) => format!(":(literal){path}"),
        (magic, false) => format!(":({magic}){path}"),
        (magic, true) => format!(":({magic},literal){path}"),
    }
}

/// The file name of the private index of the workspace at `root`: a stable hash (64-bit
/// FNV-1a) of its path.
fn index_name(root: &Path) -> String {
    let hash = root
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
        });
    format!("index-{hash:016x}")
}

#[cfg(test)]
mod tests;

/// Creates the private repository `git_dir`: made beside it under a name of its own and
/// renamed into place, so two atomic processes starting their first runs at once never
/// see each other's half-made repository (git locks its config while it writes it).
fn create_private(git_dir: &Path) -> Result<(), SnapshotError> {
    let parent = git_dir.parent().unwrap_or(git_dir);
    fs::create_dir_all(parent).map_err(|error| SnapshotError::io(parent, &error))?;
    let making = parent.join(format!(
        ".snapshots.git.{}-{:08x}",
        std::process::id(),
        rand::random::<u32>()
    ));
    git::init(&making)?;
    match fs::rename(&making, git_dir) {
        Ok(()) => Ok(()),
        // Another process put its repository there first: that one is as good.
        Err(_) if git_dir.join("HEAD").is_file() => {
            let _ = fs::remove_dir_all(&making);
            Ok(())
        }
        Err(error) => {
            let _ = fs::remove_dir_all(&making);
            Err(SnapshotError::io(git_dir, &error))
        }
    }
}
