//! What people look at: a run folded from its events ([`RunView`]), the same for every face
//! (`atomic ui` in a terminal, `atomic ui --web` in a browser) and every source (a live
//! run's event stream, or the log a store keeps of a finished or running one).

mod run;
mod source;
mod stored;

pub use run::{
    EVENT_WINDOW, NodeState, NodeView, OUTPUT_WINDOW, OutputItem, RunPhase, RunView, WaitView,
};
pub use source::{Follow, load};
pub use stored::state_fields;
