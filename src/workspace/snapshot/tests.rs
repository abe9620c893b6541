//! The store against real git in temporary directories. Without git on PATH each test
//! says so once and passes.

#![cfg(unix)]

use std::collections::BTreeMap;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::process::Command;
use std::sync::Arc;

use super::*;

/// Whether git can be run; says loudly when it cannot.
#[expect(clippy::print_stderr, reason = "a skipped test says why")]
fn has_git() -> bool {
    let found = Command::new("git").arg("--version").output().is_ok();
    if !found {
        eprintln!("SKIPPED: `git` is not on PATH, so the workspace snapshot tests do not run");
    }
    found
}

/// git as a person runs it in `dir`: stdout, asserting it succeeded.
fn sh(dir: &Path, args: &[&str]) -> String {
    let mut command = Command::new("git");
    for (name, _) in std::env::vars_os() {
        if name.as_encoded_bytes().starts_with(b"GIT_") {
            command.env_remove(name);
        }
    }
    let output = command
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "someone")
        .env("GIT_AUTHOR_EMAIL", "someone@example.com")
        .env("GIT_COMMITTER_NAME", "someone")
        .env("GIT_COMMITTER_EMAIL", "someone@example.com")
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn write(root: &Path, path: &str, content: &[u8]) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().expect("below the root")).expect("create the directory");
    fs::write(path, content).expect("write the file");
}

fn chmod(root: &Path, path: &str, mode: u32) {
    fs::set_permissions(root.join(path), fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A project with a commit: files, a `.gitignore`, an excluded file.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    sh(root, &["init", "-q", "-b", "main"]);
    write(root, ".gitignore", b"target/\n*.log\n");
    write(root, "a.txt", b"one\ntwo\nthree\n");
    write(root, "src/lib.rs", b"fn main() {}\n");
    write(root, "src/util.rs", b"// util\n");
    write(root, ".git/info/exclude", b"secret.txt\n");
    sh(root, &["add", "-A"]);
    sh(root, &["commit", "-q", "-m", "first"]);
    dir
}

/// The paths of a tree.
fn listed(root: &Path, tree: &str) -> Vec<String> {
    let snapshots = Snapshots::open(root).expect("opens");
    let mut command = Command::new("git");
    let output = command
        .env("GIT_DIR", snapshots.git_dir())
        .args(["ls-tree", "-r", "--name-only", tree])
        .output()
        .expect("git runs");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// What is observable of a project's own repository: HEAD, status, index bytes, refs other
/// than atomic's, stash, reflogs.
fn observed(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut seen = vec![
        (
            "HEAD".to_owned(),
            fs::read(root.join(".git/HEAD")).expect("HEAD"),
        ),
        (
            "status".to_owned(),
            sh(
                root,
                &["--no-optional-locks", "status", "--porcelain", "--ignored"],
            )
            .into_bytes(),
        ),
        (
            "index".to_owned(),
            fs::read(root.join(".git/index")).expect("index"),
        ),
        (
            "refs".to_owned(),
            sh(
                root,
                &[
                    "for-each-ref",
                    "--exclude=refs/atomic/",
                    "--format=%(refname) %(objectname)",
                ],
            )
            .into_bytes(),
        ),
        (
            "stash".to_owned(),
            sh(root, &["stash", "list"]).into_bytes(),
        ),
    ];
    let mut stack = vec![root.join(".git/logs")];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read logs").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                seen.push((path.display().to_string(), fs::read(&path).expect("a log")));
            }
        }
    }
    seen.sort();
    seen
}

/// Every file below `root` but `.git` and `.atomic`: its content (a symlink's target) and
/// mode.
fn files(root: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    let mut found = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read the directory").flatten() {
            let path = entry.path();
            let name = path
                .strip_prefix(root)
                .expect("below")
                .display()
                .to_string();
            if name == ".git" || name == ".atomic" {
                continue;
            }
            let meta = fs::symlink_metadata(&path).expect("stat");
            if meta.is_dir() {
                stack.push(path);
            } else if meta.file_type().is_symlink() {
                let target = fs::read_link(&path).expect("a link");
                found.insert(
                    name,
                    (target.into_os_string().into_encoded_bytes(), 0o120_000),
                );
            } else {
                let content = fs::read(&path).expect("a file");
                found.insert(name, (content, meta.permissions().mode() & 0o111));
            }
        }
    }
    found
}

