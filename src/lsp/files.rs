//! Open buffers over the disk (gleam's `FileSystemProxy`): what the compiler reads while
//! checking one workflow — called workflows, schema files, cassettes — comes from the
//! editor's unsaved buffer when the file is open, from disk otherwise. Every path read is
//! recorded, so a change to any of them re-checks the workflows that read it.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::convert::normalize;
use crate::source::{Files, ReadError};

/// Buffers first, then `disk`.
pub struct Overlay<'a> {
    buffers: &'a HashMap<PathBuf, String>,
    disk: &'a dyn Files,
    read: RefCell<BTreeSet<PathBuf>>,
}

impl<'a> Overlay<'a> {
    /// `buffers` by normalised path, over `disk`.
    #[must_use]
    pub fn new(buffers: &'a HashMap<PathBuf, String>, disk: &'a dyn Files) -> Self {
        Self {
            buffers,
            disk,
            read: RefCell::new(BTreeSet::new()),
        }
    }

    /// Every path asked for so far (read or not: a missing file may appear later).
    #[must_use]
    pub fn into_read(self) -> BTreeSet<PathBuf> {
        self.read.into_inner()
    }
}

impl Files for Overlay<'_> {
    fn read(&self, path: &Path) -> Result<String, ReadError> {
        let path = normalize(path);
        let text = match self.buffers.get(&path) {
            Some(text) => Ok(text.clone()),
            None => self.disk.read(&path),
        };
        self.read.borrow_mut().insert(path);
        text
    }

    fn exists(&self, path: &Path) -> bool {
        let path = normalize(path);
        let exists = self.buffers.contains_key(&path) || self.disk.exists(&path);
        self.read.borrow_mut().insert(path);
        exists
    }

    /// Unsaved buffers in `dir` count as files there, so a new tool file is seen before
    /// it is saved.
    fn list(&self, dir: &Path) -> Vec<PathBuf> {
        let dir = normalize(dir);
        let mut files = self.disk.list(&dir);
        files.extend(
            self.buffers
                .keys()
                .filter(|path| path.parent() == Some(dir.as_path()))
                .cloned(),
        );
        files.sort();
        files.dedup();
        self.read.borrow_mut().insert(dir);
        files
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemoryFiles;

    #[test]
    fn buffers_win_over_disk_and_reads_are_recorded() {
        let mut disk = MemoryFiles::new();
        disk.insert("/p/a.kdl", "disk a");
        disk.insert("/p/b.kdl", "disk b");
        let mut buffers = HashMap::new();
        buffers.insert(PathBuf::from("/p/a.kdl"), "buffer a".to_owned());
        let overlay = Overlay::new(&buffers, &disk);
        assert_eq!(
            overlay.read(Path::new("/p/./a.kdl")).as_deref(),
            Ok("buffer a")
        );
        assert_eq!(
            overlay.read(Path::new("/p/x/../b.kdl")).as_deref(),
            Ok("disk b")
        );
        assert!(!overlay.exists(Path::new("/p/c.json")));
        let read: Vec<PathBuf> = overlay.into_read().into_iter().collect();
        assert_eq!(
            read,
            ["/p/a.kdl", "/p/b.kdl", "/p/c.json"].map(PathBuf::from)
        );
    }
}
