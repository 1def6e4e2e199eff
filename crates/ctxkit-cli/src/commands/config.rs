//! `ctxkit config get|set|unset|list|schema`: read and edit the user and project settings files,
//! and print their JSON schema.

use std::io::Write;

use anyhow::Result;
use ctxkit_settings::{
    KeyPath, SettingOrigin, SettingValue, SettingsDiagnostic, SettingsManager, SettingsScope,
};
use serde_json::{Value, json};

pub use super::held_settings::held_settings_warning;
use super::held_settings::note_held;
use super::print_json;
use super::settings::ProcessSettings;
use crate::Outcome;
use crate::cli::ConfigAction;

/// The keys of the object `key` holds now in `scope` that setting it to the object `text` drops
/// (`config set compaction '{"enabled":false}'` replaced the whole object, silently; QA r98).
fn keys_an_object_drops(
    settings: &SettingsManager,
    scope: SettingsScope,
    key: &str,
    text: &str,
) -> Vec<String> {
    let Ok(Value::Object(new)) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let old = settings
        .get_in(scope, key)
        .ok()
        .flatten()
        .and_then(|value| serde_json::to_value(value).ok());
    let Some(Value::Object(old)) = old else {
        return Vec::new();
    };
    old.keys()
        .filter(|name| !new.contains_key(*name))
        .map(|name| format!("`{key}.{name}`"))
        .collect()
}

/// The scope `--project` names; refused when this folder has no project settings of its own
/// (started in the home folder, `.ctxkit` is ctxkit's home: the user's settings).
fn scope(project: bool, settings: &SettingsManager) -> Result<SettingsScope> {
    if !project {
        return Ok(SettingsScope::Global);
    }
    if settings.path(SettingsScope::Project).is_none() {
        return Err(crate::usage::UsageError {
            message: "`--project`: this folder's `.ctxkit` is ctxkit's home, so it has no \
                      project settings of its own"
                .to_owned(),
            hint: "leave out `--project` to change your own settings, or run it in a project's \
                   folder"
                .to_owned(),
        }
        .into());
    }
    Ok(SettingsScope::Project)
}

/// The key of the store setting, which `--store` and `CTXKIT_STORE` override.
const STORE_URL: &str = "store.url";

/// The key of the sessions root setting, which `--sessions-dir` and `CTXKIT_SESSIONS_DIR`
/// override.
const SESSION_DIR: &str = "sessionDir";

/// A setting every command takes from a flag or an environment variable instead of the settings
/// files: `store.url` (`--store`, `CTXKIT_STORE`), `sessionDir` (`--sessions-dir`,
/// `CTXKIT_SESSIONS_DIR`), `server.token` (`CTXKIT_SERVER_TOKEN`). `config get` and `config
/// list` show it, with its flag or variable as the origin.
struct Override {
    key: &'static str,
    text: String,
    origin: &'static str,
}

/// The overrides in force in this process.
fn overrides(args: &crate::cli::GlobalArgs) -> Vec<Override> {
    let store = match (&args.store, crate::cli::store_from_environment()) {
        (Some(text), _) => Some((text.clone(), "--store")),
        (None, Some(text)) => Some((text, crate::cli::CTXKIT_STORE)),
        (None, None) => None,
    };
    let sessions_dir = args.sessions_dir.as_ref().map(|dir| {
        let origin = crate::cli::sessions_dir_origin(dir);
        (dir.display().to_string(), origin)
    });
    let store = store.map(|(text, origin)| Override {
        key: STORE_URL,
        text,
        origin,
    });
    let sessions_dir = sessions_dir.map(|(text, origin)| Override {
        key: SESSION_DIR,
        text,
        origin,
    });
    // QA 2026-12-07: `config list` showed the file's token as in effect, though the variable
    // wins (`serve --listen` reads it first).
    let token = crate::cli::server_token_from_environment().map(|text| Override {
        key: "server.token",
        text,
        origin: crate::cli::CTXKIT_SERVER_TOKEN,
    });
    store.into_iter().chain(sessions_dir).chain(token).collect()
}

