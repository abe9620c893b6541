//! Agents, skills and commands written for other tools (Claude Code, OpenCode, Copilot) or
//! for atomic, found by name so an `agent` node can `use="agent:<name>"`, `skill:<name>` or
//! `command:<name>`.
//!
//! Discovery reads Markdown files with YAML front matter through [`Files`], so it is pure
//! and tests never touch the real home. The project's directories come before the user's,
//! and within each, atomic's own `.atomic/` before the other tools'; the first definition
//! of a name wins. Front matter is parsed here but a broken file is only reported when a
//! workflow uses it (see [`attach`]), so one bad file elsewhere does not break every
//! workflow.

mod attach;
mod front_matter;

use std::path::{Path, PathBuf};

pub use attach::attach_definitions;
pub use front_matter::{FrontMatter, FrontMatterError, parse_front_matter};

use crate::ir::DefinitionKind;
use crate::source::{Files, ReadError};

/// Where discovery looks: the project root, then the user's home.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Roots {
    /// The project root (`.claude/`, `.atomic/`, … are under it).
    pub project: Option<PathBuf>,
    /// The user's home, searched after the project.
    pub home: Option<PathBuf>,
}

/// One discovered definition file, parsed or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Agent, skill or command.
    pub kind: DefinitionKind,
    /// The name it is used by.
    pub name: String,
    /// The file it was read from.
    pub path: PathBuf,
    /// Its front matter and body, or why the front matter does not parse.
    pub parsed: Result<FrontMatter, FrontMatterError>,
    /// Why the file could not be read (a directory, not permitted, not UTF-8); `parsed`
    /// then says the same. Reported when a workflow uses the definition.
    pub unreadable: Option<ReadError>,
}

/// Every discovered definition, in precedence order, one per kind and name.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    entries: Vec<Entry>,
}

/// How a directory holds definitions.
#[derive(Clone, Copy)]
enum Layout {
    /// `<dir>/<name>.md` (and `<name>.agent.md`, Copilot's spelling).
    Markdown,
    /// `<dir>/<name>.md`, and `<dir>/<ns>/<name>.md` named `<ns>:<name>` (Claude Code's
    /// namespaced commands), at any depth up to [`MAX_NAMESPACE_DEPTH`].
    Namespaced,
    /// `<dir>/<name>/SKILL.md`.
    SkillDirs,
}

/// Directories searched under the project root and again under the home, in precedence
/// order.
const PLACES: &[(DefinitionKind, &str, Layout)] = &[
    (DefinitionKind::Agent, ".atomic/agents", Layout::Markdown),
    (DefinitionKind::Agent, ".claude/agents", Layout::Markdown),
    (DefinitionKind::Agent, ".opencode/agents", Layout::Markdown),
    (DefinitionKind::Agent, ".opencode/agent", Layout::Markdown),
    (DefinitionKind::Agent, ".github/agents", Layout::Markdown),
    (
        DefinitionKind::Command,
        ".atomic/commands",
        Layout::Namespaced,
    ),
    (
        DefinitionKind::Command,
        ".claude/commands",
        Layout::Namespaced,
    ),
    (
        DefinitionKind::Command,
        ".opencode/command",
        Layout::Namespaced,
    ),
    (
        DefinitionKind::Command,
        ".opencode/commands",
        Layout::Namespaced,
    ),
    (DefinitionKind::Skill, ".atomic/skills", Layout::SkillDirs),
    (DefinitionKind::Skill, ".claude/skills", Layout::SkillDirs),
    (DefinitionKind::Skill, ".opencode/skills", Layout::SkillDirs),
    (DefinitionKind::Skill, ".opencode/skill", Layout::SkillDirs),
    (DefinitionKind::Skill, ".github/skills", Layout::SkillDirs),
];

/// How deep namespaced command directories are followed (a symlink loop must not hang
/// discovery).
const MAX_NAMESPACE_DEPTH: usize = 8;

/// OpenCode's configuration files, in precedence order: both may hold comments.
const OPENCODE_CONFIGS: &[&str] = &["opencode.json", "opencode.jsonc"];

