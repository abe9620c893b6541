//! The model catalogue: the models atomic knows, who makes each, its aliases and context
//! window, and how each adapter wants a model written (`claude-sonnet-4-5` for the
//! Anthropic API, `anthropic/claude-sonnet-4-5` for OpenCode, anything for an
//! OpenAI-compatible server). `atomic check` judges `model=` by it, a swap of adapters maps
//! the model through it, and `atomic list models` prints it (joined with the price table).
//!
//! Names are compared without regard to case (the backends' own ids are lower-case), and a
//! dated or tagged release of a known model (`claude-sonnet-4-5-20250929`) is that model.

/// Who makes a model, and so which backends serve it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Vendor {
    /// Claude models.
    Anthropic,
    /// GPT and o-series models.
    #[serde(rename = "openai")]
    OpenAi,
    /// Gemini models.
    Google,
}

impl Vendor {
    /// The provider prefix OpenCode writes the vendor's models with.
    #[must_use]
    pub fn prefix(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAi => "openai",
            Self::Google => "google",
        }
    }

    /// A list of this vendor alone.
    #[must_use]
    pub fn alone(self) -> &'static [Vendor] {
        match self {
            Self::Anthropic => &[Self::Anthropic],
            Self::OpenAi => &[Self::OpenAi],
            Self::Google => &[Self::Google],
        }
    }

    /// The vendor's name as people write it.
    #[must_use]
    pub fn display(self) -> &'static str {
        match self {
            Self::Anthropic => "Anthropic",
            Self::OpenAi => "OpenAI",
            Self::Google => "Google",
        }
    }
}

/// One known model.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct ModelInfo {
    /// The vendor's id.
    pub id: &'static str,
    /// Who makes it.
    pub vendor: Vendor,
    /// Short names that mean it (`sonnet`).
    pub aliases: &'static [&'static str],
    /// Its context window, in tokens.
    pub context_window: u64,
}

const fn model(
    id: &'static str,
    vendor: Vendor,
    aliases: &'static [&'static str],
    context_window: u64,
) -> ModelInfo {
    ModelInfo {
        id,
        vendor,
        aliases,
        context_window,
    }
}

/// Every model atomic knows (as of 2025-11), newest first within a vendor.
pub const MODELS: &[ModelInfo] = &[
    model("claude-opus-4-5", Vendor::Anthropic, &["opus"], 200_000),
    model("claude-opus-4-1", Vendor::Anthropic, &[], 200_000),
    model("claude-opus-4", Vendor::Anthropic, &[], 200_000),
    model("claude-sonnet-4-5", Vendor::Anthropic, &["sonnet"], 200_000),
    model("claude-sonnet-4", Vendor::Anthropic, &[], 200_000),
    model("claude-3-7-sonnet", Vendor::Anthropic, &[], 200_000),
    model("claude-haiku-4-5", Vendor::Anthropic, &["haiku"], 200_000),
    model("claude-3-5-haiku", Vendor::Anthropic, &[], 200_000),
    model("gpt-5.1", Vendor::OpenAi, &[], 400_000),
    model("gpt-5.1-codex", Vendor::OpenAi, &[], 400_000),
    model("gpt-5.1-codex-mini", Vendor::OpenAi, &[], 400_000),
    model("gpt-5.1-codex-max", Vendor::OpenAi, &[], 400_000),
    model("gpt-5", Vendor::OpenAi, &[], 400_000),
    model("gpt-5-codex", Vendor::OpenAi, &[], 400_000),
    model("gpt-5-mini", Vendor::OpenAi, &[], 400_000),
    model("gpt-5-nano", Vendor::OpenAi, &[], 400_000),
    model("gpt-4.1", Vendor::OpenAi, &[], 1_047_576),
    model("gpt-4.1-mini", Vendor::OpenAi, &[], 1_047_576),
    model("gpt-4o", Vendor::OpenAi, &[], 128_000),
    model("gpt-4o-mini", Vendor::OpenAi, &[], 128_000),
    model("o3", Vendor::OpenAi, &[], 200_000),
    model("o4-mini", Vendor::OpenAi, &[], 200_000),
    model("gemini-3-pro-preview", Vendor::Google, &[], 1_048_576),
    model("gemini-2.5-pro", Vendor::Google, &[], 1_048_576),
    model("gemini-2.5-flash", Vendor::Google, &[], 1_048_576),
    model("gemini-2.5-flash-lite", Vendor::Google, &[], 1_048_576),
];

