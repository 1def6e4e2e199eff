//! End-to-end checks of the simulator on short sessions with a small window.

use super::*;
use ctxkit_engine::CompactionBudgets as _;

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
    // Determinism needs no long run: 40 calls reach a compaction on this window (checked below)
    // at a fraction of the CI time of the 150-call sessions the other tests need.
    let options = SimulateOptions {
        calls: 40,
        ..small(Strategy::DEFAULT.to_vec())
    };
    let a = without_timings(simulate(&options).unwrap());
    assert!(
        a.strategies
            .iter()
            .any(|strategy| strategy.compactions.total() > 0),
        "the run is long enough to compact"
    );
    let b = without_timings(simulate(&options).unwrap());
    assert_eq!(a, b);
}

#[test]
fn the_recommended_strategy_is_what_the_setting_resolves_to() {
    let document = serde_json::json!({"contextStrategy": "recommended"});
    let user =
        ctxkit_engine::EngineSettings::from_settings(&ctxkit_settings::Settings::read(&document));
    for window in [200_000, 1_000_000] {
        let simulated = Strategy::Recommended.settings(window);
        assert_eq!(simulated, user);
        assert_eq!(
            simulated.compaction.adaptive, user.compaction.adaptive,
            "the derive skips `adaptive`"
        );
        assert_eq!(
            simulated.compaction.planning(window).reserve_tokens,
            window - RECOMMENDED_TARGET_TOKENS
        );
    }
}

#[test]
fn the_override_applies_to_the_recommended_strategy_only() {
    let options = SimulateOptions {
        recommended_override: Some(serde_json::json!({"compaction": {"keepRecentTokens": 1234}})),
        ..small(vec![Strategy::Recommended])
    };
    let recommended = options.settings_of(Strategy::Recommended).unwrap();
    assert_eq!(recommended.compaction.keep_recent_tokens, 1234);
    assert!(recommended.compaction.background, "the rest is kept");
    let reference = options.settings_of(Strategy::ReferenceCompaction).unwrap();
    assert_eq!(reference.compaction.keep_recent_tokens, 20_000);
    let invalid = SimulateOptions {
        recommended_override: Some(serde_json::json!({"compaction": {"enabled": "yes"}})),
        ..small(vec![Strategy::Recommended])
    };
    let error = invalid.settings_of(Strategy::Recommended).unwrap_err();
    assert!(
        error.to_string().contains("`compaction.enabled` expects"),
        "{error}"
    );
    // Read by the settings' own merge: nothing over the strategy is the strategy, and a budget
    // set is fixed as a user's would be, one left alone follows the window.
    let empty = SimulateOptions {
        recommended_override: Some(serde_json::json!({})),
        ..small(vec![Strategy::Recommended])
    };
    assert_eq!(
        empty.settings_of(Strategy::Recommended).unwrap(),
        Strategy::Recommended.settings(32_000)
    );
    let reserve = SimulateOptions {
        recommended_override: Some(serde_json::json!({"compaction": {"reserveTokens": 5000}})),
        ..small(vec![Strategy::Recommended])
    };
    let adaptive = reserve
        .settings_of(Strategy::Recommended)
        .unwrap()
        .compaction
        .adaptive;
    // The override set the reserve; the strategy's keep budget still follows the window.
    assert!(!adaptive.reserve_tokens && adaptive.keep_recent_tokens);
    assert!(recommended.compaction.adaptive.reserve_tokens);
}

#[test]
fn the_override_sizes_the_recommended_strategys_offline_summaries() {
    let sized = SimulateOptions {
        recommended_override: Some(serde_json::json!({"compaction": {
            "offlineSummaryPercent": 4,
            "offlineSummaryMinTokens": 1500,
            "offlineSummaryMaxTokens": 3000,
        }})),
        ..small(vec![Strategy::Recommended])
    };
    let size = sized.summary_size_of(Strategy::Recommended).unwrap();
    assert_eq!((size.min_tokens, size.max_tokens), (1500, 3000));
    assert!((size.ratio - 0.04).abs() < 1e-9);
    assert_eq!(
        sized
            .summary_size_of(Strategy::ReferenceCompaction)
            .unwrap(),
        ctxkit_summarizer_offline::SummarySize::default()
    );
    let crossed = SimulateOptions {
        recommended_override: Some(serde_json::json!({"compaction": {
            "offlineSummaryMinTokens": 5000,
            "offlineSummaryMaxTokens": 3000,
        }})),
        ..small(vec![Strategy::Recommended])
    };
    let error = crossed.summary_size_of(Strategy::Recommended).unwrap_err();
    assert!(
        error.to_string().contains("offlineSummaryMinTokens"),
        "{error}"
    );
}

