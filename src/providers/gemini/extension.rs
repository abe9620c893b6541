//! A call's MCP servers as a Gemini CLI extension of that call only.
//!
//! The CLI takes MCP servers from its settings files or from extensions. Settings do not fit:
//! the user settings file of the provider's home is shared by calls running side by side, and
//! the CLI reads a system settings file (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`) only when it and
//! every directory above it are owned by root and writable by nobody else. An extension is a
//! directory `$GEMINI_CLI_HOME/.gemini/extensions/<name>/gemini-extension.json`, and
//! `--extensions <name>` makes it the only one active, so each call gets a fresh one and every
//! other call passes `--extensions none`.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::super::ProviderError;
use super::NAME;

/// The file an extension is described by.
const MANIFEST: &str = "gemini-extension.json";

/// A call's extension directory, only this user can read (its servers' variables may be
/// secrets), removed when dropped.
#[derive(Debug)]
pub(super) struct CallExtension {
    name: String,
    dir: PathBuf,
}

impl CallExtension {
    /// Writes an extension serving `mcp_servers` (the settings' `mcpServers` shape) into the
    /// extensions directory of `home`.
    ///
    /// # Errors
    /// [`ProviderError::Config`] naming the directory when it cannot be written.
    pub(super) fn write(home: &Path, mcp_servers: Value) -> Result<Self, ProviderError> {
        let suffix: u64 = rand::random();
        let name = format!("atomic-mcp-{suffix:016x}");
        let parent = home.join(".gemini").join("extensions");
        let dir = parent.join(&name);
        let failed = |error: std::io::Error| {
            ProviderError::config(
                NAME,
                format!(
                    "cannot write the call's MCP servers into `{}`: {error}; set `option \
                     \"home\"` to a directory atomic may write",
                    parent.display()
                ),
            )
        };
        std::fs::create_dir_all(&parent).map_err(failed)?;
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir).map_err(failed)?;
        let extension = Self { name, dir };
        let manifest = json!({
            "name": extension.name,
            "version": "1.0.0",
            "mcpServers": mcp_servers,
        });
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(extension.dir.join(MANIFEST)).map_err(failed)?;
        file.write_all(manifest.to_string().as_bytes())
            .map_err(failed)?;
        Ok(extension)
    }

    /// The name `--extensions` selects it by.
    pub(super) fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for CallExtension {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_private_and_removed_when_dropped() {
        let home = tempfile::tempdir().expect("home");
        let extension =
            CallExtension::write(home.path(), json!({"notes": {"command": "x"}})).expect("write");
        let dir = home
            .path()
            .join(".gemini/extensions")
            .join(extension.name());
        let manifest: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(MANIFEST)).expect("manifest"))
                .expect("json");
        assert_eq!(manifest["name"], extension.name());
        assert_eq!(manifest["mcpServers"]["notes"]["command"], "x");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |path: &Path| std::fs::metadata(path).expect("meta").permissions().mode();
            assert_eq!(mode(&dir) & 0o777, 0o700);
            assert_eq!(mode(&dir.join(MANIFEST)) & 0o777, 0o600);
        }
        drop(extension);
        assert!(!dir.exists());
    }
}
