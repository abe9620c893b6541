//! The pages, stylesheet and script, compiled into the binary: nothing is fetched from
//! anywhere else.

use super::graph::escape;

const RUNS_HTML: &str = include_str!("assets/runs.html");
const RUN_HTML: &str = include_str!("assets/run.html");
const CSS: &str = include_str!("assets/app.css");
const RUNS_JS: &str = include_str!("assets/runs.js");
const RUN_JS: &str = include_str!("assets/run.js");

/// The runs list page.
pub(super) fn runs_page(token: &str) -> String {
    RUNS_HTML.replace("{{token}}", &escape(token))
}

/// A run's page.
pub(super) fn run_page(token: &str, run: &str) -> String {
    RUN_HTML
        .replace("{{token}}", &escape(token))
        .replace("{{run}}", &escape(run))
}

/// A static file by name: its content type and body.
pub(super) fn file(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "app.css" => Some(("text/css; charset=utf-8", CSS)),
        "runs.js" => Some(("text/javascript; charset=utf-8", RUNS_JS)),
        "run.js" => Some(("text/javascript; charset=utf-8", RUN_JS)),
        _ => None,
    }
}
