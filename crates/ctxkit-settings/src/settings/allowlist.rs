//! The part of a project's settings an untrusted project may change, and the part held back until
//! the user runs `ctxkit trust` (the list is `schema::project_safe_keys`; of the keys that name
//! places, each entry that reaches outside the project, judged by the caller: `reach`). No I/O
//! of its own.

use serde_json::{Map, Value};

use super::document::{self, Document, KeyPath};
use super::reach::PLACE_KEYS;
use super::schema;

/// Why an entry of an untrusted project's `packages`, `extensions`, `skills`, `prompts` or
/// `themes` waits for trust.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldReason {
    /// A local path beyond the project, `git:file://…`, an npm tarball outside it.
    ReachesOutside,
    /// A package `ctxkit install`/`update` installs (`npm:`, git): installing it runs its code
    /// (an npm package's install scripts, a git package's npm dependencies).
    RunsCodeToInstall,
}

impl HeldReason {
    /// The reason, as a warning gives it ("ignored `x`: …").
    pub fn describe(self) -> &'static str {
        match self {
            Self::ReachesOutside => "it reaches outside the project",
            Self::RunsCodeToInstall => "installing it runs its code",
        }
    }
}

/// An entry of a project's `packages`, `extensions`, `skills`, `prompts` or `themes` held back
/// until the project is trusted ([`HeldReason`]); the rest of the array applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldEntry {
    /// The top-level key (`packages`, `skills`, …).
    pub key: String,
    /// The entry's source or path, as written.
    pub entry: String,
    pub reason: HeldReason,
}

/// A project document cut in two along [`schema::project_safe_keys`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProjectSplit {
    /// What applies without trust.
    pub safe: Document,
    /// What waits for `ctxkit trust` (same nesting as the file; held entries as an array under
    /// their key).
    pub held: Document,
    /// The dotted keys held whole, in document order.
    pub held_keys: Vec<String>,
    /// The entries held one by one, in document order.
    pub held_entries: Vec<HeldEntry>,
    /// The dotted keys read from the user's own settings alone (`x-user-only`: `chat.passEnv`,
    /// `chat.readablePaths`, `cacheWarming`): neither safe nor held, since trusting the project
    /// would not apply them either.
    pub user_only_keys: Vec<String>,
}

impl ProjectSplit {
    /// The held keys whose value is not an object (nor `null`) although the project may set keys
    /// below them: wrong whatever the trust. A section a project may set nothing of untrusted
    /// (`"compaction": 5`) is held like any other key, not refused: a cloned project would stop
    /// every chat until the user edited it (QA 2026-12-07): wrong whatever the trust, so reported as invalid values
    /// rather than as waiting for trust. Still held: the user's own values stand.
    pub fn misshapen_keys(&self) -> Vec<String> {
        self.held_keys
            .iter()
            .filter(|key| {
                let segments: Vec<&str> = key.split('.').collect();
                let value = KeyPath::parse(key)
                    .ok()
                    .and_then(|path| document::get_path(&self.held, &path));
                schema::project_may_set_below(&segments)
                    && value.is_some_and(|value| !value.is_null())
            })
            .cloned()
            .collect()
    }

    /// The dotted keys held whole and the keys some entries of which are held, in document
    /// order (what `ctxkit trust` shows).
    pub fn shown_keys(&self) -> Vec<String> {
        // The held keys by their top-level key, read once (each top key searched them all: a
        // cloned project's 20,000 unknown keys took seconds, QA 2026-12-07).
        let mut below: std::collections::HashMap<&str, Vec<&String>> =
            std::collections::HashMap::new();
        for key in &self.held_keys {
            let top = key.split('.').next().unwrap_or(key);
            below.entry(top).or_default().push(key);
        }
        let entries: std::collections::HashSet<&str> = self
            .held_entries
            .iter()
            .map(|held| held.key.as_str())
            .collect();
        let mut keys = Vec::new();
        for top in self.held.keys() {
            if entries.contains(top.as_str()) {
                keys.push(top.clone());
            }
            if let Some(under) = below.get(top.as_str()) {
                keys.extend(under.iter().map(|key| (*key).clone()));
            }
        }
        keys
    }
}

/// Why an entry of a place key (`packages`, …) waits for trust, if it does: `(key, entry)`.
pub type HoldsBack<'a> = &'a dyn Fn(&str, &str) -> Option<HeldReason>;

