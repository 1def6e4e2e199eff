//! Migration of older session files to v3, as Pi does it: v1 (no ids) → v2 gives every entry an id and
//! links them as a chain, turning `firstKeptEntryIndex` into `firstKeptEntryId`; v2 → v3 renames the role
//! `hookMessage` to `custom`.
//!
//! Unlike Pi, a file without `version` whose entries already carry ids is not re-numbered: that would
//! flatten its branches and leave every reference dangling. And unlike Pi's random ids, the ids v1
//! entries get are derived from the file (each line's number and text), so a file that is read but
//! not rewritten shows the same ids on every run: `ctxkit tree` ids work with `context --leaf`,
//! `fork --at`, `label` and `branch --to`.

use ctxkit_protocol::from_str_repaired;
use serde_json::Value;

use std::collections::HashSet;

use sha2::{Digest, Sha256};

use crate::line::RawLine;

/// Migrates the entry lines of a file of `version` (< 3) in place.
pub(crate) fn migrate_lines(lines: &mut [RawLine], version: f64) {
    let mut values: Vec<Option<Value>> = lines
        .iter()
        .map(|line| {
            from_str_repaired::<Value>(line.text.as_str())
                .ok()
                .filter(Value::is_object)
        })
        .collect();
    let tree_shaped = values.iter().flatten().any(|value| {
        value.get("id").is_some_and(Value::is_string)
            && value.get("type") != Some(&"session".into())
    });
    let mut changed = vec![false; values.len()];
    if version < 2.0 && !tree_shaped {
        migrate_v1_to_v2(&mut values, &mut changed, lines);
    }
    for (value, changed) in values.iter_mut().zip(changed.iter_mut()) {
        if let Some(value) = value {
            *changed |= rename_hook_message(value);
        }
    }
    for ((line, value), changed) in lines.iter_mut().zip(values).zip(changed) {
        if let (Some(value), true) = (value, changed)
            && let Ok(text) = serde_json::to_string(&value)
        {
            line.text = text.into();
        }
    }
}

/// An 8-hex-character id from the SHA-256 of a line's number and text, unique within the file.
fn stable_entry_id(line: &RawLine, taken: &mut HashSet<String>) -> String {
    for salt in 0_u32.. {
        let digest = Sha256::digest(format!("{}\0{}\0{salt}", line.number, line.text.as_str()));
        let id: String = digest
            .iter()
            .take(4)
            .map(|byte| format!("{byte:02x}"))
            .collect();
        if taken.insert(id.clone()) {
            return id;
        }
    }
    String::new()
}

fn migrate_v1_to_v2(values: &mut [Option<Value>], changed: &mut [bool], lines: &[RawLine]) {
    // `firstKeptEntryIndex` counts parsed lines with the header at 0; ids of earlier lines are known
    // by the time a compaction is reached, later ones are not (Pi resolves them in the same order).
    let mut assigned_ids: Vec<Option<String>> = vec![None];
    let mut previous_id: Option<String> = None;
    let mut taken = HashSet::new();
    for ((value, changed), line) in values.iter_mut().zip(changed.iter_mut()).zip(lines) {
        let Some(Value::Object(object)) = value else {
            continue;
        };
        if object.get("type").and_then(Value::as_str) == Some("session") {
            assigned_ids.push(None);
            continue;
        }
        let id = stable_entry_id(line, &mut taken);
        object.insert("id".to_owned(), Value::String(id.clone()));
        object.insert(
            "parentId".to_owned(),
            previous_id.clone().map_or(Value::Null, Value::String),
        );
        previous_id = Some(id.clone());
        if object.get("type").and_then(Value::as_str) == Some("compaction")
            && let Some(index) = object.get("firstKeptEntryIndex").and_then(Value::as_f64)
        {
            // Pi indexes an array with the number as JSON.parse reads it: `3.0` is 3; a fraction,
            // a negative or an index past the end names nothing (and the index goes all the same).
            let target =
                (index.fract() == 0.0 && index >= 0.0 && index < assigned_ids.len() as f64)
                    .then(|| assigned_ids.get(index as usize).cloned().flatten())
                    .flatten();
            if let Some(target) = target {
                object.insert("firstKeptEntryId".to_owned(), Value::String(target));
            }
            object.shift_remove("firstKeptEntryIndex");
        }
        assigned_ids.push(Some(id));
        *changed = true;
    }
}

fn rename_hook_message(value: &mut Value) -> bool {
    if value.get("type").and_then(Value::as_str) != Some("message") {
        return false;
    }
    match value
        .get_mut("message")
        .and_then(|message| message.get_mut("role"))
    {
        Some(role) if role.as_str() == Some("hookMessage") => {
            *role = Value::String("custom".to_owned());
            true
        }
        Some(_) | None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(texts: &[&str]) -> Vec<RawLine> {
        texts
            .iter()
            .enumerate()
            .map(|(index, text)| RawLine {
                number: index + 2,
                text: (*text).into(),
            })
            .collect()
    }

    #[test]
    fn v1_gets_a_chain_of_ids_and_first_kept_ids() {
        let mut body = lines(&[
            r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"a"}}"#,
            r#"{"type":"message","timestamp":"t","message":{"role":"hookMessage","content":"b"}}"#,
            r#"{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":2,"tokensBefore":5}"#,
        ]);
        migrate_lines(&mut body, 1.0);
        let values: Vec<Value> = body
            .iter()
            .map(|line| serde_json::from_str(line.text.as_str()).unwrap())
            .collect();
        assert_eq!(values[0]["parentId"], Value::Null);
        assert_eq!(values[1]["parentId"], values[0]["id"]);
        assert_eq!(values[1]["message"]["role"], "custom");
        assert_eq!(values[2]["firstKeptEntryId"], values[1]["id"]);
        assert!(values[2].get("firstKeptEntryIndex").is_none());
        // Written by another language's JSON (`3.0`), the index is the same number (Pi's
        // `JSON.parse`); a fraction names nothing, and goes as Pi drops it.
        for (written, names_one) in [("2.0", true), ("2e0", true), ("1.5", false), ("-1", false)] {
            let mut body = lines(&[
                r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"a"}}"#,
                r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"b"}}"#,
                &format!(
                    r#"{{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":{written},"tokensBefore":5}}"#
                ),
            ]);
            migrate_lines(&mut body, 1.0);
            let values: Vec<Value> = body
                .iter()
                .map(|line| serde_json::from_str(line.text.as_str()).unwrap())
                .collect();
            let expected = if names_one {
                values[1]["id"].clone()
            } else {
                Value::Null
            };
            assert_eq!(values[2]["firstKeptEntryId"], expected, "{written}");
            assert!(values[2].get("firstKeptEntryIndex").is_none(), "{written}");
        }
        let mut again = lines(&[
            r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"a"}}"#,
            r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"a"}}"#,
        ]);
        migrate_lines(&mut again, 1.0);
        let ids: Vec<Value> = again
            .iter()
            .map(|line| serde_json::from_str::<Value>(line.text.as_str()).unwrap()["id"].clone())
            .collect();
        // Same line, same place: same id; the same text on another line gets another one.
        assert_eq!(ids[0], values[0]["id"]);
        assert_ne!(ids[0], ids[1]);
    }

    #[test]
    fn tree_shaped_files_without_version_keep_their_ids() {
        let original = r#"{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"role":"user","content":"a"}}"#;
        let mut body = lines(&[original]);
        migrate_lines(&mut body, 1.0);
        assert_eq!(body[0].text.as_str(), original);
    }
}
