//! A reply whose content opens with `<think>`: a local server without a reasoning parser (Ollama,
//! llama.cpp, vLLM or LM Studio serving Qwen3, DeepSeek-R1, QwQ) sends the model's reasoning
//! inside `content`, between `<think>` and `</think>`, and the answer after it. The tagged part is
//! the reply's thinking, as a reasoning field would carry it; Pi shows it as the answer. Only a
//! reply that opens with the tag (blanks before it aside), and whose server sends no reasoning
//! field, is split; the tags may arrive cut across chunks.

/// The signature of a thinking block read between the tags: a request sends it back between the
/// tags too, for the model's own replies of the turn in progress (`wire::openai_chat_tools`).
pub(crate) const THINK_TAGS: &str = "think-tags";

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// The most blanks held at a reply's start while it may still open with `<think>`: a server
/// sending only blanks has its content shown as it comes after that.
const OPENING_MAX_BYTES: usize = 4096;

/// A piece of the content, and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Thinking(String),
    Text(String),
}

/// Where the content stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    /// Nothing decided: the content so far (blank, or the start of `<think>`).
    Opening(String),
    /// Between the tags: the end of what came, held while it may be the start of `</think>`.
    Inside(String),
    /// Right after `</think>`: the blanks before the answer are left out.
    Closed,
    /// After the tags, or a reply that did not open with them: text as it comes.
    Text,
}

/// Splits a reply's content into its thinking and its text as the chunks arrive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Splitter {
    phase: Phase,
}

impl Default for Splitter {
    fn default() -> Self {
        Self {
            phase: Phase::Opening(String::new()),
        }
    }
}

impl Splitter {
    /// The server sends reasoning in a field of its own: the content is text.
    pub(crate) fn content_is_text(&mut self) -> Vec<Piece> {
        self.finish_opening()
    }

    /// The pieces `chunk` of the content gives, in order (empty while nothing can be decided).
    pub(crate) fn split(&mut self, chunk: &str) -> Vec<Piece> {
        match &mut self.phase {
            Phase::Text => text_piece(chunk.to_owned()),
            Phase::Closed => {
                let text = chunk.trim_start();
                if text.is_empty() {
                    return Vec::new();
                }
                self.phase = Phase::Text;
                text_piece(text.to_owned())
            }
            Phase::Opening(held) => {
                held.push_str(chunk);
                let start = held.trim_start();
                if let Some(after) = start.strip_prefix(OPEN) {
                    let after = after.to_owned();
                    self.phase = Phase::Inside(String::new());
                    self.split(&after)
                } else if OPEN.starts_with(start) && held.len() <= OPENING_MAX_BYTES {
                    Vec::new()
                } else {
                    let held = std::mem::take(held);
                    self.phase = Phase::Text;
                    text_piece(held)
                }
            }
            Phase::Inside(held) => {
                held.push_str(chunk);
                if let Some(at) = held.find(CLOSE) {
                    let thinking = held[..at].to_owned();
                    let after = held[at + CLOSE.len()..].to_owned();
                    self.phase = Phase::Closed;
                    let mut pieces = thinking_piece(thinking);
                    pieces.extend(self.split(&after));
                    return pieces;
                }
                let keep = partial_close_length(held);
                let thinking = held[..held.len() - keep].to_owned();
                held.drain(..held.len() - keep);
                thinking_piece(thinking)
            }
        }
    }

    /// The content ended (or a call came): what was held, as what it was.
    pub(crate) fn finish(&mut self) -> Vec<Piece> {
        match &mut self.phase {
            Phase::Opening(_) => self.finish_opening(),
            Phase::Inside(held) => {
                let held = std::mem::take(held);
                thinking_piece(held)
            }
            Phase::Closed | Phase::Text => Vec::new(),
        }
    }

    fn finish_opening(&mut self) -> Vec<Piece> {
        let pieces = match &mut self.phase {
            Phase::Opening(held) => text_piece(std::mem::take(held)),
            Phase::Inside(_) | Phase::Closed | Phase::Text => Vec::new(),
        };
        if matches!(self.phase, Phase::Opening(_)) {
            self.phase = Phase::Text;
        }
        pieces
    }
}

fn text_piece(text: String) -> Vec<Piece> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![Piece::Text(text)]
    }
}

fn thinking_piece(thinking: String) -> Vec<Piece> {
    if thinking.is_empty() {
        Vec::new()
    } else {
        vec![Piece::Thinking(thinking)]
    }
}

/// How many of `text`'s last bytes are the start of `</think>` (at most its length less one).
fn partial_close_length(text: &str) -> usize {
    (1..CLOSE.len())
        .rev()
        .find(|&length| text.ends_with(&CLOSE[..length]))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&str]) -> (String, String) {
        let mut splitter = Splitter::default();
        let mut pieces: Vec<Piece> = chunks
            .iter()
            .flat_map(|chunk| splitter.split(chunk))
            .collect();
        pieces.extend(splitter.finish());
        let mut thinking = String::new();
        let mut text = String::new();
        for piece in pieces {
            match piece {
                Piece::Thinking(part) => thinking.push_str(&part),
                Piece::Text(part) => text.push_str(&part),
            }
        }
        (thinking, text)
    }

    #[test]
    fn the_tagged_opening_is_thinking_however_the_chunks_cut_the_tags() {
        let whole = "\n<think>\nThe user wants a sum.\n</think>\n\nIt is 4.";
        let expected = (
            "\nThe user wants a sum.\n".to_owned(),
            "It is 4.".to_owned(),
        );
        assert_eq!(run(&[whole]), expected);
        for size in 1..whole.len() {
            let chunks: Vec<String> = whole
                .as_bytes()
                .chunks(size)
                .map(|chunk| String::from_utf8(chunk.to_vec()).unwrap())
                .collect();
            let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
            assert_eq!(run(&chunks), expected, "chunks of {size}");
        }
    }

    #[test]
    fn content_that_does_not_open_with_the_tag_is_text() {
        assert_eq!(
            run(&["The tag ", "<think>", " is Qwen's."]),
            (String::new(), "The tag <think> is Qwen's.".to_owned())
        );
        assert_eq!(run(&["<thi", "s>"]), (String::new(), "<this>".to_owned()));
        assert_eq!(run(&["  "]), (String::new(), "  ".to_owned()));
        // Cut inside the reasoning (a length stop): all of it is thinking.
        assert_eq!(
            run(&["<think>still going </thi"]),
            ("still going </thi".to_owned(), String::new())
        );
    }

    /// Attack: a server streams blanks without end. They are held only up to a bound, then shown.
    #[test]
    fn blanks_at_the_start_are_held_only_so_long() {
        let mut splitter = Splitter::default();
        let blanks = " ".repeat(1024);
        let mut shown = 0;
        for _ in 0..8 {
            shown += splitter
                .split(&blanks)
                .iter()
                .map(|piece| match piece {
                    Piece::Text(text) => text.len(),
                    Piece::Thinking(_) => 0,
                })
                .sum::<usize>();
        }
        assert_eq!(shown, 8 * 1024);
    }

    #[test]
    fn a_reasoning_field_makes_the_content_text() {
        let mut splitter = Splitter::default();
        assert!(splitter.split(" ").is_empty());
        assert_eq!(splitter.content_is_text(), [Piece::Text(" ".to_owned())]);
        assert_eq!(
            splitter.split("<think>x</think>"),
            [Piece::Text("<think>x</think>".to_owned())]
        );
    }
}