/// OpenCode keeps the user's agents under `~/.config/opencode/`, not `~/.opencode/`.
const USER_ONLY_PLACES: &[(DefinitionKind, &str, Layout)] = &[
    (
        DefinitionKind::Agent,
        ".config/opencode/agents",
        Layout::Markdown,
    ),
    (
        DefinitionKind::Agent,
        ".config/opencode/agent",
        Layout::Markdown,
    ),
];

impl Catalog {
    /// Discovers every definition under `roots`.
    #[must_use]
    pub fn discover(files: &dyn Files, roots: &Roots) -> Self {
        let mut catalog = Self::default();
        if let Some(project) = &roots.project {
            catalog.read_places(files, project, PLACES);
            for config in OPENCODE_CONFIGS {
                catalog.read_opencode_json(files, &project.join(config));
            }
        }
        if let Some(home) = &roots.home {
            catalog.read_places(files, home, PLACES);
            catalog.read_places(files, home, USER_ONLY_PLACES);
            for config in OPENCODE_CONFIGS {
                catalog.read_opencode_json(files, &home.join(".config/opencode").join(config));
            }
        }
        catalog
    }

    /// The definition of `kind` called `name`, or else the first with `name` among its
    /// `aliases`.
    #[must_use]
    pub fn find(&self, kind: DefinitionKind, name: &str) -> Option<&Entry> {
        let of_kind = || self.entries.iter().filter(move |entry| entry.kind == kind);
        of_kind().find(|entry| entry.name == name).or_else(|| {
            of_kind().find(|entry| {
                entry
                    .parsed
                    .as_ref()
                    .is_ok_and(|front| front.aliases.iter().any(|alias| alias == name))
            })
        })
    }

    /// Every definition, in precedence order.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter()
    }

    /// The names of every definition of `kind`, in precedence order.
    pub fn names(&self, kind: DefinitionKind) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(move |entry| entry.kind == kind)
            .map(|entry| entry.name.as_str())
    }

    fn read_places(
        &mut self,
        files: &dyn Files,
        root: &Path,
        places: &[(DefinitionKind, &str, Layout)],
    ) {
        for &(kind, dir, layout) in places {
            let found = match layout {
                Layout::Markdown => files
                    .list(&root.join(dir))
                    .into_iter()
                    .filter_map(|path| Some((markdown_name(&path)?, path)))
                    .collect(),
                Layout::Namespaced => {
                    let mut found = Vec::new();
                    namespaced_markdown(files, &root.join(dir), "", 0, &mut found);
                    found
                }
                Layout::SkillDirs => files
                    .list(&root.join(dir))
                    .into_iter()
                    .filter_map(|path| {
                        let name = path.file_name()?.to_str()?.to_owned();
                        Some((name, path.join("SKILL.md")))
                    })
                    .collect(),
            };
            for (default_name, path) in found {
                let (parsed, unreadable) = match files.read(&path) {
                    Ok(text) => (parse_front_matter(&text), None),
                    // A skill directory without its SKILL.md defines nothing.
                    Err(ReadError::NotFound) => continue,
                    Err(error) => (
                        Err(FrontMatterError {
                            message: error.to_string(),
                        }),
                        Some(error),
                    ),
                };
                let name = parsed
                    .as_ref()
                    .ok()
                    .and_then(|front| front.name.clone())
                    .unwrap_or(default_name);
                self.add(Entry {
                    kind,
                    name,
                    path,
                    parsed,
                    unreadable,
                });
            }
        }
    }

    /// OpenCode's `"command": { "<name>": { "template": "…", … } }`, in `opencode.json` or
    /// `opencode.jsonc`, with comments and trailing commas as OpenCode accepts them. A file
    /// that is not JSON even so contributes nothing.
    fn read_opencode_json(&mut self, files: &dyn Files, path: &Path) {
        let Ok(mut text) = files.read(path) else {
            return;
        };
        if json_strip_comments::strip(&mut text).is_err() {
            return;
        }
        let Ok(serde_json::Value::Object(config)) = serde_json::from_str(&text) else {
            return;
        };
        let Some(serde_json::Value::Object(commands)) = config.get("command") else {
            return;
        };
        for (name, command) in commands {
            let Some(template) = command.get("template").and_then(|t| t.as_str()) else {
                continue;
            };
            let text_field =
                |key: &str| command.get(key).and_then(|v| v.as_str()).map(str::to_owned);
            self.add(Entry {
                kind: DefinitionKind::Command,
                name: name.clone(),
                path: path.to_path_buf(),
                parsed: Ok(FrontMatter {
                    name: Some(name.clone()),
                    description: text_field("description"),
                    model: text_field("model"),
                    tools: Vec::new(),
                    argument_hint: None,
                    aliases: Vec::new(),
                    body: template.trim().to_owned(),
                }),
                unreadable: None,
            });
        }
    }

    /// Keeps the first definition of a kind and name.
    fn add(&mut self, entry: Entry) {
        if self.find(entry.kind, &entry.name).is_none() {
            self.entries.push(entry);
        }
    }
}

