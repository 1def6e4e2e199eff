//! Keys as the user writes them: `retry.provider.maxRetryDelayMs`, and keys inside a map setting,
//! whose names are the user's (`llm.headers.X-Team`, a model id with a dot in
//! `compaction.modelOverrides["openai/gpt-4.1"].reserveTokens`, the form `config list` prints).
//! Every `config` subcommand reads a key through [`KeyPath::parse`], so each takes what another
//! prints.

use serde_json::Value;

use super::schema::{self, Field, ValueKind};
use crate::error::SettingsError;

/// A parsed key such as `retry.provider.maxRetryDelayMs` or
/// `compaction.modelOverrides["openai/gpt-4.1"].reserveTokens`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyPath {
    segments: Vec<String>,
    /// Per segment: written in brackets by [`KeyPath::dotted`] (an entry of
    /// `compaction.modelOverrides`, as the check names it, or a name a dot would split).
    bracketed: Vec<bool>,
}

/// One piece of a typed key: a name between dots, or a JSON string in brackets.
struct Token {
    text: String,
    quoted: bool,
}

impl KeyPath {
    /// Parses a key: names joined by dots, any of them also written `["name"]` (a JSON string).
    /// Below a map setting the dotted form reads as far as it can: `llm.headers.X.Y` is the header
    /// `X.Y`, and `compaction.modelOverrides.openai/gpt-4.1.reserveTokens` the model
    /// `openai/gpt-4.1` and its field (a known field ends the model id).
    pub fn parse(key: &str) -> Result<Self, SettingsError> {
        let invalid = |reason: &str| SettingsError::InvalidKey {
            key: key.to_owned(),
            reason: reason.to_owned(),
        };
        let tokens = tokens(key).ok_or_else(|| {
            invalid(
                "keys are dot-separated names, none of them empty; a name with a dot is written \
                 `[\"name\"]`",
            )
        })?;
        let mut segments = Vec::new();
        let mut entries = Vec::new();
        let mut fields: Option<&'static [Field]> = Some(schema::top_level());
        let mut rest = tokens.as_slice();
        while let Some((first, after)) = rest.split_first() {
            rest = after;
            let field =
                fields.and_then(|fields| fields.iter().find(|field| field.key == first.text));
            segments.push(first.text.clone());
            entries.push(false);
            fields = None;
            let entry_fields: &[Field] = match field.map(|field| &field.kind) {
                Some(ValueKind::Object(children)) => {
                    fields = Some(children);
                    continue;
                }
                Some(ValueKind::EntryMap { fields, .. }) => fields,
                Some(ValueKind::StringMap) => &[],
                Some(_) | None => continue,
            };
            if let Some(name) = take_entry(&mut rest, entry_fields) {
                segments.push(name);
                entries.push(!entry_fields.is_empty());
                fields = Some(entry_fields).filter(|fields| !fields.is_empty());
            }
        }
        let bracketed = segments
            .iter()
            .zip(entries)
            .map(|(segment, entry)| entry || !is_plain(segment))
            .collect();
        Ok(Self {
            segments,
            bracketed,
        })
    }

    /// The key of `segments` (each a plain name), as [`KeyPath::parse`] would read them.
    pub(crate) fn from_segments(segments: Vec<String>) -> Self {
        let bracketed = vec![false; segments.len()];
        Self {
            segments,
            bracketed,
        }
    }

    /// The segments, outermost first.
    pub fn segments(&self) -> &[String] {
        &self.segments
    }

    /// The form `config list` prints, which [`KeyPath::parse`] reads back: names joined by dots,
    /// a model's entry and a name holding a dot in brackets.
    pub fn dotted(&self) -> String {
        let mut out = String::new();
        for (segment, bracketed) in self.segments.iter().zip(&self.bracketed) {
            if *bracketed {
                out.push_str(&bracketed_name(segment));
            } else {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(segment);
            }
        }
        out
    }
}

impl std::fmt::Display for KeyPath {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.dotted())
    }
}

