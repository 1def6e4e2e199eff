//! A section's effective value (`config get compaction`): every known key below it as it is in
//! effect (a file's value, else the context strategy's, else the default), with whatever else the
//! files hold there (unknown keys, a map's entries).

use serde_json::{Map, Value};

use super::document::{merge_documents, set_path};
use super::key_path::KeyPath;
use super::schema;
use super::{SettingValue, SettingsManager};

/// What a lookup found at a key.
pub(super) enum Section {
    /// A section of known keys: their effective values, merged over what the files hold.
    Effective(SettingValue),
    /// A leaf key, a map or an unknown key: the value as found.
    NotASection(Option<SettingValue>),
}

impl SettingsManager {
    /// `found`, the value at `path`, completed with the effective value of every known key below
    /// it when `path` names a section of the schema.
    pub(super) fn effective_section(&self, path: &KeyPath, found: Option<SettingValue>) -> Section {
        if !matches!(
            super::key_path::kind_at(path.segments()),
            Some(schema::ValueKind::Object(_))
        ) {
            return Section::NotASection(found);
        }
        let depth = path.segments().len();
        let mut merged = Map::new();
        for (key, _) in schema::leaves() {
            let Ok(leaf) = KeyPath::parse(&key) else {
                continue;
            };
            let below =
                leaf.segments().len() > depth && leaf.segments().starts_with(path.segments());
            if !below {
                continue;
            }
            let Some(value) = self.get(&key).ok().and_then(|lookup| lookup.value) else {
                continue;
            };
            let relative = KeyPath::from_segments(leaf.segments()[depth..].to_vec());
            set_path(&mut merged, &relative, value.into_value());
        }
        if merged.is_empty() {
            return Section::NotASection(found);
        }
        if let Some(Value::Object(in_files)) = found.map(SettingValue::into_value) {
            merged = merge_documents(&merged, &in_files);
        }
        Section::Effective(SettingValue::new(Value::Object(merged)))
    }
}
