//! The messages an exported page's views sent in place of their entries (a summary, a pruned
//! result, a custom or injected message), each kept once in the page: a view names one by its
//! place in the table (`msgRef`). Each view used to carry its own copy: a Codex session's 53 KB
//! developer message, in each of 271 views, made 15 MB of the page of a 303 KB session.

use std::collections::HashMap;

use serde_json::{Value, json};

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
    /// Replaces each large `msg` of the view `record` by `msgRef`, its place in the table (or
    /// among the messages `Added` brings, after the table's).
    pub(crate) fn share(&self, record: &mut Value) -> Added {
        let mut added = Added::default();
        let Some(messages) = record.get_mut("messages").and_then(Value::as_array_mut) else {
            return added;
        };
        for message in messages {
            let Some(object) = message.as_object_mut() else {
                continue;
            };
            let Some(text) = object.get("msg").map(Value::to_string) else {
                continue;
            };
            if text.len() < SHARED_FROM_BYTES {
                continue;
            }
            let place = match self.places.get(&text) {
                Some(place) => *place,
                None => match added.texts.iter().position(|new| *new == text) {
                    Some(position) => self.texts.len() + position,
                    None => {
                        added.texts.push(text);
                        self.texts.len() + added.texts.len() - 1
                    }
                },
            };
            object.remove("msg");
            object.insert("msgRef".to_owned(), json!(place));
        }
        added
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

    fn view(texts: &[&str]) -> Value {
        let messages: Vec<Value> = texts
            .iter()
            .map(|text| json!({"e": 1, "msg": {"role": "user", "blocks": [{"t": text}]}}))
            .collect();
        json!({"messages": messages})
    }

    #[test]
    fn a_message_repeated_across_views_is_kept_once() {
        let long = "x".repeat(500);
        let mut table = SentTable::default();
        let mut first = view(&[&long, "short", &long]);
        let added = table.share(&mut first);
        assert_eq!(added.texts.len(), 1);
        table.keep(added);
        assert_eq!(first["messages"][0]["msgRef"], json!(0));
        assert_eq!(first["messages"][2]["msgRef"], json!(0));
        assert!(
            first["messages"][1].get("msg").is_some(),
            "a short one stays"
        );
        let mut second = view(&[&long]);
        assert_eq!(table.share(&mut second).texts.len(), 0);
        assert_eq!(second["messages"][0]["msgRef"], json!(0));
        // A view not written adds nothing.
        let other = "y".repeat(500);
        let mut skipped = view(&[&other]);
        let added = table.share(&mut skipped);
        assert_eq!(skipped["messages"][0]["msgRef"], json!(1));
        drop(added);
        let mut out = Vec::new();
        table.write(&mut out).unwrap();
        let written: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(written.as_array().unwrap().len(), 1);
        assert_eq!(written[0]["blocks"][0]["t"], json!(long));
    }
}