/// How an adapter wants its models written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    /// The vendor's own ids, of these vendors. `aliases` says whether the backend
    /// understands the short names itself (Claude Code's `sonnet`); otherwise atomic
    /// writes the id.
    Vendors {
        /// The vendors it serves.
        vendors: &'static [Vendor],
        /// The backend takes the aliases as they are.
        aliases: bool,
        /// What to suggest when the model written is not one it serves.
        default: &'static str,
    },
    /// `vendor/id` (OpenCode); other prefixes are other providers, not checked.
    Prefixed,
    /// Anything: the backend's own (an OpenAI-compatible server, an ACP agent, a recording).
    Free,
}

/// How `adapter` wants its models written.
#[must_use]
pub fn naming(adapter: &str) -> Naming {
    const ANTHROPIC: &[Vendor] = &[Vendor::Anthropic];
    const OPENAI: &[Vendor] = &[Vendor::OpenAi];
    const GOOGLE: &[Vendor] = &[Vendor::Google];
    const ALL: &[Vendor] = &[Vendor::Anthropic, Vendor::OpenAi, Vendor::Google];
    match adapter {
        "anthropic" => Naming::Vendors {
            vendors: ANTHROPIC,
            aliases: false,
            default: "claude-sonnet-4-5",
        },
        "claude-code" => Naming::Vendors {
            vendors: ANTHROPIC,
            aliases: true,
            default: "sonnet",
        },
        "codex" => Naming::Vendors {
            vendors: OPENAI,
            aliases: false,
            default: "gpt-5.1-codex",
        },
        "gemini" => Naming::Vendors {
            vendors: GOOGLE,
            aliases: false,
            default: "gemini-2.5-pro",
        },
        "copilot" => Naming::Vendors {
            vendors: ALL,
            aliases: false,
            default: "claude-sonnet-4-5",
        },
        "opencode" => Naming::Prefixed,
        _ => Naming::Free,
    }
}

/// The known model `name` means (an id, an alias, or a dated release of an id).
#[must_use]
pub fn lookup(name: &str) -> Option<&'static ModelInfo> {
    let name = name.to_ascii_lowercase();
    MODELS
        .iter()
        .find(|model| model.id == name || model.aliases.contains(&name.as_str()))
        .or_else(|| {
            // The longest id the name is a release of (`claude-sonnet-4-5-20250929`).
            MODELS
                .iter()
                .filter(|model| {
                    name.strip_prefix(model.id)
                        .and_then(|rest| rest.strip_prefix('-'))
                        .is_some_and(|tag| {
                            tag.starts_with(|c: char| c.is_ascii_digit()) || tag == "latest"
                        })
                })
                .max_by_key(|model| model.id.len())
        })
}

/// What is wrong with a model written for an adapter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelProblem {
    /// A known model of a vendor the adapter does not serve.
    WrongVendor {
        /// The model's vendor.
        vendor: Vendor,
        /// A model the adapter does serve.
        instead: &'static str,
    },
    /// OpenCode needs `vendor/id`; `fix` is the model so written, when it is known.
    NeedsPrefix {
        /// The model written as OpenCode needs it.
        fix: Option<String>,
    },
    /// Not a model atomic knows (the backend may: it is passed as written).
    Unknown {
        /// The vendors the adapter serves: a near name of theirs may be meant.
        vendors: &'static [Vendor],
    },
}

