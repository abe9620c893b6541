//! Child processes: every program atomic starts — tools, hooks, agent CLIs, custom tools
//! an agent's tool loop runs, MCP servers, `opencode serve` — is started here, from one
//! description ([`Launch`]) by one [`Spawner`], and ended by one rule.
//!
//! **The rule.** Each child leads a process group of its own, so what it starts (a `sh -c`
//! pipeline, a test runner's workers, an agent's shell commands) belongs to it. When its
//! [`Child`] handle is dropped — the call finished, timed out, lost a race, or the run was
//! cancelled — whatever is left of the group is ended: SIGTERM at once, so its programs
//! can clean up, then SIGKILL after [`GRACE`] if anything is still there (as nextest ends
//! a test). A group that is already empty costs one `killpg(…, 0)`. [`Child::terminate`]
//! does the same and waits until the group is gone, for a caller that must know.
//!
//! What left the group is ended with it: descendants that moved to a session of their own
//! (Gemini CLI's shell commands, Codex's sandbox helper) are found by walking `/proc`, and
//! daemons adopted by init by the launch's mark, the variable `ATOMIC_LAUNCH` every child
//! is given (its value unique to the launch) and its descendants inherit.
//!
//! A file of atomic's that a child writes (a CLI's usage report) is the child's until its
//! group is gone: [`Child::remove_when_gone`] names it, and it is removed with the group,
//! not when the handle goes — a program ended early may write it as it exits.
//!
//! [`groups`] keeps every group not yet seen to end, so atomic's exit can wait for them
//! ([`settle`]) and a forced quit can kill them all ([`kill_all`]).
//!
//! **Where a sandbox goes.** A [`Launch`] may carry a [`Confinement`]: the spawner then
//! starts the program through atomic's confining helper (see [`confine`]), so no spawn
//! site changes and every child of a sandboxed step — tool, agent CLI, MCP server — is
//! confined the same way.
//!
//! This module imports nothing else of atomic: providers and the runtime import it.

mod child;
pub mod confine;
pub mod groups;
mod launch;
pub mod orphans;
mod output;
mod spawner;

pub use child::{Child, WaitError};
pub use confine::{ConfineError, Confinement};
pub use groups::{GRACE, MARK_VARIABLE, ended, kill_all, settle};
pub use launch::{Launch, Stdio};
pub use output::{OUTPUT_DRAIN, read_until_exit};
pub use spawner::{LocalSpawner, SpawnError, Spawner, local};
