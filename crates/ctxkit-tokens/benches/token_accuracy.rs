//! Prints the accuracy of each token estimator against exact cl100k counts on `testdata/tokens`:
//! mean absolute relative error and mean bias per category, the worst sample, and whether the
//! candidate BPE crates agree on every exact count.
//!
//! Run: `cargo bench -p ctxkit-tokens --bench token_accuracy`.

#![expect(clippy::print_stdout, reason = "a benchmark program prints its report")]

use std::collections::BTreeMap;
use std::error::Error;
use std::path::{Path, PathBuf};

use ctxkit_tokens::{Encoding, Heuristic};

struct Sample {
    name: String,
    bytes: usize,
    cl100k: u64,
    o200k: u64,
    pi: u64,
    ctxkit: u64,
}

fn sorted_entries(path: &Path) -> Result<Vec<PathBuf>, Box<dyn Error>> {
    let mut entries = std::fs::read_dir(path)?
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<Result<Vec<_>, _>>()?;
    entries.sort();
    Ok(entries)
}

fn relative(estimate: u64, exact: u64) -> f64 {
    (estimate as f64 - exact as f64) / exact.max(1) as f64
}

fn main() -> Result<(), Box<dyn Error>> {
    // `cargo bench` passes `--bench`; nothing to parse.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/tokens");
    let tiktoken_rs_cl100k = tiktoken_rs::cl100k_base_singleton();
    let tiktoken_rs_o200k = tiktoken_rs::o200k_base_singleton();
    let tiktoken_cl100k = tiktoken::get_encoding("cl100k_base").ok_or("no cl100k_base")?;
    let tiktoken_o200k = tiktoken::get_encoding("o200k_base").ok_or("no o200k_base")?;
    let mut disagreements = Vec::new();
    let mut categories: BTreeMap<String, Vec<Sample>> = BTreeMap::new();
    for category in sorted_entries(&root)? {
        let category_name = category
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        for path in sorted_entries(&category)? {
            let text = std::fs::read_to_string(&path)?;
            let name = format!(
                "{category_name}/{}",
                path.file_name().unwrap_or_default().to_string_lossy()
            );
            let cl100k = Encoding::Cl100kBase.count(&text);
            let o200k = Encoding::O200kBase.count(&text);
            let others = [
                tiktoken_rs_cl100k.encode_ordinary(&text).len() as u64,
                tiktoken_cl100k.count(&text) as u64,
            ];
            let others_o200k = [
                tiktoken_rs_o200k.encode_ordinary(&text).len() as u64,
                tiktoken_o200k.count(&text) as u64,
            ];
            if others.iter().any(|&count| count != cl100k)
                || others_o200k.iter().any(|&count| count != o200k)
            {
                disagreements.push(name.clone());
            }
            categories
                .entry(category_name.clone())
                .or_default()
                .push(Sample {
                    name,
                    bytes: text.len(),
                    cl100k,
                    o200k,
                    pi: Heuristic::Pi.estimate(&text),
                    ctxkit: Heuristic::Ctxkit.estimate(&text),
                });
        }
    }

    println!("Estimator accuracy against exact cl100k_base counts (testdata/tokens)\n");
    println!(
        "| category | samples | bytes | cl100k | o200k | pi MAE | pi bias | ctxkit MAE | ctxkit bias | ctxkit worst |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    let mut all: Vec<&Sample> = Vec::new();
    for (category, samples) in &categories {
        print_row(category, &samples.iter().collect::<Vec<_>>());
        all.extend(samples.iter());
    }
    print_row("all", &all);
    println!("\nMAE: mean over samples of |estimate - cl100k| / cl100k; bias: mean signed error.");
    if disagreements.is_empty() {
        println!(
            "bpe-openai, tiktoken-rs and tiktoken agree on every cl100k and o200k count ({} samples).",
            all.len()
        );
    } else {
        println!(
            "Exact counts differ between crates on: {}",
            disagreements.join(", ")
        );
    }
    Ok(())
}

fn print_row(category: &str, samples: &[&Sample]) {
    let count = samples.len().max(1) as f64;
    let mean =
        |error: &dyn Fn(&Sample) -> f64| samples.iter().map(|s| error(s)).sum::<f64>() / count;
    let pi_mae = mean(&|s| relative(s.pi, s.cl100k).abs());
    let pi_bias = mean(&|s| relative(s.pi, s.cl100k));
    let ctxkit_mae = mean(&|s| relative(s.ctxkit, s.cl100k).abs());
    let ctxkit_bias = mean(&|s| relative(s.ctxkit, s.cl100k));
    let worst = samples.iter().max_by(|a, b| {
        relative(a.ctxkit, a.cl100k)
            .abs()
            .total_cmp(&relative(b.ctxkit, b.cl100k).abs())
    });
    let worst = worst.map_or(String::new(), |s| {
        format!("{} {:+.1}%", s.name, 100.0 * relative(s.ctxkit, s.cl100k))
    });
    println!(
        "| {category} | {} | {} | {} | {} | {:.1}% | {:+.1}% | {:.1}% | {:+.1}% | {worst} |",
        samples.len(),
        samples.iter().map(|s| s.bytes).sum::<usize>(),
        samples.iter().map(|s| s.cl100k).sum::<u64>(),
        samples.iter().map(|s| s.o200k).sum::<u64>(),
        100.0 * pi_mae,
        100.0 * pi_bias,
        100.0 * ctxkit_mae,
        100.0 * ctxkit_bias,
    );
}
