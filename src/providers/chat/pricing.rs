//! Cost of a call from token counts and per-million-token prices given as options
//! (`price-input`, `price-output`, `price-cache-read`, `price-cache-write`, in USD).
//! These options price every model of the provider and come first; without them the
//! adapter reports no cost and the budget guard (`providers::budget`) prices the usage
//! from the model price table (`providers::prices`).

use super::options::Options;
use crate::providers::{ProviderError, Usage};

/// USD per million tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Pricing {
    input: Option<f64>,
    output: Option<f64>,
    cache_read: Option<f64>,
    cache_write: Option<f64>,
}

impl Pricing {
    /// Reads the `price-*` options.
    pub(crate) fn read(options: &mut Options) -> Result<Self, ProviderError> {
        Ok(Self {
            input: options.f64("price-input")?,
            output: options.f64("price-output")?,
            cache_read: options.f64("price-cache-read")?,
            cache_write: options.f64("price-cache-write")?,
        })
    }

    /// The cost of `usage`, or `None` when no price is set. Cache prices default to the
    /// input price: budgets should over-, never under-estimate.
    #[must_use]
    pub(crate) fn cost(&self, usage: Usage) -> Option<f64> {
        if self.input.is_none() && self.output.is_none() {
            return None;
        }
        let input = self.input.unwrap_or(0.0);
        let per_token = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        Some(
            per_token(usage.input_tokens, input)
                + per_token(usage.output_tokens, self.output.unwrap_or(0.0))
                + per_token(usage.cache_read_tokens, self.cache_read.unwrap_or(input))
                + per_token(usage.cache_write_tokens, self.cache_write.unwrap_or(input)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prices_per_million_tokens() {
        let given = json!({"price-input": 3.0, "price-output": 15.0, "price-cache-read": 0.3})
            .as_object()
            .expect("object")
            .clone();
        let mut options = Options::new("anthropic", [&given]);
        let pricing = Pricing::read(&mut options).expect("valid");
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_tokens: 1_000_000,
            cache_write_tokens: 1_000_000,
        };
        let cost = pricing.cost(usage).expect("priced");
        assert!((cost - (3.0 + 1.5 + 0.3 + 3.0)).abs() < 1e-9, "{cost}");
        assert_eq!(Pricing::default().cost(usage), None);
    }
}
