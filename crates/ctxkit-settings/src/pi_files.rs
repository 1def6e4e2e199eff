//! What a Pi user's own files say that ctxkit does not follow but must never contradict: the
//! routes Pi's `models.json` gives providers (`providers.<name>.baseUrl`), so a key is not sent to
//! a provider's public host when the user's Pi sends it elsewhere, and the literal keys of Pi's
//! `auth.json` and `models.json`, redacted from tool results as ctxkit's own keys are. These files
//! are only read here, never written, and nothing else of them is used.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::env::Environment;
use crate::settings::confine::{self, Reach};

/// The name of Pi's file of providers and models.
pub const PI_MODELS_FILE_NAME: &str = "models.json";

/// A provider's endpoint as a Pi `models.json` sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PiRoute {
    /// The provider's name as the file writes it (`anthropic`).
    pub provider: String,
    /// Its `baseUrl`, trimmed.
    pub base_url: String,
    /// The file that says so.
    pub file: PathBuf,
}

/// Pi's agent folder under the user's home, `~/.pi/agent`.
pub fn pi_agent_dir(environment: &Environment) -> PathBuf {
    environment.home.join(".pi").join("agent")
}

/// The Pi `models.json` files ctxkit heeds, each once: the one in ctxkit's home (a home shared
/// with Pi, `CTXKIT_HOME=~/.pi/agent`), then `~/.pi/agent/models.json`.
pub fn pi_models_paths(environment: &Environment) -> Vec<PathBuf> {
    let mut paths = vec![environment.agent_dir().join(PI_MODELS_FILE_NAME)];
    let pi = pi_agent_dir(environment).join(PI_MODELS_FILE_NAME);
    if crate::env::canonical_or_raw(&pi) != crate::env::canonical_or_raw(&paths[0]) {
        paths.push(pi);
    }
    paths
}

/// Every provider's `baseUrl` of the files at `paths`, the first file's where two name one
/// provider. A file that is missing, unreadable or not JSON routes nothing (Pi refuses it too).
pub fn pi_routes(paths: &[PathBuf]) -> Vec<PiRoute> {
    let mut routes: Vec<PiRoute> = Vec::new();
    for path in paths {
        for (provider, entry) in providers_of(path) {
            let Some(base_url) = entry.get("baseUrl").and_then(Value::as_str) else {
                continue;
            };
            let base_url = base_url.trim();
            if base_url.is_empty() || routes.iter().any(|route| route.provider == provider) {
                continue;
            }
            routes.push(PiRoute {
                provider,
                base_url: base_url.to_owned(),
                file: path.clone(),
            });
        }
    }
    routes
}

/// The credentials of Pi's own files, redacted from tool results as ctxkit's own keys are: every
/// credential string of `~/.pi/agent/auth.json` (API keys, and the OAuth access and refresh tokens
/// of an account login: [`crate::credential_strings`]) and, anywhere under each provider of the
/// `models.json` files at `models_paths` (the provider, its models, its model overrides), every
/// literal `apiKey` and `headers` value (a `$NAME`/`${NAME}` reference or a `!command` is not a
/// secret here: it names one). Unreadable files give none.
pub fn pi_secrets(environment: &Environment, models_paths: &[PathBuf]) -> Vec<String> {
    let auth = pi_agent_dir(environment).join(crate::credentials::CREDENTIALS_FILE_NAME);
    let mut found = crate::credentials::credential_strings(&auth).unwrap_or_default();
    for path in models_paths {
        for (_, entry) in providers_of(path) {
            configured_secrets(&Value::Object(entry), &mut found);
        }
    }
    let mut secrets: Vec<String> = Vec::new();
    for secret in found {
        if !secret.trim().is_empty() && !secrets.contains(&secret) {
            secrets.push(secret);
        }
    }
    secrets
}

/// The literal `apiKey` and `headers` values of `fields`, appended to `secrets`.
fn literal_fields(fields: &serde_json::Map<String, Value>, secrets: &mut Vec<String>) {
    if let Some(Value::String(written)) = fields.get("apiKey") {
        secrets.extend(crate::credentials::literal_of(written));
    }
    if let Some(Value::Object(headers)) = fields.get("headers") {
        let values = headers.values().filter_map(Value::as_str);
        secrets.extend(values.filter_map(crate::credentials::literal_of));
    }
}

