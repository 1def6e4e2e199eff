//! What a person reads when a model call failed. A failed reply stores the provider's raw
//! `<status> <body>` in `errorMessage` (`ModelClient::failed_reply`), because overflow detection
//! reads the provider's own wording there; shown as it is, that is a status and a JSON document.
//! [`reply_failure`] turns it into the provider's message on one line and, when the provider
//! refused the credentials, what to check (never the key).

use crate::error::{LlmError, Retried};
use crate::models::find_provider;

/// A failed reply as shown to a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyFailure {
    /// One line: `Provider `anthropic` returned HTTP 401: invalid x-api-key`.
    pub message: String,
    /// For a refused key (401, 403): what to check ([`credentials_hint`]).
    pub hint: Option<String>,
}

/// `error_message` of a failed reply from `provider`, as a person reads it. An HTTP error's
/// `<status> <body>` becomes the provider's own message (the JSON body's `message`, else the body
/// on one line), with the attempts when it was retried; any other text is already a sentence and
/// is kept.
pub fn reply_failure(provider: &str, error_message: &str) -> ReplyFailure {
    let (text, retried) = Retried::split_stored_line(error_message);
    let Some((status, body)) = http_status_and_body(text) else {
        return ReplyFailure {
            message: error_message.to_owned(),
            hint: refused_connection_hint(provider, text),
        };
    };
    let error = LlmError::Http {
        provider: provider.to_owned(),
        status,
        body: body.to_owned(),
        retry_after: None,
        retried,
    };
    ReplyFailure {
        message: error.to_string(),
        hint: matches!(status, 401 | 403).then(|| credentials_hint(provider)),
    }
}

/// What to check when nothing accepted the connection (sweep 9: `--model ollama/…` with no server
/// running retried for 14 s and said only "Connection refused").
fn refused_connection_hint(provider: &str, text: &str) -> Option<String> {
    text.to_ascii_lowercase().contains("connection refused").then(|| {
        format!(
            "nothing accepted the connection: if `{provider}` is a server on this machine (Ollama: \
             `ollama serve`; LM Studio, vLLM, llama.cpp), start it; `llm.baseUrl` (or \
             `llm.providers.{provider}.baseUrl`) names the address requests go to, and a proxy \
             (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` or `httpProxy`), when one is set, is what \
             they connect to first"
        )
    })
}

/// What to check when `provider` refuses its credentials: its key variable (and `llm.apiKey`,
/// which counts for the provider the settings name), or for a provider of one's own `llm.apiKey`
/// and `llm.headers`; and its `llm.providers` entry, which routes it when the settings hold one
/// (QA 2026-12-07: the hint named only `llm.apiKey` for a key set there).
pub fn credentials_hint(provider: &str) -> String {
    match find_provider(provider).and_then(|info| info.key_env) {
        Some(variable) => format!(
            "the provider refused the credentials: check `{variable}`, the key `ctxkit login` saved for `{provider}`, `llm.providers.{provider}.apiKey`, or `llm.apiKey` when `defaultModel` is a model of `{provider}`"
        ),
        None => format!(
            "the provider refused the credentials: check `llm.providers.{provider}.apiKey` and `.headers` when the settings route `{provider}` there, else `llm.apiKey` and the auth headers in `llm.headers`"
        ),
    }
}

/// The status and body of the text `ModelClient::failed_reply` writes for an HTTP error:
/// `401 {"error": …}`, or `400 status code (no body)`.
fn http_status_and_body(text: &str) -> Option<(u16, &str)> {
    let (code, body) = text.split_once(' ')?;
    if code.len() != 3 || !code.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let status = code.parse::<u16>().ok().filter(|status| *status >= 400)?;
    Some((
        status,
        body.strip_prefix("status code (no body)").unwrap_or(body),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_connection_says_to_start_the_server() {
        let failure = reply_failure(
            "ollama",
            "error sending request for url (http://127.0.0.1:11434/v1/chat/completions): client \
             error (Connect): tcp connect error: Connection refused (os error 111)",
        );
        let hint = failure.hint.unwrap();
        assert!(
            hint.contains("`ollama serve`") && hint.contains("`llm.baseUrl`"),
            "{hint}"
        );
        assert_eq!(reply_failure("openai", "timed out").hint, None);
    }

    #[test]
    fn an_http_error_shows_the_providers_message_and_what_to_check() {
        let body = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
        let failure = reply_failure("anthropic", &format!("401 {body}"));
        assert_eq!(
            failure.message,
            "Provider `anthropic` returned HTTP 401: invalid x-api-key"
        );
        assert_eq!(
            failure.hint.as_deref(),
            Some(
                "the provider refused the credentials: check `ANTHROPIC_API_KEY`, the key `ctxkit login` saved for `anthropic`, `llm.providers.anthropic.apiKey`, or `llm.apiKey` when `defaultModel` is a model of `anthropic`"
            )
        );
        let own = reply_failure("myco", "403 Forbidden");
        assert_eq!(own.message, "Provider `myco` returned HTTP 403: Forbidden");
        let hint = own.hint.unwrap();
        assert!(
            hint.contains("`llm.providers.myco.apiKey`") && hint.contains("`llm.headers`"),
            "{hint}"
        );
    }

    #[test]
    fn other_statuses_have_no_hint_and_other_texts_stay() {
        let busy = reply_failure(
            "openai",
            r#"500 {"error": {"message": "The server had an error"}}"#,
        );
        assert_eq!(
            busy.message,
            "Provider `openai` returned HTTP 500: The server had an error"
        );
        assert_eq!(busy.hint, None);
        let empty = reply_failure("cerebras", "400 status code (no body)");
        assert_eq!(
            empty.message,
            "Provider `cerebras` returned HTTP 400: (no body)"
        );
        let sentence = "Request to provider `vllm` failed: connection refused";
        assert_eq!(reply_failure("vllm", sentence).message, sentence);
        assert_eq!(
            reply_failure("x", "200 tokens left").message,
            "200 tokens left"
        );
    }

    #[test]
    fn a_retried_error_reads_with_its_attempts_and_a_look_alike_line_stays() {
        let retried = crate::error::Retried {
            retries: 3,
            over: std::time::Duration::from_millis(14_240),
        };
        let line = retried.stored_line().unwrap();
        assert_eq!(line, "(ctxkit: tried 4 times over 14.2 s)");
        let stored = format!(
            r#"429 {{"error": {{"message": "Rate limit reached"}}}}{}{line}"#,
            "\n"
        );
        assert_eq!(
            reply_failure("openai", &stored).message,
            "Provider `openai` returned HTTP 429: Rate limit reached; tried 4 times over 14.2 s"
        );
        assert_eq!(crate::error::Retried::NONE.stored_line(), None);
        // Only an HTTP error's text is read as one; any other keeps every line.
        let sentence = format!("Something else{}{line}", "\n");
        assert_eq!(reply_failure("vllm", &sentence).message, sentence);
        let odd = "503 busy\n(ctxkit: tried many times over 1 s)";
        assert_eq!(
            reply_failure("x", odd).message,
            "Provider `x` returned HTTP 503: busy (ctxkit: tried many times over 1 s)"
        );
    }
}
