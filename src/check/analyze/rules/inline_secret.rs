//! `inline-secret`: a literal in the workflow looks like an API key or access token.
//!
//! ## What it does
//! Scans every string the workflow holds (prompts, command arguments, `env` values, `set`
//! values, provider settings and options, agent options, MCP servers' commands, URLs and
//! `env` values, hook commands, defaults, choices)
//! for the shapes of well-known credentials: Anthropic (`sk-ant-…`) and OpenAI (`sk-…`)
//! keys, GitHub tokens (`ghp_…`, `gho_…`, `ghu_…`, `ghs_…`, `ghr_…`, `github_pat_…`), AWS
//! access key ids (`AKIA…`) and Slack tokens (`xoxb-…`, `xoxp-…`, …). The message never
//! repeats the secret.
//!
//! ## Why is this bad?
//! Workflow files are committed, shared and shown in logs; a key written in one is leaked.
//!
//! ## Example
//! ```kdl
//! provider "claude" adapter="anthropic" { option "api-key" "sk-ant-api03-…"; }
//! ```
//!
//! ## Use instead
//! ```kdl
//! provider "claude" adapter="anthropic" api-key-env="ANTHROPIC_API_KEY"
//! ```

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{McpServer, McpTransport, NodeKind, Template};
use crate::source::{Span, Spanned};

use super::super::driver::Facts;
use crate::check::value::find_secrets;

/// Reports secret-looking literals.
pub(crate) fn check(facts: &Facts<'_>, out: &mut Vec<Diagnostic>) {
    let workflow = facts.workflow;
    let mut report = |span: Span, kind: &str| {
        out.push(
            Diagnostic::new(
                Code::InlineSecret,
                span,
                format!("this looks like {kind} written in the workflow"),
            )
            .label("secret")
            .help("remove it and rotate it; read secrets from the environment (`api-key-env=` on a provider, or `env \"NAME\"` and `{{ env.NAME }}`)"),
        );
    };
    for site in facts.model.sites.iter().filter(|site| !site.inherited) {
        scan_template(site.template, &mut report);
    }
    for node in &workflow.nodes {
        match &node.kind {
            NodeKind::Agent(agent) => scan_json_map(&agent.options, node.span, &mut report),
            NodeKind::Wait(wait) => {
                for choice in &wait.choices {
                    scan_text(&choice.value.value, choice.value.span, &mut report);
                }
                if let Some(auto) = &wait.auto_approve {
                    scan_text(&auto.answer.value, auto.answer.span, &mut report);
                }
            }
            _ => {}
        }
    }
    for provider in &workflow.providers {
        let fields = [
            &provider.model,
            &provider.base_url,
            &provider.api_key_env,
            &provider.cassette,
        ];
        for field in fields.into_iter().flatten().chain(&provider.command) {
            scan_text(&field.value, field.span, &mut report);
        }
        scan_json_map(&provider.options, provider.span, &mut report);
    }
    let agents_servers = workflow.nodes.iter().flat_map(|node| match &node.kind {
        NodeKind::Agent(agent) => agent.mcp.as_slice(),
        _ => &[],
    });
    for server in workflow.mcp.iter().chain(agents_servers) {
        scan_server(server, &mut report);
    }
    for hook in &workflow.hooks {
        for arg in &hook.run {
            scan_text(&arg.value, arg.span, &mut report);
        }
    }
    for input in &workflow.inputs {
        if let Some(default) = &input.default {
            scan_json(default, input.span, &mut report);
        }
    }
    for field in &workflow.state {
        if let Some(default) = &field.default {
            scan_json(default, field.span, &mut report);
        }
    }
}

/// An MCP server's command line, URL and `env` values: a token given to a server is as
/// leaked in the file as one given to a provider.
fn scan_server(server: &McpServer, report: &mut impl FnMut(Span, &str)) {
    let reach: Vec<&Spanned<String>> = match &server.transport {
        McpTransport::Stdio { command } => command.iter().collect(),
        McpTransport::Http { url, .. } => vec![url],
    };
    let values = server.env.iter().filter_map(|var| var.value.as_ref());
    for field in reach.into_iter().chain(values) {
        scan_text(&field.value, field.span, report);
    }
}

