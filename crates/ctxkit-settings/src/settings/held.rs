//! What of the project's document applies: all of it once trusted, else the part an untrusted
//! project may set (`allowlist::split_project`, with `reach` judging the entries that name
//! places), and what is held back until `ctxkit trust`.

use super::allowlist::{self, HeldEntry};
use super::document::Document;
use super::{SettingsManager, schema};
use crate::error::SettingsScope;

impl SettingsManager {
    /// What applies of one scope's document: the user's whole, the project's whole when trusted,
    /// else its safe part.
    pub(crate) fn applied_document(&self, scope: SettingsScope) -> &Document {
        match scope {
            SettingsScope::Global => &self.global.document,
            SettingsScope::Project => &self.project_applied,
        }
    }

    /// The dotted keys of the project document that do not apply because the project is not
    /// trusted (empty when it is), in document order. Keys the schema does not know are held
    /// back too but not listed here: nothing reads them, and `diagnostics` reports them.
    pub fn held_project_keys(&self) -> Vec<String> {
        if self.project_trusted {
            return Vec::new();
        }
        let split = self.split_project();
        // A wrong value where the project may set keys is reported as invalid instead.
        let misshapen = split.misshapen_keys();
        split
            .held_keys
            .into_iter()
            .filter(|key| {
                let segments: Vec<String> = key.split('.').map(str::to_owned).collect();
                schema::lookup(&segments).is_some() && !misshapen.contains(key)
            })
            .collect()
    }

    /// The entries of the project's `packages`, `extensions`, `skills`, `prompts` and `themes` that
    /// do not apply because the project is not trusted (empty when it is), in document order: a
    /// local path beyond the project folder, `git:file://…`, a package that is installed.
    pub fn held_project_entries(&self) -> Vec<HeldEntry> {
        if self.project_trusted {
            return Vec::new();
        }
        self.split_project().held_entries
    }

    /// Which of `keys` the project's document gives a non-empty array (read whether or not the
    /// project is trusted).
    pub(crate) fn project_resource_keys<'k>(&self, keys: &[&'k str]) -> Vec<&'k str> {
        keys.iter()
            .copied()
            .filter(|key| {
                self.project
                    .document
                    .get(*key)
                    .and_then(serde_json::Value::as_array)
                    .is_some_and(|items| !items.is_empty())
            })
            .collect()
    }

    /// The dotted keys of the project document read from the user's own settings alone
    /// (`x-user-only`), which never apply from a project, trusted or not.
    pub fn project_user_only_keys(&self) -> Vec<String> {
        self.split_project().user_only_keys
    }

    /// The project document cut into what applies untrusted and what waits for trust.
    pub(crate) fn split_project(&self) -> allowlist::ProjectSplit {
        let folder = &self.folder;
        allowlist::split_project(&self.project.document, &|key, entry| {
            folder.entry_held(key, entry)
        })
    }

    /// The project document as it applies now (kept in `project_applied` by `recompute`).
    pub(super) fn applied_project(&self) -> Document {
        if self.project_trusted {
            self.project.document.clone()
        } else {
            self.split_project().safe
        }
    }
}
