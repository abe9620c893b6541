//! One buffer checked by [`compile`](crate::compile::compile), the same pipeline as
//! `atomic check`, with the project's rule configuration, reading other files through the
//! open buffers. Records every file read, so the server knows which workflows to re-check
//! when a file changes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use tower_lsp_server::ls_types as lsp;

use super::convert;
use super::files::Overlay;
use super::snapshot::Snapshot;
use crate::compile::{self, Compiled, Config};
use crate::registry::agents::Roots;
use crate::source::{Files, Sources};

/// A checked buffer.
#[derive(Debug)]
pub struct Analysis {
    /// The buffer's path.
    pub path: PathBuf,
    /// The buffer's version.
    pub version: i32,
    /// Every file of the compilation; the buffer is [`Snapshot::FILE`].
    pub sources: Sources,
    /// What the compiler produced.
    pub compiled: Compiled,
    /// Every other file read (called workflows, schemas, the configuration), normalised.
    pub dependencies: BTreeSet<PathBuf>,
    /// The buffer parsed and indexed, for quick fixes; built on first use, so publishing
    /// diagnostics does not wait for it.
    snapshot: OnceLock<Snapshot>,
}

impl Analysis {
    /// Checks `text` as the file at `path`, reading other files from `buffers` (open
    /// buffers by normalised path) over `disk`. `home` is the user's home directory, for
    /// their custom tools and discovered definitions.
    #[must_use]
    pub fn new(
        path: &Path,
        text: &str,
        version: i32,
        buffers: &HashMap<PathBuf, String>,
        disk: &dyn Files,
        home: Option<&Path>,
    ) -> Self {
        let overlay = Overlay::new(buffers, disk);
        let mut sources = Sources::new();
        let file = sources.add(path, text);
        debug_assert_eq!(file, Snapshot::FILE);
        let config = project_config(path, home, &mut sources, &overlay);
        let compiled = compile::compile(&mut sources, file, &overlay, &config);
        let mut dependencies = overlay.into_read();
        dependencies.remove(path);
        Self {
            path: path.to_path_buf(),
            version,
            sources,
            compiled,
            dependencies,
            snapshot: OnceLock::new(),
        }
    }

    /// The buffer parsed and indexed (the same text the compiler saw, so diagnostic spans
    /// are spans of the snapshot).
    pub fn snapshot(&self) -> &Snapshot {
        self.snapshot.get_or_init(|| {
            let text = &self.sources.get(Snapshot::FILE).text;
            Snapshot::new(&self.path, text, self.version)
        })
    }

    /// The protocol diagnostics by file: this file's (always present, maybe empty), and
    /// those the compiler reported in files this one reads (a broken called workflow).
    #[must_use]
    pub fn diagnostics(&self) -> BTreeMap<PathBuf, Vec<lsp::Diagnostic>> {
        let mut by_file: BTreeMap<PathBuf, Vec<lsp::Diagnostic>> = BTreeMap::new();
        by_file.insert(self.path.clone(), Vec::new());
        for diagnostic in &self.compiled.diagnostics {
            let path = convert::normalize(&self.sources.get(diagnostic.span.source).path);
            by_file
                .entry(path)
                .or_default()
                .push(convert::diagnostic(&self.sources, diagnostic));
        }
        by_file
    }
}

/// The project a file belongs to, as `atomic run` finds it: the nearest directory above it
/// holding `.atomic/` or `.git`, not looking past a repository root.
pub(super) fn project_root(path: &Path, files: &dyn Files) -> Option<PathBuf> {
    path.ancestors().skip(1).find_map(|dir| {
        (files.exists(&dir.join(".git")) || files.exists(&dir.join(".atomic")))
            .then(|| dir.to_path_buf())
    })
}

