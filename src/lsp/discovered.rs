//! The names a workflow can `use` from outside its file, for completion: custom tools
//! (`tool … use="<name>"`) and discovered agents, skills and commands
//! (`agent … use="agent:<name>"`), found where `check` finds them.

use std::path::Path;

use crate::ir::DefinitionKind;
use crate::registry::{self, agents::Catalog, agents::Roots};
use crate::source::{Files, Sources};

/// Names with a one-line description each.
#[derive(Clone, Debug, Default)]
pub struct Discovered {
    /// Custom tools, by name.
    pub tools: Vec<(String, Option<String>)>,
    /// Definitions, written as `use=` takes them (`agent:reviewer`).
    pub definitions: Vec<(String, Option<String>)>,
}

impl Discovered {
    /// What the workflow at `path` can use: tools from the nearest `.atomic/tools/` and
    /// the user's, definitions from the project (`root`) and `home`.
    #[must_use]
    pub fn find(path: &Path, root: Option<&Path>, home: Option<&Path>, files: &dyn Files) -> Self {
        let user_dir = home.map(|home| home.join(".atomic"));
        let dirs = registry::tool_dirs(files, path, user_dir.as_deref());
        let tools = registry::discover_tools(&mut Sources::new(), files, &dirs)
            .value
            .unwrap_or_default()
            .into_iter()
            .map(|tool| (tool.name.value, tool.description))
            .collect();
        let roots = Roots {
            project: root.map(Path::to_path_buf),
            home: home.map(Path::to_path_buf),
        };
        let catalog = Catalog::discover(files, &roots);
        let mut definitions = Vec::new();
        for (kind, prefix) in [
            (DefinitionKind::Agent, "agent"),
            (DefinitionKind::Skill, "skill"),
            (DefinitionKind::Command, "command"),
        ] {
            for name in catalog.names(kind) {
                let written = format!("{prefix}:{name}");
                if definitions.iter().any(|(seen, _)| *seen == written) {
                    continue; // a user definition hidden by the project's
                }
                let description = catalog
                    .find(kind, name)
                    .and_then(|entry| entry.parsed.as_ref().ok())
                    .and_then(|front| front.description.clone());
                definitions.push((written, description));
            }
        }
        Self { tools, definitions }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemoryFiles;

    #[test]
    fn tools_and_definitions_are_listed_with_their_descriptions() {
        let mut files = MemoryFiles::new();
        files.insert(
            "/p/.atomic/tools/fmt.kdl",
            "tool \"fmt\" description=\"Formats the code\" {\n    command \"true\"\n}\n",
        );
        files.insert(
            "/p/.claude/agents/reviewer.md",
            "---\ndescription: Reviews diffs\n---\nYou review.\n",
        );
        files.insert("/home/.claude/skills/pdf/SKILL.md", "Read PDFs.\n");
        let found = Discovered::find(
            Path::new("/p/flow.kdl"),
            Some(Path::new("/p")),
            Some(Path::new("/home")),
            &files,
        );
        assert_eq!(
            found.tools,
            [("fmt".to_owned(), Some("Formats the code".to_owned()))]
        );
        assert_eq!(
            found.definitions,
            [
                (
                    "agent:reviewer".to_owned(),
                    Some("Reviews diffs".to_owned())
                ),
                ("skill:pdf".to_owned(), None),
            ]
        );
    }
}
