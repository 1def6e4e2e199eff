//! The line of a settings file where a dotted key is written, so a diagnostic about a value can
//! say where to look: `compaction.reserveTokens` → the line of `"reserveTokens"` inside the
//! top-level `"compaction"` object. A key below an array item (`llm.models[0].cost`) is found at
//! the array's key (`"models"`). Reads the text as written; nothing is parsed into values.

use std::collections::HashMap;

/// The 1-based line of `key` in `text`, or of its nearest ancestor written there; `None` when no
/// part of it is (a key set in memory only, or text that is not a JSON object).
#[cfg(test)]
fn line_of_key(text: &str, key: &str) -> Option<usize> {
    KeyLines::new(text).line_of(key)
}

/// Where each key of a settings file is written, read from its text once: a file of 20,000
/// unknown keys was read again for each one's diagnostic, and every command in a cloned project
/// holding it took 33 s (QA 2026-12-07).
#[derive(Debug, Clone, Default)]
pub struct KeyLines {
    lines: HashMap<Vec<String>, usize>,
    duplicates: Vec<Duplicate>,
}

/// A key written twice in one object: the later value is the one read (as Pi's `JSON.parse`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// The dotted key.
    pub key: String,
    /// The line of the copy before.
    pub earlier_line: usize,
    /// The line of the copy that applies.
    pub line: usize,
}

impl KeyLines {
    /// The keys of `text`; a key written twice is at its last line, the one whose value applies
    /// (QA: the error named line 2's valid `true`, and line 5's `"yes"` applied).
    pub fn new(text: &str) -> Self {
        let mut lines = HashMap::new();
        let mut duplicates = Vec::new();
        for (path, line) in keys_with_lines(text) {
            let key = path.join(".");
            if let Some(earlier_line) = lines.insert(path, line) {
                duplicates.push(Duplicate {
                    key,
                    earlier_line,
                    line,
                });
            }
        }
        Self { lines, duplicates }
    }

    /// The keys written more than once, in the order of their later copies.
    pub fn duplicates(&self) -> &[Duplicate] {
        &self.duplicates
    }

    /// The 1-based line of `key`, or of its nearest ancestor written; `None` when no part of it is.
    pub fn line_of(&self, key: &str) -> Option<usize> {
        let wanted: Vec<String> = key
            .split('.')
            .map(|segment| segment.split('[').next().unwrap_or(segment).to_owned())
            .collect();
        (1..=wanted.len())
            .rev()
            .find_map(|depth| wanted.get(..depth).and_then(|path| self.lines.get(path)))
            .copied()
    }
}

enum Frame {
    /// An object: the key being read or whose value is being read.
    Object { key: Option<String> },
    /// An array: nothing inside it is located.
    Array,
}

/// Each object key outside arrays, as the path of keys from the top, with its line.
fn keys_with_lines(text: &str) -> Vec<(Vec<String>, usize)> {
    let mut found = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut line = 1;
    let mut expecting_key = false;
    let mut characters = text.chars();
    while let Some(character) = characters.next() {
        match character {
            '\n' => line += 1,
            '{' => {
                stack.push(Frame::Object { key: None });
                expecting_key = true;
            }
            '[' => {
                stack.push(Frame::Array);
                expecting_key = false;
            }
            '}' | ']' => {
                stack.pop();
                expecting_key = false;
            }
            ',' => expecting_key = matches!(stack.last(), Some(Frame::Object { .. })),
            '"' => {
                let (string, newlines) = read_string(&mut characters);
                if expecting_key {
                    if let Some(Frame::Object { key }) = stack.last_mut() {
                        *key = Some(string);
                    }
                    if let Some(path) = object_path(&stack) {
                        found.push((path, line));
                    }
                    expecting_key = false;
                }
                line += newlines;
            }
            _ => {}
        }
    }
    found
}

/// The keys from the top to the innermost object's current key; `None` inside an array.
fn object_path(stack: &[Frame]) -> Option<Vec<String>> {
    stack
        .iter()
        .map(|frame| match frame {
            Frame::Object { key } => key.clone(),
            Frame::Array => None,
        })
        .collect()
}

/// A JSON string's text after its opening quote (escapes kept as written but `\"`), and how many
/// raw newlines it held (none in valid JSON).
fn read_string(characters: &mut std::str::Chars<'_>) -> (String, usize) {
    let mut text = String::new();
    let mut newlines = 0;
    while let Some(character) = characters.next() {
        match character {
            '"' => break,
            '\\' => {
                if let Some(escaped) = characters.next() {
                    text.push(escaped);
                }
            }
            '\n' => {
                newlines += 1;
                text.push(character);
            }
            _ => text.push(character),
        }
    }
    (text, newlines)
}

#[cfg(test)]
mod tests {
    use super::{Duplicate, KeyLines, line_of_key};

    #[test]
    fn a_key_written_twice_is_at_the_line_whose_value_applies() {
        let text = "{\n  \"hideThinkingBlock\": true,\n  \"quietStartup\": false,\n  \"hideThinkingBlock\": \"yes\"\n}\n";
        let lines = KeyLines::new(text);
        assert_eq!(lines.line_of("hideThinkingBlock"), Some(4));
        assert_eq!(
            lines.duplicates(),
            [Duplicate {
                key: "hideThinkingBlock".to_owned(),
                earlier_line: 2,
                line: 4
            }]
        );
        assert!(KeyLines::new(TEXT).duplicates().is_empty());
    }

    const TEXT: &str = r#"{
  "theme": "dark",
  "compaction": {
    "keepRecentTokens": 5000,
    "reserveTokens": "lots"
  },
  "llm": {
    "models": [
      {"id": "x", "reserveTokens": 1}
    ]
  },
  "transforms": { "compaction": {"reserveTokens": 2} }
}"#;

    #[test]
    fn a_key_is_found_on_its_own_line_not_in_a_namesake() {
        assert_eq!(line_of_key(TEXT, "theme"), Some(2));
        assert_eq!(line_of_key(TEXT, "compaction"), Some(3));
        assert_eq!(line_of_key(TEXT, "compaction.reserveTokens"), Some(5));
        assert_eq!(
            line_of_key(TEXT, "transforms.compaction.reserveTokens"),
            Some(12)
        );
    }

    #[test]
    fn a_key_below_an_array_item_is_found_at_the_array() {
        assert_eq!(line_of_key(TEXT, "llm.models[0].cost"), Some(8));
        assert_eq!(line_of_key(TEXT, "llm.models"), Some(8));
    }

    #[test]
    fn a_key_not_written_is_found_at_its_nearest_written_ancestor_or_not_at_all() {
        assert_eq!(line_of_key(TEXT, "compaction.enabled"), Some(3));
        assert_eq!(line_of_key(TEXT, "hooks"), None);
        assert_eq!(line_of_key("not json", "theme"), None);
    }
}
