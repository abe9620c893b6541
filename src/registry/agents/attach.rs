//! Fills each `agent` node's `use="<prefix>:<name>"` with the discovered definition it
//! names, reporting unknown prefixes, unknown names and definitions whose front matter does
//! not parse. Runs at compile time so the IR carries the text: `run` and `resume` see the
//! same definition, and the runtime needs no file access for it.

use super::{Catalog, Entry, Roots};
use crate::diagnostic::{Code, Diagnostic, did_you_mean, expected_one_of};
use crate::ir::{Agent, DefinitionKind, NodeKind, UsedDefinition, Workflow};
use crate::source::{Files, Spanned};

/// Resolves every discovered name `workflow`'s agents use. Directories are only listed
/// when some agent uses one, so workflows without them cost nothing.
pub fn attach_definitions(
    workflow: &mut Workflow,
    files: &dyn Files,
    roots: &Roots,
) -> Vec<Diagnostic> {
    let uses_discovered = |agent: &Agent| {
        agent
            .use_
            .as_ref()
            .is_some_and(|used| used.value.contains(':'))
    };
    let mut agents: Vec<&mut Agent> = workflow
        .nodes
        .iter_mut()
        .filter_map(|node| match &mut node.kind {
            NodeKind::Agent(agent) if uses_discovered(agent) => Some(&mut **agent),
            _ => None,
        })
        .collect();
    if agents.is_empty() {
        return Vec::new();
    }
    let catalog = Catalog::discover(files, roots);
    let mut diagnostics = Vec::new();
    for agent in &mut agents {
        let used = agent.use_.clone().expect("filtered on `use=`");
        match lookup(&catalog, &used) {
            Ok(definition) => agent.definition = Some(definition),
            Err(diagnostic) => diagnostics.push(*diagnostic),
        }
    }
    diagnostics
}

fn lookup(catalog: &Catalog, used: &Spanned<String>) -> Result<UsedDefinition, Box<Diagnostic>> {
    let (prefix, name) = used
        .value
        .split_once(':')
        .expect("only prefixed names are looked up");
    let Some(kind) = DefinitionKind::from_prefix(prefix) else {
        return Err(Box::new(unknown_prefix(used, prefix, name)));
    };
    let Some(entry) = catalog.find(kind, name) else {
        return Err(Box::new(unknown_definition(catalog, used, kind, name)));
    };
    let Entry {
        path,
        parsed,
        unreadable,
        ..
    } = entry;
    if let Some(error) = unreadable {
        return Err(Box::new(Diagnostic::unreadable(
            used.span,
            &format!("{} definition", kind.prefix()),
            path,
            error,
        )));
    }
    match parsed {
        Ok(front) => Ok(UsedDefinition {
            kind,
            name: name.to_owned(),
            path: path.display().to_string(),
            body: front.body.clone(),
            model: front.model.clone(),
            tools: front.tools.clone(),
        }),
        Err(error) => Err(Box::new(
            Diagnostic::new(
                Code::InvalidDefinition,
                used.span,
                format!(
                    "the front matter of `{}` cannot be used: {}",
                    path.display(),
                    error.message
                ),
            )
            .label(format!("{} `{name}` is defined there", kind.prefix()))
            .help(
                "fix the YAML between the two `---` lines at the top of that file: a mapping such as `description: …` and `tools: Read, Grep` (or a list, or OpenCode's `tools: {write: true}`)",
            ),
        )),
    }
}

/// The help suggests the whole corrected value, so an editor's quick fix can replace it.
fn unknown_prefix(used: &Spanned<String>, prefix: &str, name: &str) -> Diagnostic {
    let prefixes: Vec<&str> = DefinitionKind::ALL
        .iter()
        .map(|kind| kind.prefix())
        .collect();
    let near = did_you_mean(prefix, prefixes.iter().copied());
    let help = match near {
        Some(near) => format!("did you mean `{near}:{name}`?"),
        None => format!(
            "write {} before the name, or no prefix to name an agent node",
            expected_one_of(&prefixes.iter().map(|p| format!("{p}:")).collect::<Vec<_>>())
        ),
    };
    Diagnostic::new(
        Code::UnknownUsePrefix,
        used.span,
        format!("unknown `use` prefix `{prefix}:`"),
    )
    .label("not `agent:`, `skill:` or `command:`")
    .help(help)
    .maybe_replace_with(near.map(|near| format!("{near}:{name}")))
}

