//! Templates and expressions: one minijinja environment per run, every template compiled
//! once when the run starts, rendered against a [`Scope`] that reads the run's state
//! lazily (no per-step copy of the state into a template context).
//!
//! What a template sees: `input`, `state`, `outputs` (by node id), `run` (`id`, `step`,
//! `iteration` — the innermost loop's 1-based iteration, 0 outside loops), `env` (only the
//! workflow's declared `env` names), and locals: `item`/`index`/the `as=` name inside a
//! `for-each` branch, `error` at a recovery node.

mod engine;
mod fast;
mod scope;

pub use engine::{Role, TemplateError, Templates};
pub use scope::{LazyScope, Locals, Outputs, RunInfo, Scope, ScopeSource};
