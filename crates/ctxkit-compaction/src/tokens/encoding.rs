//! Exact token counts with OpenAI's cl100k_base and o200k_base encodings, through GitHub's `bpe`
//! crates (`bpe-openai`): linear-time BPE, vocabularies compiled into the binary, counting without
//! building a token vector. See `docs/decisions.md`, "Exact token counting".

use std::fmt;

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
    /// ordinary text, as tiktoken's `encode_ordinary` does. The vocabulary is loaded on first use
    /// (a few milliseconds, once per process).
    pub fn count(self, text: &str) -> u64 {
        let tokenizer = match self {
            Self::Cl100kBase => bpe_openai::cl100k_base(),
            Self::O200kBase => bpe_openai::o200k_base(),
        };
        tokenizer.count(text) as u64
    }
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

    #[test]
    fn names() {
        assert_eq!(Encoding::Cl100kBase.to_string(), "cl100k_base");
        assert_eq!(Encoding::O200kBase.name(), "o200k_base");
    }
}
