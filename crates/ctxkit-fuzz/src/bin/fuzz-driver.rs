//! `fuzz-driver`: runs the fuzz targets on stable Rust, without libFuzzer: every file of the committed
//! corpus, then seeded random mutations of it (bit flips, splices, dictionary tokens, deep nesting,
//! truncation, invalid UTF-8) until the time budget is spent. No coverage feedback: this is the
//! fast CI check and the fallback where nightly is unavailable; `cargo +nightly fuzz run` is the
//! coverage-guided run.
//!
//! ```text
//! fuzz-driver [--seconds TOTAL] [--target NAME]... [--seed N] [--trace]
//! ```
//! A panic is saved to `artifacts/<target>/crash-<hash>` and counted; the exit status is 1 when any
//! target crashed. A crash that kills the process (stack overflow) is reproduced by running again
//! with the same seed and `--trace`, which writes each input to `artifacts/<target>/current` first.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line runner: its report and its errors are its output"
)]

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use ctxkit_fuzz::TARGETS;

struct Options {
    seconds: f64,
    targets: Vec<String>,
    seed: u64,
    trace: bool,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        seconds: 20.0,
        targets: Vec::new(),
        seed: 1,
        trace: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--seconds" => {
                options.seconds = value("--seconds")?
                    .parse()
                    .map_err(|_| "--seconds takes a number".to_owned())?;
            }
            "--target" => options.targets.push(value("--target")?),
            "--seed" => {
                options.seed = value("--seed")?
                    .parse()
                    .map_err(|_| "--seed takes an integer".to_owned())?;
            }
            "--trace" => options.trace = true,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    for name in &options.targets {
        if !TARGETS.iter().any(|(target, _)| target == name) {
            return Err(format!("unknown target `{name}`"));
        }
    }
    Ok(options)
}

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: usize) -> usize {
        if bound == 0 {
            0
        } else {
            (self.next() % bound as u64) as usize
        }
    }
}

/// Tokens worth inserting, for every target.
const DICTIONARY: &[&[u8]] = &[
    b"\n",
    b"\r\n",
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\\",
    b":",
    b",",
    b"null",
    b"true",
    b"1e999",
    b"-0",
    b"18446744073709551616",
    b"\"\\ud800\"",
    b"\xff",
    b"\xc3",
    b"\xe6\x97\xa5",
    b"\0",
    b"\x01",
    b"{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/p\"}\n",
    b"{\"type\":\"session\",\"id\":\"s\"}\n",
    b"{\"type\":\"message\",\"id\":\"a\",\"parentId\":\"a\",\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}\n",
    b"{\"type\":\"message\",\"id\":\"b\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"c\",\"name\":\"n\",\"arguments\":{}}]}}\n",
    b"{\"type\":\"compaction\",\"id\":\"c\",\"parentId\":\"b\",\"timestamp\":\"t\",\"summary\":\"s\",\"firstKeptEntryId\":\"zz\",\"tokensBefore\":-1}\n",
    b"{\"type\":\"label\",\"id\":\"d\",\"parentId\":\"d\",\"targetId\":\"a\",\"label\":5}\n",
    b"\"parentId\":",
    b"\"role\":\"toolResult\"",
    b"\"content\":",
    b"\"version\":1",
    b"\"version\":2",
    b"\"firstKeptEntryIndex\":",
    b"\"hookMessage\"",
    b"---\n",
    b"\n---",
    b"name: x\n",
    b"description: |\n  a\n",
    b"&a [*a]",
    b"!!binary",
    b"? ",
    b"- ",
    b"npm:",
    b"git:",
    b"github:",
    b"https://",
    b"ssh://git@",
    b"git@github.com:",
    b"@",
    b"..",
    b"/../",
    b"./",
    b"~/",
    b"@ROOT@/",
    b"../link/",
    b"../inner/",
    b"outside/",
    b".agents/skills",
    b"\"packages\":[",
    b"\"skills\":[",
    b"\"prompts\":[",
    b"-",
    b"--upload-pack=x",
    b"$1",
    b"$9",
    b"$0",
    b"$@",
    b"$ARGUMENTS",
    b"${@:",
    b"${@:2}",
    b"${@:1:1}",
    b"${@:0:99999999999999999999}",
    b"context length",
    b"maximum context length",
    b"prompt is too long",
    b"rate limit",
    b"too many tokens",
    b"exceeds the context window",
    b"413",
    b"429",
];

