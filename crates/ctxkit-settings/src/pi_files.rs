//! What a Pi user's own files say that ctxkit does not follow but must never contradict: the
//! routes Pi's `models.json` gives providers (`providers.<name>.baseUrl`, and a model's own
//! `baseUrl`), so a key is not sent to a provider's public host when the user's Pi sends it
//! elsewhere, and the credentials of Pi's `auth.json` and `models.json`, redacted from tool results
//! as ctxkit's own keys are. These files are only read here, never written, and nothing else of
//! them is used. A `models.json` is read as Pi 1.6.0 reads it (a UTF-8 BOM, `//` comments and
//! trailing commas allowed); one that cannot be read so is reported, never taken to route nothing.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::env::Environment;
use crate::settings::confine::{self, Reach};

/// The name of Pi's file of providers and models.
pub const PI_MODELS_FILE_NAME: &str = "models.json";

/// A provider's endpoint as a Pi `models.json` sets it, for the whole provider or one model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PiRoute {
    /// The provider's name as the file writes it (`anthropic`).
    pub provider: String,
    /// The model whose own `baseUrl` this is (`providers.<name>.models[].baseUrl`, which
    /// overrides the provider's in Pi); `None` for the provider's `baseUrl`.
    pub model: Option<String>,
    /// Its `baseUrl`, trimmed.
    pub base_url: String,
    /// The file that says so.
    pub file: PathBuf,
}

/// A Pi `models.json` that exists but cannot be read as Pi reads it: where it sends providers is
/// unknown, so a model client refuses every provider's public host until told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Cannot read Pi's `{}`: {reason}", file.display())]
pub struct UnreadablePiModels {
    /// The file.
    pub file: PathBuf,
    /// Why, with the line and column where it stops parsing (`line 4, column 3: …`).
    pub reason: String,
}

/// What the Pi `models.json` files say about where providers go.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PiRoutes {
    /// Every route, the first file's where two name one provider (or one model of it).
    pub routes: Vec<PiRoute>,
    /// The files that exist but could not be read.
    pub unreadable: Vec<UnreadablePiModels>,
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

/// Every provider's `baseUrl` and every model's own `baseUrl` of the files at `paths`, the first
/// file's where two name one provider (or one model of it). A missing file routes nothing; one that
/// cannot be read or parsed as Pi parses it is [`PiRoutes::unreadable`] (Pi refuses it too, but the
/// user meant it to route somewhere: a key must not go to the public host on a typo).
pub fn pi_routes(paths: &[PathBuf]) -> PiRoutes {
    let mut found = PiRoutes::default();
    for path in paths {
        let providers = match read_models(path) {
            Ok(providers) => providers,
            Err(reason) => {
                found.unreadable.push(UnreadablePiModels {
                    file: path.clone(),
                    reason,
                });
                continue;
            }
        };
        for (provider, entry) in objects_of(providers) {
            for (model, base_url) in base_urls_of(&entry) {
                let known = found
                    .routes
                    .iter()
                    .any(|route| route.provider == provider && route.model == model);
                if !known {
                    found.routes.push(PiRoute {
                        provider: provider.clone(),
                        model,
                        base_url,
                        file: path.clone(),
                    });
                }
            }
        }
    }
    found
}

/// The provider's own `baseUrl` (model `None`), then each of its `models` entries' by id, trimmed,
/// blank ones left out.
fn base_urls_of(entry: &serde_json::Map<String, Value>) -> Vec<(Option<String>, String)> {
    let base_url = |fields: &serde_json::Map<String, Value>| {
        fields
            .get("baseUrl")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|base_url| !base_url.is_empty())
            .map(str::to_owned)
    };
    let mut found: Vec<(Option<String>, String)> =
        base_url(entry).map(|url| (None, url)).into_iter().collect();
    let models = entry.get("models").and_then(Value::as_array);
    for model in models.into_iter().flatten().filter_map(Value::as_object) {
        if let (Some(id), Some(url)) = (model.get("id").and_then(Value::as_str), base_url(model)) {
            found.push((Some(id.to_owned()), url));
        }
    }
    found
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

/// The provider entries of the Pi `models.json` at `path` that are objects; none when it cannot
/// be read.
fn providers_of(path: &Path) -> Vec<(String, serde_json::Map<String, Value>)> {
    objects_of(read_models(path).unwrap_or_default())
}

