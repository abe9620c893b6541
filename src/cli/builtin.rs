//! The workflows shipped inside the binary (`workflows/` in the repository). They have no
//! file on disk: each is read through a path under [`BUILT_IN`], which [`Disk`] serves, so
//! checking, running and resuming one goes through the same code as a file.
//!
//! [`Disk`]: super::disk::Disk

use std::path::{Path, PathBuf};

/// The pseudo-directory built-in workflows live in; it cannot collide with a real
/// relative path a user types (`<` and `>` are not used in file names in practice).
pub const BUILT_IN: &str = "<built-in>";

/// Every built-in workflow: its name and its text.
const WORKFLOWS: &[(&str, &str)] = &[
    ("map-reduce", include_str!("../../workflows/map-reduce.kdl")),
    ("ralph", include_str!("../../workflows/ralph.kdl")),
    (
        "review-cycle",
        include_str!("../../workflows/review-cycle.kdl"),
    ),
    ("sequential", include_str!("../../workflows/sequential.kdl")),
    ("task-loop", include_str!("../../workflows/task-loop.kdl")),
];

/// The paths of the built-in workflows, sorted by name.
#[must_use]
pub fn paths() -> Vec<PathBuf> {
    WORKFLOWS.iter().map(|(name, _)| path(name)).collect()
}

/// The path of built-in `name` (which may not exist).
fn path(name: &str) -> PathBuf {
    Path::new(BUILT_IN).join(format!("{name}.kdl"))
}

/// The text of the built-in workflow at `path`, if it is one.
#[must_use]
pub fn text(path: &Path) -> Option<&'static str> {
    let name = path
        .strip_prefix(BUILT_IN)
        .ok()?
        .to_str()?
        .strip_suffix(".kdl")?;
    WORKFLOWS
        .iter()
        .find(|(builtin, _)| *builtin == name)
        .map(|(_, text)| *text)
}

/// Whether `path` names a built-in workflow (existing or not).
#[must_use]
pub fn is_built_in(path: &Path) -> bool {
    path.starts_with(BUILT_IN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::disk::Disk;
    use crate::compile::{self, Config};
    use crate::source::Sources;

    #[test]
    fn every_built_in_checks_clean() {
        for path in paths() {
            let mut sources = Sources::new();
            let compiled = compile::compile_path(&mut sources, &path, &Disk, &Config::new())
                .expect("a built-in is readable through Disk");
            assert_eq!(compiled.diagnostics, vec![], "{}", path.display());
            let name = path.file_stem().and_then(|stem| stem.to_str());
            assert_eq!(
                compiled
                    .workflow()
                    .map(|workflow| workflow.name.value.as_str()),
                name,
                "a built-in's file is named after its workflow"
            );
        }
    }

    #[test]
    fn texts_are_found_by_path_only() {
        assert!(text(Path::new("<built-in>/ralph.kdl")).is_some());
        assert!(text(Path::new("<built-in>/nope.kdl")).is_none());
        assert!(text(Path::new("ralph.kdl")).is_none());
        assert!(text(Path::new("<built-in>/ralph")).is_none());
    }
}
