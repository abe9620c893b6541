//! The real file system behind the pure stages' [`Files`] trait, for the front ends that
//! read files: the command line (which adds the built-in workflows over it) and the
//! language server (which puts unsaved buffers over it).

use std::path::{Path, PathBuf};

use crate::source::Files;

/// Reads, checks and lists files on disk.
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
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .collect();
        files.sort();
        files
    }
}