/// The Markdown files under `dir`, named `<prefix><name>`, and those in its directories,
/// named `<prefix><dir>:<name>`: `.claude/commands/frontend/component.md` is
/// `frontend:component`.
fn namespaced_markdown(
    files: &dyn Files,
    dir: &Path,
    prefix: &str,
    depth: usize,
    found: &mut Vec<(String, PathBuf)>,
) {
    let entries = files.list(dir);
    // Files before directories, so `x.md` is listed before `x/…`.
    for path in &entries {
        if let Some(name) = markdown_name(path) {
            found.push((format!("{prefix}{name}"), path.clone()));
        }
    }
    if depth >= MAX_NAMESPACE_DEPTH {
        return;
    }
    for path in &entries {
        if markdown_name(path).is_none()
            && let Some(namespace) = path.file_name().and_then(|name| name.to_str())
            && !namespace.starts_with('.')
        {
            namespaced_markdown(
                files,
                path,
                &format!("{prefix}{namespace}:"),
                depth + 1,
                found,
            );
        }
    }
}

/// `reviewer` for `reviewer.md` and `reviewer.agent.md`; `None` for other files.
fn markdown_name(path: &Path) -> Option<String> {
    let file = path.file_name()?.to_str()?;
    let stem = file.strip_suffix(".md")?;
    let stem = stem.strip_suffix(".agent").unwrap_or(stem);
    (!stem.is_empty()).then(|| stem.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemoryFiles;

    fn roots() -> Roots {
        Roots {
            project: Some(PathBuf::from("/p")),
            home: Some(PathBuf::from("/home/u")),
        }
    }

    fn body(catalog: &Catalog, kind: DefinitionKind, name: &str) -> String {
        catalog
            .find(kind, name)
            .unwrap()
            .parsed
            .clone()
            .unwrap()
            .body
    }

    #[test]
    fn the_project_wins_over_the_user() {
        let mut files = MemoryFiles::new();
        files.insert("/home/u/.claude/agents/reviewer.md", "user reviewer");
        files.insert("/home/u/.claude/agents/helper.md", "user helper");
        files.insert("/p/.claude/agents/reviewer.md", "project reviewer");
        let catalog = Catalog::discover(&files, &roots());
        assert_eq!(
            body(&catalog, DefinitionKind::Agent, "reviewer"),
            "project reviewer"
        );
        assert_eq!(
            body(&catalog, DefinitionKind::Agent, "helper"),
            "user helper"
        );
        assert_eq!(
            catalog.names(DefinitionKind::Agent).collect::<Vec<_>>(),
            ["reviewer", "helper"]
        );
    }

    #[test]
    fn atomic_directories_win_over_other_tools() {
        let mut files = MemoryFiles::new();
        files.insert("/p/.claude/agents/a.md", "claude");
        files.insert("/p/.opencode/agent/a.md", "opencode");
        files.insert("/p/.atomic/agents/a.md", "atomic");
        files.insert("/p/.github/agents/b.agent.md", "copilot");
        files.insert("/p/.opencode/agents/c.md", "opencode c");
        let catalog = Catalog::discover(&files, &roots());
        assert_eq!(body(&catalog, DefinitionKind::Agent, "a"), "atomic");
        assert_eq!(body(&catalog, DefinitionKind::Agent, "b"), "copilot");
        assert_eq!(body(&catalog, DefinitionKind::Agent, "c"), "opencode c");
    }

    #[test]
    fn kinds_are_separate_and_names_come_from_front_matter_or_the_path() {
        let mut files = MemoryFiles::new();
        files.insert(
            "/p/.claude/skills/pdf/SKILL.md",
            "---\ndescription: d\n---\nskill",
        );
        files.insert("/p/.claude/commands/review.md", "command");
        files.insert(
            "/p/.claude/agents/review.md",
            "---\nname: critic\n---\nagent",
        );
        files.insert("/p/.claude/agents/notes.txt", "ignored");
        let catalog = Catalog::discover(&files, &roots());
        assert_eq!(body(&catalog, DefinitionKind::Skill, "pdf"), "skill");
        assert_eq!(body(&catalog, DefinitionKind::Command, "review"), "command");
        assert_eq!(body(&catalog, DefinitionKind::Agent, "critic"), "agent");
        assert!(catalog.find(DefinitionKind::Agent, "review").is_none());
        assert!(catalog.find(DefinitionKind::Agent, "notes").is_none());
    }

    #[test]
    fn opencode_json_commands_come_after_markdown_ones() {
        let mut files = MemoryFiles::new();
        files.insert(
            "/p/opencode.json",
            r#"{"command": {"test": {"template": "Run the tests $ARGUMENTS", "model": "m"}, "odd": {}}}"#,
        );
        files.insert("/home/u/.config/opencode/agents/u.md", "user opencode");
        let catalog = Catalog::discover(&files, &roots());
        let test = catalog.find(DefinitionKind::Command, "test").unwrap();
        let parsed = test.parsed.as_ref().unwrap();
        assert_eq!(parsed.body, "Run the tests $ARGUMENTS");
        assert_eq!(parsed.model.as_deref(), Some("m"));
        assert!(catalog.find(DefinitionKind::Command, "odd").is_none());
        assert_eq!(body(&catalog, DefinitionKind::Agent, "u"), "user opencode");
    }

    #[test]
    fn namespaced_commands_are_named_by_their_directories() {
        let mut files = MemoryFiles::new();
        files.insert("/p/.claude/commands/frontend/component.md", "component");
        files.insert("/p/.claude/commands/frontend/forms/field.md", "field");
        files.insert("/p/.claude/commands/review.md", "review");
        files.insert("/p/.claude/commands/frontend/notes.txt", "ignored");
        files.insert("/home/u/.claude/commands/ops/deploy.md", "deploy");
        let catalog = Catalog::discover(&files, &roots());
        assert_eq!(
            catalog.names(DefinitionKind::Command).collect::<Vec<_>>(),
            [
                "review",
                "frontend:component",
                "frontend:forms:field",
                "ops:deploy"
            ]
        );
        assert_eq!(
            body(&catalog, DefinitionKind::Command, "frontend:forms:field"),
            "field"
        );
        assert!(catalog.find(DefinitionKind::Command, "component").is_none());
        assert!(
            catalog
                .find(DefinitionKind::Agent, "frontend:component")
                .is_none()
        );
    }

    #[test]
    fn opencode_jsonc_with_comments_and_trailing_commas_is_read() {
        let mut files = MemoryFiles::new();
        files.insert(
            "/p/opencode.jsonc",
            "{\n  // the project's commands\n  \"command\": {\n    \"lint\": { \"template\": \"Lint $1\", /* cheap */ \"model\": \"m\", },\n  },\n}\n",
        );
        files.insert(
            "/home/u/.config/opencode/opencode.jsonc",
            r#"{"command": {"lint": {"template": "user lint"}, "user-only": {"template": "u"}}}"#,
        );
        let catalog = Catalog::discover(&files, &roots());
        assert_eq!(body(&catalog, DefinitionKind::Command, "lint"), "Lint $1");
        assert_eq!(body(&catalog, DefinitionKind::Command, "user-only"), "u");
    }

    #[test]
    fn a_broken_definition_is_kept_under_its_file_name() {
        let mut files = MemoryFiles::new();
        files.insert("/p/.claude/agents/bad.md", "---\nname: [x\n---\nbody");
        let catalog = Catalog::discover(&files, &roots());
        assert!(
            catalog
                .find(DefinitionKind::Agent, "bad")
                .unwrap()
                .parsed
                .is_err()
        );
    }
}
