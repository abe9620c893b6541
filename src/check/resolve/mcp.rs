//! `mcp "<name>" url=… bearer-env=… { command …; env … }`: MCP server declarations, in the
//! workflow or in an agent.

use super::resolver::Resolver;
use crate::check::structure::Checked;
use crate::check::value::is_name;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{McpEnv, McpServer, McpTransport};
use crate::source::Spanned;

/// The `mcp` children of `checked` (the workflow or an agent), each name once.
pub(super) fn resolve_mcp(r: &mut Resolver<'_>, checked: &Checked<'_>) -> Vec<McpServer> {
    let mut servers: Vec<McpServer> = Vec::new();
    for mcp in checked.children_of("mcp") {
        let Some(name) = r.string(mcp.arg(0)) else {
            continue;
        };
        if !is_server_name(&name.value) {
            r.report(
                Diagnostic::new(
                    Code::InvalidId,
                    name.span,
                    format!("`{}` is not a valid MCP server name", name.value),
                )
                .label("not a server name")
                .help("use letters, digits, `-` and `_` (agents see its tools as `mcp__<name>__<tool>`)"),
            );
            continue;
        }
        if let Some(first) = servers.iter().find(|first| first.name.value == name.value) {
            r.report(
                Diagnostic::declared_twice("MCP server", &name.value, name.span, first.name.span)
                    .help("remove one of them, or give it another name"),
            );
            continue;
        }
        let Some(transport) = transport(r, mcp, &name) else {
            continue;
        };
        let env = env(r, mcp);
        if let (McpTransport::Http { .. }, Some(first)) = (&transport, env.first()) {
            r.report(
                Diagnostic::new(
                    Code::InvalidValue,
                    first.name.span,
                    "`env` is for a server atomic's agents start; this one is reached at its `url`",
                )
                .label("no process to set it in")
                .help("remove the `env` children, or send a token with `bearer-env=\"NAME\"`"),
            );
        }
        servers.push(McpServer {
            name,
            transport,
            env,
            span: mcp.node.span,
        });
    }
    servers
}

/// Letters, digits, `-` and `_`: what every agent's configuration takes as a key.
fn is_server_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn transport(
    r: &mut Resolver<'_>,
    mcp: &Checked<'_>,
    name: &Spanned<String>,
) -> Option<McpTransport> {
    let url = r.string(mcp.prop("url"));
    let bearer_env = r.string(mcp.prop("bearer-env"));
    let command: Vec<Spanned<String>> = mcp
        .child("mcp/command")
        .map(|command| {
            command
                .args_from(0)
                .filter_map(|arg| r.string(Some(arg)))
                .collect()
        })
        .unwrap_or_default();
    match (url, command.is_empty()) {
        (Some(url), true) => {
            let scheme_ok = url.value.starts_with("http://") || url.value.starts_with("https://");
            if !scheme_ok || reqwest::Url::parse(&url.value).is_err() {
                r.report(
                    Diagnostic::new(
                        Code::InvalidValue,
                        url.span,
                        format!("`{}` is not an http(s) URL", url.value),
                    )
                    .label("not a URL")
                    .help("give the server's streamable-HTTP endpoint, such as `https://example.com/mcp`"),
                );
                return None;
            }
            if let Some(var) = bearer_env.as_ref().filter(|var| !is_name(&var.value)) {
                r.report(
                    Diagnostic::new(
                        Code::InvalidValue,
                        var.span,
                        format!("`{}` is not an environment variable name", var.value),
                    )
                    .label("not a variable name")
                    .help("name the variable that holds the token, such as `DOCS_TOKEN`"),
                );
            }
            Some(McpTransport::Http { url, bearer_env })
        }
        (None, false) => {
            if let Some(var) = bearer_env {
                r.report(
                    Diagnostic::new(
                        Code::InvalidValue,
                        var.span,
                        "`bearer-env` is for a server reached at a `url`",
                    )
                    .label("no URL to send it to")
                    .help("pass the token to the server's process with `env \"NAME\"` instead"),
                );
            }
            Some(McpTransport::Stdio { command })
        }
        (Some(url), false) => {
            r.report(
                Diagnostic::new(
                    Code::InvalidValue,
                    url.span,
                    format!(
                        "MCP server `{}` has both a `url` and a `command`",
                        name.value
                    ),
                )
                .label("reached at a URL")
                .help("keep one: `command` starts the server, `url` reaches a running one"),
            );
            None
        }
        (None, true) => {
            r.report(
                Diagnostic::new(
                    Code::MissingProperty,
                    mcp.name_span(),
                    format!("MCP server `{}` needs a `command` or a `url`", name.value),
                )
                .label("no way to reach it")
                .help("add `command \"program\" \"arg\"…` inside its block, or `url=\"https://…/mcp\"`"),
            );
            None
        }
    }
}

