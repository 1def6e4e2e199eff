//! What ctxkit knows of models without talking to one: the built-in table of models (context
//! windows, output limits, reasoning, list prices and Pi 1.6's request-wide price tiers), read
//! from `data/models.json`, and what a reply's usage cost at a model's prices. Own crate: the
//! providers price their replies, the importers price the usage a foreign agent recorded.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod catalog;
mod prices;
mod thinking_levels;

pub use catalog::{BuiltinModel, builtin_models, model_cache_terms, model_prices, model_row};
pub use prices::{CacheTerms, LONG_CACHE_WRITES, ModelPrices, PriceTier, usage_cost};
pub use thinking_levels::{THINKING_LEVELS, clamp_thinking_level, supported_thinking_levels};
