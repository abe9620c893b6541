//! Where custom tools come from: the project's `.atomic/tools/*.kdl` over the user's
//! `~/.atomic/tools/*.kdl`. The project is the nearest directory above the workflow file
//! whose `.atomic/tools/` holds files, looking no further up than a directory holding
//! `.git`. Everything is read through [`Files`], so checks stay testable and the language
//! server sees unsaved buffers; the result is sorted by name.

use std::path::{Path, PathBuf};

use super::tool_file::resolve_tool_file;
use crate::diagnostic::{Diagnostic, Outcome};
use crate::ir::CustomTool;
use crate::source::{Files, ReadError, Sources, Span};

/// The tool directories for the workflow at `workflow`, highest priority first: the
/// project's, then `user_dir/tools` (`user_dir` is the user's `~/.atomic`).
#[must_use]
pub fn tool_dirs(files: &dyn Files, workflow: &Path, user_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for dir in workflow.ancestors().skip(1) {
        let tools = dir.join(".atomic").join("tools");
        if !files.list(&tools).is_empty() {
            dirs.push(tools);
            break;
        }
        if files.exists(&dir.join(".git")) {
            break;
        }
    }
    if let Some(user) = user_dir.map(|dir| dir.join("tools"))
        && !dirs.contains(&user)
    {
        dirs.push(user);
    }
    dirs
}

/// Reads every `*.kdl` file in `dirs` (highest priority first) and resolves it into a
/// [`CustomTool`]. A name in an earlier directory hides the same name in a later one (the
/// project overrides the user); two files of one directory declaring one name is an error.
/// Tool files are added to `sources`, so their problems render against their own text.
pub fn discover_tools(
    sources: &mut Sources,
    files: &dyn Files,
    dirs: &[PathBuf],
) -> Outcome<Vec<CustomTool>> {
    let mut tools: Vec<(usize, CustomTool)> = Vec::new();
    let mut out = Vec::new();
    for (rank, dir) in dirs.iter().enumerate() {
        let paths = files
            .list(dir)
            .into_iter()
            .filter(|path| path.extension().is_some_and(|ext| ext == "kdl"));
        for path in paths {
            let file = match files.read(&path) {
                Ok(text) => sources.add(&path, text),
                // Listed a moment ago: gone since, nothing to report.
                Err(ReadError::NotFound) => continue,
                Err(ReadError::NotUtf8(bad)) => {
                    let file = sources.add(&path, bad.text.clone());
                    out.push(Diagnostic::not_utf8(bad.first_bad(file), &bad));
                    continue;
                }
                Err(error) => {
                    let file = sources.add(&path, String::new());
                    out.push(Diagnostic::unreadable(
                        Span::new(file, 0, 0),
                        "tool file",
                        &path,
                        &error,
                    ));
                    continue;
                }
            };
            let resolved = resolve_tool_file(sources, file, files);
            out.extend(resolved.diagnostics);
            let Some(tool) = resolved.value else {
                continue;
            };
            match tools.iter().find(|(_, t)| t.name.value == tool.name.value) {
                Some((first_rank, first)) if *first_rank == rank => out.push(
                    Diagnostic::declared_twice(
                        "tool",
                        &tool.name.value,
                        tool.name.span,
                        first.name.span,
                    )
                    .help("rename one of them, or remove one of the files"),
                ),
                Some(_) => {}
                None => tools.push((rank, tool)),
            }
        }
    }
    let mut tools: Vec<CustomTool> = tools.into_iter().map(|(_, tool)| tool).collect();
    tools.sort_by(|a, b| a.name.value.cmp(&b.name.value));
    Outcome::new(Some(tools), out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;
    use crate::source::MemoryFiles;

    fn tool(name: &str, program: &str) -> String {
        format!("tool \"{name}\" {{ command \"{program}\"; }}")
    }

    fn discover(files: &MemoryFiles, workflow: &str) -> (Vec<(String, String)>, Vec<Code>) {
        let mut sources = Sources::new();
        let dirs = tool_dirs(
            files,
            Path::new(workflow),
            Some(Path::new("/home/u/.atomic")),
        );
        let outcome = discover_tools(&mut sources, files, &dirs);
        let tools = outcome
            .value
            .expect("always a list")
            .into_iter()
            .map(|tool| (tool.name.value, tool.command.join(" ")))
            .collect();
        (tools, outcome.diagnostics.iter().map(|d| d.code).collect())
    }

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn the_project_wins_over_the_user_and_the_list_is_sorted() {
        let mut files = MemoryFiles::new();
        files.insert("/p/.atomic/tools/fmt.kdl", tool("fmt", "project-fmt"));
        files.insert("/p/.atomic/tools/b.kdl", tool("build", "make"));
        files.insert("/p/.atomic/tools/notes.txt", "not a tool");
        files.insert("/home/u/.atomic/tools/fmt.kdl", tool("fmt", "user-fmt"));
        files.insert("/home/u/.atomic/tools/lint.kdl", tool("lint", "user-lint"));
        let (tools, codes) = discover(&files, "/p/.atomic/workflows/flow.kdl");
        assert_eq!(codes, []);
        assert_eq!(
            tools,
            pairs(&[
                ("build", "make"),
                ("fmt", "project-fmt"),
                ("lint", "user-lint")
            ])
        );
        // A workflow elsewhere in the project finds the same project tools.
        let (tools, _) = discover(&files, "/p/flows/deep/flow.kdl");
        assert_eq!(tools[1], ("fmt".to_owned(), "project-fmt".to_owned()));
        // Outside any project: the user's tools only.
        let (tools, _) = discover(&files, "/elsewhere/flow.kdl");
        assert_eq!(tools, pairs(&[("fmt", "user-fmt"), ("lint", "user-lint")]));
    }

    #[test]
    fn the_search_stops_at_the_repository_root() {
        let mut files = MemoryFiles::new();
        files.insert("/outer/.atomic/tools/x.kdl", tool("x", "x"));
        files.insert("/outer/repo/.git", "gitdir: …");
        let (tools, _) = discover(&files, "/outer/repo/flow.kdl");
        assert_eq!(tools, []);
    }

    #[test]
    fn one_name_twice_in_one_directory_is_an_error() {
        let mut files = MemoryFiles::new();
        files.insert("/p/.atomic/tools/a.kdl", tool("fmt", "a"));
        files.insert("/p/.atomic/tools/b.kdl", tool("fmt", "b"));
        files.insert("/p/.atomic/tools/c.kdl", "tool \"broken\"");
        let (tools, codes) = discover(&files, "/p/flow.kdl");
        assert_eq!(tools, pairs(&[("fmt", "a")]));
        assert_eq!(codes, [Code::DuplicateId, Code::MissingProperty]);
    }
}
