//! Open buffers over the disk (gleam's `FileSystemProxy`): what the compiler reads while
//! checking one workflow — called workflows, schema files, cassettes — comes from the
//! editor's unsaved buffer when the file is open, from disk otherwise. Every path read is
//! recorded, so a change to any of them re-checks the workflows that read it.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::convert::normalize;
use crate::source::Files;

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
    fn read(&self, path: &Path) -> Option<String> {
        let path = normalize(path);
        let text = match self.buffers.get(&path) {
            Some(text) => Some(text.clone()),
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

    /// The disk's listing: discovery reads definitions from disk, not unsaved buffers
    /// (each file listed is then read through the buffers).
    fn list(&self, dir: &Path) -> Vec<PathBuf> {
        self.disk.list(&normalize(dir))
    }
}

/// The real file system. The language server is the only caller outside `cli` that reads
/// files, and only through this.
#[derive(Clone, Copy, Debug, Default)]
pub struct Disk;

impl Files for Disk {
    fn read(&self, path: &Path) -> Option<String> {
        std::fs::read_to_string(path).ok()
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn list(&self, dir: &Path) -> Vec<PathBuf> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(|entry| Some(entry.ok()?.path()))
            .collect();
        entries.sort();
        entries
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
            Some("buffer a")
        );
        assert_eq!(
            overlay.read(Path::new("/p/x/../b.kdl")).as_deref(),
            Some("disk b")
        );
        assert!(!overlay.exists(Path::new("/p/c.json")));
        let read: Vec<PathBuf> = overlay.into_read().into_iter().collect();
        assert_eq!(
            read,
            ["/p/a.kdl", "/p/b.kdl", "/p/c.json"].map(PathBuf::from)
        );
    }
}