#[test]
fn in_a_repository_the_projects_head_index_refs_stash_and_reflogs_stay_as_they_were() {
    if !has_git() {
        return;
    }
    let dir = project();
    let root = dir.path();
    write(root, "a.txt", b"stashed\n");
    sh(root, &["stash", "-q"]);
    write(root, "a.txt", b"one\nstaged\n");
    sh(root, &["add", "a.txt"]);
    write(root, "a.txt", b"one\nstaged\nand edited\n");
    write(root, "new.txt", b"untracked\n");
    fs::remove_file(root.join("src/lib.rs")).expect("delete");
    write(root, "target/out.bin", b"ignored");
    write(root, "debug.log", b"ignored");
    write(root, "secret.txt", b"excluded");
    write(root, ".atomic/state.db", b"atomic's own");
    let before = observed(root);

    let snapshots = Snapshots::open(root).expect("opens");
    assert_eq!(
        snapshots.git_dir(),
        fs::canonicalize(root.join(".git")).expect("exists")
    );
    let start = snapshots
        .take("r-20261128-0901-ab12cd", Mark::Start, None, "the start")
        .expect("a snapshot");
    write(root, "new.txt", b"changed\n");
    let next = snapshots
        .take("r-20261128-0901-ab12cd", Mark::Before, Some("ship"), "")
        .expect("another");

    assert_eq!(observed(root), before);
    assert_eq!(
        listed(root, &start.tree),
        [".gitignore", "a.txt", "new.txt", "src/util.rs"]
    );
    let read = |spec: &str| sh(root, &["cat-file", "-p", spec]);
    assert_eq!(
        read(&format!("{}:a.txt", start.tree)),
        "one\nstaged\nand edited\n"
    );
    assert_eq!(read(&format!("{}:new.txt", next.tree)), "changed\n");
    assert_eq!(
        sh(
            root,
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "refs/atomic/"
            ]
        ),
        format!("refs/atomic/runs/r-20261128-0901-ab12cd {}\n", next.commit)
    );
    let parent = sh(root, &["rev-parse", &format!("{}^", next.commit)]);
    assert_eq!(parent.trim(), start.commit);
}

#[test]
fn a_workspace_below_the_top_of_a_repository_records_its_own_files_relative_to_it() {
    if !has_git() {
        return;
    }
    let dir = project();
    let top = dir.path();
    write(top, "pkg/x.txt", b"x\n");
    write(top, "pkg/deep/y.txt", b"y\n");
    write(top, "pkg/trace.log", b"ignored by the top's .gitignore\n");
    write(top, "pkg/.atomic/state.db", b"atomic's own\n");
    write(top, "pkg/.atomic/config.kdl", b"committed\n");
    sh(top, &["add", "-A"]);
    sh(top, &["add", "-f", "pkg/.atomic/config.kdl"]);
    sh(top, &["commit", "-q", "-m", "pkg"]);
    write(top, "elsewhere.txt", b"outside the workspace\n");
    let root = top.join("pkg");

    let snapshots = Snapshots::open(&root).expect("opens");
    let first = snapshots
        .take("r-1", Mark::Start, None, "")
        .expect("a snapshot");
    assert_eq!(listed(&root, &first.tree), ["deep/y.txt", "x.txt"]);

    write(&root, "x.txt", b"changed\n");
    fs::remove_file(root.join("deep/y.txt")).expect("delete");
    assert_eq!(
        snapshots.changed_since(&first.tree).expect("compares"),
        ["deep/y.txt", "x.txt"]
    );
    let paths = snapshots
        .restore("r-1", &first.tree, None, "put back")
        .expect("restores")
        .paths;
    assert_eq!(paths, ["deep/y.txt", "x.txt"]);
    assert_eq!(fs::read(root.join("x.txt")).expect("back"), b"x\n");
    assert_eq!(fs::read(root.join("deep/y.txt")).expect("back"), b"y\n");
    assert!(root.join(".atomic/state.db").exists());
    assert!(
        snapshots
            .changed_since(&first.tree)
            .expect("compares")
            .is_empty()
    );
}