/// The entries of `providers` that are objects.
pub(crate) fn objects_of(
    providers: serde_json::Map<String, Value>,
) -> Vec<(String, serde_json::Map<String, Value>)> {
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

/// The `providers` object of the Pi `models.json` at `path`, read as Pi 1.6.0 reads it (a UTF-8
/// BOM, `//` comments and trailing commas allowed; `jsonc-parser` also takes `/* */` comments,
/// which Pi refuses: reading a route Pi would not is the safe side). Empty when the file does not
/// exist, is blank or has no `providers`; why not when it cannot be read or parsed.
pub(crate) fn read_models(path: &Path) -> Result<serde_json::Map<String, Value>, String> {
    let text = match confine::read_text(path, Reach::Anywhere) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(serde_json::Map::new()),
        Err(error) => return Err(error.to_string()),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() {
        return Ok(serde_json::Map::new());
    }
    let options = jsonc_parser::ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    let document: Value = jsonc_parser::parse_to_serde_value(text, &options).map_err(|error| {
        format!(
            "line {}, column {}: {}",
            error.line_display(),
            error.column_display(),
            error.kind()
        )
    })?;
    let Value::Object(mut document) = document else {
        return Err("expected a JSON object".to_owned());
    };
    match document.remove("providers") {
        None => Ok(serde_json::Map::new()),
        Some(Value::Object(providers)) => Ok(providers),
        Some(_) => Err("`providers` is not an object".to_owned()),
    }
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
        assert_eq!(routes.unreadable, []);
        let shown: Vec<_> = routes
            .routes
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
    fn a_home_shared_with_pi_is_one_file() {
        let (_dir, environment) = world();
        let pi = pi_agent_dir(&environment);
        let shared = environment.with_variable(crate::CTXKIT_HOME_VAR, &pi.display().to_string());
        let paths = pi_models_paths(&shared);
        assert_eq!(paths, [pi.join(PI_MODELS_FILE_NAME)]);
        assert_eq!(pi_routes(&paths), PiRoutes::default());
        std::fs::write(&paths[0], " \n").unwrap();
        assert_eq!(pi_routes(&paths), PiRoutes::default());
    }

    /// A route as (provider, model, base URL).
    type Shown = (String, Option<String>, String);

    /// The routes of the Pi `models.json` `fixture`, and its problems.
    fn routes_of(fixture: &str) -> (Vec<Shown>, Vec<String>) {
        let (_dir, environment) = world();
        let path = pi_agent_dir(&environment).join(PI_MODELS_FILE_NAME);
        std::fs::write(&path, fixture).unwrap();
        let found = pi_routes(std::slice::from_ref(&path));
        let routes = found
            .routes
            .into_iter()
            .map(|route| (route.provider, route.model, route.base_url))
            .collect();
        let problems = found
            .unreadable
            .into_iter()
            .map(|unreadable| unreadable.reason)
            .collect();
        (routes, problems)
    }

    /// QA r108 (adv3, D2 and D3): Pi 1.6.0 reads `models.json` with a BOM, `//` comments and
    /// trailing commas, and a model's own `baseUrl` overrides its provider's; ctxkit's strict read
    /// saw no route in such a file, nor a model's, and the key went to the public host.
    #[test]
    fn models_json_is_read_as_pi_reads_it_with_models_own_routes() {
        let anthropic = (
            "anthropic".to_owned(),
            None,
            "http://127.0.0.1:18621".to_owned(),
        );
        let (routes, problems) = routes_of(include_str!("../fixtures/pi/models-commented.json"));
        assert_eq!(problems, Vec::<String>::new());
        assert_eq!(
            routes,
            [
                anthropic.clone(),
                (
                    "openai".to_owned(),
                    Some("gpt-5".to_owned()),
                    "https://gw.example.com/openai".to_owned()
                ),
            ]
        );
        let (routes, problems) = routes_of(include_str!("../fixtures/pi/models-bom.json"));
        assert_eq!((routes, problems), (vec![anthropic], vec![]));
    }

    /// A `models.json` that does not parse even as Pi reads it is reported with its line, never
    /// taken to route nothing.
    #[test]
    fn a_models_json_that_does_not_parse_is_unreadable_not_empty() {
        let (routes, problems) = routes_of(include_str!("../fixtures/pi/models-broken.json"));
        assert_eq!(routes, []);
        assert_eq!(problems, ["line 3, column 57: Expected comma"]);
        let (_, problems) = routes_of(r#"{"providers": ["anthropic"]}"#);
        assert_eq!(problems, ["`providers` is not an object"]);
        let (_, problems) = routes_of("[]");
        assert_eq!(problems, ["expected a JSON object"]);
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
