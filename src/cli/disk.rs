//! The files the command line reads: the real file system, with the built-in workflows at
//! their `<built-in>/` paths.

use std::path::{Path, PathBuf};

use super::builtin;
use crate::source::{Files, ReadError};

/// Reads files from disk, and the built-in workflows.
#[derive(Debug, Clone, Copy, Default)]
pub struct Disk;

impl Files for Disk {
    fn read(&self, path: &Path) -> Result<String, ReadError> {
        if builtin::is_built_in(path) {
            return builtin::text(path)
                .map(str::to_owned)
                .ok_or(ReadError::NotFound);
        }
        crate::disk::Disk.read(path)
    }

    fn exists(&self, path: &Path) -> bool {
        if builtin::is_built_in(path) {
            return builtin::text(path).is_some();
        }
        crate::disk::Disk.exists(path)
    }

    fn list(&self, dir: &Path) -> Vec<PathBuf> {
        crate::disk::Disk.list(dir)
    }
}
