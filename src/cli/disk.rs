//! The real file system behind the pure stages' [`Files`] trait, with the built-in
//! workflows at their `<built-in>/` paths.

use std::path::Path;

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
}
