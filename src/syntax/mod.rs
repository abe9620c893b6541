//! Stage 1: text → syntax. `kdl/` is atomic's own KDL v2 parser (fast, error-tolerant,
//! spans on everything); the rest reads the KDL tree into the workflow syntax tree.

pub mod format;
pub mod kdl;
