//! Run state: the workflow's typed fields, their defaults, and the reducers that decide how a
//! write combines with the current value.
//!
//! Input: the `state { field … }` declarations (as a [`StateSchema`]) and writes from nodes.
//! Output: the current [`State`] and, per step, a [`Delta`] (changed fields only; for
//! `append` only the appended items) that the store persists and [`State::apply`] replays
//! on resume. This module does no IO and knows nothing about steps or nodes.

mod delta;
mod reducer;
mod schema;
mod values;

pub use crate::ir::value::coerce;
pub use delta::{Change, Delta, FieldChange};
pub use reducer::{ReduceError, apply_change, reduce};
pub use schema::{FieldIdx, FieldSpec, StateSchema};
pub use values::{State, StateError};
