//! Exact token counts with OpenAI's cl100k_base and o200k_base encodings, through GitHub's `bpe`
//! crates: linear-time BPE, counting without building a token vector. The vocabularies ship as
//! OpenAI's compressed `.tiktoken` files (2.4 MB) and are built into BPE tables on first use, once
//! per process (`docs/decisions.md`, "Exact token counting"; the cost is in `docs/benchmarks.md`).
//! Long texts are cut at pre-token boundaries and counted on all cores.

use std::collections::HashSet;
use std::fmt;
use std::sync::OnceLock;

use rayon::prelude::*;

/// Texts shorter than this are counted on the calling thread.
const PARALLEL_MIN_BYTES: usize = 64 * 1024;

/// The size of the pieces a long text is counted in.
const CHUNK_BYTES: usize = 16 * 1024;

/// A BPE encoding ctxkit can count with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// `cl100k_base` (GPT-4, GPT-3.5 Turbo, text-embedding-3).
    Cl100kBase,
    /// `o200k_base` (GPT-4o, GPT-4.1, o-series).
    O200kBase,
}

impl Encoding {
    /// Every encoding.
    pub const ALL: [Self; 2] = [Self::Cl100kBase, Self::O200kBase];

    /// The encoding's name as OpenAI spells it (`cl100k_base`, `o200k_base`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Cl100kBase => "cl100k_base",
            Self::O200kBase => "o200k_base",
        }
    }

    /// The exact number of tokens of `text`, with special-token text (`<|endoftext|>`) counted as
    /// ordinary text, as tiktoken's `encode_ordinary` does. The vocabulary is built on first use,
    /// once per process (`docs/benchmarks.md`, "First exact count"). Should the shipped vocabulary
    /// ever fail to build, the count is ctxkit's heuristic estimate instead.
    pub fn count(self, text: &str) -> u64 {
        let Some(vocabulary) = self.vocabulary() else {
            return crate::estimate_text_tokens(text);
        };
        if text.len() < PARALLEL_MIN_BYTES {
            return vocabulary.count(text);
        }
        chunks(text, CHUNK_BYTES)
            .par_iter()
            .map(|chunk| vocabulary.count(chunk))
            .sum()
    }

    fn vocabulary(self) -> Option<&'static Vocabulary> {
        static CL100K: OnceLock<Option<Vocabulary>> = OnceLock::new();
        static O200K: OnceLock<Option<Vocabulary>> = OnceLock::new();
        let cell = match self {
            Self::Cl100kBase => &CL100K,
            Self::O200kBase => &O200K,
        };
        cell.get_or_init(|| build_tokenizer(self).map(Vocabulary::new))
            .as_ref()
    }

    /// The compressed `.tiktoken` file and the pre-tokenizer patterns of the encoding. The patterns
    /// are tiktoken's, with its negative look-ahead `\s+(?!\S)` written as bpe-openai's one-character
    /// look-ahead pattern (`\s+\s`, the last character dropped from the match) and a plain `\s+`.
    fn source(self) -> (&'static [u8], String) {
        match self {
            Self::Cl100kBase => (
                include_bytes!("../data/cl100k_base.tiktoken.gz"),
                "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+$".to_owned(),
            ),
            Self::O200kBase => (
                include_bytes!("../data/o200k_base.tiktoken.gz"),
                [
                    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                    "\\p{N}{1,3}",
                    " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
                    "\\s*[\\r\\n]+",
                    "\\s+$",
                ]
                .join("|"),
            ),
        }
    }
}

/// The hash factor that makes the token hash of both vocabularies collision-free (found once by
/// `bpe::byte_pair_encoding::find_hash_factor_for_dictionary`; it skips that search at startup).
const HASH_FACTOR: u64 = 17_846_336_922_010_275_747;

/// The encoding's tokenizer, built from its shipped `.tiktoken` file; `None` if that fails (it
/// cannot with the files shipped; a test builds both).
fn build_tokenizer(encoding: Encoding) -> Option<&'static bpe_openai::Tokenizer> {
    use std::io::Read as _;
    let (compressed, pattern) = encoding.source();
    let mut text = String::new();
    flate2::read::GzDecoder::new(compressed)
        .read_to_string(&mut text)
        .ok()?;
    let tokens = bpe::byte_pair_encoding::read_tiktoken(&text).ok()?;
    let encoding =
        bpe::byte_pair_encoding::BytePairEncoding::from_dictionary(tokens, Some(HASH_FACTOR));
    let patterns = [
        (pattern.as_str(), false),
        ("\\s+\\s", true),
        ("\\s+", false),
    ];
    let tokenizer = bpe_openai::Tokenizer::new_lookahead(encoding, &patterns, false).ok()?;
    // Built once per encoding and process, and kept for the process's life like a static table.
    Some(Box::leak(Box::new(tokenizer)))
}

/// A tokenizer with the set of its tokens' bytes: a pre-token that is itself a token (most words of
/// ordinary text) is one token, as tiktoken also decides before running BPE, and BPE runs only on the
/// others.
struct Vocabulary {
    tokenizer: &'static bpe_openai::Tokenizer,
    tokens: HashSet<&'static [u8], foldhash::fast::RandomState>,
}

impl Vocabulary {
    fn new(tokenizer: &'static bpe_openai::Tokenizer) -> Self {
        let encoding = &tokenizer.bpe;
        let count = encoding.num_tokens();
        let mut tokens = HashSet::with_capacity_and_hasher(count, Default::default());
        for id in 0..count {
            if let Ok(id) = u32::try_from(id) {
                tokens.insert(encoding.token_bytes(id));
            }
        }
        Self { tokenizer, tokens }
    }