/// Makes one mutation of `input` (`others` supplies splices).
fn mutate(rng: &mut Rng, input: &mut Vec<u8>, others: &[Vec<u8>]) {
    let at = |rng: &mut Rng, input: &Vec<u8>| rng.below(input.len() + 1);
    match rng.below(12) {
        0 if !input.is_empty() => {
            let index = rng.below(input.len());
            input[index] ^= 1 << rng.below(8);
        }
        1 if !input.is_empty() => {
            let index = rng.below(input.len());
            input[index] = rng.next() as u8;
        }
        2 => {
            let index = at(rng, input);
            let count = 1 + rng.below(8);
            let bytes: Vec<u8> = (0..count).map(|_| rng.next() as u8).collect();
            input.splice(index..index, bytes);
        }
        3 if !input.is_empty() => {
            let start = rng.below(input.len());
            let end = (start + 1 + rng.below(64)).min(input.len());
            input.drain(start..end);
        }
        4 if !input.is_empty() => {
            let start = rng.below(input.len());
            let end = (start + 1 + rng.below(256)).min(input.len());
            let copy = input[start..end].to_vec();
            let index = at(rng, input);
            input.splice(index..index, copy);
        }
        5 if !others.is_empty() => {
            let other = &others[rng.below(others.len())];
            if !other.is_empty() {
                let start = rng.below(other.len());
                let end = (start + 1 + rng.below(512)).min(other.len());
                let index = at(rng, input);
                input.splice(index..index, other[start..end].iter().copied());
            }
        }
        6 | 7 => {
            let token = DICTIONARY[rng.below(DICTIONARY.len())];
            let index = at(rng, input);
            input.splice(index..index, token.iter().copied());
        }
        8 => {
            // Deep nesting or a long run of one token.
            let token = [&b"["[..], b"{\"a\":", b"- ", b"  ", b"$", b"a", b"\\"][rng.below(7)];
            let count = [10, 100, 1_000, 10_000, 100_000][rng.below(5)];
            let index = at(rng, input);
            let run: Vec<u8> = token.repeat(count);
            input.splice(index..index, run);
        }
        9 if !input.is_empty() => input.truncate(rng.below(input.len())),
        10 => {
            let token = DICTIONARY[rng.below(DICTIONARY.len())];
            let index = at(rng, input);
            let end = (index + token.len()).min(input.len());
            input.splice(index..end, token.iter().copied());
        }
        _ => {
            if let Some(last) = input.last()
                && *last == b'\n'
            {
                input.pop();
            } else {
                input.push(b'\n');
            }
        }
    }
    // Keep inputs bounded, as libFuzzer does with -max_len (a little larger, for deep nesting).
    input.truncate(1 << 20);
}

fn read_corpus(directory: &Path) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(directory)
        .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
        .into_iter()
        .filter_map(|path| std::fs::read(path).ok())
        .collect()
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

struct Report {
    name: &'static str,
    corpus: usize,
    executions: u64,
    crashes: u64,
    elapsed: Duration,
}

fn run_target(
    name: &'static str,
    body: fn(&[u8]),
    budget: Duration,
    seed: u64,
    trace: bool,
) -> Report {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let corpus = read_corpus(&root.join("corpus").join(name));
    let artifacts = root.join("artifacts").join(name);
    let mut rng = Rng(seed ^ fnv(name.as_bytes()));
    let mut report = Report {
        name,
        corpus: corpus.len(),
        executions: 0,
        crashes: 0,
        elapsed: Duration::ZERO,
    };
    let mut pool: Vec<Vec<u8>> = Vec::new();
    let started = Instant::now();
    let execute = |input: &[u8], report: &mut Report| -> bool {
        if trace {
            let _ = std::fs::create_dir_all(&artifacts);
            let _ = std::fs::write(artifacts.join("current"), input);
        }
        report.executions += 1;
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| body(input)));
        if outcome.is_err() {
            report.crashes += 1;
            let _ = std::fs::create_dir_all(&artifacts);
            let path = artifacts.join(format!("crash-{:016x}", fnv(input)));
            let _ = std::fs::write(&path, input);
            println!("{name}: crash saved to {}", path.display());
            return false;
        }
        true
    };
    for input in &corpus {
        execute(input, &mut report);
    }
    while started.elapsed() < budget {
        let base = if !pool.is_empty() && rng.below(2) == 0 {
            pool[rng.below(pool.len())].clone()
        } else if corpus.is_empty() {
            Vec::new()
        } else {
            corpus[rng.below(corpus.len())].clone()
        };
        let mut input = base;
        for _ in 0..1 + rng.below(4) {
            mutate(&mut rng, &mut input, &corpus);
        }
        if execute(&input, &mut report) && input.len() < 64 * 1024 {
            if pool.len() < 256 {
                pool.push(input);
            } else {
                let slot = rng.below(pool.len());
                pool[slot] = input;
            }
        }
    }
    report.elapsed = started.elapsed();
    report
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let selected: Vec<_> = TARGETS
        .iter()
        .filter(|(name, _)| options.targets.is_empty() || options.targets.iter().any(|t| t == name))
        .collect();
    let budget = Duration::from_secs_f64(options.seconds / selected.len() as f64);
    let mut crashed = false;
    println!("| target | corpus files | executions | exec/s | seconds | crashes |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, body) in selected {
        let report = run_target(name, *body, budget, options.seed, options.trace);
        crashed |= report.crashes > 0;
        println!(
            "| {} | {} | {} | {:.0} | {:.1} | {} |",
            report.name,
            report.corpus,
            report.executions,
            report.executions as f64 / report.elapsed.as_secs_f64().max(1e-9),
            report.elapsed.as_secs_f64(),
            report.crashes
        );
    }
    ctxkit_fuzz::remove_scratch();
    ctxkit_fuzz::remove_settings_folder();
    ctxkit_fuzz::remove_reach_folder();
    if crashed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
