//! `min-atomic-version`: the workflow needs at least this atomic.

use super::resolver::Resolver;
use crate::check::value::Version;
use crate::diagnostic::{Code, Diagnostic};
use crate::source::Spanned;

/// This build's version.
const CURRENT: &str = env!("CARGO_PKG_VERSION");

/// Reports `incompatible-version` when `min` is newer than this atomic. An invalid `min`
/// was already reported by the structure checks.
pub(super) fn check_compatible(r: &mut Resolver<'_>, min: &Spanned<String>) {
    let (Ok(needed), Ok(current)) = (Version::parse(&min.value), Version::parse(CURRENT)) else {
        return;
    };
    if needed > current {
        r.report(
            Diagnostic::new(
                Code::IncompatibleVersion,
                min.span,
                format!(
                    "this workflow needs atomic {} or later, this is {CURRENT}",
                    min.value
                ),
            )
            .label(format!("needs atomic {}", min.value))
            .help(format!("upgrade atomic to {} or later", min.value)),
        );
    }
}
