//! Text the generated sessions are made of: English prose, code, logs, grep output, Chinese and
//! Japanese text, file paths and base64 image data, each appended to a `String` up to a byte budget.
//!
//! Everything is drawn from small built-in tables so no third-party text is needed.

use crate::rng::Rng;

const WORDS: &[&str] = &[
    "the",
    "parser",
    "session",
    "entry",
    "tree",
    "branch",
    "context",
    "token",
    "budget",
    "summary",
    "compaction",
    "file",
    "index",
    "append",
    "load",
    "stream",
    "line",
    "error",
    "result",
    "value",
    "change",
    "test",
    "build",
    "cache",
    "write",
    "read",
    "path",
    "leaf",
    "root",
    "message",
    "model",
    "should",
    "could",
    "will",
    "then",
    "after",
    "before",
    "because",
    "when",
    "which",
    "with",
    "from",
    "into",
    "over",
    "under",
    "keeps",
    "drops",
    "moves",
    "returns",
    "fails",
    "passes",
    "checks",
    "a",
    "an",
    "of",
    "to",
    "in",
    "and",
    "or",
    "is",
    "are",
    "was",
    "it",
    "this",
    "that",
    "we",
    "now",
    "first",
    "last",
    "every",
    "each",
    "small",
    "large",
    "quickly",
    "safely",
    "again",
    "still",
];

const IDENTS: &[&str] = &[
    "session",
    "entry",
    "index",
    "parent_id",
    "leaf",
    "budget",
    "tokens",
    "reader",
    "writer",
    "buffer",
    "cursor",
    "offset",
    "line",
    "summary",
    "cut_point",
    "settings",
    "path",
    "node",
    "children",
    "label",
    "store",
    "lock",
    "file",
    "result",
    "error",
    "message",
    "content",
    "block",
];

const TYPES: &[&str] = &[
    "Session",
    "Entry",
    "TreeNode",
    "Index",
    "Budget",
    "Reader",
    "Writer",
    "Summary",
    "CutPoint",
    "Settings",
    "FileStore",
    "Label",
    "Message",
    "ContentBlock",
    "Usage",
    "Diagnostic",
];

const DIRS: &[&str] = &[
    "src",
    "src/session",
    "src/index",
    "crates/core/src",
    "tests",
    "lib",
    "app",
];

const LOG_LEVELS: &[&str] = &["INFO", "DEBUG", "WARN", "ERROR", "TRACE"];

/// Common CJK ideographs, kana and full-width punctuation.
const CJK: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动\
同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量\
都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内\
数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党\
程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根\
论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增\
争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积\
示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装\
影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何\
除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆\
包火住调满县局照参红细引听该铁价严あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむ\
めもやゆよらりるれろわをんアイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユ\
ヨラリルレロワヲン、。「」・ー";

