//! What atomic answers an ACP agent on the node's behalf: its permission requests, decided
//! from the node's `permission=` mode and granted `tools`, and its file-system requests,
//! served inside the node's working directory only.

use std::path::{Component, Path, PathBuf};

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionId, PermissionOptionKind, ToolKind,
};

use super::super::{AgentRequest, ProviderError};
use super::NAME;
use crate::ir::PermissionMode;

/// The tool kinds ACP names, as `tools` grants them.
const KINDS: &[(&str, ToolKind)] = &[
    ("read", ToolKind::Read),
    ("edit", ToolKind::Edit),
    ("delete", ToolKind::Delete),
    ("move", ToolKind::Move),
    ("search", ToolKind::Search),
    ("execute", ToolKind::Execute),
    ("think", ToolKind::Think),
    ("fetch", ToolKind::Fetch),
    ("switch_mode", ToolKind::SwitchMode),
    ("other", ToolKind::Other),
];

/// Kinds that only look: allowed under every mode but `plan`'s refusal of changes.
const LOOKING: &[ToolKind] = &[ToolKind::Read, ToolKind::Search, ToolKind::Think];

/// Kinds that change files in the workspace.
const EDITING: &[ToolKind] = &[ToolKind::Edit, ToolKind::Delete, ToolKind::Move];

/// The node's answers.
#[derive(Debug, Clone)]
pub(super) struct Policy {
    mode: Option<PermissionMode>,
    granted: Vec<ToolKind>,
    workspace: PathBuf,
}

impl Policy {
    /// The policy of `request`.
    ///
    /// # Errors
    /// [`ProviderError::Config`]: a granted tool that is not an ACP tool kind (`ask` is
    /// refused by the adapter table before a call starts).
    pub(super) fn new(request: &AgentRequest) -> Result<Self, ProviderError> {
        let mut granted = Vec::new();
        for tool in &request.grants.tools {
            let Some((_, kind)) = KINDS.iter().find(|(name, _)| *name == tool.name) else {
                let names: Vec<&str> = KINDS.iter().map(|(name, _)| *name).collect();
                return Err(config(&format!(
                    "tool `{}` cannot be granted: an ACP agent's tools are granted by kind, one \
                     of {}",
                    tool.name,
                    names.join(", ")
                )));
            };
            granted.push(*kind);
        }
        let workspace = std::fs::canonicalize(request.workspace.root())
            .unwrap_or_else(|_| request.workspace.root().to_path_buf());
        Ok(Self {
            mode: request.grants.permission,
            granted,
            workspace,
        })
    }

    /// Whether a tool call of `kind` may run: `bypassPermissions` allows everything,
    /// `acceptEdits` looking and editing, `default` looking, `plan` only looking; a granted
    /// kind is allowed under every mode but `plan`.
    pub(super) fn allows(&self, kind: &ToolKind) -> bool {
        let looking = LOOKING.contains(kind);
        match self.mode {
            Some(PermissionMode::Plan) => looking,
            Some(PermissionMode::Bypass) => true,
            Some(PermissionMode::AcceptEdits) => {
                looking || EDITING.contains(kind) || self.granted.contains(kind)
            }
            None | Some(PermissionMode::Default | PermissionMode::Ask) => {
                looking || self.granted.contains(kind)
            }
        }
    }

    /// Whether the agent may write files through the client (`fs/write_text_file`).
    pub(super) fn allows_writes(&self) -> bool {
        self.allows(&ToolKind::Edit)
    }

    /// The option answering a request: the narrowest allowing one when allowed, else the
    /// narrowest refusing one; `None` when the agent offered no such option (the request is
    /// then cancelled).
    pub(super) fn choose(
        allowed: bool,
        options: &[PermissionOption],
    ) -> Option<PermissionOptionId> {
        let preference: &[PermissionOptionKind] = if allowed {
            &[
                PermissionOptionKind::AllowOnce,
                PermissionOptionKind::AllowAlways,
            ]
        } else {
            &[
                PermissionOptionKind::RejectOnce,
                PermissionOptionKind::RejectAlways,
            ]
        };
        preference.iter().find_map(|kind| {
            options
                .iter()
                .find(|option| option.kind == *kind)
                .map(|option| option.option_id.clone())
        })
    }

