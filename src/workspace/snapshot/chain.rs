//! A run's chain of snapshot commits and the refs under `refs/atomic/`: commits made with
//! `commit-tree`, a chain's head moved with a compare-and-swap `update-ref`, each commit's
//! message saying why it was taken (`atomic <mark> <step or ->`, a blank line, the note).

use super::{Entry, Mark, Snapshot, SnapshotError, Snapshots};
use crate::workspace::git;

impl Snapshots {
    /// Commits `tree` on the chain `chain` whose head is `parent` (compare-and-swap: the
    /// chain must still be there).
    pub(super) fn commit(
        &self,
        chain: &str,
        parent: Option<String>,
        tree: String,
        mark: Mark,
        step: Option<&str>,
        note: &str,
    ) -> Result<Snapshot, SnapshotError> {
        let mut args = vec!["commit-tree", tree.as_str()];
        if let Some(parent) = &parent {
            args.extend(["-p", parent.as_str()]);
        }
        args.extend(["-F", "-"]);
        let commit = self
            .repo
            .id(&args, Some(message(mark, step, note).as_bytes()))?;
        let zero = "0".repeat(commit.len());
        let old = parent.unwrap_or(zero.clone());
        let moved = self
            .repo
            .output(&["update-ref", chain, &commit, &old], None)?;
        if !moved.status.success() {
            let now = self.resolve(chain)?.unwrap_or(zero);
            return Err(if now == old {
                git::failed(&["update-ref", chain, &commit, &old], &moved)
            } else {
                SnapshotError::Conflict
            });
        }
        Ok(Snapshot { commit, tree })
    }

    /// The commit `reference` names, if it exists.
    pub(super) fn resolve(&self, reference: &str) -> Result<Option<String>, SnapshotError> {
        let verify = format!("{reference}^{{commit}}");
        let output = self
            .repo
            .output(&["rev-parse", "--verify", "--quiet", &verify], None)?;
        match output.status.code() {
            Some(0) => Ok(Some(
                String::from_utf8_lossy(&output.stdout).trim().to_owned(),
            )),
            Some(1) => Ok(None),
            _ => Err(git::failed(
                &["rev-parse", "--verify", "--quiet", &verify],
                &output,
            )),
        }
    }
}

/// `refs/atomic/<name>`, once `name` is checked to stay below it.
pub(super) fn atomic_ref(name: &str) -> Result<String, SnapshotError> {
    let allowed = |byte: u8| byte.is_ascii_alphanumeric() || b"._/-".contains(&byte);
    let fine = !name.is_empty()
        && name.bytes().all(allowed)
        && !name.contains("..")
        && !name.contains("//")
        && !name.contains("/.")
        && !name.contains(".lock/")
        && !name.starts_with(['/', '.', '-'])
        && !name.ends_with(['/', '.'])
        && !name.ends_with(".lock");
    if fine {
        Ok(format!("refs/atomic/{name}"))
    } else {
        Err(SnapshotError::BadName(name.to_owned()))
    }
}

/// The chain named `chain`: a run's, `refs/atomic/runs/<run>`; or, for a name
/// `<run>/<more>`, one that work of that run done elsewhere keeps (a branch of an isolated
/// `parallel` in its git worktree), `refs/atomic/branches/<run>/<more>`, so that
/// [`Snapshots::forget_run`] takes it with its run.
pub(super) fn run_ref(chain: &str) -> Result<String, SnapshotError> {
    atomic_ref(chain)?;
    match chain.split_once('/') {
        Some((run, _)) => {
            atomic_ref(run)?;
            atomic_ref(&format!("branches/{chain}"))
        }
        None => atomic_ref(&format!("runs/{chain}")),
    }
}

/// A snapshot's commit message: `atomic <mark> <step or ->`, then the note after a blank
/// line. A step is one line (line breaks become spaces).
fn message(mark: Mark, step: Option<&str>, note: &str) -> String {
    let step = step.map_or_else(|| "-".to_owned(), |step| step.replace(['\n', '\r'], " "));
    match note.trim_end_matches('\n') {
        "" => format!("atomic {mark} {step}\n"),
        note => format!("atomic {mark} {step}\n\n{note}\n"),
    }
}

/// An entry from `%H%n%T%n%B`.
pub(super) fn parse_entry(record: &str) -> Option<Entry> {
    let mut lines = record.splitn(3, '\n');
    let (commit, tree, body) = (
        lines.next()?,
        lines.next()?,
        lines.next().unwrap_or_default(),
    );
    let (subject, note) = body.split_once('\n').unwrap_or((body, ""));
    let (mark, step) = subject.strip_prefix("atomic ")?.split_once(' ')?;
    Some(Entry {
        snapshot: Snapshot {
            commit: commit.to_owned(),
            tree: tree.to_owned(),
        },
        mark: Mark::parse(mark)?,
        step: (step != "-").then(|| step.to_owned()),
        note: note
            .trim_start_matches('\n')
            .trim_end_matches('\n')
            .to_owned(),
    })
}