/// The key of `name` inside the object at `parent` (empty: the top level), as [`KeyPath::dotted`]
/// writes it: `parent.name`, or `parent["a.b"]` for a name a dot would split.
pub(crate) fn child_key(parent: &str, name: &str) -> String {
    match (parent.is_empty(), is_plain(name)) {
        (true, true) => name.to_owned(),
        (false, true) => format!("{parent}.{name}"),
        (_, false) => format!("{parent}{}", bracketed_name(name)),
    }
}

/// The key of one entry of a map setting: `compaction.modelOverrides["openai/gpt-4.1"]`.
pub(crate) fn entry_key(parent: &str, name: &str) -> String {
    format!("{parent}{}", bracketed_name(name))
}

fn bracketed_name(name: &str) -> String {
    format!("[{}]", Value::from(name))
}

/// A name written between dots as it is: not empty, and no dot, bracket or quote in it.
fn is_plain(name: &str) -> bool {
    !name.is_empty() && !name.contains(['.', '[', ']', '"'])
}

/// The entry name at the start of `rest`, below a map: a bracketed name, or the dotted names up to
/// the next bracket, ended early by a field of the entry (`fields`) that is the last name or one
/// that holds keys of its own (`llm.providers.gw.headers.X-Team`: the entry `gw`).
fn take_entry(rest: &mut &[Token], fields: &[Field]) -> Option<String> {
    let first = rest.first()?;
    if first.quoted {
        let name = first.text.clone();
        *rest = &rest[1..];
        return Some(name);
    }
    let plain = rest.iter().take_while(|token| !token.quoted).count();
    let ends_the_name = |index: usize| {
        fields
            .iter()
            .find(|field| field.key == rest[index].text)
            .is_some_and(|field| index + 1 == plain || holds_keys(&field.kind))
    };
    let taken = (1..plain)
        .find(|&index| ends_the_name(index))
        .unwrap_or(plain);
    let name: Vec<&str> = rest[..taken]
        .iter()
        .map(|token| token.text.as_str())
        .collect();
    *rest = &rest[taken..];
    Some(name.join("."))
}

/// Whether a key may go on below a value of `kind`.
fn holds_keys(kind: &ValueKind) -> bool {
    matches!(
        kind,
        ValueKind::Object(_) | ValueKind::EntryMap { .. } | ValueKind::StringMap
    )
}

/// The pieces of `key`; `None` when it is malformed (an empty name, a bracket without a JSON
/// string in it, text after a bracket that is not `.` or `[`).
fn tokens(key: &str) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let mut rest = key;
    let mut after_bracket = false;
    while !rest.is_empty() {
        if let Some(inside) = rest.strip_prefix('[') {
            let mut stream = serde_json::Deserializer::from_str(inside).into_iter::<String>();
            let name = stream.next()?.ok()?;
            let after = inside.get(stream.byte_offset()..)?.trim_start();
            rest = after.strip_prefix(']')?;
            out.push(Token {
                text: name,
                quoted: true,
            });
            after_bracket = true;
            continue;
        }
        if after_bracket || !out.is_empty() {
            rest = rest.strip_prefix('.')?;
        }
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let name = &rest[..end];
        if name.trim().is_empty() {
            return None;
        }
        out.push(Token {
            text: name.to_owned(),
            quoted: false,
        });
        rest = &rest[end..];
        after_bracket = false;
    }
    (!out.is_empty()).then_some(out)
}

