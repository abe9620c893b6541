//! `telemetry` in `.atomic/config.kdl`: where a run's OpenTelemetry trace goes, and whether
//! it carries prompts and replies.
//!
//! ```kdl
//! telemetry endpoint="http://127.0.0.1:4318" capture-content=#false
//! ```
//!
//! The block alone turns export on (to `OTEL_EXPORTER_OTLP_ENDPOINT`, or the OTLP default
//! `http://localhost:4318`); `endpoint=` is the collector's base URL, `/v1/traces` is added.

use crate::diagnostic::{Code, Diagnostic};
use crate::syntax::kdl::{self, Value};

/// What the project's `telemetry` block says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TelemetryConfig {
    /// The collector's base URL (`http://HOST:PORT`), when given.
    pub endpoint: Option<String>,
    /// Whether prompts and replies go into the trace (secrets still redacted).
    pub capture_content: bool,
}

const FORM: &str =
    r#"write it as `telemetry endpoint="http://HOST:4318" capture-content=#false` (both optional)"#;

/// Reads a `telemetry` node; problems are pushed onto `diagnostics` and leave the setting
/// at its default.
pub(super) fn parse_telemetry(
    node: &kdl::Node,
    diagnostics: &mut Vec<Diagnostic>,
) -> TelemetryConfig {
    let mut config = TelemetryConfig::default();
    if let Some(children) = &node.children {
        diagnostics.push(
            Diagnostic::new(
                Code::UnknownNodeKind,
                children
                    .nodes
                    .first()
                    .map_or(node.span, |child| child.name.span),
                "`telemetry` takes properties, not a block",
            )
            .label("not expected here")
            .help(FORM),
        );
    }
    for entry in &node.entries {
        let Some(key) = &entry.key else {
            diagnostics.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    entry.value_span,
                    "`telemetry` takes named properties only",
                )
                .label("a value without a name")
                .help(FORM),
            );
            continue;
        };
        match (key.value.as_str(), &entry.value) {
            ("endpoint", Value::String(url)) if is_http_url(url) => {
                config.endpoint = Some(url.trim_end_matches('/').to_owned());
            }
            ("endpoint", _) => diagnostics.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    entry.value_span,
                    "`endpoint` must be the collector's http:// or https:// URL",
                )
                .label("not an http(s) URL")
                .help(r#"the OTLP/HTTP receiver's base URL, e.g. `endpoint="http://127.0.0.1:4318"` (`/v1/traces` is added)"#),
            ),
            ("capture-content", Value::Bool(on)) => config.capture_content = *on,
            ("capture-content", _) => diagnostics.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    entry.value_span,
                    "`capture-content` is `#true` or `#false`",
                )
                .label("not a boolean")
                .help("`capture-content=#true` puts prompts and replies (secrets redacted) into the trace"),
            ),
            (other, _) => diagnostics.push(
                Diagnostic::new(
                    Code::UnknownProperty,
                    entry.span,
                    format!("`telemetry` has no property `{other}`"),
                )
                .label("unknown property")
                .help(
                    crate::diagnostic::did_you_mean(other, ["endpoint", "capture-content"])
                        .map_or_else(|| FORM.to_owned(), |near| format!("did you mean `{near}`?")),
                ),
            ),
        }
    }
    config
}

/// `http://…` or `https://…` with something after the scheme.
fn is_http_url(text: &str) -> bool {
    ["http://", "https://"].iter().any(|scheme| {
        text.strip_prefix(scheme).is_some_and(|rest| {
            !rest.is_empty() && !rest.starts_with('/') && !rest.contains(char::is_whitespace)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;

    fn parse(text: &str) -> (TelemetryConfig, Vec<Diagnostic>) {
        let mut sources = Sources::new();
        let file = sources.add("config.kdl", text.to_owned());
        let parsed = kdl::parse(&sources.get(file).text, file);
        let mut diagnostics = parsed.diagnostics;
        let config = parse_telemetry(&parsed.document.nodes[0], &mut diagnostics);
        (config, diagnostics)
    }

    #[test]
    fn reads_endpoint_and_capture() {
        let (config, problems) =
            parse(r#"telemetry endpoint="http://127.0.0.1:4318/" capture-content=#true"#);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(config.endpoint.as_deref(), Some("http://127.0.0.1:4318"));
        assert!(config.capture_content);
        assert_eq!(parse("telemetry").0, TelemetryConfig::default());
    }

    #[test]
    fn refuses_bad_values_with_the_fix() {
        let (config, problems) =
            parse(r#"telemetry endpoint="127.0.0.1:4318" capture-content="yes" endpont="x""#);
        assert_eq!(config, TelemetryConfig::default());
        let messages: Vec<String> = problems
            .iter()
            .map(|problem| format!("{} {:?}", problem.message, problem.help))
            .collect();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(messages[0].contains("http:// or https://"), "{messages:?}");
        assert!(messages[1].contains("`#true` or `#false`"), "{messages:?}");
        assert!(
            messages[2].contains("did you mean `endpoint`?"),
            "{messages:?}"
        );
    }
}