fn env(r: &mut Resolver<'_>, mcp: &Checked<'_>) -> Vec<McpEnv> {
    let mut env: Vec<McpEnv> = Vec::new();
    for child in mcp.children_of("mcp/env") {
        let Some(name) = r.string(child.arg(0)) else {
            continue;
        };
        if !is_name(&name.value) {
            r.report(
                Diagnostic::new(
                    Code::InvalidValue,
                    name.span,
                    format!("`{}` is not an environment variable name", name.value),
                )
                .label("not a variable name")
                .help("use letters, digits and `_`, not starting with a digit"),
            );
            continue;
        }
        if let Some(first) = env.iter().find(|first| first.name.value == name.value) {
            r.report(
                Diagnostic::new(
                    Code::DuplicateProperty,
                    name.span,
                    format!("environment variable `{}` is set twice", name.value),
                )
                .label("set again here")
                .with_label(first.name.span, "first set here")
                .help("remove one of them"),
            );
            continue;
        }
        let value = r.string(child.arg(1));
        if let Some(value) = value.as_ref().filter(|value| value.value.contains("{{")) {
            // The value reaches the server as written: a template there would be sent
            // braces and all.
            r.report(
                Diagnostic::new(
                    Code::InvalidValue,
                    value.span,
                    "an MCP server's `env` value is not a template",
                )
                .label("passed to the server as written, braces and all")
                .help(format!(
                    "to give the server a variable of atomic's environment, pass it through by name (`env \"{}\"` with the variable set under that name); write other values literally",
                    name.value
                )),
            );
        }
        env.push(McpEnv { name, value });
    }
    env
}

#[cfg(test)]
mod tests {
    use crate::check::testing::{codes, resolve_text};
    use crate::diagnostic::Code;
    use crate::ir::McpTransport;

    fn flow(mcp: &str) -> String {
        format!(
            "workflow \"w\" {{\nprovider \"p\" adapter=\"claude-code\"\n{mcp}\nagent \"a\" provider=\"p\" {{ prompt \"x\"; }}\n}}"
        )
    }

    #[test]
    fn stdio_and_http_servers_resolve() {
        let (outcome, _) = resolve_text(&flow(
            "mcp \"files\" { command \"mcp-files\" \".\"; env \"TOKEN\"; env \"MODE\" \"ro\"; }\nmcp \"docs\" url=\"https://example.com/mcp\" bearer-env=\"DOCS_TOKEN\"",
        ));
        let workflow = outcome.value.expect("a workflow");
        assert_eq!(workflow.mcp.len(), 2);
        let McpTransport::Stdio { command } = &workflow.mcp[0].transport else {
            panic!("stdio");
        };
        assert_eq!(command.len(), 2);
        assert_eq!(workflow.mcp[0].env[0].value, None);
        assert_eq!(
            workflow.mcp[0].env[1]
                .value
                .as_ref()
                .map(|value| value.value.as_str()),
            Some("ro")
        );
        assert!(matches!(
            &workflow.mcp[1].transport,
            McpTransport::Http {
                bearer_env: Some(_),
                ..
            }
        ));
    }

    #[test]
    fn bad_declarations_are_reported() {
        for (mcp, code) in [
            ("mcp \"x\"", Code::MissingProperty),
            ("mcp \"x\" url=\"ftp://h/mcp\"", Code::InvalidValue),
            (
                "mcp \"x\" url=\"https://h/mcp\" { command \"a\"; }",
                Code::InvalidValue,
            ),
            (
                "mcp \"x\" url=\"https://h/mcp\" { env \"A\"; }",
                Code::InvalidValue,
            ),
            (
                "mcp \"x\" bearer-env=\"T\" { command \"a\"; }",
                Code::InvalidValue,
            ),
            ("mcp \"x y\" { command \"a\"; }", Code::InvalidId),
            (
                "mcp \"x\" { command \"a\"; env \"A\"; env \"A\"; }",
                Code::DuplicateProperty,
            ),
            (
                "mcp \"x\" { command \"a\"; env \"TOKEN\" \"{{ env.GH_TOKEN }}\"; }",
                Code::InvalidValue,
            ),
            (
                "mcp \"x\" { command \"a\"; }\nmcp \"x\" { command \"b\"; }",
                Code::DuplicateId,
            ),
        ] {
            assert_eq!(codes(&flow(mcp)), [code], "{mcp}");
        }
    }
}