#[test]
fn strategies_differ_as_designed_on_a_small_window() {
    // 150 calls never reach the 32K window's own threshold (28,000) with every result but the latest
    // pruned: a 12,000-token target stands in for 40,000 at 200K.
    let options = SimulateOptions {
        recommended_override: Some(serde_json::json!({"compaction": {"thresholdTokens": 12_000}})),
        ..small(Strategy::DEFAULT.to_vec())
    };
    let report = simulate(&options).unwrap();
    let [none, defaults, reference, transforms, provider, recommended] = &report.strategies[..]
    else {
        panic!("six strategies expected");
    };
    // Every strategy sends every call once: answered, or refused above the window.
    for strategy in &report.strategies {
        assert_eq!(
            strategy.requests + strategy.refused_requests,
            150,
            "{}",
            strategy.name
        );
    }
    // Unmanaged: the view is everything, it overflows, nothing is ever at risk.
    assert!(none.overflows > 0);
    assert_eq!(none.compactions.total(), 0);
    assert_eq!(none.recall_final.all.at_risk, 0);
    assert_eq!(none.rejected_requests, 0);
    // Its requests above the window are refused (not billed, not counted as sent): a provider
    // would answer none of them.
    assert_eq!(none.refused_requests, none.overflows);
    assert!(none.input_tokens.max <= 32_000);
    // Compaction keeps requests near the window and summarizes: identifiers become at risk.
    assert!(reference.compactions.total() > 0);
    assert_eq!(reference.refused_requests, 0);
    assert!(reference.recall_final.all.at_risk > 0);
    // Long runs are checked after each tool batch, as the agent loop checks them, so they are
    // compacted at the threshold inside the run; any request still rejected is recovered.
    assert!(
        reference.compactions.threshold > 0,
        "{:?}",
        reference.compactions
    );
    assert_eq!(reference.rejected_requests, reference.compactions.overflow);
    assert_eq!(reference.recovery_failures, 0);
    assert!(reference.input_tokens.max <= 32_000);
    // Transforms alone never compact.
    assert_eq!(transforms.compactions.total(), 0);
    assert_eq!(transforms.refused_requests, 0);
    // Unmanaged requests only ever grow, so most of what it is answered is a cache hit (the
    // requests above the window, refused, are not counted).
    assert!(none.cache_hit_ratio > 0.85, "{}", none.cache_hit_ratio);
    // The defaults never do worse than no management: here no management is refused once its
    // requests pass the window, and the defaults answer every call.
    assert_eq!(defaults.refused_requests, 0);
    assert!(
        !crate::worse_than(defaults, none),
        "{} {}",
        defaults.total_cost_with_cache,
        none.total_cost_with_cache
    );
    // The engine keeps the sliding window behind compaction, so the recommended strategy compacts
    // (the window alone would hold every request under the threshold) and recovers every overflow.
    assert!(recommended.compactions.total() > 0);
    assert_eq!(recommended.recovery_failures, 0);
    // Summary calls are billed: a fresh prompt pays its input uncached, a cache-prefix or
    // provider-side request reads most of it from the cache; every compaction has a wait.
    for strategy in [reference, provider, recommended] {
        assert!(
            strategy.summaries.calls >= strategy.compactions.total(),
            "{}",
            strategy.name
        );
        assert!(strategy.summaries.cost > 0.0, "{}", strategy.name);
        assert!(
            (strategy.total_cost_with_cache - strategy.cost_with_cache - strategy.summaries.cost)
                .abs()
                < 1e-9
        );
    }
    assert_eq!(reference.summaries.cached_tokens, 0);
    assert_eq!(
        reference.summaries.waits_seconds.len(),
        reference.compactions.total()
    );
    assert!(reference.summaries.median_wait().unwrap() > 1.0);
    assert!(provider.summaries.cached_tokens * 2 > provider.summaries.input_tokens);
    assert_eq!(none.summaries.calls, 0);
    // Provider-side compaction checks every request; a request that a single large tool result
    // still takes past the window (the summary stays in the context, a few percent of the span) is
    // refused and recovered by an overflow compaction, never lost.
    assert!(provider.compactions.threshold > 0);
    assert!(provider.overflows <= provider.compactions.overflow);
    assert_eq!(provider.recovery_failures, 0);
    // The recommended strategy writes its summaries in the background.
    assert!(recommended.summaries.background_used > 0);
    // The stand-in never recalls less than the summaries as written.
    for strategy in &report.strategies {
        assert!(strategy.stand_in_final.all.recalled >= strategy.recall_final.all.recalled);
    }
    let markdown = render_markdown(&report);
    assert!(
        markdown.contains("| provider-side compaction |"),
        "{markdown}"
    );
    assert!(markdown.contains("| ctxkit recommended |"), "{markdown}");
}

