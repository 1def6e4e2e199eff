//! The messages an exported page's views sent in place of their entries (a summary, a pruned
//! result, a custom or injected message), each kept once in the page: a view names one by its
//! place in the table (`msgRef`). Each view used to carry its own copy: a Codex session's 53 KB
//! developer message, in each of 271 views, made 15 MB of the page of a 303 KB session.

use std::collections::HashMap;

/// A message whose JSON is shorter than this stays in its view: a reference costs about as much.
const SHARED_FROM_BYTES: usize = 64;

/// The messages the views written so far share.
#[derive(Debug, Default)]
pub(crate) struct SentTable {
    places: HashMap<String, usize>,
    texts: Vec<String>,
}

/// The messages one view adds to the table, kept only when the view is written ([`SentTable::keep`]).
#[derive(Debug, Default)]
pub(crate) struct Added {
    texts: Vec<String>,
}

impl Added {
    /// Bytes the added messages take in the page, a comma each.
    pub(crate) fn bytes(&self) -> usize {
        self.texts.iter().map(|text| text.len() + 1).sum()
    }
}

impl SentTable {
    /// Whether a sent message of JSON `text` is kept in the table (a short one stays in its view).
    pub(crate) fn shares(text: &str) -> bool {
        text.len() >= SHARED_FROM_BYTES
    }

    /// The place of the message of JSON `text` in the table, or among the messages `added`
    /// brings (after the table's), where it is added when it is in neither.
    pub(crate) fn place(&self, text: &str, added: &mut Added) -> usize {
        if let Some(place) = self.places.get(text) {
            return *place;
        }
        let position = match added.texts.iter().position(|new| new == text) {
            Some(position) => position,
            None => {
                added.texts.push(text.to_owned());
                added.texts.len() - 1
            }
        };
        self.texts.len() + position
    }

    /// Keeps what a written view added.
    pub(crate) fn keep(&mut self, added: Added) {
        for text in added.texts {
            self.places.insert(text.clone(), self.texts.len());
            self.texts.push(text);
        }
    }

    /// The table as the page's `sentMessages` array.
    pub(crate) fn write(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        out.write_all(b"[")?;
        for (position, text) in self.texts.iter().enumerate() {
            if position > 0 {
                out.write_all(b",")?;
            }
            out.write_all(text.as_bytes())?;
        }
        out.write_all(b"]")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn a_message_repeated_across_views_is_kept_once() {
        let long = json!({"role": "user", "blocks": [{"t": "x".repeat(500)}]}).to_string();
        assert!(SentTable::shares(&long));
        assert!(!SentTable::shares(
            r#"{"role":"user","blocks":[{"t":"short"}]}"#
        ));
        let mut table = SentTable::default();
        let mut added = Added::default();
        assert_eq!(table.place(&long, &mut added), 0);
        assert_eq!(table.place(&long, &mut added), 0);
        assert_eq!(added.texts.len(), 1);
        table.keep(added);
        let mut second = Added::default();
        assert_eq!(table.place(&long, &mut second), 0);
        assert!(second.texts.is_empty());
        // A view not written adds nothing.
        let other = json!({"role": "user", "blocks": [{"t": "y".repeat(500)}]}).to_string();
        let mut skipped = Added::default();
        assert_eq!(table.place(&other, &mut skipped), 1);
        drop(skipped);
        let mut out = Vec::new();
        table.write(&mut out).unwrap();
        let written: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(written.as_array().unwrap().len(), 1);
        assert_eq!(written[0]["blocks"][0]["t"], json!("x".repeat(500)));
    }
}