/// Cuts a project document into what an untrusted project may set and what it may not.
pub fn split_project(document: &Document, leaves: HoldsBack<'_>) -> ProjectSplit {
    let mut split = ProjectSplit::default();
    let mut prefix = Vec::new();
    for (key, value) in document {
        let place = PLACE_KEYS.contains(&key.as_str()) && schema::project_may_set(&[key]);
        match value.as_array().filter(|_| place) {
            Some(items) => split_entries(key, items, leaves, &mut split),
            None => split_value(
                key,
                value,
                &mut prefix,
                &mut Holds {
                    safe: &mut split.safe,
                    held: &mut split.held,
                    held_keys: &mut split.held_keys,
                    user_only_keys: &mut split.user_only_keys,
                },
            ),
        }
    }
    split
}

/// The entries of the place key `key`: those `holds_back` names held, the others safe.
fn split_entries(key: &str, items: &[Value], holds_back: HoldsBack<'_>, split: &mut ProjectSplit) {
    let mut safe = Vec::new();
    let mut held = Vec::new();
    for item in items {
        let reason = entry_text(item).and_then(|text| Some((text, holds_back(key, text)?)));
        match reason {
            Some((text, reason)) => {
                split.held_entries.push(HeldEntry {
                    key: key.to_owned(),
                    entry: text.to_owned(),
                    reason,
                });
                held.push(item.clone());
            }
            None => safe.push(item.clone()),
        }
    }
    if !safe.is_empty() || held.is_empty() {
        split.safe.insert(key.to_owned(), Value::Array(safe));
    }
    if !held.is_empty() {
        split.held.insert(key.to_owned(), Value::Array(held));
    }
}

/// The source or path an entry names: the string, or a package object's `source`.
fn entry_text(item: &Value) -> Option<&str> {
    match item {
        Value::String(text) => Some(text),
        Value::Object(object) => object.get("source").and_then(Value::as_str),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) => None,
    }
}

/// Where [`split_value`] puts what it splits.
struct Holds<'s> {
    safe: &'s mut Map<String, Value>,
    held: &'s mut Map<String, Value>,
    held_keys: &'s mut Vec<String>,
    user_only_keys: &'s mut Vec<String>,
}