/// `model` as `adapter` needs it written, or what is wrong with it.
///
/// # Errors
/// The [`ModelProblem`]; an [`ModelProblem::Unknown`] model still runs as written.
pub fn written_for(adapter: &str, model: &str) -> Result<String, ModelProblem> {
    match naming(adapter) {
        Naming::Free => Ok(model.to_owned()),
        Naming::Vendors {
            vendors,
            aliases,
            default,
        } => match lookup(model) {
            Some(info) if vendors.contains(&info.vendor) => {
                let alias = info.aliases.contains(&model.to_ascii_lowercase().as_str());
                Ok(if alias && !aliases {
                    info.id.to_owned()
                } else {
                    model.to_ascii_lowercase()
                })
            }
            Some(info) => Err(ModelProblem::WrongVendor {
                vendor: info.vendor,
                instead: default,
            }),
            None => Err(ModelProblem::Unknown { vendors }),
        },
        Naming::Prefixed => match model.split_once('/') {
            Some((prefix, rest)) => {
                let vendor = [Vendor::Anthropic, Vendor::OpenAi, Vendor::Google]
                    .into_iter()
                    .find(|vendor| vendor.prefix() == prefix.to_ascii_lowercase());
                match (vendor, lookup(rest)) {
                    (None, _) => Ok(model.to_owned()),
                    (Some(vendor), Some(info)) if info.vendor == vendor => {
                        Ok(format!("{}/{}", vendor.prefix(), info.id))
                    }
                    (Some(vendor), _) => Err(ModelProblem::Unknown {
                        vendors: vendor.alone(),
                    }),
                }
            }
            None => Err(ModelProblem::NeedsPrefix {
                fix: lookup(model).map(|info| format!("{}/{}", info.vendor.prefix(), info.id)),
            }),
        },
    }
}

/// The ids and aliases of `vendors`' models (for a did-you-mean).
pub fn names(vendors: &[Vendor]) -> impl Iterator<Item = &'static str> + '_ {
    MODELS
        .iter()
        .filter(|model| vendors.contains(&model.vendor))
        .flat_map(|model| std::iter::once(model.id).chain(model.aliases.iter().copied()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_and_releases_are_known_models() {
        assert_eq!(lookup("Sonnet").map(|m| m.id), Some("claude-sonnet-4-5"));
        assert_eq!(
            lookup("claude-sonnet-4-5-20250929").map(|m| m.id),
            Some("claude-sonnet-4-5")
        );
        assert_eq!(lookup("gpt-5.1-codex").map(|m| m.id), Some("gpt-5.1-codex"));
        assert!(lookup("gpt-test").is_none());
    }

    #[test]
    fn each_adapter_gets_the_form_it_needs() {
        assert_eq!(
            written_for("anthropic", "sonnet").as_deref(),
            Ok("claude-sonnet-4-5")
        );
        assert_eq!(
            written_for("claude-code", "sonnet").as_deref(),
            Ok("sonnet")
        );
        assert_eq!(
            written_for("opencode", "anthropic/Claude-Sonnet-4-5").as_deref(),
            Ok("anthropic/claude-sonnet-4-5")
        );
        assert_eq!(
            written_for("opencode", "ollama/qwen3").as_deref(),
            Ok("ollama/qwen3")
        );
        assert_eq!(written_for("openai", "qwen3").as_deref(), Ok("qwen3"));
    }

    #[test]
    fn what_cannot_be_served_says_how_to_fix_it() {
        assert_eq!(
            written_for("opencode", "sonnet"),
            Err(ModelProblem::NeedsPrefix {
                fix: Some("anthropic/claude-sonnet-4-5".to_owned())
            })
        );
        assert_eq!(
            written_for("codex", "sonnet"),
            Err(ModelProblem::WrongVendor {
                vendor: Vendor::Anthropic,
                instead: "gpt-5.1-codex"
            })
        );
        assert_eq!(
            written_for("gemini", "gemini-2.5-prp"),
            Err(ModelProblem::Unknown {
                vendors: &[Vendor::Google]
            })
        );
    }
}
