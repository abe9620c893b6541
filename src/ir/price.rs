//! What a model costs: USD per million tokens, by kind of token. The shipped table is
//! `providers::prices`; a project overrides it in `.atomic/config.kdl`
//! (`prices { model "<name>" input=… output=… }`).

use serde::{Deserialize, Serialize};

/// One model's prices in USD per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelPrice {
    /// Prompt tokens not from cache.
    pub input: f64,
    /// Completion tokens (thinking included).
    pub output: f64,
    /// Prompt tokens read from cache; the input price when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    /// Prompt tokens written to cache; the input price when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
}

impl ModelPrice {
    /// The cost in USD of these token counts. Missing cache prices count as the input
    /// price: a budget should over-, never under-estimate.
    #[must_use]
    pub fn cost(&self, input: u64, output: u64, cache_read: u64, cache_write: u64) -> f64 {
        let per_token = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per_token(input, self.input)
            + per_token(output, self.output)
            + per_token(cache_read, self.cache_read.unwrap_or(self.input))
            + per_token(cache_write, self.cache_write.unwrap_or(self.input))
    }
}

/// A price a project sets for models named `model` (a name, or the start of names: see
/// [`model_matches`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PriceOverride {
    /// The model name (or the start of a family of names).
    pub model: String,
    /// Its prices.
    pub price: ModelPrice,
}

/// Whether a table entry `entry` prices `model`: the same name, or `model` starting with
/// `entry` followed by `-`, `@`, `:` or `.` (a dated or tagged release:
/// `claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`). A provider prefix
/// (`anthropic/claude-…`, `openai/gpt-…`) is ignored. Case-insensitive.
#[must_use]
pub fn model_matches(entry: &str, model: &str) -> bool {
    let model = model.rsplit('/').next().unwrap_or(model);
    let (entry, model) = (entry.to_ascii_lowercase(), model.to_ascii_lowercase());
    model == entry
        || model
            .strip_prefix(&entry)
            .is_some_and(|rest| rest.starts_with(['-', '@', ':', '.']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dated_and_prefixed_names_match_their_family() {
        assert!(model_matches("gpt-4o", "gpt-4o"));
        assert!(model_matches("gpt-4o", "gpt-4o-2024-08-06"));
        assert!(model_matches(
            "claude-sonnet-4-5",
            "anthropic/claude-sonnet-4-5-20250929"
        ));
        assert!(model_matches("claude-sonnet-4-5", "Claude-Sonnet-4-5"));
        assert!(!model_matches("gpt-4", "gpt-4o"));
        assert!(!model_matches("o3", "o3mini"));
        assert!(!model_matches("claude-sonnet-4-5", "claude-sonnet-4"));
    }

    #[test]
    fn cache_prices_default_to_the_input_price() {
        let price = ModelPrice {
            input: 3.0,
            output: 15.0,
            cache_read: Some(0.3),
            cache_write: None,
        };
        let cost = price.cost(1_000_000, 100_000, 1_000_000, 1_000_000);
        assert!((cost - (3.0 + 1.5 + 0.3 + 3.0)).abs() < 1e-9, "{cost}");
    }
}