#[test]
fn without_a_repository_a_private_one_is_made_in_dot_atomic() {
    if !has_git() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    write(root, "notes.md", b"# notes\n");
    write(root, "build/out.o", b"ignored");
    write(root, ".gitignore", b"build/\n");
    write(root, ".atomic/config.kdl", b"never recorded\n");

    let snapshots = Snapshots::open(root).expect("opens");
    let store = fs::canonicalize(root)
        .expect("exists")
        .join(".atomic/snapshots.git");
    assert_eq!(snapshots.git_dir(), store);
    assert!(store.join("HEAD").is_file());
    let snapshot = snapshots
        .take("r-1", Mark::Start, None, "")
        .expect("a snapshot");
    assert_eq!(listed(root, &snapshot.tree), [".gitignore", "notes.md"]);
    assert!(
        !root.join(".git").exists(),
        "the workspace is not made a repository"
    );

    let again = Snapshots::open(root).expect("opens the same store");
    assert_eq!(again, snapshots);
    let head = again.head("r-1").expect("reads").expect("a head");
    assert_eq!(head.snapshot, snapshot);
}

/// Changes files of every kind, restores the first snapshot, checks the tree is back.
fn restores_exactly(root: &Path) {
    write(root, ".gitignore", b"*.log\n");
    write(root, "a.txt", b"alpha\n");
    write(root, "one/b.txt", b"beta\n");
    write(root, "two/sub/c.txt", b"gamma\n");
    write(root, "run.sh", b"#!/bin/sh\necho hi\n");
    chmod(root, "run.sh", 0o755);
    symlink("a.txt", root.join("link")).expect("a symlink");
    write(root, "kept.log", b"ignored, before\n");
    let snapshots = Snapshots::open(root).expect("opens");
    let start = snapshots
        .take("r-1", Mark::Start, None, "")
        .expect("a snapshot");
    let expected = files(root);

    write(root, "a.txt", b"alpha, edited\n");
    fs::remove_file(root.join("two/sub/c.txt")).expect("delete");
    write(root, "three/deep/new.txt", b"new\n");
    chmod(root, "run.sh", 0o644);
    fs::remove_file(root.join("link")).expect("unlink");
    write(root, "link", b"now a file\n");
    write(root, "kept.log", b"ignored, after\n");

    let Restored { kept, paths, .. } = snapshots
        .restore("r-1", &start.tree, Some("fix"), "put back after it failed")
        .expect("restores");
    assert_eq!(
        paths,
        [
            "a.txt",
            "link",
            "run.sh",
            "three/deep/new.txt",
            "two/sub/c.txt"
        ]
    );
    let mut now = files(root);
    assert_eq!(
        now.remove("kept.log").expect("ignored files stay").0,
        b"ignored, after\n"
    );
    let mut expected = expected;
    expected.remove("kept.log");
    assert_eq!(now, expected);
    assert!(!root.join("three").exists(), "emptied directories go");

    let kept_files = listed(root, &kept.tree);
    assert!(kept_files.contains(&"three/deep/new.txt".to_owned()));
    let at = |spec: String| {
        let output = Command::new("git")
            .env("GIT_DIR", snapshots.git_dir())
            .args(["cat-file", "-p", &spec])
            .output()
            .expect("git runs");
        output.stdout
    };
    assert_eq!(at(format!("{}:a.txt", kept.tree)), b"alpha, edited\n");
    let marks: Vec<(Mark, Option<String>)> = snapshots
        .entries("r-1", 10)
        .expect("reads")
        .into_iter()
        .map(|entry| (entry.mark, entry.step))
        .collect();
    assert_eq!(
        marks,
        [
            (Mark::Restored, Some("fix".to_owned())),
            (Mark::Abandoned, Some("fix".to_owned())),
            (Mark::Start, None)
        ]
    );
    let head = snapshots.head("r-1").expect("reads").expect("a head");
    assert_eq!(head.snapshot.tree, start.tree);
    assert!(
        snapshots
            .changed_since(&start.tree)
            .expect("compares")
            .is_empty()
    );
}

