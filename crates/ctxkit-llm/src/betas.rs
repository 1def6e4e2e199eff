//! Betas an endpoint refused. Anthropic (and gateways in front of it) answer a request carrying
//! an `anthropic-beta` value they do not know with 400 `Unexpected value(s) `…` for the
//! `anthropic-beta` header`. The refused values are remembered per endpoint for the life of the
//! process: no later request to that endpoint carries them, and the user is told once, with the
//! setting that turns the feature off.

use std::collections::{BTreeSet, HashMap};
use std::sync::{LazyLock, Mutex};

/// The settings that turn off the feature behind each of ctxkit's own betas.
const FEATURE_SETTINGS: &[(&str, &str)] = &[
    (
        crate::wire::anthropic_threads::BETA,
        "`llm.anthropic.supportsMessageThreads: false`",
    ),
    (
        crate::wire::anthropic_compaction::ON_DEMAND_BETA,
        "`compaction.provider` set to anything but `on-demand`",
    ),
];

impl crate::client::ModelClient {
    /// Whether `error` refuses betas of the request's `headers`: they are remembered for the
    /// endpoint of `url` (and said once).
    pub(crate) fn remember_refused_betas(
        &self,
        error: &crate::error::LlmError,
        url: &str,
        headers: &reqwest::header::HeaderMap,
    ) -> bool {
        let crate::error::LlmError::Http { status, body, .. } = error else {
            return false;
        };
        let sent = headers
            .get("anthropic-beta")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        let refused = refused_in(*status, body, sent);
        if refused.is_empty() {
            return false;
        }
        remember(url, &refused);
        true
    }
}

/// The setting that turns off the feature behind `beta`.
pub(crate) fn feature_setting(beta: &str) -> &'static str {
    FEATURE_SETTINGS
        .iter()
        .find(|(name, _)| *name == beta)
        .map_or(
            "removing it from the configured `anthropic-beta` header",
            |(_, setting)| setting,
        )
}

/// Refused betas by endpoint (the request URL without its query).
static REFUSED: LazyLock<Mutex<HashMap<String, BTreeSet<String>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// What the user has not been told yet: one line per newly refused beta and endpoint.
static NOTICES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The lines about refused betas not shown yet, oldest first; each is returned once. A surface
/// with a screen shows them (the chat, between its events); the log has them too.
pub fn take_notices() -> Vec<String> {
    NOTICES
        .lock()
        .map(|mut notices| std::mem::take(&mut *notices))
        .unwrap_or_default()
}

fn endpoint(url: &str) -> &str {
    url.split('?').next().unwrap_or(url)
}

/// The betas of the header value `sent` that a 400 `body` refuses: those it names, or all of them
/// when it refuses the header without naming a value ctxkit sent. Empty when `body` is not a
/// refusal of the `anthropic-beta` header.
pub(crate) fn refused_in(status: u16, body: &str, sent: &str) -> Vec<String> {
    let lower = body.to_ascii_lowercase();
    if status != 400 || !lower.contains("anthropic-beta") || !lower.contains("unexpected value") {
        return Vec::new();
    }
    let sent: Vec<&str> = sent
        .split(',')
        .map(str::trim)
        .filter(|beta| !beta.is_empty())
        .collect();
    let named: Vec<String> = sent
        .iter()
        .filter(|beta| body.contains(**beta))
        .map(|beta| (*beta).to_owned())
        .collect();
    if named.is_empty() {
        sent.into_iter().map(str::to_owned).collect()
    } else {
        named
    }
}

/// Remembers that the endpoint of `url` refused `betas`; says so once per beta and endpoint.
pub(crate) fn remember(url: &str, betas: &[String]) {
    let Ok(mut refused) = REFUSED.lock() else {
        return;
    };
    let known = refused.entry(endpoint(url).to_owned()).or_default();
    for beta in betas {
        if known.insert(beta.clone()) {
            let setting = feature_setting(beta);
            // A base URL's `user:password@` stays out of the screen and the log.
            let notice = format!(
                "The endpoint `{}` does not take the `{beta}` beta; requests to it go without it from now on (turn the feature off with {setting})",
                ctxkit_secrets::redact_credentials(endpoint(url))
            );
            tracing::warn!("{notice}");
            if let Ok(mut notices) = NOTICES.lock() {
                notices.push(notice);
            }
        }
    }
}

/// Whether the endpoint of `url` refused `beta` earlier in this process.
pub(crate) fn is_refused(url: &str, beta: &str) -> bool {
    REFUSED
        .lock()
        .ok()
        .and_then(|refused| refused.get(endpoint(url)).map(|set| set.contains(beta)))
        .unwrap_or(false)
}

