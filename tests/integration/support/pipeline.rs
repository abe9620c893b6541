//! Compiling fixtures through the whole static pipeline and rendering their diagnostics.

use std::path::{Path, PathBuf};

use atomic::cli::disk::Disk;
use atomic::cli::render::pretty::{self, Style};
use atomic::compile::{self, Compiled, Config};
use atomic::registry::agents::Roots;
use atomic::source::Sources;

/// The crate root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `tests/fixtures/<rel>`.
pub fn fixture(rel: &str) -> PathBuf {
    root().join("tests/fixtures").join(rel)
}

/// Every `.kdl` file directly in `dir`, sorted.
pub fn kdl_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("cannot list {}: {error}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "kdl"))
        .collect();
    files.sort();
    files
}

/// Compiles a file from disk with a path relative to the crate root (stable in output).
pub fn compile_file(path: &Path) -> (Sources, Compiled) {
    let relative = path.strip_prefix(root()).unwrap_or(path).to_path_buf();
    let mut sources = Sources::new();
    // Paths inside the workflow resolve relative to its file; run from the crate root. A
    // fixture that is not UTF-8 compiles to its `not-utf8` diagnostic.
    let compiled = compile::compile_path(&mut sources, &relative, &RootedDisk, &config())
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    (sources, compiled)
}

/// Compiles `text` as if it were the file at `relative` (a path relative to the crate root),
/// so the files it refers to resolve as they would for that file.
pub fn compile_text(relative: &Path, text: &str) -> (Sources, Compiled) {
    let mut sources = Sources::new();
    let file = sources.add(relative, text);
    let compiled = compile::compile(&mut sources, file, &RootedDisk, &config());
    (sources, compiled)
}

/// Fixtures discover agents, skills and commands in `check/support/project/` (a relative
/// path, so file names in rendered diagnostics do not depend on the checkout).
fn config() -> Config {
    Config::new().with_discovery(Roots {
        project: Some(PathBuf::from("tests/fixtures/check/support/project")),
        home: None,
    })
}

/// Disk reads relative to the crate root, whatever the test's working directory.
struct RootedDisk;

impl atomic::source::Files for RootedDisk {
    fn read(&self, path: &Path) -> Result<String, atomic::source::ReadError> {
        let path = if path.is_relative() {
            root().join(path)
        } else {
            path.to_path_buf()
        };
        atomic::source::Files::read(&Disk, &path)
    }

    /// Listed under the crate root, and named as given (relative stays relative).
    fn list(&self, dir: &Path) -> Vec<PathBuf> {
        let rooted = if dir.is_relative() {
            root().join(dir)
        } else {
            dir.to_path_buf()
        };
        atomic::source::Files::list(&Disk, &rooted)
            .into_iter()
            .map(|path| {
                let name = path.file_name().expect("listed files have names");
                dir.join(name)
            })
            .collect()
    }
}

/// Diagnostics rendered colourless at a fixed width, for snapshots.
pub fn render(sources: &Sources, compiled: &Compiled) -> String {
    pretty::render(sources, &compiled.diagnostics, Style::plain(100))
}
