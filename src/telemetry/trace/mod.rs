//! A run's events as spans: run → step → attempt → agent call → tool call.
//!
//! Steps are found by node id (and branch, where the event has one). Events of an agent
//! (`RunEvent::Agent`) carry no branch, so when one node runs in several branches at once
//! (a `for-each` or task loop) they go to its latest open step. A step that starts while a
//! block (a `parallel`, a task loop, a subgraph) is open is a child of the block's
//! attempt; of the run otherwise.

mod agent;
mod run;

pub(crate) use run::RunTrace;
