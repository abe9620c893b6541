//! The model price table: shipped as data (`prices.json`, compiled in), overridden per
//! project (`.atomic/config.kdl` `prices { model … }`), and read by the budget guard
//! (`budget.rs`) to price a call's streamed usage when its backend reports no cost.
//!
//! Lookup: the longest entry naming the model or a release of it
//! ([`crate::ir::model_matches`]), the project's before a shipped one of the same name.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;

use super::Usage;
use crate::ir::{ModelPrice, PriceOverride, model_matches};

/// The shipped table's text.
const SHIPPED: &str = include_str!("prices.json");

#[derive(Deserialize)]
struct Shipped {
    models: BTreeMap<String, ModelPrice>,
}

fn shipped() -> &'static [(String, ModelPrice)] {
    static TABLE: OnceLock<Vec<(String, ModelPrice)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let table: Shipped = serde_json::from_str(SHIPPED)
            .unwrap_or_else(|error| panic!("src/providers/prices.json is invalid: {error}"));
        table.models.into_iter().collect()
    })
}

/// Where a price came from, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriceSource {
    /// The project's `.atomic/config.kdl`.
    Config,
    /// atomic's shipped table.
    Shipped,
}

/// A model's price as found, with the entry that matched.
#[derive(Clone, Debug, PartialEq)]
pub struct FoundPrice {
    /// The table entry's name.
    pub entry: String,
    /// The prices.
    pub price: ModelPrice,
    /// Where it came from.
    pub source: PriceSource,
}

impl FoundPrice {
    /// The cost of `usage` in USD.
    #[must_use]
    pub fn cost(&self, usage: Usage) -> f64 {
        self.price.cost(
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
        )
    }
}

/// The prices a run's providers use.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PriceTable {
    overrides: Vec<PriceOverride>,
}

impl PriceTable {
    /// The shipped table with the project's `overrides` before it.
    #[must_use]
    pub fn with_overrides(overrides: Vec<PriceOverride>) -> Arc<Self> {
        Arc::new(Self { overrides })
    }

    /// The price of `model`, if any table names it: the longest matching entry, the
    /// project's before the shipped one of the same name.
    #[must_use]
    pub fn lookup(&self, model: &str) -> Option<FoundPrice> {
        let own = self
            .overrides
            .iter()
            .map(|o| (&o.model, &o.price, PriceSource::Config));
        let ours = shipped()
            .iter()
            .map(|(name, price)| (name, price, PriceSource::Shipped));
        own.chain(ours)
            .filter(|(entry, _, _)| model_matches(entry, model))
            // `max_by_key` keeps the last of equals: the project's come first, so rank them.
            .max_by_key(|(entry, _, source)| (entry.len(), *source == PriceSource::Config))
            .map(|(entry, price, source)| FoundPrice {
                entry: entry.clone(),
                price: *price,
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_table_parses_and_prices_known_models() {
        assert!(shipped().len() > 10);
        let table = PriceTable::default();
        let found = table
            .lookup("claude-sonnet-4-5-20250929")
            .expect("a dated release of a listed model");
        assert_eq!(found.entry, "claude-sonnet-4-5");
        assert_eq!(found.source, PriceSource::Shipped);
        // The longest entry wins: `gpt-4o-mini` over `gpt-4o`.
        assert_eq!(
            table
                .lookup("gpt-4o-mini-2024-07-18")
                .expect("listed")
                .entry,
            "gpt-4o-mini"
        );
        assert_eq!(table.lookup("llama3"), None);
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            ..Usage::default()
        };
        assert!((found.cost(usage) - 18.0).abs() < 1e-9);
    }

    #[test]
    fn project_prices_come_first() {
        let table = PriceTable::with_overrides(vec![PriceOverride {
            model: "gpt-4o".to_owned(),
            price: ModelPrice {
                input: 100.0,
                output: 100.0,
                cache_read: None,
                cache_write: None,
            },
        }]);
        let found = table.lookup("gpt-4o-2024-08-06").expect("priced");
        assert_eq!(found.source, PriceSource::Config);
        assert_eq!(found.entry, "gpt-4o");
        // A longer shipped entry still names its own family.
        assert_eq!(
            table.lookup("gpt-4o-mini").map(|f| f.source),
            Some(PriceSource::Shipped)
        );
        assert_eq!(
            table.lookup("claude-haiku-4-5").map(|f| f.source),
            Some(PriceSource::Shipped)
        );
    }
}
