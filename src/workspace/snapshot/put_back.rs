//! Putting files back: the differences between the tree now and the one wanted, the
//! private index told, files gone from the wanted tree removed, the others written by
//! `checkout-index` — only files that differ are touched.

use std::fs;
use std::io;
use std::path::Path;

use super::{SnapshotError, Snapshots};
use crate::workspace::git;

impl Snapshots {
    /// The files that differ between trees `from` and `to`, as `to` has them.
    pub(super) fn differences(
        &self,
        from: &str,
        to: &str,
    ) -> Result<Vec<Difference>, SnapshotError> {
        if from == to {
            return Ok(Vec::new());
        }
        let args = ["diff-tree", "-r", "-z", "--no-renames", "--raw", from, to];
        let stdout = self.repo.run(&args, None)?;
        let mut differences = Vec::new();
        let mut fields = stdout.split(|byte| *byte == 0);
        while let (Some(raw), Some(path)) = (fields.next(), fields.next()) {
            // `:old-mode new-mode old-id new-id status`
            let raw = String::from_utf8_lossy(raw);
            let parts: Vec<&str> = raw.trim_start_matches(':').split(' ').collect();
            if let [old_mode, mode, _, id, status] = parts[..] {
                differences.push(Difference {
                    path: path.to_vec(),
                    old_mode: old_mode.to_owned(),
                    mode: mode.to_owned(),
                    id: id.to_owned(),
                    deleted: status == "D",
                });
            }
        }
        Ok(differences)
    }

    /// Makes the files at `differences` as the target tree has them: the index told first,
    /// files gone from the target removed (and directories they leave empty), then the
    /// others written from the index by `checkout-index`.
    pub(super) fn put_back(&self, differences: &[Difference]) -> Result<(), SnapshotError> {
        let zero = "0".repeat(self.repo.empty_tree.len());
        let mut info = Vec::new();
        let mut written = Vec::new();
        for difference in differences {
            let path = [self.prefix.as_bytes(), &difference.path].concat();
            let (mode, id) = match difference.deleted {
                true => ("0", zero.as_str()),
                false => (difference.mode.as_str(), difference.id.as_str()),
            };
            info.extend_from_slice(format!("{mode} {id}\t").as_bytes());
            info.extend_from_slice(&path);
            info.push(0);
            if !difference.deleted && difference.mode != GITLINK {
                written.extend_from_slice(&path);
                written.push(0);
            }
        }
        self.repo
            .run(&["update-index", "-z", "--index-info"], Some(&info))?;
        let root = self.repo.work_tree.join(&self.prefix);
        for difference in differences {
            if difference.deleted && difference.old_mode != GITLINK {
                remove(&root, &git::path(&difference.path))?;
            }
        }
        if !written.is_empty() {
            self.repo.run(
                &["checkout-index", "-f", "-u", "-z", "--stdin"],
                Some(&written),
            )?;
        }
        Ok(())
    }
}

/// The mode of a nested repository's entry: its directory is never removed or written.
const GITLINK: &str = "160000";

/// A file that differs between two trees.
pub(super) struct Difference {
    /// Its path in the trees (relative to the workspace root).
    pub(super) path: Vec<u8>,
    old_mode: String,
    /// Its mode and blob in the target tree.
    mode: String,
    id: String,
    /// Absent from the target tree.
    deleted: bool,
}

/// Removes the file at `path` below `root`, then the directories it leaves empty.
fn remove(root: &Path, path: &Path) -> Result<(), SnapshotError> {
    let file = root.join(path);
    match fs::remove_file(&file) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(SnapshotError::io(&file, &error)),
    }
    for parent in path.ancestors().skip(1) {
        if parent.as_os_str().is_empty() || fs::remove_dir(root.join(parent)).is_err() {
            break;
        }
    }
    Ok(())
}
