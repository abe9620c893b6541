//! Workspace snapshots (issue 25): the git CLI recording a 10,000-file tree (100 directories
//! of 100 files of 1–4 KB), in a project's repository whose commit holds them and in a
//! directory with none (the private store in `.atomic/snapshots.git`):
//!
//! - the first snapshot (in a repository: the private index seeded from the project's; with
//!   none: cold, every file hashed and written),
//! - a snapshot of an unchanged tree (target ≤ 50 ms),
//! - a snapshot after changing one small file, and one 1 MB file,
//! - `changed_since` on an unchanged tree,
//! - a restore of 10 changed files.
//!
//! `cargo bench --bench snapshot`. Prints medians of 15 runs.

#![allow(clippy::print_stdout, reason = "a benchmark reports its figures")]

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use atomic::workspace::snapshot::{Mark, Snapshots};

const RUNS: usize = 15;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// `runs` timings of `work`, each after `prepare` (untimed).
fn time(runs: usize, mut prepare: impl FnMut(usize), mut work: impl FnMut()) -> Duration {
    let samples = (0..runs)
        .map(|n| {
            prepare(n);
            let started = Instant::now();
            work();
            started.elapsed()
        })
        .collect();
    median(samples)
}

/// Content of `size` bytes, different for each `seed`.
fn content(seed: usize, size: usize) -> Vec<u8> {
    let line = format!("line of file {seed}: the quick brown fox jumps over the lazy dog\n");
    line.bytes().cycle().take(size).collect()
}

/// 100 directories of 100 files of 1–4 KB.
fn tree(root: &Path) {
    for dir in 0..100 {
        let dir_path = root.join(format!("d{dir:03}"));
        fs::create_dir_all(&dir_path).expect("create a directory");
        for file in 0..100 {
            let seed = dir * 100 + file;
            fs::write(
                dir_path.join(format!("f{file:03}.txt")),
                content(seed, 1024 + seed % 3072),
            )
            .expect("write a file");
        }
    }
}

fn git(root: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(root)
        .args(["-c", "user.name=bench", "-c", "user.email=bench@localhost"])
        .args(args)
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

fn measure(label: &str, root: &Path, mut first: impl FnMut(usize)) {
    let opened = time(RUNS, |_| {}, || drop(Snapshots::open(root).expect("opens")));
    let snapshots = Snapshots::open(root).expect("opens");
    let cold = time(RUNS, &mut first, || {
        Snapshots::open(root)
            .expect("opens")
            .take("r-first", Mark::Start, None, "")
            .expect("a snapshot");
    });
    let base = snapshots
        .take("r-bench", Mark::Start, None, "")
        .expect("a snapshot");
    let unchanged = time(
        RUNS,
        |_| {},
        || {
            snapshots
                .take("r-bench", Mark::After, None, "")
                .expect("a snapshot");
        },
    );
    let one = time(
        RUNS,
        |n| fs::write(root.join("d050/f050.txt"), content(100_000 + n, 2048)).expect("write"),
        || {
            drop(
                snapshots
                    .take("r-bench", Mark::After, None, "")
                    .expect("a snapshot"),
            )
        },
    );
    let big = time(
        RUNS,
        |n| fs::write(root.join("d050/big.bin"), content(200_000 + n, 1 << 20)).expect("write"),
        || {
            drop(
                snapshots
                    .take("r-bench", Mark::After, None, "")
                    .expect("a snapshot"),
            )
        },
    );
    // A file written in the second the index was last written is "racily clean" to git:
    // read again by every `add` until the index is rewritten a second later. The steady
    // state is measured, past that second.
    std::thread::sleep(Duration::from_millis(1100));
    let settled = snapshots
        .take("r-bench", Mark::After, None, "")
        .expect("a snapshot");
    let since = time(
        RUNS,
        |_| {},
        || {
            assert!(
                snapshots
                    .changed_since(&settled.tree)
                    .expect("compares")
                    .is_empty()
            );
        },
    );
    let restore = time(
        RUNS,
        |n| {
            for file in 0..10 {
                let path = root.join(format!("d{:03}/f{file:03}.txt", file * 10));
                fs::write(path, content(300_000 + n * 10 + file, 1500)).expect("write");
            }
        },
        || {
            let paths = snapshots
                .restore("r-bench", &base.tree, None, "")
                .expect("restores")
                .paths;
            assert!(paths.len() >= 10, "{paths:?}");
        },
    );
    println!("{label}:");
    println!("  open                         {:8.2} ms", ms(opened));
    println!("  first snapshot               {:8.2} ms", ms(cold));
    println!("  unchanged snapshot           {:8.2} ms", ms(unchanged));
    println!("  after changing 1 file (2 KB) {:8.2} ms", ms(one));
    println!("  after changing 1 file (1 MB) {:8.2} ms", ms(big));
    println!("  changed_since, unchanged     {:8.2} ms", ms(since));
    println!("  restore of 10 changed files  {:8.2} ms", ms(restore));
}

fn main() {
    let project = tempfile::tempdir().expect("a temporary directory");
    let root = project.path();
    tree(root);
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "10,000 files"]);
    let git_dir = root.join(".git");
    measure(
        "in the project's repository (10,000 files committed)",
        root,
        |_| {
            // A first snapshot again: no private index, seeded anew from the project's.
            for entry in fs::read_dir(git_dir.join("atomic"))
                .expect("read")
                .flatten()
            {
                fs::remove_file(entry.path()).expect("remove the private index");
            }
        },
    );

    let bare = tempfile::tempdir().expect("a temporary directory");
    let root = bare.path();
    tree(root);
    measure(
        "no repository (private store in .atomic/snapshots.git)",
        root,
        |_| {
            let _ = fs::remove_dir_all(root.join(".atomic"));
        },
    );
}