const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn word<'a>(rng: &mut Rng, table: &'a [&'a str]) -> &'a str {
    rng.pick(table).copied().unwrap_or("x")
}

/// A source file path such as `src/session/cut_point.rs`.
pub fn file_path(rng: &mut Rng) -> String {
    let ext = *rng.pick(&["rs", "ts", "py", "md", "toml"]).unwrap_or(&"rs");
    format!("{}/{}.{ext}", word(rng, DIRS), word(rng, IDENTS))
}

/// English prose of about `bytes` bytes.
pub fn prose(rng: &mut Rng, out: &mut String, bytes: usize) {
    let end = out.len() + bytes;
    let mut start_of_sentence = true;
    while out.len() < end {
        let w = word(rng, WORDS);
        if start_of_sentence {
            let mut chars = w.chars();
            if let Some(first) = chars.next() {
                out.extend(first.to_uppercase());
                out.push_str(chars.as_str());
            }
        } else {
            out.push_str(w);
        }
        start_of_sentence = rng.chance(0.1);
        if rng.chance(0.03) {
            out.push_str(" `");
            out.push_str(&file_path(rng));
            out.push('`');
        }
        out.push_str(if start_of_sentence { ". " } else { " " });
    }
}

/// One line of Rust-like code.
fn code_line(rng: &mut Rng, out: &mut String) {
    let indent = rng.below(4) * 4;
    out.extend(std::iter::repeat_n(' ', indent));
    match rng.below(6) {
        0 => {
            out.push_str("let ");
            out.push_str(word(rng, IDENTS));
            out.push_str(" = ");
            out.push_str(word(rng, IDENTS));
            out.push('.');
            out.push_str(word(rng, IDENTS));
            out.push_str(&format!("({})?;", rng.below(1000)));
        }
        1 => {
            out.push_str("fn ");
            out.push_str(word(rng, IDENTS));
            out.push_str("(&self, ");
            out.push_str(word(rng, IDENTS));
            out.push_str(": &");
            out.push_str(word(rng, TYPES));
            out.push_str(") -> Result<");
            out.push_str(word(rng, TYPES));
            out.push_str("> {");
        }
        2 => {
            out.push_str("// ");
            prose(rng, out, 30);
        }
        3 => {
            out.push_str("if ");
            out.push_str(word(rng, IDENTS));
            out.push_str(".is_empty() { return Ok(None); }");
        }
        4 => {
            out.push_str("impl ");
            out.push_str(word(rng, TYPES));
            out.push_str(" for ");
            out.push_str(word(rng, TYPES));
            out.push_str(" {");
        }
        _ => out.push('}'),
    }
    out.push('\n');
}

/// Code of about `bytes` bytes, with `cat -n`-style line numbers when `numbered`.
pub fn code(rng: &mut Rng, out: &mut String, bytes: usize, numbered: bool) {
    let end = out.len() + bytes;
    let mut line = 1;
    while out.len() < end {
        if numbered {
            out.push_str(&format!("{line:>6}\t"));
        }
        code_line(rng, out);
        line += 1;
    }
}

/// Build or test log lines of about `bytes` bytes.
pub fn log(rng: &mut Rng, out: &mut String, bytes: usize) {
    let end = out.len() + bytes;
    while out.len() < end {
        let ms = rng.below(86_400_000);
        out.push_str(&format!(
            "{:02}:{:02}:{:02}.{:03} {:<5} ",
            ms / 3_600_000,
            ms / 60_000 % 60,
            ms / 1000 % 60,
            ms % 1000,
            word(rng, LOG_LEVELS)
        ));
        match rng.below(3) {
            0 => out.push_str(&format!(
                "   Compiling {} v0.{}.{}",
                word(rng, IDENTS),
                rng.below(9),
                rng.below(30)
            )),
            1 => out.push_str(&format!(
                "test {}::{} ... ok",
                word(rng, IDENTS),
                word(rng, IDENTS)
            )),
            _ => prose(rng, out, 40),
        }
        out.push('\n');
    }
}

/// `grep -n` style matches of about `bytes` bytes.
pub fn grep(rng: &mut Rng, out: &mut String, bytes: usize) {
    let end = out.len() + bytes;
    while out.len() < end {
        out.push_str(&file_path(rng));
        out.push_str(&format!(":{}:", rng.range(1, 2000)));
        code_line(rng, out);
    }
}

/// Chinese/Japanese text of about `chars` characters, with some ASCII mixed in.
pub fn cjk(rng: &mut Rng, out: &mut String, chars: usize) {
    let table: Vec<char> = CJK.chars().collect();
    for i in 0..chars {
        if let Some(c) = rng.pick(&table) {
            out.push(*c);
        }
        if i % 37 == 36 && rng.chance(0.5) {
            out.push_str(" `");
            out.push_str(word(rng, IDENTS));
            out.push_str("` ");
        }
    }
}

/// Base64 text of `bytes` random bytes (an image's `data`).
pub fn base64(rng: &mut Rng, bytes: usize) -> String {
    let mut out = String::with_capacity(bytes.div_ceil(3) * 4);
    for _ in 0..bytes.div_ceil(3) {
        let v = rng.next_u64();
        for shift in [18u32, 12, 6, 0] {
            let index = ((v >> shift) & 63) as usize;
            out.push(char::from(BASE64.get(index).copied().unwrap_or(b'A')));
        }
    }
    out
}

/// What a tokenization corpus holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TextKind {
    /// Prose, code, logs, grep output and Chinese/Japanese text in about equal parts.
    Mixed,
    /// The same without Chinese/Japanese text.
    Latin,
}

/// Writes about `bytes` bytes of text of `kind` to `out` in chunks: the corpus of the tokenization
/// benchmark.
pub fn write_text<W: std::io::Write>(
    mut out: W,
    seed: u64,
    bytes: u64,
    kind: TextKind,
) -> std::io::Result<()> {
    let mut rng = Rng::new(seed);
    let mut written = 0u64;
    let mut chunk = String::with_capacity(70_000);
    let kinds = match kind {
        TextKind::Mixed => 5,
        TextKind::Latin => 4,
    };
    while written < bytes {
        chunk.clear();
        let size = rng.range(2_000, 60_000);
        match rng.below(kinds) {
            0 => prose(&mut rng, &mut chunk, size),
            1 => {
                let numbered = rng.chance(0.5);
                code(&mut rng, &mut chunk, size, numbered);
            }
            2 => log(&mut rng, &mut chunk, size),
            3 => grep(&mut rng, &mut chunk, size),
            _ => cjk(&mut rng, &mut chunk, size / 3),
        }
        chunk.push('\n');
        out.write_all(chunk.as_bytes())?;
        written += chunk.len() as u64;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_respect_their_budgets() {
        let mut rng = Rng::new(3);
        for bytes in [0, 10, 1000, 20_000] {
            let mut out = String::new();
            prose(&mut rng, &mut out, bytes);
            code(&mut rng, &mut out, bytes, true);
            log(&mut rng, &mut out, bytes);
            grep(&mut rng, &mut out, bytes);
            assert!(out.len() >= bytes * 4);
            assert!(
                out.len() <= bytes * 4 + 4 * 400,
                "{} for {bytes}",
                out.len()
            );
        }
        let mut out = String::new();
        cjk(&mut rng, &mut out, 100);
        assert!(out.chars().count() >= 100);
        assert_eq!(base64(&mut rng, 30).len(), 40);
        let mut latin = Vec::new();
        write_text(&mut latin, 1, 200_000, TextKind::Latin).unwrap();
        assert!(latin.len() >= 200_000 && latin.is_ascii());
    }
}