/// The literal `apiKey` and `headers` values of every object inside `value`.
fn configured_secrets(value: &Value, secrets: &mut Vec<String>) {
    match value {
        Value::Object(fields) => {
            literal_fields(fields, secrets);
            for (name, field) in fields {
                if name != "headers" {
                    configured_secrets(field, secrets);
                }
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|item| configured_secrets(item, secrets)),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

/// The `providers` object of the Pi `models.json` at `path`, each entry an object.
fn providers_of(path: &Path) -> Vec<(String, serde_json::Map<String, Value>)> {
    let Ok(Some(text)) = confine::read_text(path, Reach::Anywhere) else {
        return Vec::new();
    };
    let Ok(Value::Object(mut document)) = serde_json::from_str::<Value>(&text) else {
        return Vec::new();
    };
    let Some(Value::Object(providers)) = document.remove("providers") else {
        return Vec::new();
    };
    providers
        .into_iter()
        .filter_map(|(provider, entry)| match entry {
            Value::Object(entry) => Some((provider, entry)),
            Value::Null
            | Value::Bool(_)
            | Value::Number(_)
            | Value::String(_)
            | Value::Array(_) => None,
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    fn world() -> (tempfile::TempDir, Environment) {
        let dir = tempfile::tempdir().unwrap();
        let environment = Environment::new(dir.path(), dir.path().join("project"));
        std::fs::create_dir_all(pi_agent_dir(&environment)).unwrap();
        (dir, environment)
    }

    #[test]
    fn routes_come_from_ctxkit_home_first_then_pi_home() {
        let (_dir, environment) = world();
        let paths = pi_models_paths(&environment);
        assert_eq!(paths.len(), 2);
        std::fs::create_dir_all(environment.agent_dir()).unwrap();
        std::fs::write(
            &paths[0],
            r#"{"providers":{"anthropic":{"baseUrl":" https://gw.corp/a "}}}"#,
        )
        .unwrap();
        std::fs::write(
            &paths[1],
            r#"{"providers":{"anthropic":{"baseUrl":"https://other"},
               "openai":{"baseUrl":"https://gw.corp/o"},"local":{"api":"x"},"bad":3}}"#,
        )
        .unwrap();
        let routes = pi_routes(&paths);
        let shown: Vec<_> = routes
            .iter()
            .map(|route| {
                (
                    route.provider.as_str(),
                    route.base_url.as_str(),
                    &route.file,
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("anthropic", "https://gw.corp/a", &paths[0]),
                ("openai", "https://gw.corp/o", &paths[1]),
            ]
        );
    }

    #[test]
    fn a_home_shared_with_pi_is_one_file_and_a_broken_file_routes_nothing() {
        let (_dir, environment) = world();
        let pi = pi_agent_dir(&environment);
        let shared = environment.with_variable(crate::CTXKIT_HOME_VAR, &pi.display().to_string());
        let paths = pi_models_paths(&shared);
        assert_eq!(paths, [pi.join(PI_MODELS_FILE_NAME)]);
        std::fs::write(&paths[0], "{not json").unwrap();
        assert_eq!(pi_routes(&paths), []);
    }

    #[test]
    fn pi_keys_are_secrets_but_references_are_not() {
        let (_dir, environment) = world();
        let pi = pi_agent_dir(&environment);
        std::fs::write(
            pi.join("auth.json"),
            r#"{"anthropic":{"type":"api_key","key":"sk-ant-api03-PIKEY"}}"#,
        )
        .unwrap();
        std::fs::write(
            pi.join(PI_MODELS_FILE_NAME),
            r#"{"providers":{"local":{"apiKey":"sk-local-MODELSKEY"},
               "env":{"apiKey":"$LOCAL_KEY"},"cmd":{"apiKey":"!pass show key"}}}"#,
        )
        .unwrap();
        let secrets = pi_secrets(&environment, &pi_models_paths(&environment));
        assert_eq!(secrets, ["sk-ant-api03-PIKEY", "sk-local-MODELSKEY"]);
    }

    /// QA r108 (adv3, D1): an approved `cat ~/.pi/agent/auth.json ~/.pi/agent/models.json` sent
    /// the OAuth tokens of Pi's logins and a gateway's header token to the provider; only the
    /// `api_key` entries were secrets.
    #[test]
    fn every_credential_of_pi_logins_and_models_headers_is_a_secret() {
        let (_dir, environment) = world();
        let pi = pi_agent_dir(&environment);
        std::fs::write(
            pi.join("auth.json"),
            include_str!("../fixtures/pi/auth-logins.json"),
        )
        .unwrap();
        std::fs::write(
            pi.join(PI_MODELS_FILE_NAME),
            include_str!("../fixtures/pi/models-secrets.json"),
        )
        .unwrap();
        let secrets = pi_secrets(&environment, &pi_models_paths(&environment));
        assert_eq!(
            secrets,
            [
                "sk-ant-oat01-FAKEACCESS0123456789abcdefghijABCDEFGHIJ",
                "sk-ant-ort01-FAKEREFRESH0123456789abcdefghijABCDEFGH",
                "eyJhbGciOiJSUzI1NiJ9.eyJGQUtFQ09ERVgiOjF9.RkFLRUNPREVYU0lHTkFUVVJF",
                "rt_FAKECODEXREFRESH0123456789abcdef",
                "acct-FAKE-0123456789",
                "ghu_FAKECOPILOTREFRESH0123456789abcd",
                "tid=FAKECOPILOTACCESS0123456789;exp=1999999999",
                "FAKEZAIKEY0123456789abcdef",
                "!FAKEBANGKEY$0123456789",
                "FAKEGATEWAYKEY0123456789",
                "FAKEHEADERTOKEN0123456789",
                "FAKEMODELHEADER0123456789",
                "FAKEOVERRIDEHEADER0123456789",
            ]
        );
    }
}
