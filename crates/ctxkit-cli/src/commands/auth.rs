//! `ctxkit auth …`: Pi 1.6.0's `pi auth` commands. `login` and `logout` are `ctxkit login` and
//! `ctxkit logout`; `check` says whether a provider can be asked now (`ready`, `not_ready`,
//! `invalid`, exit 0, 1, 2), from the settings, the saved keys and the environment, sending
//! nothing; `print-api-key` prints the key ctxkit would send, for another program. ctxkit has no
//! account logins, so `print-bearer-token` is refused with what to use instead.

use std::io::Write;

use anyhow::Result;
use ctxkit_llm::{LlmError, ModelRole};
use ctxkit_secrets::ApiKey;
use serde_json::json;

use super::settings::ProcessSettings;
use crate::Outcome;
use crate::cli::{AuthCommand, AuthTarget};
use crate::usage::UsageError;

/// Runs one `ctxkit auth` command.
pub fn run(
    process: &ProcessSettings<'_>,
    command: AuthCommand,
    out: &mut dyn Write,
) -> Result<Outcome> {
    match command {
        AuthCommand::Login { provider, .. } => {
            super::login::login(process.environment()?, provider, out)
        }
        AuthCommand::Logout { provider } => {
            super::login::logout(process.environment()?, provider, out)
        }
        AuthCommand::Check {
            target,
            json,
            credentials,
            ..
        } => check(process, &target, json, credentials, out),
        AuthCommand::PrintApiKey { target } => print_api_key(process, &target, out),
        AuthCommand::PrintBearerToken { .. } => Err(UsageError {
            message: "ctxkit has no account logins, so it holds no bearer token".to_owned(),
            hint: "`ctxkit auth print-api-key --provider NAME` prints a provider's API key"
                .to_owned(),
        }
        .into()),
    }
}

/// Whether a provider can be asked now.
#[derive(Debug)]
enum Readiness {
    /// Its endpoint resolves; `key` is `None` for a provider that takes none (a local server).
    Ready {
        provider: String,
        key: Option<ApiKey>,
    },
    /// No key is set for it, or it is not a provider ctxkit knows.
    NotReady {
        provider: String,
        reason: &'static str,
        error: Option<LlmError>,
    },
    /// The settings or the files they point at stop every request to it. `warned`: loading them
    /// said so already, on stderr.
    Invalid {
        provider: String,
        error: String,
        warned: bool,
    },
}

impl Readiness {
    fn status(&self) -> &'static str {
        match self {
            Self::Ready { .. } => "ready",
            Self::NotReady { .. } => "not_ready",
            Self::Invalid { .. } => "invalid",
        }
    }

    fn code(&self) -> u8 {
        match self {
            Self::Ready { .. } => 0,
            Self::NotReady { .. } => 1,
            Self::Invalid { .. } => 2,
        }
    }

    /// Pi's record: `status`, `provider`, then `authType` when ready or `reason` when not.
    fn record(&self) -> serde_json::Value {
        match self {
            Self::Ready { provider, key } => json!({
                "status": "ready",
                "provider": provider,
                "authType": if key.is_some() { "api_key" } else { "none" },
            }),
            Self::NotReady {
                provider, reason, ..
            } => json!({"status": "not_ready", "provider": provider, "reason": reason}),
            Self::Invalid { provider, .. } => {
                json!({"status": "invalid", "provider": provider, "reason": "invalid_state"})
            }
        }
    }
}

fn check(
    process: &ProcessSettings<'_>,
    target: &AuthTarget,
    json: bool,
    credentials: bool,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let readiness = readiness(process, target)?;
    let key = match &readiness {
        Readiness::Ready { key, .. } => key
            .as_ref()
            .filter(|_| credentials)
            .map(ApiKey::expose_secret),
        Readiness::NotReady { .. } | Readiness::Invalid { .. } => None,
    };
    if json {
        let mut record = readiness.record();
        if let Some(key) = key {
            record["credentials"] = json!(key);
        }
        writeln!(out, "{record}")?;
    } else {
        writeln!(out, "{}", key.unwrap_or(readiness.status()))?;
        // Pi prints the status alone; what is wrong goes beside it, on stderr.
        match &readiness {
            Readiness::Invalid {
                error,
                warned: false,
                ..
            } => writeln!(crate::redact::stderr(), "warning: {error}")?,
            Readiness::NotReady { provider, .. } => {
                if let Some(why) = super::unused_saved_entry(provider) {
                    writeln!(
                        crate::redact::stderr(),
                        "warning: the saved entry of `{provider}` is not used: {why}"
                    )?;
                }
            }
            Readiness::Ready { .. } | Readiness::Invalid { .. } => {}
        }
    }
    Ok(match readiness.code() {
        0 => Outcome::Success,
        code => Outcome::FailedAsSaid { code },
    })
}

