//! [`Sandbox`]: how far a step's processes reach — written on the workflow (every step's
//! default), an agent or a tool (its own; the nearest wins), or in `.atomic/config.kdl`.

use serde::{Deserialize, Serialize};

use crate::source::{Span, Spanned};

/// ```kdl
/// sandbox {
///     write "target/" "~/.cache/cargo"
///     hide "secrets/"
///     network "crates.io" "*.crates.io"
/// }
/// sandbox "none"
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sandbox {
    /// `sandbox "none"`: unconfined, said explicitly.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub none: bool,
    /// `write`: paths it may also write beneath (the workspace and a private temp directory
    /// always).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<Spanned<String>>,
    /// `hide`: paths it may not read, besides the credential stores always hidden.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hide: Vec<Spanned<String>>,
    /// `network`: hosts it may reach through the egress proxy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<Spanned<String>>,
    /// The `sandbox` node.
    pub span: Span,
}

impl Sandbox {
    /// Whether it confines (not `sandbox "none"`).
    #[must_use]
    pub fn confines(&self) -> bool {
        !self.none
    }
}
