//! `--model`: the model the chat starts on, named as Pi 1.6.0's `--model` names it. The text is a
//! known model's `provider/id` or id (case aside), else a part of a known id (the newest alias
//! among the matches, as Pi's fuzzy match), each with an optional `:level` suffix that sets the
//! starting thinking level (the suffix read as `--models` reads it, [`super::model_scope`]). Text
//! no known model matches is kept as a custom id (the level suffix taken off): its provider is the
//! one it names, else the default provider. Pi refuses a bare unknown id; ctxkit keeps it, as an
//! id the table lacks may be one the provider takes, and the chat warns with the nearest known
//! models (`Chat::warn_of_a_near_miss`).

use ctxkit_llm::{ModelLimits, ModelTable};

use super::model_scope::split_level;

/// What `--model` named: the model's spec (`provider/id` when known, else the text as typed
/// without its level suffix) and the thinking level its suffix asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FlagModel {
    pub spec: String,
    pub thinking: Option<String>,
}

/// Resolves `--model`'s `text` among `table`'s models; `usable` says whether a provider has a key
/// (it settles a name several providers serve). `Err`: the text names models of several
/// providers alike, with the message to show.
pub(super) fn resolve_model_flag(
    text: &str,
    table: &ModelTable,
    usable: &dyn Fn(&str) -> bool,
) -> Result<FlagModel, String> {
    let text = text.trim();
    let models: Vec<&ModelLimits> = table.iter().collect();
    if let Some(found) = matched(text, &models, usable)? {
        return Ok(FlagModel {
            spec: found,
            thinking: None,
        });
    }
    let (base, level) = split_level(text);
    if let Some(level) = level
        && let Some(found) = matched(base, &models, usable)?
    {
        return Ok(FlagModel {
            spec: found,
            thinking: Some(level.to_owned()),
        });
    }
    Ok(FlagModel {
        spec: base.to_owned(),
        thinking: level.map(str::to_owned),
    })
}

/// The known model `text` names exactly, else the best of those whose id holds it; `None`: none.
fn matched(
    text: &str,
    models: &[&ModelLimits],
    usable: &dyn Fn(&str) -> bool,
) -> Result<Option<String>, String> {
    if text.is_empty() {
        return Ok(None);
    }
    let lowered = text.to_lowercase();
    let named = provider_prefix(text, models);
    // `provider/id` exactly, else an id that is the whole text (a gateway's `openai/gpt-5`).
    let exact: Vec<&ModelLimits> = match &named {
        Some((provider, id)) => models
            .iter()
            .filter(|model| model.provider == *provider && model.id.to_lowercase() == *id)
            .copied()
            .collect(),
        None => Vec::new(),
    };
    let exact = if exact.is_empty() {
        models
            .iter()
            .filter(|model| model.id.to_lowercase() == lowered)
            .copied()
            .collect()
    } else {
        exact
    };
    if !exact.is_empty() {
        return chosen(text, &exact, usable).map(Some);
    }
    let holding: Vec<&ModelLimits> = match &named {
        Some((provider, id)) => models
            .iter()
            .filter(|model| model.provider == *provider && model.id.to_lowercase().contains(id))
            .copied()
            .collect(),
        None => models
            .iter()
            .filter(|model| model.id.to_lowercase().contains(&lowered))
            .copied()
            .collect(),
    };
    if holding.is_empty() {
        return Ok(None);
    }
    let pool = keyed_if_several_providers(&holding, usable);
    let Some(best) = newest_alias(&pool) else {
        return Ok(None);
    };
    let tied: Vec<&ModelLimits> = pool
        .iter()
        .filter(|model| model.id == best.id)
        .copied()
        .collect();
    chosen(text, &tied, usable).map(Some)
}

/// The known provider `text` starts with (`provider/…`, the longest such) and the rest, lowered.
fn provider_prefix(text: &str, models: &[&ModelLimits]) -> Option<(String, String)> {
    let (prefix, rest) = text.split_once('/')?;
    let provider = models
        .iter()
        .find(|model| model.provider.eq_ignore_ascii_case(prefix))?
        .provider
        .clone();
    (!rest.is_empty()).then(|| (provider, rest.to_lowercase()))
}

/// Of matches served by several providers, those whose provider has a key (all when none has).
fn keyed_if_several_providers<'a>(
    matches: &[&'a ModelLimits],
    usable: &dyn Fn(&str) -> bool,
) -> Vec<&'a ModelLimits> {
    let several = matches
        .iter()
        .any(|model| model.provider != matches[0].provider);
    let keyed: Vec<&ModelLimits> = matches
        .iter()
        .filter(|model| several && usable(&model.provider))
        .copied()
        .collect();
    if keyed.is_empty() {
        matches.to_vec()
    } else {
        keyed
    }
}

