//! The project a command runs in: its root (the nearest directory with `.atomic/` or
//! `.git`), its configuration, and workflow discovery: project `.atomic/workflows/*.kdl`
//! over user `~/.atomic/workflows/*.kdl` over the built-ins shipped in `workflows/`.

use std::path::{Path, PathBuf};

use crate::compile::Config;
use crate::diagnostic::Diagnostic;
use crate::source::Sources;

/// Where a command runs.
#[derive(Debug, Clone)]
pub struct Project {
    /// The project root.
    pub root: PathBuf,
    /// The user's home, for `~/.atomic/`.
    pub home: Option<PathBuf>,
}

impl Project {
    /// Finds the project around the current directory.
    #[must_use]
    pub fn discover() -> Self {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let root = cwd
            .ancestors()
            .find(|dir| dir.join(".atomic").is_dir() || dir.join(".git").exists())
            .map_or_else(|| cwd.clone(), Path::to_path_buf);
        let home = std::env::var_os("HOME").map(PathBuf::from);
        Self { root, home }
    }

    /// The project's `.atomic/` directory.
    #[must_use]
    pub fn state_dir(&self) -> PathBuf {
        self.root.join(".atomic")
    }

    /// Workflow files of the project (`.atomic/workflows/*.kdl`), sorted.
    #[must_use]
    pub fn workflow_files(&self) -> Vec<PathBuf> {
        kdl_files(&self.state_dir().join("workflows"))
    }

    /// Directories searched for workflows by name, highest priority first.
    #[must_use]
    pub fn workflow_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.state_dir().join("workflows")];
        if let Some(home) = &self.home {
            dirs.push(home.join(".atomic").join("workflows"));
        }
        dirs
    }

    /// A path as given, or a workflow found by name.
    ///
    /// # Errors
    /// When `name` is neither an existing path nor a discovered workflow.
    pub fn resolve_workflow(&self, name: &Path) -> Result<PathBuf, String> {
        if name.exists()
            || name.extension().is_some_and(|ext| ext == "kdl")
            || name.components().count() > 1
        {
            return Ok(name.to_path_buf());
        }
        let file = format!("{}.kdl", name.display());
        self.workflow_dirs()
            .into_iter()
            .map(|dir| dir.join(&file))
            .find(|path| path.exists())
            .ok_or_else(|| {
                format!(
                    "no workflow named `{}`: not a file, and not in {}",
                    name.display(),
                    self.workflow_dirs()
                        .iter()
                        .map(|d| format!("`{}`", d.display()))
                        .collect::<Vec<_>>()
                        .join(" or ")
                )
            })
    }

    /// The project's rule configuration (`.atomic/config.kdl`), with any problems in it,
    /// and the user's `~/.atomic` for the user's custom tools.
    pub fn config(&self, sources: &mut Sources) -> (Config, Vec<Diagnostic>) {
        let path = self.state_dir().join("config.kdl");
        let (config, problems) = match std::fs::read_to_string(&path) {
            Ok(text) => {
                let file = sources.add(path, text);
                Config::parse(sources, file)
            }
            Err(_) => (Config::new(), Vec::new()),
        };
        let user_dir = self.home.as_ref().map(|home| home.join(".atomic"));
        (config.with_user_dir(user_dir), problems)
    }
}

fn kdl_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "kdl"))
        .collect();
    files.sort();
    files
}
