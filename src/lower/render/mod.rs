//! Renderings of a plan for people: Graphviz [`dot`] and Mermaid [`mermaid`] (`atomic
//! graph --dot|--mermaid`). Both show the lowered graph — what will execute — with node
//! kinds distinct (shape and colour), edges labelled with their conditions and bounds,
//! and loops and parallel branches as clusters.
//!
//! Input: a [`Plan`](super::Plan). Output: text, deterministic for a given workflow (steps
//! and edges in source order, ids derived from node ids). The shared model — the cluster
//! tree, the drawn edges, the labels — is in `tree.rs`, `edges.rs` and `label.rs`; each
//! format is one file.

mod dot;
mod edges;
mod label;
mod mermaid;
mod outline;
mod tree;

pub use dot::dot;
pub use mermaid::mermaid;
pub use outline::{Outline, OutlineEdge, OutlineStep, outline};
