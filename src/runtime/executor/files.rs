//! The files a run keeps its work in (a `task-loop`'s tasks file), read and written in
//! this process: for [`super::LocalExecutor`], and for the worker that runs a Temporal
//! activity doing the same.

use std::path::Path;

/// The text of the file at `path`.
///
/// # Errors
/// Why it cannot be read.
pub fn read_text(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|error| error.to_string())
}

/// Replaces the file at `path` with `text`: a sibling file renamed over it, so a reader
/// sees the old text or the new, never a part.
///
/// # Errors
/// Why it cannot be written.
pub fn write_text(path: &Path, text: &str) -> Result<(), String> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".atomic-tmp");
    let temporary = path.with_file_name(name);
    std::fs::write(&temporary, text).map_err(|error| error.to_string())?;
    std::fs::rename(&temporary, path).map_err(|error| error.to_string())
}