/// The rule configuration of the project `path` is in: the `.atomic/config.kdl` of the
/// nearest directory that has one, looking no further up than a directory holding `.git`.
/// Problems in the configuration itself are `atomic check`'s to report, not the editor's.
/// Discovered agents, skills and commands are looked for in the nearest directory holding
/// `.atomic/` or `.git` (as `atomic run` finds the project), then the user's home.
fn project_config(
    path: &Path,
    home: Option<&Path>,
    sources: &mut Sources,
    files: &dyn Files,
) -> Config {
    let mut config = None;
    for dir in path.ancestors().skip(1) {
        let file = dir.join(".atomic").join("config.kdl");
        if let Ok(text) = files.read(&file) {
            let file = sources.add(file, text);
            config = Some(Config::parse(sources, file).0);
            break;
        }
        if files.exists(&dir.join(".git")) {
            break;
        }
    }
    let roots = Roots {
        project: project_root(path, files),
        home: home.map(Path::to_path_buf),
    };
    config
        .unwrap_or_default()
        .with_user_dir(home.map(|home| home.join(".atomic")))
        .with_discovery(roots)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemoryFiles;

    const CALLER: &str = r#"workflow "caller" {
    subgraph "checks" workflow="./checks.kdl"
}
"#;

    #[test]
    fn buffers_override_disk_for_called_workflows() {
        let mut disk = MemoryFiles::new();
        disk.insert(
            "/p/checks.kdl",
            "workflow \"checks\" {\n    set \"x\" \"1\"\n}\n",
        );
        let clean = Analysis::new(
            Path::new("/p/caller.kdl"),
            CALLER,
            1,
            &HashMap::new(),
            &disk,
            None,
        );
        let errors: Vec<String> = clean
            .compiled
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.code.to_string())
            .collect();
        assert!(clean.dependencies.contains(Path::new("/p/checks.kdl")));
        let mut buffers = HashMap::new();
        buffers.insert(
            PathBuf::from("/p/checks.kdl"),
            "workflow \"checks\" {\n    agnet \"x\"\n}\n".to_owned(),
        );
        let broken = Analysis::new(Path::new("/p/caller.kdl"), CALLER, 1, &buffers, &disk, None);
        let published = broken.diagnostics();
        let callee = &published[Path::new("/p/checks.kdl")];
        assert!(
            callee
                .iter()
                .any(|d| d.message.starts_with("unknown node kind `agnet`")),
            "{callee:?} (clean: {errors:?})"
        );
    }

    #[test]
    fn the_project_configuration_applies() {
        let mut disk = MemoryFiles::new();
        let text = "workflow \"w\" {\n    input \"unused\"\n    state {\n        field \"x\" default=\"\"\n    }\n    set \"x\" \"1\"\n}\n";
        let codes = |disk: &MemoryFiles| -> Vec<String> {
            Analysis::new(
                Path::new("/p/flows/w.kdl"),
                text,
                1,
                &HashMap::new(),
                disk,
                None,
            )
            .compiled
            .diagnostics
            .iter()
            .map(|d| d.code.to_string())
            .collect()
        };
        assert!(codes(&disk).contains(&"atomic::unused-input".to_owned()));
        disk.insert(
            "/p/.atomic/config.kdl",
            "rules {\n    rule \"unused-input\" level=\"off\"\n}\n",
        );
        assert!(!codes(&disk).contains(&"atomic::unused-input".to_owned()));
    }

    #[test]
    fn the_users_tools_are_found_under_the_home_the_server_is_given() {
        let mut disk = MemoryFiles::new();
        disk.insert(
            "/home/me/.atomic/tools/fmt.kdl",
            "tool \"fmt\" description=\"Formats\" {\n    command \"true\"\n}\n",
        );
        let text = "workflow \"w\" {\n    tool \"format\" use=\"fmt\"\n}\n";
        let codes = |home: Option<&Path>| -> Vec<String> {
            Analysis::new(Path::new("/p/w.kdl"), text, 1, &HashMap::new(), &disk, home)
                .compiled
                .diagnostics
                .iter()
                .map(|d| d.code.to_string())
                .collect()
        };
        assert_eq!(codes(None), ["atomic::undefined-tool"]);
        assert_eq!(codes(Some(Path::new("/home/me"))), Vec::<String>::new());
    }
}