#[test]
fn restore_puts_back_the_files_of_a_snapshot_in_a_repository() {
    if !has_git() {
        return;
    }
    let dir = project();
    // The work tree changes, so does its status; nothing else of the repository does.
    let unchanged = |root: &Path| {
        let mut seen = observed(root);
        seen.retain(|(what, _)| what != "status");
        seen
    };
    let before = unchanged(dir.path());
    restores_exactly(dir.path());
    assert_eq!(unchanged(dir.path()), before);
}

#[test]
fn restore_puts_back_the_files_of_a_snapshot_without_a_repository() {
    if !has_git() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    restores_exactly(dir.path());
}

#[test]
fn changes_patch_and_changed_since_report_known_edits() {
    if !has_git() {
        return;
    }
    let dir = project();
    let root = dir.path();
    let snapshots = Snapshots::open(root).expect("opens");
    let before = snapshots
        .take("r-1", Mark::Before, Some("edit"), "")
        .expect("a snapshot");
    write(root, "a.txt", b"one\n2\nthree\nfour\n");
    write(root, "blob.bin", &[0, 1, 2, 0, 255]);
    fs::remove_file(root.join("src/util.rs")).expect("delete");
    let after = snapshots
        .take("r-1", Mark::After, Some("edit"), "")
        .expect("a snapshot");

    let changes = snapshots
        .changes(&before.tree, &after.tree)
        .expect("compares");
    let change = |path: &str, status, added, removed| Change {
        path: path.to_owned(),
        status,
        added,
        removed,
    };
    assert_eq!(
        changes,
        [
            change("a.txt", ChangeStatus::Modified, Some(2), Some(1)),
            change("blob.bin", ChangeStatus::Added, None, None),
            change("src/util.rs", ChangeStatus::Deleted, Some(0), Some(1)),
        ]
    );
    assert_eq!(
        snapshots
            .changes(&before.commit, &after.commit)
            .expect("commits too"),
        changes
    );
    let everything = snapshots
        .changes(EMPTY_TREE, &after.tree)
        .expect("from nothing");
    assert!(
        everything
            .iter()
            .all(|change| change.status == ChangeStatus::Added)
    );
    assert_eq!(everything.len(), 4);

    let patch = snapshots
        .patch(&before.tree, &after.tree, false)
        .expect("a patch");
    assert!(patch.contains("-two\n+2\n"), "{patch}");
    assert!(patch.contains("+four\n"), "{patch}");
    assert!(
        patch.contains("Binary files /dev/null and b/blob.bin differ"),
        "{patch}"
    );
    assert!(!patch.contains('\u{1b}'));
    let coloured = snapshots
        .patch(&before.tree, &after.tree, true)
        .expect("a patch");
    assert!(coloured.contains('\u{1b}'));

    assert!(
        snapshots
            .changed_since(&after.tree)
            .expect("compares")
            .is_empty()
    );
    write(root, "a.txt", b"again\n");
    write(root, "fresh.txt", b"new\n");
    assert_eq!(
        snapshots.changed_since(&after.tree).expect("compares"),
        ["a.txt", "fresh.txt"]
    );
    assert_eq!(
        snapshots.entries("r-1", 10).expect("reads").len(),
        2,
        "no snapshot taken"
    );
    assert!(matches!(
        snapshots.changes("HEAD", &after.tree),
        Err(SnapshotError::BadId(_))
    ));
}

