//! One custom tool file (`.atomic/tools/<name>.kdl`) → [`CustomTool`]:
//!
//! ```kdl
//! tool "run-tests" description="Runs the test suite" {
//!     argument "filter" type="string" description="Only tests whose name contains this" required=#false
//!     command "./scripts/run-tests.sh"      // argv; gets the arguments as a JSON object on stdin
//!     timeout "10m"
//! }
//! ```
//!
//! `schema="file.json"` (relative to the tool file) may replace the `argument` children.
//! Parsed with atomic's own KDL parser and checked by the same grammar-driven structure
//! checks as workflows (`custom-tool` in grammar/atomic.grammar.json); every problem is a
//! diagnostic against the tool file, and a tool is still returned when its name and
//! command could be read.

use std::path::Path;

use super::arguments;
use crate::check::{self, Checked, parse_duration};
use crate::diagnostic::{Code, Diagnostic, Outcome};
use crate::ir::CustomTool;
use crate::source::{Files, SourceId, Sources, Span, Spanned};
use crate::syntax::kdl::{self, Entry, Node, Value};

/// Parses and resolves the tool file `file` (already in `sources`). Schema files are read
/// through `files`, relative to the tool file's directory.
pub fn resolve_tool_file(
    sources: &Sources,
    file: SourceId,
    files: &dyn Files,
) -> Outcome<CustomTool> {
    let source = sources.get(file);
    let parsed = kdl::parse(&source.text, file);
    let mut out = parsed.diagnostics;
    let dir = source.path.parent().unwrap_or(Path::new(""));
    let mut tools = parsed.document.nodes.iter().filter(|node| {
        if node.name.value == "tool" {
            return true;
        }
        out.push(
            Diagnostic::new(
                Code::UnknownNodeKind,
                node.name.span,
                format!("unknown declaration `{}` in a tool file", node.name.value),
            )
            .label("not a tool")
            .help("a tool file holds one `tool \"<name>\" { command …; }`"),
        );
        false
    });
    let Some(first) = tools.next() else {
        if !out.iter().any(Diagnostic::is_error) {
            out.push(
                Diagnostic::new(
                    Code::MissingProperty,
                    Span::new(file, 0, 0),
                    "the tool file declares no `tool`",
                )
                .label("empty tool file")
                .help("write `tool \"<name>\" description=\"…\" { command \"program\"; }`"),
            );
        }
        return Outcome::new(None, out);
    };
    let mut extra = Vec::new();
    for node in tools {
        extra.push(
            Diagnostic::new(
                Code::DuplicateChild,
                node.name.span,
                "a tool file declares one `tool`",
            )
            .label("second tool")
            .with_label(first.name.span, "the file's tool")
            .help("move this tool into a file of its own"),
        );
    }
    out.extend(extra);
    let tool = resolve_tool(first, files, dir, &mut out);
    Outcome::new(tool, out)
}

fn resolve_tool(
    node: &Node,
    files: &dyn Files,
    dir: &Path,
    out: &mut Vec<Diagnostic>,
) -> Option<CustomTool> {
    // The same grammar-driven checks as a workflow's nodes (`custom-tool` in
    // grammar/atomic.grammar.json): unknown, missing, repeated and mistyped items are
    // reported there, and only what passed is read below.
    let checked = check::check_custom_tool(node, out);
    let name = string(checked.arg(0));
    if let Some(name) = &name
        && !check::is_node_id(&name.value)
    {
        out.push(
            Diagnostic::new(
                Code::InvalidId,
                name.span,
                format!("`{}` is not a valid tool name", name.value),
            )
            .label("invalid name")
            .help("use letters, digits, `_` and `-`, starting with a letter or `_`"),
        );
    }
    let description = string(checked.prop("description")).map(|d| d.value);
    let argument_nodes: Vec<&Checked<'_>> = checked.children_of("custom-tool/argument").collect();
    let (arguments, schema) = match string(checked.prop("schema")) {
        Some(schema) => {
            if let Some(argument) = argument_nodes.first() {
                out.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        schema.span,
                        "a tool has both `schema=` and `argument` children",
                    )
                    .label("schema file")
                    .with_label(argument.name_span(), "and arguments")
                    .help("keep one: the schema file, or the `argument` children"),
                );
            }
            arguments::from_schema_file(files, dir, &schema, out)
                .unwrap_or_else(|| arguments::from_children(&[], out))
        }
        None => arguments::from_children(&argument_nodes, out),
    };
    let command = checked.child("custom-tool/command").and_then(|command| {
        let argv: Vec<String> = command
            .args_from(0)
            .filter_map(|entry| string(Some(entry)).map(|arg| arg.value))
            .collect();
        // An invalid argument was reported; a partial argv would run the wrong command.
        (!argv.is_empty() && argv.len() == command.args.len()).then_some(argv)
    });
    let timeout = checked
        .child("custom-tool/timeout")
        .and_then(|timeout| string(timeout.arg(0)))
        .and_then(|text| {
            let duration = parse_duration(&text.value).ok()?;
            Some(Spanned::new(duration, text.span))
        });
    Some(CustomTool {
        name: name?,
        description,
        arguments,
        schema,
        command: command?,
        timeout,
        span: node.span,
    })
}