    /// `path` when it is inside the workspace, else why not. Paths are absolute in ACP; a
    /// file that does not exist yet is judged by its nearest existing ancestor, so a link
    /// inside the workspace cannot lead a write outside it.
    pub(super) fn confine(&self, path: &Path) -> Result<PathBuf, String> {
        if !path.is_absolute() {
            return Err(format!("`{}` is not an absolute path", path.display()));
        }
        if path.components().any(|part| part == Component::ParentDir) {
            return Err(format!("`{}` contains `..`", path.display()));
        }
        let mut existing = path;
        let mut rest = Vec::new();
        let resolved = loop {
            match std::fs::canonicalize(existing) {
                Ok(real) => break real,
                Err(_) => {
                    let (Some(parent), Some(name)) = (existing.parent(), existing.file_name())
                    else {
                        return Err(format!("`{}` cannot be resolved", path.display()));
                    };
                    rest.push(name.to_owned());
                    existing = parent;
                }
            }
        };
        let real = rest.iter().rev().fold(resolved, |acc, name| acc.join(name));
        if real.starts_with(&self.workspace) {
            Ok(real)
        } else {
            Err(format!(
                "`{}` is outside the workspace `{}`",
                path.display(),
                self.workspace.display()
            ))
        }
    }
}

fn config(message: &str) -> ProviderError {
    ProviderError::config(NAME, message.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::Grants;
    use crate::providers::ToolGrant;

    fn grant(name: &str) -> ToolGrant {
        ToolGrant {
            name: name.to_owned(),
            description: None,
            input_schema: None,
            command: Vec::new(),
            timeout: None,
        }
    }

    fn policy(mode: Option<PermissionMode>, tools: &[&str], dir: &Path) -> Policy {
        let request = AgentRequest {
            workspace: crate::workspace::Workspace::new(dir.to_path_buf()),
            grants: Grants {
                permission: mode,
                tools: tools.iter().map(|name| grant(name)).collect(),
                ..Grants::default()
            },
            ..AgentRequest::default()
        };
        Policy::new(&request).expect("policy")
    }

    #[test]
    fn modes_and_grants_decide_by_kind() {
        let dir = tempfile::tempdir().expect("dir");
        let default = policy(None, &[], dir.path());
        assert!(default.allows(&ToolKind::Read));
        assert!(!default.allows(&ToolKind::Edit));
        assert!(!default.allows(&ToolKind::Execute));
        let granted = policy(None, &["execute"], dir.path());
        assert!(granted.allows(&ToolKind::Execute));
        assert!(!granted.allows(&ToolKind::Edit));
        let edits = policy(Some(PermissionMode::AcceptEdits), &[], dir.path());
        assert!(edits.allows(&ToolKind::Edit) && edits.allows_writes());
        assert!(!edits.allows(&ToolKind::Execute));
        let plan = policy(Some(PermissionMode::Plan), &["execute"], dir.path());
        assert!(!plan.allows(&ToolKind::Execute) && !plan.allows_writes());
        let bypass = policy(Some(PermissionMode::Bypass), &[], dir.path());
        assert!(bypass.allows(&ToolKind::Fetch));
    }

    #[test]
    fn unknown_grants_are_refused() {
        let request = AgentRequest {
            grants: Grants {
                tools: vec![grant("Bash")],
                ..Grants::default()
            },
            ..AgentRequest::default()
        };
        let error = Policy::new(&request).expect_err("Bash is not a kind");
        assert!(error.to_string().contains("execute"), "{error}");
    }

    #[test]
    fn the_narrowest_option_is_chosen() {
        let option = |id: &str, kind| PermissionOption::new(id.to_owned(), id.to_owned(), kind);
        let options = [
            option("always", PermissionOptionKind::AllowAlways),
            option("once", PermissionOptionKind::AllowOnce),
            option("no", PermissionOptionKind::RejectOnce),
        ];
        assert_eq!(
            Policy::choose(true, &options).expect("allow").0.as_ref(),
            "once"
        );
        assert_eq!(
            Policy::choose(false, &options).expect("reject").0.as_ref(),
            "no"
        );
        assert!(Policy::choose(false, &options[..2]).is_none());
    }

    #[test]
    fn paths_are_confined_to_the_workspace() {
        let dir = tempfile::tempdir().expect("dir");
        let inside = policy(None, &[], dir.path());
        let root = std::fs::canonicalize(dir.path()).expect("real");
        assert_eq!(
            inside
                .confine(&dir.path().join("new/file.txt"))
                .expect("inside"),
            root.join("new/file.txt")
        );
        assert!(inside.confine(Path::new("/etc/passwd")).is_err());
        assert!(inside.confine(&dir.path().join("../x")).is_err());
        assert!(inside.confine(Path::new("relative.txt")).is_err());
        #[cfg(unix)]
        {
            let outside = tempfile::tempdir().expect("outside");
            std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).expect("link");
            let error = inside
                .confine(&dir.path().join("link/escape.txt"))
                .expect_err("a link out of the workspace");
            assert!(error.contains("outside the workspace"), "{error}");
        }
    }
}
