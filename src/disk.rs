//! The real file system behind the pure stages' [`Files`] trait, for the front ends that
//! read files: the command line (which adds the built-in workflows over it) and the
//! language server (which puts unsaved buffers over it).

use std::path::{Path, PathBuf};

use crate::source::{Files, NotUtf8, ReadError};

/// Reads, checks and lists files on disk.
#[derive(Clone, Copy, Debug, Default)]
pub struct Disk;

impl Files for Disk {
    fn read(&self, path: &Path) -> Result<String, ReadError> {
        if path.is_dir() {
            return Err(ReadError::IsDirectory);
        }
        let bytes = std::fs::read(path).map_err(|error| ReadError::from_io(&error))?;
        String::from_utf8(bytes).map_err(|error| {
            let offset = error.utf8_error().valid_up_to();
            ReadError::NotUtf8(NotUtf8::new(error.as_bytes(), offset))
        })
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