/// Reports secrets in a template at their exact place when offsets are exact.
fn scan_template(template: &Template, report: &mut impl FnMut(Span, &str)) {
    for (range, kind) in find_secrets(&template.source) {
        report(template.span_of(range), kind);
    }
}

fn scan_text(text: &str, span: Span, report: &mut impl FnMut(Span, &str)) {
    // Values without exact offsets: point at the whole literal, once per secret.
    for (_, kind) in find_secrets(text) {
        report(span, kind);
    }
}

fn scan_json_map(
    map: &serde_json::Map<String, serde_json::Value>,
    span: Span,
    report: &mut impl FnMut(Span, &str),
) {
    for value in map.values() {
        scan_json(value, span, report);
    }
}

fn scan_json(value: &serde_json::Value, span: Span, report: &mut impl FnMut(Span, &str)) {
    match value {
        serde_json::Value::String(text) => scan_text(text, span, report),
        serde_json::Value::Array(items) => {
            items.iter().for_each(|item| scan_json(item, span, report))
        }
        serde_json::Value::Object(map) => scan_json_map(map, span, report),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::check::analyze::testing::{Builder, messages, only, run};
    use crate::check::value::find_secrets;
    use crate::diagnostic::Code;

    #[test]
    fn finds_known_shapes_only() {
        let kinds = |text: &str| -> Vec<&str> {
            find_secrets(text)
                .into_iter()
                .map(|(_, kind)| kind)
                .collect()
        };
        assert_eq!(
            kinds("key sk-ant-api03-abcdefghijklmnopqrstu12345 end"),
            ["an Anthropic API key"]
        );
        assert_eq!(
            kinds("sk-proj-ABCDEFGHIJKLMNOPQRSTUV123456"),
            ["an OpenAI API key"]
        );
        assert_eq!(
            kinds("token=ghp_0123456789abcdefghijABCDEFGHIJ012345"),
            ["a GitHub token"]
        );
        assert_eq!(
            kinds("github_pat_11ABCDEFG0123456789_abcdefghijklmnop"),
            ["a GitHub token"]
        );
        assert_eq!(kinds("AKIAIOSFODNN7EXAMPLE"), ["an AWS access key id"]);
        assert_eq!(kinds("xoxb-1234567890-abcdef"), ["a Slack token"]);
        // Words that merely start like a key.
        assert!(kinds("sk-learn is a library; ask-anthropic-about-this-please-now").is_empty());
        assert!(kinds("disk-ant-api03-abcdefghijklmnopqrstu12345").is_empty());
        assert!(kinds("AKIA is a prefix").is_empty());
    }

    #[test]
    fn reports_secrets_in_templates_and_provider_options_without_repeating_them() {
        let mut b = Builder::new();
        let key = "sk-ant-api03-abcdefghijklmnopqrstu12345";
        b.provider("claude", "anthropic")
            .options
            .insert("api-key".into(), key.into());
        let tool = b.tool("call", &["curl", "-H", &format!("x-api-key: {key}")]);
        let workflow = b.finish();
        let found = only(run(&workflow), Code::InlineSecret);
        assert_eq!(found.len(), 2);
        assert!(found.iter().all(|d| !d.message.contains(key)));
        let crate::ir::NodeKind::Tool(t) = &workflow.node(tool).kind else {
            unreachable!()
        };
        let arg = t.run[2].span;
        assert_eq!(
            found[1].span.start,
            arg.start + 1 + "x-api-key: ".len() as u32
        );
        assert_eq!(found[1].span.len(), key.len());
        assert_eq!(
            messages(&found, Code::InlineSecret)[0],
            "this looks like an Anthropic API key written in the workflow"
        );
    }
}