    fn count(&self, text: &str) -> u64 {
        self.tokenizer
            .split(text)
            .map(|piece| {
                if self.tokens.contains(piece.as_bytes()) {
                    1
                } else {
                    self.tokenizer.bpe.count(piece.as_bytes()) as u64
                }
            })
            .sum()
    }
}

/// `text` cut into pieces of about `target` bytes, each cut right after a newline that is followed by
/// an ASCII letter. No pre-token of cl100k_base or o200k_base spans such a place (their patterns never
/// join a line break to a following letter, and every pattern that can end in a line break stops at
/// the letter), so the count of the whole is the sum of the counts of the pieces. Text without such
/// places stays in one piece.
fn chunks(text: &str, target: usize) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut pieces = Vec::with_capacity(text.len() / target.max(1) + 1);
    let mut start = 0;
    while start < text.len() {
        let cut = start
            .checked_add(target)
            .filter(|&from| from < text.len())
            .and_then(|from| {
                memchr::memchr_iter(b'\n', bytes.get(from..)?)
                    .map(|offset| from + offset + 1)
                    .find(|&after| bytes.get(after).is_some_and(u8::is_ascii_alphabetic))
            })
            .unwrap_or(text.len());
        // `cut` follows an ASCII newline, so it is a character boundary.
        if let Some(piece) = text.get(start..cut) {
            pieces.push(piece);
        }
        start = cut;
    }
    pieces
}

impl fmt::Display for Encoding {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

/// The exact number of tokens of `text` in `encoding` (see [`Encoding::count`]).
pub fn count_text_tokens(text: &str, encoding: Encoding) -> u64 {
    encoding.count(text)
}

#[cfg(test)]
impl Encoding {
    fn tokenizer(self) -> &'static bpe_openai::Tokenizer {
        self.vocabulary().unwrap().tokenizer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_known_texts() {
        // Reference counts from OpenAI's tiktoken.
        assert_eq!(Encoding::Cl100kBase.count("hello world"), 2);
        assert_eq!(Encoding::O200kBase.count("hello world"), 2);
        assert_eq!(Encoding::Cl100kBase.count(""), 0);
        assert_eq!(Encoding::Cl100kBase.count("<|endoftext|>"), 7);
    }

    /// Every sample of the token corpus, and generated text full of line breaks, counts the same
    /// whole and in pieces cut as small as the cut rule allows.
    #[test]
    fn pieces_count_the_same_as_the_whole() {
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/tokens");
        let mut texts = Vec::new();
        for category in std::fs::read_dir(&corpus).unwrap() {
            for sample in std::fs::read_dir(category.unwrap().path()).unwrap() {
                texts.push(std::fs::read_to_string(sample.unwrap().path()).unwrap());
            }
        }
        texts.push("a\nb\n\nc \n d\r\ne.\nf'\ns 's\n'm 12\n34 x\n\n\n  \ny".repeat(50));
        texts.push("word!\nWord?\n\t\nLetters\n123\n日本\nend \n".repeat(40));
        assert!(texts.len() > 30);
        for encoding in Encoding::ALL {
            let tokenizer = encoding.tokenizer();
            for text in &texts {
                let pieces = chunks(text, 1);
                assert_eq!(pieces.concat(), *text);
                let summed: usize = pieces.iter().map(|piece| tokenizer.count(*piece)).sum();
                assert_eq!(
                    summed,
                    tokenizer.count(text.as_str()),
                    "{encoding}: {text:.60}"
                );
            }
        }
        for encoding in Encoding::ALL {
            let tokenizer = encoding.tokenizer();
            for text in &texts {
                assert_eq!(
                    encoding.count(text),
                    tokenizer.count(text.as_str()) as u64,
                    "{encoding}: {text:.60}"
                );
            }
        }
        let long = texts.concat().repeat(3);
        assert!(long.len() > PARALLEL_MIN_BYTES);
        assert_eq!(
            Encoding::Cl100kBase.count(&long),
            bpe_openai::cl100k_base().count(long.as_str()) as u64
        );
    }

    #[test]
    fn names() {
        assert_eq!(Encoding::Cl100kBase.to_string(), "cl100k_base");
        assert_eq!(Encoding::O200kBase.name(), "o200k_base");
    }
}

#[cfg(test)]
mod built_vocabulary_tests {
    use super::*;

    /// The vocabularies built at run time from the shipped `.tiktoken` files count every corpus
    /// sample exactly as bpe-openai's precompiled tables (which a release binary no longer links).
    #[test]
    fn built_vocabularies_count_as_the_precompiled_ones() {
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/tokens");
        let mut samples = 0;
        for category in std::fs::read_dir(&corpus).unwrap() {
            for sample in std::fs::read_dir(category.unwrap().path()).unwrap() {
                let text = std::fs::read_to_string(sample.unwrap().path()).unwrap();
                assert_eq!(
                    Encoding::Cl100kBase.count(&text),
                    bpe_openai::cl100k_base().count(text.as_str()) as u64
                );
                assert_eq!(
                    Encoding::O200kBase.count(&text),
                    bpe_openai::o200k_base().count(text.as_str()) as u64
                );
                samples += 1;
            }
        }
        assert!(samples > 30);
    }
}
