//! Finding an agent CLI's executable: `option "bin" "/path"` or a search of `PATH`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{Environment, ProviderError};

/// The executable of an agent CLI.
///
/// `option "bin" "…"` wins: an absolute or relative path is used as is, a bare name is
/// searched on `PATH`. Otherwise `program` is searched on the `PATH` of `env`.
///
/// # Errors
/// [`ProviderError::Config`] naming the npm package to install when nothing is found.
pub(crate) fn find_binary(
    adapter: &'static str,
    program: &str,
    npm_package: &str,
    options: &Map<String, Value>,
    env: &Environment,
) -> Result<PathBuf, ProviderError> {
    let wanted = match options.get("bin") {
        None => program.to_owned(),
        Some(Value::String(bin)) if !bin.is_empty() => bin.clone(),
        Some(_) => {
            return Err(ProviderError::config(
                adapter,
                "option `bin` must be a path to the executable".to_owned(),
            ));
        }
    };
    if wanted.contains('/') {
        let path = PathBuf::from(&wanted);
        return if is_executable(&path) {
            Ok(path)
        } else {
            Err(ProviderError::config(
                adapter,
                format!(
                    "`{wanted}` (option `bin`) is not an executable file; install it with \
                     `npm install -g {npm_package}` or fix the path"
                ),
            ))
        };
    }
    search_path(&wanted, env).ok_or_else(|| {
        ProviderError::config(
            adapter,
            format!(
                "`{wanted}` was not found on PATH; install it with `npm install -g {npm_package}` \
                 or point `option \"bin\" \"/path/to/{program}\"` at it"
            ),
        )
    })
}

/// `program` on the `PATH` of `env`.
pub(crate) fn search_path(program: &str, env: &Environment) -> Option<PathBuf> {
    let path_var = env.get("PATH").unwrap_or_default();
    std::env::split_paths(path_var)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

/// Whether `path` is a file this user may execute.
pub(crate) fn is_executable(path: &Path) -> bool {
    let Ok(metadata) = std::fs::metadata(path) else {
        return false;
    };
    if !metadata.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        metadata.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_binary_names_the_npm_package() {
        let env = Environment::default().with("PATH", "/nonexistent-atomic-dir");
        let error = find_binary(
            "claude-code",
            "claude",
            "@anthropic-ai/claude-code",
            &Map::new(),
            &env,
        )
        .expect_err("not installed");
        let text = error.to_string();
        assert!(
            text.contains("npm install -g @anthropic-ai/claude-code"),
            "{text}"
        );
        assert!(text.contains("`claude` was not found on PATH"), "{text}");
    }

    #[test]
    fn finds_a_program_on_path_and_honours_bin() {
        let env = Environment::default().with("PATH", "/nonexistent-atomic-dir:/bin:/usr/bin");
        let found = find_binary("x", "sh", "pkg", &Map::new(), &env).expect("sh is on PATH");
        assert!(found.ends_with("sh"), "{found:?}");
        let mut options = Map::new();
        options.insert("bin".to_owned(), Value::String(found.display().to_string()));
        let empty = Environment::default();
        assert_eq!(
            find_binary("x", "other", "pkg", &options, &empty).expect("explicit path"),
            found
        );
        options.insert("bin".to_owned(), Value::String("/no/such/bin".to_owned()));
        assert!(find_binary("x", "other", "pkg", &options, &empty).is_err());
    }
}