/// What the key at `segments` accepts, inside map settings too: an entry of
/// `compaction.modelOverrides` is an object of its budgets, a header a string. `None` for a key
/// the tree does not know.
pub(crate) fn kind_at(segments: &[String]) -> Option<ValueKind> {
    let (first, rest) = segments.split_first()?;
    let mut kind = schema::top_level()
        .iter()
        .find(|field| field.key == *first)?
        .kind
        .clone();
    for segment in rest {
        kind = match kind {
            ValueKind::Object(children) => children
                .iter()
                .find(|field| field.key == *segment)?
                .kind
                .clone(),
            ValueKind::EntryMap { fields, .. } => ValueKind::Object(fields),
            ValueKind::StringMap => ValueKind::String,
            ValueKind::Bool
            | ValueKind::BoolOr(_)
            | ValueKind::Integer { .. }
            | ValueKind::String
            | ValueKind::HttpUrl
            | ValueKind::Enum(_)
            | ValueKind::StringList
            | ValueKind::PackageList
            | ValueKind::ModelList
            | ValueKind::HookList => return None,
        };
    }
    Some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(key: &str) -> (Vec<String>, String) {
        let path = KeyPath::parse(key).unwrap();
        (path.segments().to_vec(), path.dotted())
    }

    #[test]
    fn plain_keys_are_names_between_dots() {
        assert_eq!(
            parsed("retry.provider.maxRetryDelayMs"),
            (
                vec!["retry".into(), "provider".into(), "maxRetryDelayMs".into()],
                "retry.provider.maxRetryDelayMs".into()
            )
        );
        for malformed in ["", "a..b", ".a", "a.", "a[b]", "a[\"b\"]c", "a[\"b", " "] {
            assert!(KeyPath::parse(malformed).is_err(), "{malformed}");
        }
    }

    /// QA r99: `config set` refused a key inside a map, and a model id with a dot could not be
    /// addressed, nor in the form `config list` prints.
    #[test]
    fn keys_inside_maps_read_in_both_forms() {
        let budget = vec![
            "compaction".to_owned(),
            "modelOverrides".to_owned(),
            "openai/gpt-4.1".to_owned(),
            "reserveTokens".to_owned(),
        ];
        let printed = r#"compaction.modelOverrides["openai/gpt-4.1"].reserveTokens"#;
        for typed in [
            printed,
            "compaction.modelOverrides.openai/gpt-4.1.reserveTokens",
            r#"compaction["modelOverrides"]["openai/gpt-4.1"]["reserveTokens"]"#,
        ] {
            assert_eq!(
                parsed(typed),
                (budget.clone(), printed.to_owned()),
                "{typed}"
            );
        }
        assert_eq!(
            parsed("compaction.modelOverrides.openai/gpt-4.1").0,
            budget[..3]
        );
        assert_eq!(
            parsed("llm.headers.X-Team"),
            (
                vec!["llm".into(), "headers".into(), "X-Team".into()],
                "llm.headers.X-Team".into()
            )
        );
        assert_eq!(parsed("llm.headers.X.Y").0[2], "X.Y");
        assert_eq!(parsed(r#"llm.headers["X.Y"]"#).1, r#"llm.headers["X.Y"]"#);
        assert_eq!(
            kind_at(&budget),
            Some(ValueKind::Integer {
                min: 0,
                max: 9_007_199_254_740_991
            })
        );
        assert_eq!(kind_at(&parsed("llm.headers.X").0), Some(ValueKind::String));
        assert!(matches!(kind_at(&budget[..3]), Some(ValueKind::Object(_))));
        assert_eq!(kind_at(&parsed("theme.x").0), None);
    }

    /// A header of an `llm.providers` entry was read as an entry named `gw.headers.X-Team`.
    #[test]
    fn a_map_inside_an_entry_ends_the_entry_name() {
        let header = vec![
            "llm".to_owned(),
            "providers".to_owned(),
            "gw".to_owned(),
            "headers".to_owned(),
            "X-Team".to_owned(),
        ];
        let printed = r#"llm.providers["gw"].headers.X-Team"#;
        for typed in [
            "llm.providers.gw.headers.X-Team",
            printed,
            r#"llm.providers.gw.headers["X-Team"]"#,
        ] {
            assert_eq!(
                parsed(typed),
                (header.clone(), printed.to_owned()),
                "{typed}"
            );
        }
        assert_eq!(
            parsed("llm.providers.my.gw.headers.X.Y").0[2..],
            ["my.gw", "headers", "X.Y"]
        );
        assert_eq!(parsed("llm.providers.gw.baseUrl").0[2..], ["gw", "baseUrl"]);
        // A field that holds no keys ends the name only as the last name.
        assert_eq!(
            parsed("llm.providers.baseUrl.x.api").0[2..],
            ["baseUrl.x", "api"]
        );
        assert_eq!(kind_at(&header), Some(ValueKind::String));
    }
}
