//! The Temporal engine (cargo feature `temporal`): the same workflows, run by as many
//! `atomic worker` processes as a team starts, on a Temporal server.
//!
//! atomic's interpreter is the Temporal workflow ([`workflow`]): it decides, and its
//! executor ([`executor`]) turns each effect into a Temporal command — agent calls and
//! commands into activities ([`activities`], run with heartbeats on any worker), timers into
//! Temporal timers, the clock into workflow time. A wait is the `answer` update, checked
//! like `atomic resume` checks it; `atomic run --temporal` follows a run through the
//! `progress` query ([`client`]). Workers compile workflows from the project files they
//! share ([`engine`]); a run refuses a worker whose copy of its workflow changed.

pub mod activities;
pub mod client;
pub mod engine;
pub mod executor;
pub mod wire;
pub mod worker;
pub mod workflow;

pub use client::Temporal;
pub use engine::{Engine, Prepare, Prepared};
pub use worker::{WorkerSettings, serve};