/// A row's value and origin as the commands take them (its override when there is one), and for
/// `store.url` why the commands cannot use it when it is not a store URL: listing never opens the
/// store.
fn override_row(row: &mut Row, overrides: &[Override]) {
    if let Some(found) = overrides.iter().find(|found| found.key == row.key) {
        row.value = Some(SettingValue::text(found.text.clone()));
        row.origin = found.origin;
    }
    if row.key != STORE_URL {
        return;
    }
    let Some(text) = row.value.as_ref().and_then(SettingValue::as_text) else {
        return;
    };
    if let Err(error) = ctxkit_store::StoreUrl::parse(text) {
        row.problem = Some(
            if let ctxkit_store::StoreError::InvalidUrl { reason, .. } = error {
                format!("not a store URL: {reason}")
            } else {
                error.to_string()
            },
        );
    }
    row.value = Some(SettingValue::text(ctxkit_store::shown_store_text(text)));
}

/// The store's URL as `config get` may print it, even asked for by name: never its password
/// (`ctxkit_store::shown_store_text`).
fn shown_store(key: &str, value: SettingValue) -> SettingValue {
    match (key, value.as_text()) {
        (STORE_URL, Some(text)) => SettingValue::text(ctxkit_store::shown_store_text(text)),
        ("store", _) => value.with_field_shown("url", ctxkit_store::shown_store_text),
        _ => value,
    }
}

/// A row of `config list --json`; `problem` only on a value the commands cannot use.
fn json_record(row: &Row) -> Value {
    let mut record = json!({
        "key": row.key, "value": row.value, "origin": row.origin, "known": row.known,
        "actedOn": row.known && !ctxkit_settings::is_pi_key_not_acted_on(&row.key),
    });
    if let (Some(problem), Some(fields)) = (&row.problem, record.as_object_mut()) {
        fields.insert("problem".to_owned(), json!(problem));
    }
    record
}

/// `project`, `global`, `contextStrategy`, `default`.
pub fn origin_name(origin: Option<SettingOrigin>) -> &'static str {
    match origin {
        Some(SettingOrigin::Project) => "project",
        Some(SettingOrigin::Global) => "global",
        Some(SettingOrigin::Strategy) => "contextStrategy",
        Some(SettingOrigin::Default) => "default",
        None => "unset",
    }
}

fn warn(diagnostics: &[SettingsDiagnostic]) -> Result<()> {
    let mut stderr = crate::redact::stderr();
    for diagnostic in diagnostics {
        writeln!(stderr, "warning: {}", diagnostic.message())?;
    }
    Ok(())
}

