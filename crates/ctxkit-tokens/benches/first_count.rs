//! The cost of the first exact count in a process: the vocabulary is built from the shipped
//! compressed `.tiktoken` file on first use (`docs/benchmarks.md`, "First exact count"). Each
//! measurement runs in a fresh child process, so every one is a first use.
//!
//! Run: `cargo bench -p ctxkit-tokens --bench first_count` (release profile; 5 runs).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::Instant;

use ctxkit_tokens::Encoding;

const CHILD: &str = "CTXKIT_FIRST_COUNT_CHILD";
const RUNS: usize = 5;

fn main() {
    if std::env::var_os(CHILD).is_some() {
        measure_once();
        return;
    }
    let program = std::env::current_exe().unwrap();
    println!("encoding      first count (ms)   second count (µs)");
    let mut rows: Vec<(String, Vec<f64>, Vec<f64>)> = Vec::new();
    for _ in 0..RUNS {
        let output = Command::new(&program).env(CHILD, "1").output().unwrap();
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let mut fields = line.split_whitespace();
            let (Some(name), Some(first), Some(second)) =
                (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let first: f64 = first.parse().unwrap();
            let second: f64 = second.parse().unwrap();
            match rows.iter_mut().find(|row| row.0 == name) {
                Some(row) => {
                    row.1.push(first);
                    row.2.push(second);
                }
                None => rows.push((name.to_owned(), vec![first], vec![second])),
            }
        }
    }
    for (name, firsts, seconds) in rows {
        println!(
            "{name:<13} {:>8.1} (min {:.1}, max {:.1})   {:>8.1}",
            median(&firsts),
            firsts.iter().copied().fold(f64::INFINITY, f64::min),
            firsts.iter().copied().fold(0.0, f64::max),
            median(&seconds)
        );
    }
}

/// One first count and one second count of each encoding, in this process.
fn measure_once() {
    let text = "fn main() { println!(\"hello, world\"); } // a short line of code";
    for encoding in Encoding::ALL {
        let started = Instant::now();
        let first = encoding.count(text);
        let first_ms = started.elapsed().as_secs_f64() * 1000.0;
        let started = Instant::now();
        let second = encoding.count(text);
        let second_us = started.elapsed().as_secs_f64() * 1_000_000.0;
        assert_eq!(first, second);
        println!("{encoding} {first_ms:.3} {second_us:.3}");
    }
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}
