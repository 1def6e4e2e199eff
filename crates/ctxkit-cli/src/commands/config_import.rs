//! `ctxkit config import-pi`: a Pi user's `models.json` carried into ctxkit's user settings, once
//! and on purpose, through the settings' own checks ([`ctxkit_settings::import_pi_models`]).
//! Keys are never printed; what the settings cannot hold is listed with why.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use ctxkit_settings::{Environment, ImportStep, SettingsManager, SettingsScope};

use crate::Outcome;
use crate::usage::UsageError;

pub fn import_pi(
    environment: &Environment,
    settings: &mut SettingsManager,
    from: Option<PathBuf>,
    dry_run: bool,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let source = match from {
        Some(path) => path,
        None => default_source(environment)?,
    };
    if !source.is_file() {
        return Err(UsageError {
            message: format!("no Pi `models.json` at `{}`", source.display()),
            hint: "name one with `--from FILE`".to_owned(),
        }
        .into());
    }
    // A settings file that did not load is never written: say so before the plan, not after it.
    if let Some(error) = settings
        .load_error(SettingsScope::Global)
        .filter(|_| !dry_run)
    {
        return Err(error.clone().into());
    }
    let mut import = ctxkit_settings::import_pi_models(&source)?;
    leave_out_unknown_formats(&mut import);
    let steps = settings.apply_pi_import(&import)?;
    let target = settings
        .path(SettingsScope::Global)
        .map(|path| path.display().to_string())
        .unwrap_or_default();
    let verb = if dry_run { "Would write" } else { "Writing" };
    writeln!(out, "{verb} into `{target}` from `{}`:", source.display())?;
    for step in &steps {
        writeln!(out, "  {}", step_line(step))?;
    }
    for left in &import.left_out {
        writeln!(out, "  left out {}: {}", left.what, left.why)?;
    }
    let written = steps.iter().filter(|step| writes(step)).count();
    if written == 0 {
        writeln!(out, "Nothing to write.")?;
    } else if dry_run {
        writeln!(out, "Nothing written (--dry-run).")?;
    } else {
        settings
            .flush()
            .with_context(|| format!("writing `{target}`"))?;
        writeln!(out, "Done: `ctxkit models` lists the models.")?;
    }
    Ok(Outcome::Success)
}

/// A provider ctxkit does not build in needs its wire format: an entry without `api` (Pi's file
/// gave none, or its models disagreed) would answer every request with "unknown provider", so it
/// is left out, with its models.
fn leave_out_unknown_formats(import: &mut ctxkit_settings::PiImport) {
    let unusable: Vec<String> = import
        .endpoints
        .iter()
        .filter(|(name, entry)| {
            entry.get("api").is_none() && ctxkit_llm::find_provider(name).is_none()
        })
        .map(|(name, _)| name.clone())
        .collect();
    for name in unusable {
        import.endpoints.retain(|(endpoint, _)| *endpoint != name);
        let before = import.models.len();
        import.models.retain(|model| {
            model.get("provider").and_then(serde_json::Value::as_str) != Some(name.as_str())
        });
        import.left_out.push(ctxkit_settings::LeftOut::provider(
            &name,
            before - import.models.len(),
            "no `api`: a provider ctxkit does not build in needs its wire format \
             (`openai-completions`, `openai-responses`, `anthropic-messages` or \
             `google-generative-ai`)"
                .to_owned(),
        ));
    }
}

/// The first Pi `models.json` that exists: ctxkit's home's, then `~/.pi/agent`'s.
fn default_source(environment: &Environment) -> Result<PathBuf> {
    let paths = ctxkit_settings::pi_models_paths(environment);
    if let Some(path) = paths.iter().find(|path| path.is_file()) {
        return Ok(path.clone());
    }
    let tried: Vec<String> = paths.iter().map(|path| quoted(path)).collect();
    Err(UsageError {
        message: format!("no Pi `models.json` at {}", tried.join(" or ")),
        hint: "name one with `--from FILE`".to_owned(),
    }
    .into())
}

fn quoted(path: &Path) -> String {
    format!("`{}`", path.display())
}

fn writes(step: &ImportStep) -> bool {
    matches!(
        step,
        ImportStep::EndpointSet { .. } | ImportStep::ModelAdded { .. }
    )
}

/// One line of what an import did; a key is said to be there, never shown.
fn step_line(step: &ImportStep) -> String {
    match step {
        ImportStep::EndpointSet {
            name,
            base_url,
            api,
            with_key,
            header_names,
        } => {
            let mut details = Vec::new();
            if let Some(api) = api {
                details.push(api.clone());
            }
            if *with_key {
                details.push("its key".to_owned());
            }
            if !header_names.is_empty() {
                details.push(format!("headers {}", header_names.join(", ")));
            }
            let details = if details.is_empty() {
                String::new()
            } else {
                format!(" ({})", details.join(", "))
            };
            format!("llm.providers.{name}: {base_url}{details}")
        }
        ImportStep::EndpointKept { name } => {
            format!("kept llm.providers.{name}: the settings have an entry for `{name}` already")
        }
        ImportStep::EndpointOfTheSettings { name } => format!(
            "skipped llm.providers.{name}: `llm.baseUrl`/`llm.apiKey`/`llm.headers` are \
             `{name}`'s already (unset them to take Pi's endpoint)"
        ),
        ImportStep::ModelAdded {
            provider,
            id,
            context_window,
        } => format!("llm.models: {provider}/{id} (window {context_window})"),
        ImportStep::ModelKept { provider, id } => {
            format!("kept llm.models {provider}/{id}: declared already")
        }
    }
}
