//! What people look at: a run folded from its events ([`RunView`]), the same for every face
//! (`atomic ui` in a terminal, `atomic ui --web` in a browser) and every source (a live
//! run's event stream, the log a store keeps of a finished or running one, or any other
//! [`RunSource`]: the CLI reads runs on a Temporal server through one).

mod run;
mod run_source;
mod source;
mod stored;

pub use run::{
    EVENT_WINDOW, NodeState, NodeView, OUTPUT_WINDOW, OutputItem, RunPhase, RunView, WaitView,
    headed,
};
pub use run_source::{RunCheckpoint, RunSource, StoreSource};
pub use source::{Follow, load};
pub use stored::state_fields;
