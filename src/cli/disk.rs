//! The real file system behind the pure stages' [`Files`] trait, with the built-in
//! workflows at their `<built-in>/` paths.

use std::path::{Path, PathBuf};

use super::builtin;
use crate::source::Files;

/// Reads files from disk, and the built-in workflows.
#[derive(Debug, Clone, Copy, Default)]
pub struct Disk;

impl Files for Disk {
    fn read(&self, path: &Path) -> Option<String> {
        if builtin::is_built_in(path) {
            return builtin::text(path).map(str::to_owned);
        }
        std::fs::read_to_string(path).ok()
    }

    fn exists(&self, path: &Path) -> bool {
        if builtin::is_built_in(path) {
            return builtin::text(path).is_some();
        }
        path.exists()
    }

    fn list(&self, dir: &Path) -> Vec<PathBuf> {
        list_dir(dir)
    }
}

/// The entries of `dir`, sorted; empty when it cannot be read.
fn list_dir(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|entry| Some(entry.ok()?.path()))
        .collect();
    entries.sort();
    entries
}