/// Pi's pick among partial matches: an alias (an id not ending in a `-YYYYMMDD` date, or ending
/// in `-latest`) over a dated id, then the greatest id.
fn newest_alias<'a>(matches: &[&'a ModelLimits]) -> Option<&'a ModelLimits> {
    let aliases: Vec<&ModelLimits> = matches
        .iter()
        .filter(|model| is_alias(&model.id))
        .copied()
        .collect();
    let pool = if aliases.is_empty() {
        matches
    } else {
        &aliases
    };
    pool.iter().max_by(|a, b| a.id.cmp(&b.id)).copied()
}

fn is_alias(id: &str) -> bool {
    let dated = id
        .rsplit_once('-')
        .is_some_and(|(_, tail)| tail.len() == 8 && tail.bytes().all(|byte| byte.is_ascii_digit()));
    id.ends_with("-latest") || !dated
}

/// The one model among `candidates` (all of one name): the only provider's, else the only one
/// with a key; else the text is ambiguous.
fn chosen(
    text: &str,
    candidates: &[&ModelLimits],
    usable: &dyn Fn(&str) -> bool,
) -> Result<String, String> {
    let spec = |model: &ModelLimits| format!("{}/{}", model.provider, model.id);
    let first = candidates[0];
    if candidates
        .iter()
        .all(|model| model.provider == first.provider)
    {
        return Ok(spec(first));
    }
    let keyed: Vec<&&ModelLimits> = candidates
        .iter()
        .filter(|model| usable(&model.provider))
        .collect();
    if let [only] = keyed.as_slice() {
        return Ok(spec(only));
    }
    let mut names: Vec<String> = candidates.iter().map(|model| spec(model)).collect();
    names.sort();
    Err(format!(
        "Model `{text}` is served by several providers: `{}`; name one as `provider/id`",
        names.join("`, `")
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    fn table(specs: &[&str]) -> ModelTable {
        let mut table = ModelTable::builtin();
        for spec in specs {
            let (provider, id) = spec.split_once('/').unwrap();
            table.insert(ModelLimits {
                provider: provider.to_owned(),
                id: id.to_owned(),
                context_window: 100_000,
                max_output: 1000,
                reasoning: true,
                images: false,
                adaptive_thinking: false,
                xhigh_effort: None,
                chat_compat: Default::default(),
            });
        }
        table
    }

    fn resolved(text: &str, keyed: &[&str]) -> Result<(String, Option<String>), String> {
        let table = table(&["ollama/llama3:8b", "local/shared", "other/shared"]);
        let usable = |provider: &str| keyed.contains(&provider);
        resolve_model_flag(text, &table, &usable).map(|model| (model.spec, model.thinking))
    }

    #[test]
    fn model_texts_resolve_as_pis_model_flag() {
        let cases: [(&str, &str, Option<&str>); 9] = [
            (
                "anthropic/claude-sonnet-4-5:high",
                "anthropic/claude-sonnet-4-5",
                Some("high"),
            ),
            ("Claude-Sonnet-4-5", "anthropic/claude-sonnet-4-5", None),
            (
                "claude-sonnet-4-5:max",
                "anthropic/claude-sonnet-4-5",
                Some("max"),
            ),
            // A part of an id: the greatest alias that holds it.
            ("haiku-4", "anthropic/claude-haiku-4-5", None),
            (
                "anthropic/opus-4-1:low",
                "anthropic/claude-opus-4-1",
                Some("low"),
            ),
            // A suffix that is no level is part of the id.
            ("ollama/llama3:8b", "ollama/llama3:8b", None),
            // Unknown: kept as typed, without a level suffix.
            (
                "anthropic/claude-nope-9:high",
                "anthropic/claude-nope-9",
                Some("high"),
            ),
            ("made-up-model", "made-up-model", None),
            ("made-up-model:bogus", "made-up-model:bogus", None),
        ];
        for (text, spec, level) in cases {
            assert_eq!(
                resolved(text, &["anthropic"]).unwrap(),
                (spec.to_owned(), level.map(str::to_owned)),
                "{text}"
            );
        }
    }

    #[test]
    fn a_name_of_several_providers_takes_the_keyed_one_else_is_refused() {
        assert_eq!(resolved("shared", &["other"]).unwrap().0, "other/shared");
        let refused = resolved("shared", &[]).unwrap_err();
        assert!(
            refused.contains("`local/shared`, `other/shared`"),
            "{refused}"
        );
    }

    #[test]
    fn a_dated_id_is_no_alias() {
        assert!(is_alias("claude-sonnet-4-5"));
        assert!(is_alias("claude-3-5-haiku-latest"));
        assert!(!is_alias("claude-sonnet-4-5-20250929"));
    }
}