/// `headers` without the betas the endpoint of `url` refused (the `anthropic-beta` header left
/// out when none remains).
pub(crate) fn strip_refused(url: &str, headers: &mut Vec<(String, String)>) {
    let refused = match REFUSED.lock() {
        Ok(refused) => match refused.get(endpoint(url)) {
            Some(set) if !set.is_empty() => set.clone(),
            Some(_) | None => return,
        },
        Err(_) => return,
    };
    strip(headers, &refused);
}

/// `headers` with the `anthropic-beta` values in `betas` removed.
pub(crate) fn strip(headers: &mut Vec<(String, String)>, betas: &BTreeSet<String>) {
    headers.retain_mut(|(name, value)| {
        if !name.eq_ignore_ascii_case("anthropic-beta") {
            return true;
        }
        let kept: Vec<&str> = value
            .split(',')
            .map(str::trim)
            .filter(|beta| !beta.is_empty() && !betas.contains(*beta))
            .collect();
        *value = kept.join(",");
        !value.is_empty()
    });
}

/// The `anthropic-beta` value among `headers`, if any.
pub(crate) fn header_value(headers: &[(String, String)]) -> Option<&str> {
    headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("anthropic-beta"))
        .map(|(_, value)| value.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The notices naming `marker`, taken; the others stay for the tests that run beside this
    /// one (the notices are one list for the process).
    fn take_notices_naming(marker: &str) -> Vec<String> {
        let Ok(mut notices) = NOTICES.lock() else {
            return Vec::new();
        };
        let (taken, kept) = std::mem::take(&mut *notices)
            .into_iter()
            .partition(|notice: &String| notice.contains(marker));
        *notices = kept;
        taken
    }

    const REFUSAL: &str = r#"{"type":"error","error":{"type":"invalid_request_error","message":"Unexpected value(s) `message-threads-2026-08-12` for the `anthropic-beta` header. Please consult our documentation at docs.anthropic.com or try again without the header."}}"#;

    #[test]
    fn a_refusal_names_the_betas_it_refuses() {
        let sent = "context-1m-2025-08-07,message-threads-2026-08-12";
        assert_eq!(
            refused_in(400, REFUSAL, sent),
            vec!["message-threads-2026-08-12".to_owned()]
        );
        assert!(refused_in(400, "prompt is too long", sent).is_empty());
        assert!(refused_in(500, REFUSAL, sent).is_empty());
        // A refusal naming nothing that was sent refuses everything sent.
        let vague = "Unexpected value(s) for the anthropic-beta header";
        assert_eq!(refused_in(400, vague, "a-2026-01-01").len(), 1);
    }

    #[test]
    fn a_notice_never_shows_the_base_urls_password() {
        remember(
            "https://alice:hunter2hunter2@gw.example/no-password/v1/messages",
            &["compact-2026-09-04".to_owned()],
        );
        let told = take_notices_naming("/no-password/");
        assert_eq!(told.len(), 1, "{told:?}");
        assert!(!told[0].contains("hunter2"), "{told:?}");
    }

    #[test]
    fn a_refusal_is_told_once_with_its_setting() {
        let url = "http://127.0.0.1:9/told-once/v1/messages";
        remember(url, &["compact-2026-09-04".to_owned()]);
        remember(url, &["compact-2026-09-04".to_owned()]);
        let told = take_notices_naming("/told-once/");
        assert_eq!(told.len(), 1, "{told:?}");
        assert!(told[0].contains("compaction.provider"), "{told:?}");
        assert!(take_notices_naming("/told-once/").is_empty());
    }

    #[test]
    fn refused_betas_are_left_out_for_that_endpoint_only() {
        let url = "http://127.0.0.1:9/refusing/v1/messages";
        remember(url, &["message-threads-2026-08-12".to_owned()]);
        assert!(is_refused(url, "message-threads-2026-08-12"));
        assert!(!is_refused(
            "http://127.0.0.1:9/other/v1/messages",
            "message-threads-2026-08-12"
        ));
        let mut headers = vec![
            ("x-api-key".to_owned(), "k".to_owned()),
            (
                "anthropic-beta".to_owned(),
                "message-threads-2026-08-12".to_owned(),
            ),
        ];
        strip_refused(url, &mut headers);
        assert_eq!(headers.len(), 1);
        let mut headers = vec![(
            "anthropic-beta".to_owned(),
            "context-1m-2025-08-07, message-threads-2026-08-12".to_owned(),
        )];
        strip_refused(url, &mut headers);
        assert_eq!(header_value(&headers), Some("context-1m-2025-08-07"));
    }
}