fn unknown_definition(
    catalog: &Catalog,
    used: &Spanned<String>,
    kind: DefinitionKind,
    name: &str,
) -> Diagnostic {
    let prefix = kind.prefix();
    let near = did_you_mean(name, catalog.names(kind));
    let help = match near {
        Some(near) => format!("did you mean `{prefix}:{near}`?"),
        None => format!(
            "define it in {}, in the project or under your home directory",
            match kind {
                DefinitionKind::Agent =>
                    "`.atomic/agents/`, `.claude/agents/`, `.opencode/agents/` or `.github/agents/`",
                DefinitionKind::Skill =>
                    "`.atomic/skills/<name>/SKILL.md`, `.claude/skills/` or `.github/skills/`",
                DefinitionKind::Command =>
                    "`.atomic/commands/`, `.claude/commands/` or `opencode.json`",
            }
        ),
    };
    Diagnostic::new(
        Code::UnknownDefinition,
        used.span,
        format!("no {prefix} named `{name}` was discovered"),
    )
    .label(format!("unknown {prefix}"))
    .help(help)
    .maybe_replace_with(near.map(|near| format!("{prefix}:{near}")))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::source::{MemoryFiles, Sources};

    fn workflow(use_: &str) -> Workflow {
        let text = format!(
            "workflow \"w\" provider=\"p\" {{\nprovider \"p\" adapter=\"claude-code\"\nagent \"a\" use=\"{use_}\" prompt=\"x\"\n}}"
        );
        let mut sources = Sources::new();
        let file = sources.add("test.kdl", text.as_str());
        let parsed = crate::syntax::kdl::parse(&sources.get(file).text, file);
        crate::check::resolve(&sources, file, parsed.document)
            .value
            .expect("resolves")
    }

    fn attach(use_: &str) -> (Workflow, Vec<Code>) {
        let mut files = MemoryFiles::new();
        files.insert(
            "/p/.claude/agents/reviewer.md",
            "---\nmodel: opus\ntools: Read, Grep\n---\nYou review.",
        );
        files.insert("/p/.claude/agents/broken.md", "---\ntools: [\n---\nx");
        files.insert("/p/.claude/commands/fix.md", "Fix $ARGUMENTS");
        let roots = Roots {
            project: Some(PathBuf::from("/p")),
            home: None,
        };
        let mut workflow = workflow(use_);
        let codes = attach_definitions(&mut workflow, &files, &roots)
            .into_iter()
            .map(|diagnostic| diagnostic.code)
            .collect();
        (workflow, codes)
    }

    fn definition(workflow: &Workflow) -> Option<&UsedDefinition> {
        let NodeKind::Agent(agent) = &workflow.nodes[0].kind else {
            panic!("an agent")
        };
        agent.definition.as_ref()
    }

    #[test]
    fn a_known_agent_is_copied_into_the_ir() {
        let (workflow, codes) = attach("agent:reviewer");
        assert_eq!(codes, []);
        let definition = definition(&workflow).unwrap();
        assert_eq!(definition.body, "You review.");
        assert_eq!(definition.model.as_deref(), Some("opus"));
        assert_eq!(definition.tools, ["Read", "Grep"]);
        assert_eq!(definition.path, "/p/.claude/agents/reviewer.md");
    }

    #[test]
    fn problems_have_their_own_codes() {
        assert_eq!(attach("agent:reviewr").1, [Code::UnknownDefinition]);
        assert_eq!(attach("command:reviewer").1, [Code::UnknownDefinition]);
        assert_eq!(attach("agnt:reviewer").1, [Code::UnknownUsePrefix]);
        assert_eq!(attach("agent:broken").1, [Code::InvalidDefinition]);
        assert_eq!(attach("command:fix").1, []);
    }

    #[test]
    fn the_help_suggests_a_discovered_name() {
        let mut workflow = workflow("agent:reviewr");
        let mut files = MemoryFiles::new();
        files.insert("/p/.claude/agents/reviewer.md", "x");
        let roots = Roots {
            project: Some(PathBuf::from("/p")),
            home: None,
        };
        let diagnostics = attach_definitions(&mut workflow, &files, &roots);
        assert_eq!(
            diagnostics[0].help.as_deref(),
            Some("did you mean `agent:reviewer`?")
        );
    }
}
