//! Definitions atomic finds by name in the project and the user's home.

pub mod agents;
