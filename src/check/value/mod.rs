//! Parsers for the small value languages inside KDL strings: durations, versions, names,
//! the position of a template inside its string literal, the shapes of secrets, and the
//! filters and tests templates may use.

mod duration;
mod ident;
mod literal;
mod secret;
mod semver;
pub mod template_env;

pub(crate) use duration::parse_duration;
pub(crate) use ident::{TEMPLATE_ROOTS, hidden_by_as, is_name, is_node_id};
pub(crate) use literal::template;
pub(crate) use secret::find_secrets;
pub(crate) use semver::Version;
