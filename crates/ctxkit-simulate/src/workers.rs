//! The strategies' replays on worker threads.

use super::{SimulateError, Strategy};

/// Runs `run` for each strategy on as many threads as the machine runs at once (more threads than
/// cores only contend: six strategies on two cores took 2.5 times as long as one after the other),
/// the reports in the strategies' order.
pub(crate) fn replay_on_workers<T: Send>(
    strategies: &[Strategy],
    run: &(dyn Fn(Strategy) -> Result<T, SimulateError> + Sync),
) -> Result<Vec<T>, SimulateError> {
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(strategies.len())
        .max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut reports: Vec<Option<Result<T, SimulateError>>> =
        strategies.iter().map(|_| None).collect();
    let done = std::sync::Mutex::new(&mut reports);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(strategy) = strategies.get(index) else {
                        break;
                    };
                    // A strategy that panics is reported as such; the others go on.
                    let report =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(*strategy)))
                            .unwrap_or(Err(SimulateError::Panicked {
                                strategy: strategy.name(),
                            }));
                    if let Ok(mut done) = done.lock() {
                        done[index] = Some(report);
                    }
                }
            });
        }
    });
    strategies
        .iter()
        .zip(reports)
        .map(|(strategy, report)| {
            report.unwrap_or(Err(SimulateError::Panicked {
                strategy: strategy.name(),
            }))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn workers_keep_the_strategies_order_and_report_a_panic_as_that_strategys() {
        let strategies = Strategy::DEFAULT.to_vec();
        let names = replay_on_workers(&strategies, &|strategy| Ok(strategy.name())).unwrap();
        assert_eq!(
            names,
            strategies
                .iter()
                .map(|strategy| strategy.name())
                .collect::<Vec<_>>()
        );
        let failed = replay_on_workers(&strategies, &|strategy| {
            if strategy == strategies[1] {
                panic!("a bug in one strategy");
            }
            Ok(())
        });
        assert!(
            matches!(failed, Err(SimulateError::Panicked { strategy }) if strategy == strategies[1].name()),
            "{failed:?}"
        );
    }
}
