//! `sandbox ["on"|"none"] { write …; hide …; network …; }` on a workflow, an agent or a tool.
//! Paths are relative to the workspace, absolute, or `~/…`; hosts are names (or
//! `*.example.com`). A `sandbox "none"` with children confines nothing, which is reported.

use super::resolver::Resolver;
use crate::check::structure::Checked;
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::Sandbox;
use crate::source::Spanned;

/// The `sandbox` child of `parent`, if it has one.
pub(super) fn resolve_sandbox(r: &mut Resolver<'_>, parent: &Checked<'_>) -> Option<Sandbox> {
    let checked = parent.child("sandbox")?;
    let none = r
        .string(checked.arg(0))
        .is_some_and(|mode| mode.value == "none");
    let strings = |name: &str| -> Vec<Spanned<String>> {
        checked
            .children_of(name)
            .flat_map(|child| child.args_from(0).collect::<Vec<_>>())
            .filter_map(|arg| r.string(Some(arg)))
            .collect()
    };
    let sandbox = Sandbox {
        none,
        write: strings("sandbox/write"),
        hide: strings("sandbox/hide"),
        network: strings("sandbox/network"),
        span: checked.name_span(),
    };
    for path in sandbox.write.iter().chain(&sandbox.hide) {
        if path.value.trim().is_empty() {
            r.report(
                Diagnostic::new(Code::InvalidValue, path.span, "an empty path")
                    .label("names nothing")
                    .help(
                        "write a directory or file: relative to the workspace, absolute, or `~/…`",
                    ),
            );
        }
    }
    for host in &sandbox.network {
        if !is_host_pattern(&host.value) {
            r.report(
                Diagnostic::new(
                    Code::InvalidValue,
                    host.span,
                    format!("`{}` is not a host name", host.value),
                )
                .label("not a host")
                .help("write a name such as `registry.npmjs.org`, or `*.example.com` for every name below it (no scheme, port or path)"),
            );
        }
    }
    if none && !(sandbox.write.is_empty() && sandbox.hide.is_empty() && sandbox.network.is_empty())
    {
        r.report(
            Diagnostic::new(
                Code::InvalidValue,
                sandbox.span,
                "`sandbox \"none\"` confines nothing, so its paths and hosts mean nothing",
            )
            .label("unconfined")
            .help("remove `\"none\"` to confine the step as written, or remove the children"),
        );
    }
    Some(sandbox)
}

/// A host name, or `*.` and a host name.
fn is_host_pattern(text: &str) -> bool {
    let name = text.strip_prefix("*.").unwrap_or(text);
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

#[cfg(test)]
mod tests {
    use super::is_host_pattern;

    #[test]
    fn hosts_are_names_or_wildcards_below_one() {
        for good in [
            "registry.npmjs.org",
            "*.crates.io",
            "localhost",
            "127.0.0.1",
        ] {
            assert!(is_host_pattern(good), "{good}");
        }
        for bad in [
            "https://x.org",
            "x.org:443",
            "x.org/path",
            "*",
            "*.",
            "-x.org",
            "a..b",
            "",
        ] {
            assert!(!is_host_pattern(bad), "{bad}");
        }
    }
}
