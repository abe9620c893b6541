//! Shared test support: fake backends and helpers used by several test topics.
//!
//! - [`cli_project`]: a temporary project to run the `atomic` binary in.
//! - [`http_server`]: a minimal scriptable HTTP/1.1 server on 127.0.0.1 (own thread).
//! - [`fake_anthropic`]: the Anthropic Messages API, streaming, tool use, failures on demand.
//! - [`fake_openai`]: an OpenAI-compatible Chat Completions server, likewise.
//! - [`fake_gemini`]: the Gemini API the Gemini CLI calls (streamed turns, function calls).
//! - [`fake_responses`]: the OpenAI Responses API (for the Codex CLI), streamed, scripted.
//! - [`otlp_receiver`]: an OTLP/HTTP trace receiver decoding the official protobufs.
//! - `pipeline`: compiling fixtures through the static pipeline, rendering diagnostics.
//! - [`tty`]: a real pseudo-terminal for `atomic ui` and `atomic chat`.
//! - [`tools`]: the outside tools some tests need; a missing one skips loudly (fails in CI).
//! - [`scripted_anthropic`]: a Messages API fake that scripts an agent CLI's tool-use turn
//!   (tool calls matched by their results, generic answers to side requests).

// Each topic uses a different part of the support code, and its items are `pub` so every
// topic can reach them.
#![allow(dead_code, unreachable_pub)]

pub mod cli_project;
pub mod fake_anthropic;
pub mod fake_gemini;
pub mod fake_openai;
pub mod fake_responses;
pub mod http_server;
pub mod otlp_receiver;
mod pipeline;
pub mod tools;
pub mod tty;
pub mod web_view;
pub mod webdriver;

pub use pipeline::{compile_file, compile_text, fixture, kdl_files, render, root};
pub mod scripted_anthropic;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use atomic::ir::ProviderDecl;
use atomic::providers::{Environment, Provider, ProviderContext, ProviderError};

/// The adapter `decl` declares, built as a run builds it but alone (no budget guard, no
/// recording), with `env` as atomic's environment.
pub fn adapter(decl: &ProviderDecl, env: &Environment) -> Result<Arc<dyn Provider>, ProviderError> {
    atomic::providers::build_adapter(decl, &ProviderContext::new(std::path::Path::new("."), env))
}

/// A copy of the directory tree `from` at `to`.
pub fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("create directory");
    for entry in std::fs::read_dir(from).expect("read directory") {
        let entry = entry.expect("directory entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

/// Awaits `future`, failing the test if it takes longer than `limit`.
pub async fn within<T>(limit: Duration, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, future)
        .await
        .unwrap_or_else(|_| panic!("did not finish within {limit:?}"))
}

/// Asserts that one call's events and outcome keep the adapter contract
/// (`providers::check_call`: every `tool-start` completed, usage once and last but the
/// session end, …), naming the adapter and every broken rule.
pub fn assert_contract(
    adapter: &str,
    events: &[atomic::providers::AgentEvent],
    outcome: &Result<atomic::providers::AgentReply, atomic::providers::ProviderError>,
) {
    let violations = atomic::providers::check_call(events, outcome);
    assert!(
        violations.is_empty(),
        "`{adapter}` broke the adapter contract: {violations:#?}\nevents: {events:#?}"
    );
}
