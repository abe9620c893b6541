//! Runtime integration tests: workflows built as IR in code (until the KDL front end is on
//! main), lowered with `lower::lower`, run on the memory store with an in-process provider.

mod build;
mod context;
mod flows;
mod nodes;
mod provider;