pub fn config(
    process: ProcessSettings<'_>,
    action: ConfigAction,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let overrides = overrides(process.args());
    let (environment, mut settings) = process.into_parts()?;
    match action {
        ConfigAction::Get { key, project, json } => {
            let key = KeyPath::parse(&key)?.dotted();
            // The project's file is asked for itself, not for what the commands use.
            let overrides = if project { &[][..] } else { &overrides[..] };
            get(&settings, &key, project, json, overrides, out)
        }
        ConfigAction::Set {
            key,
            value,
            project,
            force,
        } => {
            if !force {
                ctxkit_settings::check_known_key(&key)?;
            }
            // The form `config list` prints, whichever the user typed (`a.b["c.d"]`, `a.b.c.d`).
            let key_path = KeyPath::parse(&key)?;
            let key = key_path.dotted();
            let scope = scope(project, &settings)?;
            // Project settings are usually committed: keys and URL credentials stay in the user's.
            let parsed = serde_json::from_str::<serde_json::Value>(&value)
                .unwrap_or_else(|_| serde_json::Value::String(value.clone()));
            let secret_key = ctxkit_settings::secret_keys()
                .iter()
                .any(|secret| is_at_or_below(&key_path, secret))
                || ctxkit_settings::holds_credentials(key_path.segments(), &parsed);
            // `config set llm.apiKey "$MYCO_KEY"` with the variable unset stored "", and every
            // request then carried `Authorization: Bearer ` (QA r104).
            if secret_key && value.trim().is_empty() {
                anyhow::bail!(
                    "`{key}` would be empty, and requests would carry an empty credential; give \
                     the value itself (is the variable you passed set?), or remove it with \
                     `ctxkit config unset {key}`"
                );
            }
            if project && (secret_key || ctxkit_secrets::has_credentials(&value)) {
                anyhow::bail!(
                    "`{key}` would put credentials into the project settings, which are usually \
                     committed; set it without `--project`"
                );
            }
            // A store URL every command would refuse is refused here (a tester's
            // `sslmode=prefer` was set, and the next `ctxkit sessions` exited 2).
            if key == STORE_URL {
                ctxkit_store::StoreUrl::parse(&value)?;
            }
            let dropped = keys_an_object_drops(&settings, scope, &key, &value);
            let warnings = settings.set_from_text(scope, &key, &value)?;
            // A key of Pi's is no unknown setting (QA 2026-12-07: `--force tuiMode` warned so).
            let warnings: Vec<SettingsDiagnostic> = warnings
                .into_iter()
                .filter(|warning| {
                    !(matches!(warning, SettingsDiagnostic::UnknownKey { .. })
                        && ctxkit_settings::is_pi_key_not_read(warning.key()))
                })
                .collect();
            warn(&warnings)?;
            settings.flush()?;
            let path = settings.path(scope).map(|path| path.display().to_string());
            writeln!(out, "Set `{key}` in `{}`", path.unwrap_or_default())?;
            if !dropped.is_empty() {
                writeln!(
                    crate::redact::stderr(),
                    "note: `{key}` was set whole, so {} it held went; `ctxkit config set \
                     {key}.KEY VALUE` sets one key and keeps the others",
                    dropped.join(", ")
                )?;
            }
            if scope == SettingsScope::Project {
                // Read again: whether the project is trusted depends on what its file now holds
                // (a project without settings had nothing to trust).
                note_held(&super::settings::settings_of_project(&environment), &key)?;
            }
            Ok(Outcome::Success)
        }
        ConfigAction::Unset { key, project } => {
            let key = KeyPath::parse(&key)?.dotted();
            let scope = scope(project, &settings)?;
            let removed = settings.unset(scope, &key)?;
            settings.flush()?;
            let path = settings.path(scope).map(|path| path.display().to_string());
            if removed {
                writeln!(out, "Removed `{key}` from `{}`", path.unwrap_or_default())?;
            } else {
                // An unknown key that was not set is most likely a typo (sweep 9: it read as done).
                ctxkit_settings::check_known_key(&key)?;
                writeln!(out, "`{key}` was not set in `{}`", path.unwrap_or_default())?;
            }
            Ok(Outcome::Success)
        }
        ConfigAction::List { project, json } => {
            let overrides = if project { &[][..] } else { &overrides[..] };
            list(&settings, project, json, overrides, out)
        }
        ConfigAction::Schema => {
            print_json(out, ctxkit_settings::json_schema())?;
            Ok(Outcome::Success)
        }
        ConfigAction::ImportPi { from, dry_run } => {
            super::config_import::import_pi(&environment, &mut settings, from, dry_run, out)
        }
    }
}

fn get(
    settings: &SettingsManager,
    key: &str,
    project: bool,
    json: bool,
    overrides: &[Override],
    out: &mut dyn Write,
) -> Result<Outcome> {
    let (value, origin, known) = if project {
        let value = settings.get_in(SettingsScope::Project, key)?;
        let known = settings.get(key)?.known;
        let origin = value.as_ref().map(|_| SettingOrigin::Project);
        (value, origin_name(origin), known)
    } else {
        let lookup = settings.get(key)?;
        (lookup.value, origin_name(lookup.origin), lookup.known)
    };
    // What the commands use, as `config list` shows it (a tester's `CTXKIT_STORE` was left out).
    let (value, origin) = match overrides.iter().find(|found| found.key == key) {
        Some(found) => (Some(SettingValue::text(found.text.clone())), found.origin),
        None => (value, origin),
    };
    // Secrets below the key are masked as `config list` masks them; one asked for by name is not.
    let value = value.map(|value| shown_store(key, value.asked_for(key)));
    if json {
        let mut record = json!({"key": key, "value": value, "origin": origin, "known": known,
            "actedOn": known && !ctxkit_settings::is_pi_key_not_acted_on(key)});
        // As `config list --project --json` says it of a key that waits for trust.
        if project
            && value.is_some()
            && is_held(&settings.held_project_keys(), key)
            && let Some(fields) = record.as_object_mut()
        {
            fields.insert("problem".to_owned(), json!(WAITS_FOR_TRUST));
        }
        print_json(out, &record)?;
    } else if let Some(value) = &value {
        writeln!(out, "{}", value.display_text())?;
    }
    // A value printed that the commands will not use says so, as `config list` does.
    let about_key: Vec<SettingsDiagnostic> = settings
        .diagnostics()
        .into_iter()
        .filter(|diagnostic| {
            !matches!(diagnostic, SettingsDiagnostic::UnknownKey { .. })
                && same_or_nested(diagnostic.key(), key)
        })
        .collect();
    warn(&about_key)?;
    if value.is_none() {
        let mut stderr = crate::redact::stderr();
        match ctxkit_settings::check_known_key(key) {
            // Said as `config set` says it, with the key a typo most likely meant.
            Err(unknown) if !known => {
                writeln!(stderr, "{unknown}")?;
                writeln!(
                    stderr,
                    "hint: `ctxkit config list` shows every known setting"
                )?;
            }
            Ok(()) | Err(_) => writeln!(stderr, "`{key}` is not set")?,
        }
        return Ok(Outcome::ProblemsFound);
    }
    Ok(Outcome::Success)
}