#[test]
fn entries_read_back_marks_steps_and_notes_and_refs_come_and_go() {
    if !has_git() {
        return;
    }
    let dir = project();
    let root = dir.path();
    let snapshots = Snapshots::open(root).expect("opens");
    assert_eq!(snapshots.head("r-1").expect("reads"), None);
    assert!(snapshots.entries("r-1", 5).expect("reads").is_empty());
    let start = snapshots
        .take("r-1", Mark::Start, None, "")
        .expect("a snapshot");
    let before = snapshots
        .take("r-1", Mark::Before, Some("review code"), "before attempt 1")
        .expect("a snapshot");
    let kept = snapshots
        .take("r-1", Mark::Kept, None, "line one\n\nline three\n")
        .expect("a snapshot");
    snapshots
        .take("r-2", Mark::Start, None, "")
        .expect("another run");

    let entries = snapshots.entries("r-1", 10).expect("reads");
    let entry = |snapshot: &Snapshot, mark, step: Option<&str>, note: &str| Entry {
        snapshot: snapshot.clone(),
        mark,
        step: step.map(str::to_owned),
        note: note.to_owned(),
    };
    assert_eq!(
        entries,
        [
            entry(&kept, Mark::Kept, None, "line one\n\nline three"),
            entry(
                &before,
                Mark::Before,
                Some("review code"),
                "before attempt 1"
            ),
            entry(&start, Mark::Start, None, ""),
        ]
    );
    assert_eq!(snapshots.entries("r-1", 2).expect("reads").len(), 2);
    assert_eq!(
        snapshots.head("r-1").expect("reads"),
        entries.first().cloned()
    );
    assert_eq!(
        snapshots.tree_of(&before.commit).expect("a commit"),
        before.tree
    );

    assert_eq!(snapshots.get_ref("rewind/r-1").expect("reads"), None);
    snapshots
        .set_ref("rewind/r-1", &before.commit)
        .expect("sets");
    snapshots
        .set_ref("rewind/r-10", &before.commit)
        .expect("sets");
    assert_eq!(
        snapshots.get_ref("rewind/r-1").expect("reads"),
        Some(before.commit.clone())
    );
    snapshots
        .set_ref("fork/r-1/x", &start.commit)
        .expect("sets");
    assert_eq!(snapshots.forget_run("r-1").expect("forgets"), 3);
    assert_eq!(snapshots.head("r-1").expect("reads"), None);
    assert_eq!(snapshots.get_ref("rewind/r-1").expect("reads"), None);
    assert!(snapshots.get_ref("rewind/r-10").expect("reads").is_some());
    assert!(snapshots.head("r-2").expect("reads").is_some());
    snapshots.delete_ref("rewind/r-10").expect("deletes");
    assert_eq!(snapshots.get_ref("rewind/r-10").expect("reads"), None);
    snapshots
        .delete_ref("rewind/r-10")
        .expect("deleting nothing is fine");

    for bad in [
        "",
        "../x",
        "a b",
        "runs/../../HEAD",
        "-x",
        "a//b",
        "x.lock",
        "a/.b",
    ] {
        assert!(
            matches!(snapshots.get_ref(bad), Err(SnapshotError::BadName(_))),
            "{bad:?}"
        );
    }
    assert!(matches!(
        snapshots.take("r 1", Mark::Start, None, ""),
        Err(SnapshotError::BadName(_))
    ));
}