/// One key of an object at `prefix`: safe, held whole, or split below.
fn split_value<'a>(
    key: &'a str,
    value: &'a Value,
    prefix: &mut Vec<&'a str>,
    holds: &mut Holds<'_>,
) {
    prefix.push(key);
    if schema::project_may_set(prefix) {
        holds.safe.insert(key.to_owned(), value.clone());
    } else if let Some(children) = value
        .as_object()
        .filter(|_| schema::project_may_set_below(prefix) || schema::is_section(prefix))
    {
        // A section is split key by key even when none of its keys applies untrusted: the
        // warning names each key held (`compaction.keepRecentTokens`), and a key read from the
        // user's settings alone below it (`chat.passEnv`) is told apart.
        let mut safe_children = Map::new();
        let mut held_children = Map::new();
        let mut below = Holds {
            safe: &mut safe_children,
            held: &mut held_children,
            held_keys: holds.held_keys,
            user_only_keys: holds.user_only_keys,
        };
        for (child, child_value) in children {
            split_value(child, child_value, prefix, &mut below);
        }
        if !safe_children.is_empty() || children.is_empty() {
            holds
                .safe
                .insert(key.to_owned(), Value::Object(safe_children));
        }
        if !held_children.is_empty() {
            holds
                .held
                .insert(key.to_owned(), Value::Object(held_children));
        }
    } else if schema::user_only(prefix) {
        holds.user_only_keys.push(prefix.join("."));
    } else {
        holds.held.insert(key.to_owned(), value.clone());
        holds.held_keys.push(prefix.join("."));
    }
    prefix.pop();
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn document(value: Value) -> Document {
        value.as_object().cloned().unwrap()
    }

    /// QA 2026-12-07: what shapes a request (its size, its reasoning, its retries) spends the
    /// user's money and time, so it waits for trust too.
    #[test]
    fn what_runs_code_sends_a_key_or_shapes_a_request_is_held_back() {
        let project = document(json!({
            "defaultModel": "gpt-4o-mini",
            "treeFilterMode": "all",
            "compaction": {"keepRecentTokens": 9000, "model": "openai/gpt-4o-mini"},
            "llm": {"baseUrl": "http://evil.example", "apiKey": "k", "api": "openai-completions",
                    "headers": {"x": "y"}, "models": [], "anthropic": {"cacheRetention": "long"}},
            "chat": {"confirmBash": false, "passEnv": ["OPENAI_API_KEY"], "bashTimeoutSeconds": 5},
            "npmCommand": ["sh", "-c", "touch pwned"],
            "hooks": [{"command": ["sh"]}],
            "shellPath": "/tmp/sh",
            "sessionDir": "/tmp/shared",
            "someFutureKey": true,
        }));
        let split = split_project(&project, &|_, _| None);
        assert_eq!(
            split.held_keys,
            vec![
                "defaultModel",
                "compaction.keepRecentTokens",
                "compaction.model",
                "llm.baseUrl",
                "llm.apiKey",
                "llm.api",
                "llm.headers",
                "llm.models",
                "llm.anthropic.cacheRetention",
                "chat.confirmBash",
                "chat.bashTimeoutSeconds",
                "npmCommand",
                "hooks",
                "shellPath",
                "someFutureKey"
            ]
        );
        // Read from the user's own settings alone: trusting the project would not apply it.
        assert_eq!(split.user_only_keys, ["chat.passEnv", "sessionDir"]);
        assert_eq!(Value::Object(split.safe), json!({"treeFilterMode": "all"}));
        assert_eq!(split.held["llm"]["baseUrl"], json!("http://evil.example"));
    }

    #[test]
    fn a_held_object_given_as_a_scalar_is_held_whole() {
        let split = split_project(
            &document(json!({"llm": "x", "chat": null, "hooks": 5})),
            &|_, _| None,
        );
        assert_eq!(split.held_keys, vec!["llm", "chat", "hooks"]);
        assert!(split.safe.is_empty());
        // Nothing of `llm` applies untrusted: a string there waits for trust like the rest.
        assert!(split.misshapen_keys().is_empty());
    }

    #[test]
    fn entries_reaching_outside_are_held_one_by_one_and_the_rest_applies() {
        let project = document(json!({
            "packages": ["npm:tool", "git:file:///private/repo", {"source": "../../x", "skills": []}],
            "skills": ["../../outside/skills"],
            "prompts": ["prompts"],
            "treeFilterMode": "all",
        }));
        let outside = |_: &str, entry: &str| {
            (entry.contains("file:") || entry.contains("../.."))
                .then_some(HeldReason::ReachesOutside)
        };
        let split = split_project(&project, &outside);
        assert!(split.held_keys.is_empty());
        assert_eq!(
            split.held_entries,
            [
                HeldEntry {
                    key: "packages".into(),
                    entry: "git:file:///private/repo".into(),
                    reason: HeldReason::ReachesOutside
                },
                HeldEntry {
                    key: "packages".into(),
                    entry: "../../x".into(),
                    reason: HeldReason::ReachesOutside
                },
                HeldEntry {
                    key: "skills".into(),
                    entry: "../../outside/skills".into(),
                    reason: HeldReason::ReachesOutside
                },
            ]
        );
        assert_eq!(
            Value::Object(split.safe.clone()),
            json!({"packages": ["npm:tool"], "prompts": ["prompts"], "treeFilterMode": "all"})
        );
        assert_eq!(
            Value::Object(split.held.clone()),
            json!({"packages": ["git:file:///private/repo", {"source": "../../x", "skills": []}],
                   "skills": ["../../outside/skills"]})
        );
        assert_eq!(split.shown_keys(), ["packages", "skills"]);
    }

    #[test]
    fn every_safe_key_is_in_the_schema() {
        for entry in schema::project_safe_keys() {
            let segments: Vec<String> = entry.split('.').map(str::to_owned).collect();
            assert!(schema::lookup(&segments).is_some(), "{entry}");
        }
    }

    /// The trust gate is the tree's `x-project` markers; this list pins it, so a marker added or
    /// removed is a reviewed change of `docs/security.md`'s gate, not a side effect.
    #[test]
    fn the_safe_keys_are_the_reviewed_list() {
        let mut derived: Vec<&str> = schema::project_safe_keys()
            .iter()
            .map(String::as_str)
            .collect();
        derived.sort_unstable();
        let reviewed = [
            "autocompleteMaxVisible",
            "collapseChangelog",
            "doubleEscapeAction",
            "editorPaddingX",
            "enableSkillCommands",
            "extensions",
            "followUpMode",
            "hideThinkingBlock",
            "lastChangelogVersion",
            "markdown",
            "packages",
            "prompts",
            "quietStartup",
            "showHardwareCursor",
            "skills",
            "steeringMode",
            "terminal",
            "themes",
            "treeFilterMode",
            "warnings",
        ];
        assert_eq!(derived, reviewed);
    }
}
