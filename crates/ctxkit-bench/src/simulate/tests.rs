//! End-to-end checks of the simulator on short sessions with a small window.

use super::*;

fn small(strategies: Vec<Strategy>) -> SimulateOptions {
    SimulateOptions {
        calls: 150,
        seed: 11,
        context_window: 32_000,
        strategies,
        parallel: false,
        ..SimulateOptions::default()
    }
}

fn without_timings(mut report: SimulationReport) -> SimulationReport {
    report.generate_ms = 0.0;
    report.wall_ms = 0.0;
    for strategy in &mut report.strategies {
        strategy.timing = Timing::default();
    }
    report
}

#[test]
fn equal_seeds_give_equal_reports() {
    let options = small(Strategy::DEFAULT.to_vec());
    let a = without_timings(simulate(&options).unwrap());
    let b = without_timings(simulate(&options).unwrap());
    assert_eq!(a, b);
}

#[test]
fn strategies_differ_as_designed_on_a_small_window() {
    let report = simulate(&small(Strategy::DEFAULT.to_vec())).unwrap();
    let [none, reference, transforms, recommended] = &report.strategies[..] else {
        panic!("four strategies expected");
    };
    // Every strategy answers every call once.
    for strategy in &report.strategies {
        assert_eq!(strategy.requests, 150, "{}", strategy.name);
    }
    // Unmanaged: the view is everything, it overflows, nothing is ever at risk.
    assert!(none.overflows > 0);
    assert_eq!(none.compactions.total(), 0);
    assert_eq!(none.recall_final.all.at_risk, 0);
    assert!(none.input_tokens.max > 32_000);
    assert_eq!(none.rejected_requests, 0);
    // Compaction keeps requests near the window and summarizes: identifiers become at risk.
    assert!(reference.compactions.total() > 0);
    assert!(reference.input_tokens.total < none.input_tokens.total);
    assert!(reference.recall_final.all.at_risk > 0);
    // Long runs cross the window between checks: the engine's overflow recovery compacts and
    // retries, and every rejected request is recovered.
    assert!(reference.rejected_requests > 0);
    assert_eq!(reference.rejected_requests, reference.compactions.overflow);
    assert_eq!(reference.recovery_failures, 0);
    assert!(reference.input_tokens.max <= 32_000);
    // Transforms alone never compact.
    assert_eq!(transforms.compactions.total(), 0);
    assert!(transforms.input_tokens.total < none.input_tokens.total);
    // Unmanaged requests only ever grow, so almost everything is a cache hit.
    assert!(none.cache_hit_ratio > 0.9, "{}", none.cache_hit_ratio);
    // Cache-aware transforms keep more of the prefix than plain ones.
    assert!(recommended.cache_hit_ratio > transforms.cache_hit_ratio);
    // The engine keeps the sliding window behind compaction, so the recommended strategy compacts
    // (the window alone would hold every request under the threshold) and recovers every overflow.
    assert!(recommended.compactions.total() > 0);
    assert_eq!(recommended.recovery_failures, 0);
    let markdown = render_markdown(&report);
    assert!(markdown.contains("| ctxkit recommended |"), "{markdown}");
}