#[test]
fn a_worktree_holds_the_files_of_a_snapshot() {
    if !has_git() {
        return;
    }
    let dir = project();
    let root = dir.path();
    write(root, "a.txt", b"as the snapshot has it\n");
    let snapshots = Snapshots::open(root).expect("opens");
    let snapshot = snapshots
        .take("r-1", Mark::After, None, "")
        .expect("a snapshot");
    let other = tempfile::tempdir().expect("a temporary directory");
    let path = other.path().join("fork");
    snapshots
        .add_worktree(&path, &snapshot.commit)
        .expect("adds");
    assert_eq!(
        fs::read(path.join("a.txt")).expect("checked out"),
        b"as the snapshot has it\n"
    );
    assert_eq!(
        sh(root, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "main"
    );
}

#[test]
fn a_root_that_cannot_be_written_is_reported_with_its_path() {
    if !has_git() {
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path().join("locked");
    write(&root, "file.txt", b"x");
    chmod(dir.path(), "locked", 0o555);
    if fs::write(root.join("probe"), b"").is_ok() {
        // Running as root: permissions do not bind.
        chmod(dir.path(), "locked", 0o755);
        return;
    }
    let error = Snapshots::open(&root).expect_err("cannot write");
    chmod(dir.path(), "locked", 0o755);
    match &error {
        SnapshotError::NotWritable { path, .. } => assert!(path.starts_with(&root), "{path:?}"),
        other => panic!("expected NotWritable, got {other:?}"),
    }
    assert!(error.to_string().contains("locked/.atomic"), "{error}");
}

#[test]
fn two_threads_recording_one_workspace_for_different_runs_both_succeed() {
    if !has_git() {
        return;
    }
    let dir = project();
    let root = dir.path().to_path_buf();
    let shared = Arc::new(Snapshots::open(&root).expect("opens"));
    let workers: Vec<_> = ["r-a", "r-b"]
        .into_iter()
        .map(|run| {
            let shared = Arc::clone(&shared);
            let root = root.clone();
            std::thread::spawn(move || {
                // One thread shares the store, the other opens its own, as a second process would.
                let own;
                let snapshots = if run == "r-a" {
                    &*shared
                } else {
                    own = Snapshots::open(&root).expect("opens");
                    &own
                };
                for n in 0..8 {
                    write(&root, &format!("{run}-{n}.txt"), b"x");
                    snapshots
                        .take(run, Mark::After, None, "")
                        .expect("a snapshot");
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("no panic");
    }
    assert_eq!(shared.entries("r-a", 20).expect("reads").len(), 8);
    assert_eq!(shared.entries("r-b", 20).expect("reads").len(), 8);
    let last = shared
        .take("r-a", Mark::After, None, "")
        .expect("a snapshot");
    assert_eq!(listed(&root, &last.tree).len(), 4 + 16);
}

#[test]
fn a_workspace_its_repository_ignores_is_kept_in_a_private_store() {
    if !has_git() {
        return;
    }
    // A home directory kept in git, ignoring everything it does not name.
    let home = tempfile::tempdir().expect("a temporary directory");
    sh(home.path(), &["init", "-q"]);
    write(home.path(), ".gitignore", b"*\n!.gitignore\n");
    let root = home.path().join("projects/app");
    write(&root, "main.rs", b"fn main() {}\n");
    let snapshots = Snapshots::open(&root).expect("opens");
    let store = fs::canonicalize(&root)
        .expect("exists")
        .join(".atomic/snapshots.git");
    assert_eq!(snapshots.git_dir(), store);
    let snapshot = snapshots
        .take("r-1", Mark::Start, None, "")
        .expect("a snapshot");
    assert_eq!(listed(&root, &snapshot.tree), ["main.rs"]);
}

#[test]
fn a_workspace_whose_name_looks_like_a_pattern_is_recorded_as_named() {
    if !has_git() {
        return;
    }
    let dir = project();
    let root = dir.path().join("odd [1]*");
    write(&root, "a.txt", b"a\n");
    write(
        dir.path(),
        "odd 1x/b.txt",
        b"a sibling the pattern would match\n",
    );
    let snapshots = Snapshots::open(&root).expect("opens");
    let snapshot = snapshots
        .take("r-1", Mark::Start, None, "")
        .expect("a snapshot");
    assert_eq!(listed(&root, &snapshot.tree), ["a.txt"]);
    write(&root, "a.txt", b"changed\n");
    assert_eq!(
        snapshots.changed_since(&snapshot.tree).expect("compares"),
        ["a.txt"]
    );
    let staged = sh(
        dir.path(),
        &["--no-optional-locks", "status", "--porcelain"],
    );
    assert!(
        staged.contains("?? \"odd 1x/\""),
        "the project's index is untouched: {staged}"
    );
}
