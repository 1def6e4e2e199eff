//! Throughput (MB/s) of the token estimators (the reference's chars/4 and ctxkit's heuristic) and of
//! exact cl100k/o200k counting with each candidate BPE crate, on the `testdata/tokens` corpus.
//!
//! Run: `cargo bench -p ctxkit-tokens --bench tokens`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::LazyLock;

use ctxkit_tokens::{Encoding, Heuristic, estimate_text_tokens};
use divan::Bencher;
use divan::counter::BytesCount;

fn main() {
    divan::main();
}

/// Categories of the corpus, plus `all` (every sample concatenated).
const CORPORA: [&str; 6] = ["prose", "code", "logs", "cjk", "mixed", "all"];

static CORPUS: LazyLock<BTreeMap<String, String>> = LazyLock::new(|| {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/tokens");
    let mut corpus = BTreeMap::new();
    let mut all = String::new();
    let mut categories: Vec<_> = read_dir(&root);
    categories.sort();
    for category in categories {
        let mut text = String::new();
        let mut samples = read_dir(&category);
        samples.sort();
        for sample in samples {
            text.push_str(
                &std::fs::read_to_string(&sample)
                    .unwrap_or_else(|error| panic!("cannot read `{}`: {error}", sample.display())),
            );
        }
        all.push_str(&text);
        let name = category
            .file_name()
            .map(|name| name.to_string_lossy().into_owned());
        corpus.insert(name.unwrap_or_default(), text);
    }
    corpus.insert("all".to_owned(), all);
    corpus
});

fn read_dir(path: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(path)
        .unwrap_or_else(|error| panic!("cannot list `{}`: {error}", path.display()))
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .collect()
}

fn text(name: &str) -> &'static str {
    CORPUS.get(name).map_or("", String::as_str)
}

fn run(bencher: Bencher, corpus: &str, count: impl Fn(&str) -> usize + Sync) {
    let text = text(corpus);
    bencher
        .counter(BytesCount::of_str(text))
        .bench(|| count(divan::black_box(text)));
}

#[divan::bench_group(sample_count = 30)]
mod estimate {
    use super::*;

    #[divan::bench(args = CORPORA)]
    fn pi(bencher: Bencher, corpus: &str) {
        run(bencher, corpus, |text| {
            Heuristic::Pi.estimate(text) as usize
        });
    }

    #[divan::bench(args = CORPORA)]
    fn ctxkit(bencher: Bencher, corpus: &str) {
        run(bencher, corpus, |text| estimate_text_tokens(text) as usize);
    }
}

#[divan::bench_group(sample_count = 20)]
mod cl100k {
    use super::*;

    /// `bpe-openai` (GitHub's `bpe`), the crate ctxkit uses.
    #[divan::bench(args = CORPORA)]
    fn bpe_openai(bencher: Bencher, corpus: &str) {
        let _ = Encoding::Cl100kBase.count("warm up");
        run(bencher, corpus, |text| {
            Encoding::Cl100kBase.count(text) as usize
        });
    }

    #[divan::bench(args = CORPORA)]
    fn tiktoken_rs(bencher: Bencher, corpus: &str) {
        let bpe = tiktoken_rs::cl100k_base_singleton();
        run(bencher, corpus, |text| bpe.encode_ordinary(text).len());
    }

    #[divan::bench(args = CORPORA)]
    fn tiktoken(bencher: Bencher, corpus: &str) {
        let Some(bpe) = tiktoken::get_encoding("cl100k_base") else {
            return;
        };
        run(bencher, corpus, |text| bpe.count(text));
    }
}

#[divan::bench_group(sample_count = 20)]
mod o200k {
    use super::*;

    #[divan::bench(args = CORPORA)]
    fn bpe_openai(bencher: Bencher, corpus: &str) {
        let _ = Encoding::O200kBase.count("warm up");
        run(bencher, corpus, |text| {
            Encoding::O200kBase.count(text) as usize
        });
    }

    #[divan::bench(args = CORPORA)]
    fn tiktoken_rs(bencher: Bencher, corpus: &str) {
        let bpe = tiktoken_rs::o200k_base_singleton();
        run(bencher, corpus, |text| bpe.encode_ordinary(text).len());
    }

    #[divan::bench(args = CORPORA)]
    fn tiktoken(bencher: Bencher, corpus: &str) {
        let Some(bpe) = tiktoken::get_encoding("o200k_base") else {
            return;
        };
        run(bencher, corpus, |text| bpe.count(text));
    }
}
