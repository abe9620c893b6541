//! What a person sees while a run goes: the runtime emits [`RunEvent`]s into a sink and
//! never prints; this module renders them on one thread of its own (so a slow terminal
//! never holds up a step).
//!
//! - `reporter.rs`: the thread, the channel the sink feeds, JSONL on stdout (`--stream`).
//! - `tree.rs`: the live view on a terminal (indicatif): a spinner per running node,
//!   finished nodes as lines with durations, the agent's streamed text folded to a line.
//! - `plain.rs`: one line per thing that happened, for logs and CI.
//! - `route.rs`: the route a `--dry-run` took.
//! - `summary.rs`: the final lines: how it ended, steps, time, tokens, cost, run id.
//! - `text.rs`: durations, folding, colours.
//!
//! [`RunEvent`]: crate::runtime::RunEvent

mod plain;
mod reporter;
mod route;
mod summary;
pub(crate) mod text;
mod tree;

pub(crate) use reporter::{Display, Reporter};
pub(crate) use summary::{Summary, pause_help};
pub(crate) use text::Paint;

/// A duration in milliseconds, as progress lines show durations.
pub(crate) fn duration_ms(millis: u64) -> String {
    text::duration(std::time::Duration::from_millis(millis))
}
