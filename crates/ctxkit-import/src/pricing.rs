//! Usage priced as Pi prices its own replies: at the model's list prices in `ctxkit-models`'
//! table, none for a model the table does not know.

use ctxkit_protocol::Usage;

/// A reply's usage from its four counts, `totalTokens` their sum, with its `cost` when
/// `provider`'s table knows `model`.
pub(crate) fn priced_usage(counts: UsageCounts, provider: &str, model: Option<&str>) -> Usage {
    let UsageCounts {
        input,
        output,
        cache_read,
        cache_write,
    } = counts;
    // Summed saturating: a crafted transcript's counts near the top of the range add up.
    let mut usage = Usage::from_parts(input, output, cache_read, cache_write);
    let prices = model.and_then(|model| ctxkit_models::model_prices(provider, model));
    usage.cost = prices.map(|prices| ctxkit_models::usage_cost(&usage, Some(&prices)));
    usage
}

/// A call's tokens as Pi splits them: uncached input, output, cache reads and writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct UsageCounts {
    pub(crate) input: u64,
    pub(crate) output: u64,
    pub(crate) cache_read: u64,
    pub(crate) cache_write: u64,
}
