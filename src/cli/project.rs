//! The project a command runs in: its root (the nearest directory with `.atomic/` or
//! `.git`), its configuration, and workflow discovery: project `.atomic/workflows/*.kdl`
//! over user `~/.atomic/workflows/*.kdl` over the built-ins shipped inside atomic, found by
//! file name, declared name or alias.

use std::path::{Path, PathBuf};

use super::builtin;
use super::disk::Disk;
use crate::compile::Config;
use crate::diagnostic::Diagnostic;
use crate::ir::Workflow;
use crate::registry::agents::Roots;
use crate::source::{Files, ReadError, Sources, Span};

/// Where a command runs.
#[derive(Debug, Clone)]
pub struct Project {
    /// The project root.
    pub root: PathBuf,
    /// The user's home, for `~/.atomic/`.
    pub home: Option<PathBuf>,
    /// `--provider ADAPTER`: the adapter agent providers run on, over the configured one.
    pub adapter: Option<String>,
    /// `--model MODEL`: the model agent providers run.
    pub model: Option<String>,
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
        Self {
            root,
            home,
            adapter: None,
            model: None,
        }
    }

    /// This project with agent providers swapped to `adapter` (`--provider`), if given.
    #[must_use]
    pub fn with_adapter(mut self, adapter: Option<String>) -> Self {
        self.adapter = adapter;
        self
    }

    /// This project with every agent provider on `model` (`--model`), if given.
    #[must_use]
    pub fn with_model(mut self, model: Option<String>) -> Self {
        self.model = model;
        self
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

    /// Directories searched for workflows by name, highest priority first (the built-ins
    /// come after them).
    #[must_use]
    pub fn workflow_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.state_dir().join("workflows")];
        if let Some(home) = &self.home {
            dirs.push(home.join(".atomic").join("workflows"));
        }
        dirs
    }

    /// Every discovered workflow, one per name (the file name without `.kdl`): the
    /// project's over the user's over the built-ins. Sorted by name.
    #[must_use]
    pub fn discovered(&self) -> Vec<Discovered> {
        let dirs = self.workflow_dirs();
        let origins = [Origin::Project, Origin::User];
        let mut found: Vec<Discovered> = Vec::new();
        let candidates = dirs
            .iter()
            .zip(origins)
            .flat_map(|(dir, origin)| kdl_files(dir).into_iter().map(move |path| (path, origin)))
            .chain(
                builtin::paths()
                    .into_iter()
                    .map(|path| (path, Origin::BuiltIn)),
            );
        for (path, origin) in candidates {
            let Some(name) = path.file_stem().and_then(|stem| stem.to_str()) else {
                continue;
            };
            if found.iter().all(|seen| seen.name != name) {
                found.push(Discovered {
                    name: name.to_owned(),
                    path,
                    origin,
                });
            }
        }
        found.sort_by(|a, b| a.name.cmp(&b.name));
        found
    }

    /// A path as given, or a workflow found by name, then by its declared name or an
    /// `alias` (see [`Project::discovered`]).
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
        let wanted = name.to_string_lossy();
        let discovered = self.discovered();
        if let Some(found) = discovered.iter().find(|found| found.name == wanted) {
            return Ok(found.path.clone());
        }
        if let Some(found) = discovered.iter().find(|found| {
            found.header().is_some_and(|header| {
                header.name.value == wanted
                    || header.aliases.iter().any(|alias| alias.value == wanted)
            })
        }) {
            return Ok(found.path.clone());
        }
        let names: Vec<&str> = discovered.iter().map(|found| found.name.as_str()).collect();
        let near = crate::diagnostic::did_you_mean(&wanted, names.iter().copied())
            .map(|near| format!("; did you mean `{near}`?"))
            .unwrap_or_default();
        Err(format!(
            "no workflow named `{wanted}`: not a file, and not in {} or the built-ins{near} (`atomic list` shows them all)",
            self.workflow_dirs()
                .iter()
                .map(|d| format!("`{}`", d.display()))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }

    /// The project's rule configuration (`.atomic/config.kdl`), with any problems in it,
    /// and the user's `~/.atomic` for the user's custom tools, and where to discover
    /// agents, skills and commands: the project, then the home.
    pub fn config(&self, sources: &mut Sources) -> (Config, Vec<Diagnostic>) {
        let path = self.state_dir().join("config.kdl");
        // No configuration is fine; one that cannot be read is reported, never passed over.
        let (config, problems) = match Disk.read(&path) {
            Ok(text) => {
                let file = sources.add(path, text);
                Config::parse(sources, file)
            }
            Err(ReadError::NotFound) => (Config::new(), Vec::new()),
            Err(ReadError::NotUtf8(bad)) => {
                let offset = bad.offset;
                let file = sources.add(path, bad.text.clone());
                let span = Span::new(file, offset, offset + 1);
                (Config::new(), vec![Diagnostic::not_utf8(span, &bad)])
            }
            Err(error) => {
                let file = sources.add(path.clone(), String::new());
                let span = Span::new(file, 0, 0);
                let problem = Diagnostic::unreadable(span, "the configuration", &path, &error);
                (Config::new(), vec![problem])
            }
        };
        let user_dir = self.home.as_ref().map(|home| home.join(".atomic"));
        let roots = Roots {
            project: Some(self.root.clone()),
            home: self.home.clone(),
        };
        (
            config
                .with_user_dir(user_dir)
                .with_discovery(roots)
                .with_adapter(self.adapter.clone())
                .with_model(self.model.clone()),
            problems,
        )
    }
}

/// Where a discovered workflow comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The project's `.atomic/workflows/`.
    Project,
    /// The user's `~/.atomic/workflows/`.
    User,
    /// Shipped inside atomic (`workflows/` in its repository).
    BuiltIn,
}

impl Origin {
    /// How `atomic list` names it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Project => "project",
            Self::User => "user",
            Self::BuiltIn => "built-in",
        }
    }
}

/// A workflow found by discovery.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// Its name: the file name without `.kdl`.
    pub name: String,
    /// The file (a `<built-in>/` path for the built-ins).
    pub path: PathBuf,
    /// Where it was found.
    pub origin: Origin,
}

impl Discovered {
    /// The workflow's declarations (name, description, aliases, inputs…), read without
    /// the whole check; `None` when the file cannot be read or has no `workflow` node.
    #[must_use]
    pub fn header(&self) -> Option<Workflow> {
        let text = Disk.read(&self.path).ok()?;
        let mut sources = Sources::new();
        let file = sources.add(&self.path, text);
        let parsed = crate::syntax::kdl::parse(&sources.get(file).text, file);
        crate::check::resolve(&sources, file, parsed.document).value
    }
}

fn kdl_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Disk.list(dir);
    files.retain(|path| path.extension().is_some_and(|ext| ext == "kdl"));
    files
}
