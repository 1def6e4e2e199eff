//! `ctxkit login` and `ctxkit logout` (and the chat's `/login`, `/logout`): a built-in provider's
//! API key saved in `<home>/auth.json` (Pi's file and format, private to the user), used by every
//! command in place of the provider's environment variable, as Pi does. The key is typed without
//! echo on a terminal, or read from standard input's first line when it is not one (a script's
//! `printf %s "$KEY" | ctxkit login anthropic`). It never reaches a session, a log or a tool result.

use std::io::{BufRead as _, IsTerminal as _, Write};
use std::path::Path;

use anyhow::Result;
use ctxkit_llm::PROVIDERS;

use crate::Outcome;
use crate::usage::UsageError;

/// The built-in providers that take a key: their names and variables, in the table's order.
pub fn keyed_providers() -> Vec<(&'static str, &'static str)> {
    PROVIDERS
        .iter()
        .filter_map(|provider| Some((provider.name, provider.key_env?)))
        .collect()
}

/// The provider `name` names (any case), or a usage error listing those that take a key.
pub fn provider_named(name: &str) -> Result<(&'static str, &'static str)> {
    let wanted = name.trim().to_lowercase();
    keyed_providers()
        .into_iter()
        .find(|(provider, _)| *provider == wanted)
        .ok_or_else(|| {
            // A key pasted where the provider goes is not repeated on the screen.
            let shown = match name.trim() {
                short if short.chars().count() <= 24 => format!("`{short}`"),
                _ => "that".to_owned(),
            };
            UsageError {
                message: format!("{shown} is not a provider ctxkit saves a key for"),
                hint: format!(
                    "name one of {}; a provider of your own takes its key from `llm.apiKey`",
                    provider_list()
                ),
            }
            .into()
        })
}

/// The line that lists the providers before asking for one.
pub fn providers_line() -> String {
    let names: Vec<&str> = keyed_providers().iter().map(|(name, _)| *name).collect();
    format!("Providers whose key ctxkit saves: {}", names.join(", "))
}

/// The question a key is typed after.
pub fn key_prompt(name: &str) -> String {
    format!("API key of `{name}` (typed without echo; Ctrl-C cancels): ")
}

/// The name a provider's entry is saved under: a built-in provider's own name (any case given),
/// else `name` as given (another provider Pi saved).
pub fn stored_name(name: &str) -> &str {
    let name = name.trim();
    provider_named(name).map_or(name, |(builtin, _)| builtin)
}

fn provider_list() -> String {
    keyed_providers()
        .iter()
        .map(|(name, _)| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Saves `key` for `provider` and says so in one line, with what else supplies a key for it.
pub fn save(credentials: &Path, provider: (&str, &str), key: &str) -> Result<String> {
    let (name, variable) = provider;
    let key = key.trim();
    if key.is_empty() {
        return Err(UsageError {
            message: "no key was given; nothing was saved".to_owned(),
            hint: format!("paste the key of `{name}` when asked, then press Enter"),
        }
        .into());
    }
    if key
        .chars()
        .any(|character| character.is_control() || character.is_whitespace())
    {
        return Err(UsageError {
            message: "the key holds a space or a control character; nothing was saved".to_owned(),
            hint: format!("paste the key of `{name}` alone, on one line"),
        }
        .into());
    }
    ctxkit_settings::save_key(credentials, name, key)?;
    let mut said = format!(
        "Saved the key of `{name}` in `{}` (readable by you only); it is used in place of `{variable}`.",
        credentials.display()
    );
    if ctxkit_secrets::environment_variable(variable).is_some_and(|value| !value.trim().is_empty())
    {
        said.push_str(&format!(
            " `{variable}` is set too: the saved key wins, as in Pi (`ctxkit logout {name}` goes back to it)."
        ));
    }
    Ok(said)
}

/// Removes the saved entry of provider `name` (a built-in provider in any case, or any name the
/// file holds, such as another provider Pi saved) and says what happened in one line.
pub fn remove(credentials: &Path, name: &str) -> Result<String> {
    let builtin = provider_named(name).ok();
    let stored_name = stored_name(name);
    if !ctxkit_settings::remove_key(credentials, stored_name)? {
        return Ok(format!(
            "No key of `{stored_name}` was saved; nothing changed."
        ));
    }
    Ok(match builtin {
        Some((_, variable)) => format!(
            "Removed the saved key of `{stored_name}`; `{variable}` and `llm.apiKey` are unchanged."
        ),
        None => format!("Removed the saved entry of `{stored_name}`."),
    })
}

/// The providers with a saved key, for a `logout` that names none.
pub fn saved_providers(credentials: &Path) -> Result<Vec<String>> {
    Ok(ctxkit_settings::saved_keys(credentials)?
        .keys
        .into_keys()
        .collect())
}

/// Reads a key: typed without echo on a terminal (`None` when the user cancels with Ctrl-C or
/// Ctrl-D), else standard input's first line.
pub fn read_key(name: &str) -> Result<Option<String>> {
    if std::io::stdin().is_terminal() {
        return match rpassword::prompt_password(key_prompt(name)) {
            Ok(key) => Ok(Some(key)),
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::Interrupted | std::io::ErrorKind::UnexpectedEof
                ) =>
            {
                Ok(None)
            }
            Err(error) => Err(error.into()),
        };
    }
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(Some(line))
}

/// A chat started on a terminal with no model configured and no key anywhere: offers to save a
/// key as `ctxkit login` does, as Pi's first run offers `/login`. Whether one was saved (the
/// chat then starts on that provider's default model); `false` when the input or output is not
/// a terminal, or the user typed no provider.
pub fn offer_first_key(environment: &ctxkit_settings::Environment) -> Result<bool> {
    if !std::io::stdout().is_terminal() {
        return Ok(false);
    }
    let mut out = std::io::stdout();
    writeln!(
        out,
        "No model is configured and no provider's key is set. Save a key now, as `ctxkit login` \
         does (empty to leave)?"
    )?;
    let provider = loop {
        let Some(name) = ask_provider(&mut out)? else {
            return Ok(false);
        };
        match provider_named(&name) {
            Ok(provider) => break provider,
            Err(error) => writeln!(out, "{error}")?,
        }
    };
    let Some(key) = read_key(provider.0)? else {
        writeln!(out, "Cancelled; nothing was saved.")?;
        return Ok(false);
    };
    let credentials = ctxkit_settings::credentials_path(environment);
    writeln!(out, "{}", save(&credentials, provider, &key)?)?;
    Ok(true)
}

/// An interactive chat whose model's provider has no key: offers to save one as `ctxkit login
/// PROVIDER` does (Pi's interactive start says to `/login`). Whether one was saved; `false` for a
/// provider ctxkit saves no key for, off a terminal, or when the user leaves (an empty key,
/// Ctrl-C or Ctrl-D): the chat then stops with the missing key's error, as before.
pub fn offer_key_of(environment: &ctxkit_settings::Environment, name: &str) -> Result<bool> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    let Ok(provider) = provider_named(name) else {
        return Ok(false);
    };
    let mut out = std::io::stdout();
    writeln!(
        out,
        "No API key for `{}`, the provider of the model to use. Save one now, as `ctxkit login {}` \
         does (empty to leave)?",
        provider.0, provider.0
    )?;
    let Some(key) = read_key(provider.0)? else {
        writeln!(out, "Cancelled; nothing was saved.")?;
        return Ok(false);
    };
    if key.trim().is_empty() {
        return Ok(false);
    }
    let credentials = ctxkit_settings::credentials_path(environment);
    writeln!(out, "{}", save(&credentials, provider, &key)?)?;
    Ok(true)
}