/// A string value the grammar checks let through.
pub(super) fn string(entry: Option<&Entry>) -> Option<Spanned<String>> {
    let entry = entry?;
    match &entry.value {
        Value::String(text) => Some(Spanned::new(text.to_string(), entry.value_span)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::source::MemoryFiles;

    fn resolve(text: &str, files: &MemoryFiles) -> (Option<CustomTool>, Vec<Code>) {
        let mut sources = Sources::new();
        let file = sources.add("/p/.atomic/tools/t.kdl", text);
        let outcome = resolve_tool_file(&sources, file, files);
        let codes = outcome.diagnostics.iter().map(|d| d.code).collect();
        (outcome.value, codes)
    }

    #[test]
    fn arguments_become_an_object_schema() {
        let (tool, codes) = resolve(
            r#"tool "run-tests" description="Runs the tests" {
    argument "filter" description="Only these" required=#false
    argument "jobs" type="integer"
    command "./scripts/run-tests.sh" "--quiet"
    timeout "10m"
}"#,
            &MemoryFiles::new(),
        );
        assert_eq!(codes, []);
        let tool = tool.expect("resolved");
        assert_eq!(tool.name.value, "run-tests");
        assert_eq!(tool.description.as_deref(), Some("Runs the tests"));
        assert_eq!(tool.command, ["./scripts/run-tests.sh", "--quiet"]);
        assert_eq!(tool.timeout.as_ref().map(|t| t.value.0), Some(600_000));
        assert_eq!(
            tool.schema,
            json!({
                "type": "object",
                "properties": {
                    "filter": {"type": "string", "description": "Only these"},
                    "jobs": {"type": "integer"},
                },
                "required": ["jobs"],
                "additionalProperties": false,
            })
        );
        assert!(!tool.argument("filter").expect("declared").required);
        assert!(tool.argument("jobs").expect("declared").required);
    }

    #[test]
    fn a_schema_file_declares_the_arguments() {
        let mut files = MemoryFiles::new();
        files.insert(
            "/p/.atomic/tools/edit.json",
            r#"{"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}}, "required": ["path"]}"#,
        );
        files.insert("/p/.atomic/tools/list.json", r#"{"type": "array"}"#);
        let (tool, codes) = resolve(
            r#"tool "edit" schema="edit.json" { command "sh" "edit.sh"; }"#,
            &files,
        );
        assert_eq!(codes, []);
        let tool = tool.expect("resolved");
        assert_eq!(tool.schema["required"], json!(["path"]));
        let names: Vec<(&str, bool)> = tool
            .arguments
            .iter()
            .map(|a| (a.name.value.as_str(), a.required))
            .collect();
        assert_eq!(names, [("path", true), ("text", false)]);
        let missing = resolve(r#"tool "e" schema="nope.json" { command "x"; }"#, &files);
        assert_eq!(missing.1, [Code::MissingSchemaFile]);
        let not_object = resolve(r#"tool "e" schema="list.json" { command "x"; }"#, &files);
        assert_eq!(not_object.1, [Code::InvalidSchema]);
        let both = resolve(
            r#"tool "e" schema="edit.json" { argument "a"; command "x"; }"#,
            &files,
        );
        assert_eq!(both.1, [Code::InvalidValue]);
    }

    #[test]
    fn problems_are_diagnostics() {
        let files = MemoryFiles::new();
        let cases: &[(&str, &[Code])] = &[
            (r#"tool "t""#, &[Code::MissingProperty]),
            (r#"tool "t" { command; }"#, &[Code::MissingProperty]),
            (r#"tool "t" { command "x" 1; }"#, &[Code::WrongType]),
            ("", &[Code::MissingProperty]),
            (r#"workflow "w""#, &[Code::UnknownNodeKind]),
            (
                "tool \"t\" { command \"x\"; }\ntool \"u\" { command \"y\"; }",
                &[Code::DuplicateChild],
            ),
            (
                r#"tool "t" descripton="x" { command "x"; }"#,
                &[Code::UnknownProperty],
            ),
            (
                r#"tool "t" { comand "x"; }"#,
                &[Code::UnknownChild, Code::MissingProperty],
            ),
            (
                r#"tool "t" { command "x"; command "y"; }"#,
                &[Code::DuplicateChild],
            ),
            (
                r#"tool "t" { command "x"; timeout "10 minutes"; }"#,
                &[Code::InvalidDuration],
            ),
            (r#"tool "a b" { command "x"; }"#, &[Code::InvalidId]),
            (
                r#"tool "t" { argument "a"; argument "a"; command "x"; }"#,
                &[Code::DuplicateId],
            ),
            (
                r#"tool "t" { argument "a" type="text"; command "x"; }"#,
                &[Code::InvalidValue],
            ),
            (
                r#"tool "t" { argument "a" required="no"; command "x"; }"#,
                &[Code::WrongType],
            ),
            (r#"tool "t" { command "x" "#, &[Code::UnclosedBlock]),
        ];
        for (text, expected) in cases {
            let (_, codes) = resolve(text, &files);
            let mut codes = codes;
            codes.dedup();
            assert_eq!(&codes, expected, "{text}");
        }
    }
}
