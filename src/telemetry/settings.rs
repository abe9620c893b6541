//! Whether a run exports a trace, and where: the project's `telemetry` block and the
//! standard OpenTelemetry variables, with `DO_NOT_TRACK` over both.

use crate::compile::TelemetryConfig;

/// Where the trace goes when neither the variables nor the block name a collector.
pub const DEFAULT_ENDPOINT: &str = "http://localhost:4318";

/// Export settings of one run; `None` from [`Settings::resolve`] means nothing is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The full URL spans are POSTed to (`…/v1/traces`).
    pub traces_url: String,
    /// Whether prompts and replies go into the trace (redacted).
    pub capture_content: bool,
    /// `service.name` of the trace's resource.
    pub service_name: String,
}

impl Settings {
    /// Decides from the project's block and the variables `var` reads (the CLI passes its
    /// one snapshot of the process environment):
    ///
    /// - `DO_NOT_TRACK` (any value but empty, `0` or `false`) or `OTEL_SDK_DISABLED=true`:
    ///   off, whatever else is set;
    /// - `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is), else `OTEL_EXPORTER_OTLP_ENDPOINT`
    ///   (with `/v1/traces`), else the block's `endpoint=`, else, with a block,
    ///   [`DEFAULT_ENDPOINT`]; with none of them: off;
    /// - content: the block's `capture-content=#true` or
    ///   `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`;
    /// - `OTEL_SERVICE_NAME`, else `atomic`.
    #[must_use]
    pub fn resolve<'a>(
        config: Option<&TelemetryConfig>,
        var: impl Fn(&str) -> Option<&'a str>,
    ) -> Option<Self> {
        let set = |name: &str| var(name).map(str::trim).filter(|value| !value.is_empty());
        let yes = |name: &str| set(name).is_some_and(|value| value.eq_ignore_ascii_case("true"));
        let do_not_track = set("DO_NOT_TRACK")
            .is_some_and(|value| value != "0" && !value.eq_ignore_ascii_case("false"));
        if do_not_track || yes("OTEL_SDK_DISABLED") {
            return None;
        }
        let traces_url = if let Some(url) = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            url.to_owned()
        } else {
            let base = set("OTEL_EXPORTER_OTLP_ENDPOINT")
                .or_else(|| config.and_then(|config| config.endpoint.as_deref()))
                .or_else(|| config.map(|_| DEFAULT_ENDPOINT))?;
            format!("{}/v1/traces", base.trim_end_matches('/'))
        };
        Some(Self {
            traces_url,
            capture_content: config.is_some_and(|config| config.capture_content)
                || yes("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"),
            service_name: set("OTEL_SERVICE_NAME").unwrap_or("atomic").to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(config: Option<&TelemetryConfig>, vars: &[(&str, &str)]) -> Option<Settings> {
        Settings::resolve(config, |name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| *value)
        })
    }

    #[test]
    fn nothing_configured_sends_nothing() {
        assert_eq!(resolve(None, &[]), None);
        assert_eq!(resolve(None, &[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")]), None);
    }

    #[test]
    fn variables_over_the_block() {
        let block = TelemetryConfig {
            endpoint: Some("http://collector:4318".to_owned()),
            capture_content: false,
        };
        let from_block = resolve(Some(&block), &[]).unwrap();
        assert_eq!(from_block.traces_url, "http://collector:4318/v1/traces");
        assert!(!from_block.capture_content);
        assert_eq!(from_block.service_name, "atomic");
        let base = resolve(
            Some(&block),
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9/")],
        )
        .unwrap();
        assert_eq!(base.traces_url, "http://127.0.0.1:9/v1/traces");
        let full = resolve(
            None,
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:7/x"),
                ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "TRUE"),
                ("OTEL_SERVICE_NAME", "ci"),
            ],
        )
        .unwrap();
        assert_eq!(full.traces_url, "http://127.0.0.1:7/x");
        assert!(full.capture_content);
        assert_eq!(full.service_name, "ci");
        let bare = resolve(Some(&TelemetryConfig::default()), &[]).unwrap();
        assert_eq!(bare.traces_url, "http://localhost:4318/v1/traces");
    }

    #[test]
    fn do_not_track_wins() {
        let block = TelemetryConfig::default();
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9");
        for off in ["1", "true", "yes"] {
            assert_eq!(
                resolve(Some(&block), &[endpoint, ("DO_NOT_TRACK", off)]),
                None
            );
        }
        for on in ["0", "false", ""] {
            assert!(resolve(Some(&block), &[endpoint, ("DO_NOT_TRACK", on)]).is_some());
        }
        assert_eq!(
            resolve(Some(&block), &[("OTEL_SDK_DISABLED", "true")]),
            None
        );
    }
}
