//! Test helpers shared by integration test files.

pub(crate) mod scripted_anthropic;