#[test]
fn the_native_features_are_priced_on_every_strategy_and_threads_bill_nothing() {
    let report = simulate(&small(vec![
        Strategy::ReferenceCompaction,
        Strategy::Recommended,
    ]))
    .unwrap();
    for strategy in &report.strategies {
        let native = &strategy.native;
        assert_eq!(native.sent_tokens_full, strategy.input_tokens.total);
        assert!(native.sent_tokens_threads < native.sent_tokens_full);
        assert!(native.thread_continuations > 0);
        assert_eq!(native.idle_gaps, report.trace.tasks - 1);
        assert!(native.warmed_misses <= native.cold_misses);
        assert!(native.idle_cost(true) <= native.idle_cost(false) + native.warm_refresh_cost);
        // Threads change no bill: the total with every feature is the summaries and the gaps only.
        let expected = strategy.total_cost_with_cache - strategy.summaries.cost
            + native.on_demand_summary_cost
            + native.idle_cost(true);
        assert!((total_with_features(strategy) - expected).abs() < 1e-9);
    }
    let reference = &report.strategies[0];
    assert!(reference.summaries.calls > 0);
    assert!(
        reference.native.on_demand_summary_cost < reference.summaries.cost,
        "a fresh-prompt summary costs more than one written on the cached prefix"
    );
}

#[test]
fn the_defaults_margin_is_over_the_cheapest_strategy_with_other_settings() {
    let options = SimulateOptions {
        calls: 40,
        ..small(Strategy::DEFAULT.to_vec())
    };
    let report = simulate(&options).unwrap();
    let margin = defaults_margin(std::slice::from_ref(&report)).unwrap();
    let cost = |strategy: Strategy| {
        report
            .strategies
            .iter()
            .find(|found| found.strategy == strategy)
            .map(|found| {
                (
                    found.name,
                    found.total_cost_with_cache,
                    found.refused_requests,
                )
            })
            .unwrap()
    };
    // The recommended strategy is the defaults' settings: never the strategy they are measured
    // against, however its cost compares.
    assert_ne!(margin.against, cost(Strategy::Recommended).0);
    assert_ne!(margin.against, cost(Strategy::Defaults).0);
    let others = [
        Strategy::NoManagement,
        Strategy::ReferenceCompaction,
        Strategy::Transforms,
        Strategy::ProviderCompaction,
    ];
    let cheapest = others
        .iter()
        .map(|strategy| cost(*strategy))
        .filter(|(_, _, refused)| *refused == 0)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    assert_eq!(
        (margin.against, margin.against_cost),
        (cheapest.0, cheapest.1)
    );
    let defaults_cost = cost(Strategy::Defaults).1;
    assert!((margin.cheaper_by - (1.0 - defaults_cost / cheapest.1)).abs() < 1e-12);
    assert!(margin.reference_recall.is_some());
    let verdict = render_verdict(std::slice::from_ref(&report));
    assert!(
        verdict.contains(&format!(
            "than the cheapest other strategy with no request refused ({}",
            cheapest.0
        )),
        "{verdict}"
    );

    // Without the defaults there is nothing to measure.
    let without = simulate(&SimulateOptions {
        calls: 40,
        ..small(vec![Strategy::NoManagement, Strategy::Transforms])
    })
    .unwrap();
    assert!(defaults_margin(std::slice::from_ref(&without)).is_none());
}