/// On a terminal, the provider typed after the list of those that take a key (`None` when the
/// input is not a terminal, or nothing was typed).
fn ask_provider(out: &mut dyn Write) -> Result<Option<String>> {
    if !std::io::stdin().is_terminal() {
        return Ok(None);
    }
    writeln!(out, "{}", providers_line())?;
    write!(out, "Provider (empty to leave): ")?;
    out.flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let name = line.trim();
    Ok((!name.is_empty()).then(|| name.to_owned()))
}

/// `ctxkit login [PROVIDER]`.
pub fn login(
    environment: &ctxkit_settings::Environment,
    provider: Option<String>,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let name = match provider {
        Some(name) => name,
        None => match ask_provider(out)? {
            Some(name) => name,
            None => {
                return Err(UsageError {
                    message: "name the provider whose key to save".to_owned(),
                    hint: format!("`ctxkit login anthropic`; providers: {}", provider_list()),
                }
                .into());
            }
        },
    };
    let provider = provider_named(&name)?;
    let Some(key) = read_key(provider.0)? else {
        writeln!(out, "Cancelled; nothing was saved.")?;
        return Ok(Outcome::Success);
    };
    let credentials = ctxkit_settings::credentials_path(environment);
    writeln!(out, "{}", save(&credentials, provider, &key)?)?;
    Ok(Outcome::Success)
}

/// `ctxkit logout [PROVIDER]`.
pub fn logout(
    environment: &ctxkit_settings::Environment,
    provider: Option<String>,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let credentials = ctxkit_settings::credentials_path(environment);
    let Some(name) = provider.as_deref() else {
        let saved = saved_providers(&credentials)?;
        let hint = match saved.first() {
            Some(first) => format!(
                "keys are saved for {}: `ctxkit logout {first}`",
                saved.join(", ")
            ),
            None => "no key is saved; environment variables and `llm.apiKey` are not ctxkit login's to remove".to_owned(),
        };
        return Err(UsageError {
            message: "name the provider whose saved key to remove".to_owned(),
            hint,
        }
        .into());
    };
    writeln!(out, "{}", remove(&credentials, name)?)?;
    Ok(Outcome::Success)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn a_key_with_a_space_or_a_control_character_is_refused_and_nothing_is_written() {
        let home = tempfile::tempdir().unwrap();
        let credentials = home.path().join("auth.json");
        let provider = provider_named("openai").unwrap();
        for key in ["sk-one two", "sk-one\rX-Injected: 1", "sk-\u{7}bell"] {
            let error = save(&credentials, provider, key).unwrap_err();
            assert!(error.to_string().contains("nothing was saved"), "{error}");
        }
        assert!(!credentials.exists());
        // Surrounding white space (a pasted line's end) is not part of the key.
        save(&credentials, provider, "  sk-good\n").unwrap();
        let saved = ctxkit_settings::saved_keys(&credentials).unwrap();
        assert_eq!(saved.keys["openai"], "sk-good");
    }

    #[test]
    fn providers_are_named_in_any_case_and_others_are_refused_with_the_list() {
        assert_eq!(provider_named(" Anthropic ").unwrap().0, "anthropic");
        let pasted = provider_named("sk-ant-api03-pasted-where-the-provider-goes").unwrap_err();
        assert!(!pasted.to_string().contains("sk-ant"), "{pasted}");
        let error = provider_named("myco").unwrap_err();
        let usage = error.downcast_ref::<UsageError>().unwrap();
        assert!(usage.hint.contains("`openai`"), "{}", usage.hint);
    }
}