/// Whether `key` is the dotted key `outer` or lies below it (`llm.headers["X.Y"]` below
/// `llm.headers`), compared name by name.
fn is_at_or_below(key: &KeyPath, outer: &str) -> bool {
    let outer: Vec<&str> = outer.split('.').collect();
    key.segments().len() >= outer.len()
        && key
            .segments()
            .iter()
            .zip(&outer)
            .all(|(name, outer)| name == outer)
}

/// Is one dotted key the other, or below it?
pub(super) fn same_or_nested(one: &str, other: &str) -> bool {
    lies_under(one, other) || lies_under(other, one)
}

/// Whether the dotted key `inner` is `outer` or a key below it.
fn lies_under(inner: &str, outer: &str) -> bool {
    inner
        .strip_prefix(outer)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

/// One row of `config list`: the key, its value (secrets masked), where it comes from, whether
/// ctxkit knows the key, and what is wrong with the value when the commands cannot use it.
struct Row {
    key: String,
    value: Option<SettingValue>,
    origin: &'static str,
    known: bool,
    problem: Option<String>,
}

/// What a project's key that waits for trust is said to be.
const WAITS_FOR_TRUST: &str = "waits for `ctxkit trust`: not in effect";

/// Whether `key` is one of `held` (an untrusted project's keys) or lies under one.
fn is_held(held: &[String], key: &str) -> bool {
    held.iter().any(|held| lies_under(key, held))
}

fn list(
    settings: &SettingsManager,
    project: bool,
    json: bool,
    overrides: &[Override],
    out: &mut dyn Write,
) -> Result<Outcome> {
    let mut rows = Vec::new();
    // What an untrusted project's file holds that does not apply yet: shown as the file's, but not
    // as if it were in effect (QA 2026-12-07: `llm.baseUrl … (project)` while `config get` said
    // unset).
    let held = settings.held_project_keys();
    for entry in settings.list() {
        let held_here = project && is_held(&held, &entry.key);
        let (value, origin) = if project {
            match settings.get_in(SettingsScope::Project, &entry.key)? {
                Some(value) => (Some(value), Some(SettingOrigin::Project)),
                None => continue,
            }
        } else {
            (entry.value, entry.origin)
        };
        let mut row = Row {
            problem: held_here.then(|| WAITS_FOR_TRUST.to_owned()),
            value,
            origin: origin_name(origin),
            known: entry.known,
            key: entry.key,
        };
        override_row(&mut row, overrides);
        row.value = row.value.map(|value| value.redacted(&row.key));
        rows.push(row);
    }
    if json {
        let records: Vec<Value> = rows.iter().map(json_record).collect();
        print_json(out, &records)?;
    } else {
        let width = rows.iter().map(|row| row.key.len()).max().unwrap_or(0);
        for row in &rows {
            let shown = row
                .value
                .as_ref()
                .map_or_else(|| "-".to_owned(), SettingValue::display_text);
            let unknown = match (row.known, ctxkit_settings::is_pi_key_not_read(&row.key)) {
                (true, _) if ctxkit_settings::is_pi_key_not_acted_on(&row.key) => {
                    ", Pi's key, checked but not acted on by ctxkit"
                }
                (true, _) => "",
                (false, true) => ", Pi's key, not read by ctxkit",
                (false, false) => ", unknown key",
            };
            let problem = row
                .problem
                .as_ref()
                .map(|problem| format!("; {problem}"))
                .unwrap_or_default();
            writeln!(
                out,
                "{:<width$}  {shown}  ({}{unknown}{problem})",
                row.key, row.origin
            )?;
        }
    }
    warn(&settings.diagnostics())?;
    Ok(Outcome::Success)
}
