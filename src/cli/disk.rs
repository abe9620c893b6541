//! The real file system behind the pure stages' [`Files`] trait.

use std::path::Path;

use crate::source::Files;

/// Reads files from disk.
#[derive(Debug, Clone, Copy, Default)]
pub struct Disk;

impl Files for Disk {
    fn read(&self, path: &Path) -> Option<String> {
        std::fs::read_to_string(path).ok()
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
}