fn print_api_key(
    process: &ProcessSettings<'_>,
    target: &AuthTarget,
    out: &mut dyn Write,
) -> Result<Outcome> {
    match readiness(process, target)? {
        Readiness::Ready { key: Some(key), .. } => {
            writeln!(out, "{}", key.expose_secret())?;
            Ok(Outcome::Success)
        }
        Readiness::Ready {
            provider,
            key: None,
        } => Err(UsageError {
            message: format!("`{provider}` takes no API key"),
            hint: "a local server is asked without one".to_owned(),
        }
        .into()),
        Readiness::NotReady {
            error: Some(error), ..
        } => Err(error.into()),
        Readiness::NotReady { provider, .. } => Err(UsageError {
            message: format!("`{provider}` is not a provider ctxkit knows"),
            hint: "`ctxkit models` lists the providers and their models".to_owned(),
        }
        .into()),
        Readiness::Invalid { error, .. } => Err(anyhow::anyhow!(error)),
    }
}

/// The model whose endpoint decides: `--model` as `provider/id`, an id of `--provider`, or a bare
/// id; `--provider` alone stands for its default model, else the first of its `llm.models`, else
/// the first the built-in table knows (a provider with none, a local server, by its name alone).
fn model_spec(target: &AuthTarget, options: &ctxkit_llm::LlmOptions) -> Option<String> {
    let provider = target.provider.as_deref().map(str::trim);
    match (provider, target.model.as_deref().map(str::trim)) {
        (_, Some(model)) if model.contains('/') => Some(model.to_owned()),
        (Some(provider), Some(model)) => Some(format!("{provider}/{model}")),
        (None, Some(model)) => Some(model.to_owned()),
        (Some(provider), None) => {
            let provider = provider.to_lowercase();
            let provider =
                ctxkit_llm::find_provider(&provider).map_or(provider, |info| info.name.to_owned());
            let default = ctxkit_llm::DEFAULT_MODELS
                .iter()
                .find(|(name, _)| *name == provider)
                .map(|(_, id)| (*id).to_owned());
            let declared = || {
                options
                    .models
                    .iter()
                    .find(|model| model.provider == provider)
                    .map(|model| model.id.clone())
            };
            let builtin = || {
                ctxkit_llm::ModelTable::builtin()
                    .iter()
                    .find(|model| model.provider == provider)
                    .map(|model| model.id.clone())
            };
            // A provider with no model known (a local server) is still checked by its name.
            let id = default
                .or_else(declared)
                .or_else(builtin)
                .unwrap_or_else(|| "model".to_owned());
            Some(format!("{provider}/{id}"))
        }
        (None, None) => None,
    }
}

fn readiness(process: &ProcessSettings<'_>, target: &AuthTarget) -> Result<Readiness> {
    let named = target
        .provider
        .clone()
        .or_else(|| target.model.clone())
        .unwrap_or_default();
    // The settings and the saved keys, whose loading has said what is wrong with them.
    let loaded = super::summary_setup::llm_options(process.settings()?)
        .and_then(|options| Ok((options, super::summary_setup::llm_environment()?)));
    let (mut options, environment) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => {
            return Ok(Readiness::Invalid {
                provider: named,
                error: crate::render::error_chain(&error),
                warned: true,
            });
        }
    };
    let Some(spec) = model_spec(target, &options) else {
        return Err(UsageError {
            message: "name a provider or a model".to_owned(),
            hint: "`ctxkit auth check --provider anthropic`".to_owned(),
        }
        .into());
    };
    let provider = spec
        .split_once('/')
        .map_or(named, |(provider, _)| provider.to_owned());
    options.picked_model = Some(spec);
    let resolved = ctxkit_llm::resolve_model(&options, &environment, ModelRole::Agent);
    Ok(match resolved {
        Ok(Some(config)) => Readiness::Ready {
            provider: config.provider,
            key: config.api_key,
        },
        Ok(None) | Err(LlmError::InvalidModel { .. }) => Readiness::NotReady {
            provider,
            reason: "provider_not_found",
            error: None,
        },
        // The provider the model resolved to: a bare id names none itself.
        Err(LlmError::MissingApiKey { provider, env_var }) => Readiness::NotReady {
            provider: provider.clone(),
            reason: "credentials_not_configured",
            error: Some(LlmError::MissingApiKey { provider, env_var }),
        },
        Err(LlmError::UnknownProvider { provider }) => Readiness::NotReady {
            provider,
            reason: "provider_not_found",
            error: None,
        },
        Err(error) => Readiness::Invalid {
            provider,
            error: error.to_string(),
            warned: false,
        },
    })
}
