//! `ctxkit view`: the page served on loopback, following the session as an agent appends. Every
//! request must carry the random token printed with the URL and a loopback `Host` (a page from
//! another site cannot read the session, DNS rebinding included). The page polls a cheap version
//! (the file's size and modification time) and fetches the data again when it changes; contexts
//! are built on demand for the entry a person clicks.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::UNIX_EPOCH;

use bytes::Bytes;
use ctxkit_session::Session;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::TcpListener;

use crate::error::WebError;
use crate::model::{ContextPolicy, PageOptions, build_page_data, context_data};
use crate::page::{PageMode, content_security_policy, render_page, script_safe_json};

/// Opens the session again (a Pi/ctxkit file, or another agent's session imported anew).
pub type SessionLoader = Arc<dyn Fn() -> Result<Session, WebError> + Send + Sync>;

/// What `ctxkit view` serves.
#[derive(Clone)]
pub struct ViewConfig {
    /// The file whose changes the page follows.
    pub watched: PathBuf,
    pub loader: SessionLoader,
    pub options: PageOptions,
    /// The secret every request carries (`?token=`).
    pub token: String,
}

impl std::fmt::Debug for ViewConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ViewConfig")
            .field("watched", &self.watched)
            .finish_non_exhaustive()
    }
}

/// A new random token (122 random bits, hex).
pub fn new_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The page data of the last version read, by version.
#[derive(Default)]
struct Cache {
    version: String,
    data: Option<Arc<String>>,
}

struct State {
    config: ViewConfig,
    address: SocketAddr,
    cache: Mutex<Cache>,
}

/// The watched file's version: its size and modification time (changes on every append).
fn version_of(path: &PathBuf) -> String {
    match std::fs::metadata(path) {
        Ok(metadata) => {
            let modified = metadata
                .modified()
                .ok()
                .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
                .map(|since| since.as_nanos())
                .unwrap_or(0);
            format!("{}-{modified}", metadata.len())
        }
        Err(_) => "missing".to_owned(),
    }
}

/// Binds `address` (a loopback address; port 0 picks one) and returns where it listens with the
/// server's future, which runs until `shutdown` completes.
pub async fn serve_view(
    address: SocketAddr,
    config: ViewConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(SocketAddr, impl Future<Output = ()>), WebError> {
    let listener = TcpListener::bind(address)
        .await
        .map_err(|source| WebError::Serve {
            address: address.to_string(),
            source,
        })?;
    let bound = listener.local_addr().map_err(|source| WebError::Serve {
        address: address.to_string(),
        source,
    })?;
    let state = Arc::new(State {
        config,
        address: bound,
        cache: Mutex::new(Cache::default()),
    });
    let server = async move {
        tokio::pin!(shutdown);
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = &mut shutdown => break,
            };
            let Ok((stream, _)) = accepted else { continue };
            let state = Arc::clone(&state);
            tokio::spawn(async move {
                let service = service_fn(move |request| {
                    let state = Arc::clone(&state);
                    async move { Ok::<_, std::convert::Infallible>(respond(&state, request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    };
    Ok((bound, server))
}

/// Equal without an early exit (the token's comparison does not leak how much matched).
fn same_secret(given: &str, expected: &str) -> bool {
    given.len() == expected.len()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (left, right)| acc | (left ^ right))
            == 0
}

/// A query parameter, percent-decoded.
fn query_value(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (key == name).then(|| percent_decode(value))
    })
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut position = 0;
    while position < bytes.len() {
        let byte = bytes[position];
        let hex = text
            .get(position + 1..position + 3)
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (byte, hex) {
            (b'%', Some(value)) => {
                decoded.push(value);
                position += 3;
            }
            (b'+', _) => {
                decoded.push(b' ');
                position += 1;
            }
            _ => {
                decoded.push(byte);
                position += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

/// Whether the `Host` header names this server on loopback.
fn loopback_host(request: &Request<Incoming>, address: SocketAddr) -> bool {
    let Some(host) = request
        .headers()
        .get(header::HOST)
        .and_then(|host| host.to_str().ok())
    else {
        return false;
    };
    let port = address.port();
    [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ]
    .iter()
    .any(|allowed| allowed == host)
}

fn reply(
    status: StatusCode,
    content_type: &'static str,
    body: impl Into<Bytes>,
) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if let Ok(policy) = HeaderValue::from_str(&content_security_policy(PageMode::Live)) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    response
}

fn error_reply(status: StatusCode, message: &str) -> Response<Full<Bytes>> {
    reply(
        status,
        "application/json",
        json!({"error": message}).to_string(),
    )
}

async fn respond(state: &Arc<State>, request: Request<Incoming>) -> Response<Full<Bytes>> {
    if !loopback_host(&request, state.address) {
        return error_reply(StatusCode::FORBIDDEN, "not a loopback host");
    }
    let query = request.uri().query().unwrap_or("");
    let token_ok =
        query_value(query, "token").is_some_and(|token| same_secret(&token, &state.config.token));
    if !token_ok {
        return error_reply(StatusCode::FORBIDDEN, "missing or wrong token");
    }
    if request.method() != hyper::Method::GET {
        return error_reply(StatusCode::METHOD_NOT_ALLOWED, "only GET");
    }
    let path = request.uri().path().to_owned();
    let state = Arc::clone(state);
    let id = query_value(query, "id");
    let answer = tokio::task::spawn_blocking(move || route(&state, &path, id.as_deref())).await;
    answer.unwrap_or_else(|_| error_reply(StatusCode::INTERNAL_SERVER_ERROR, "the request failed"))
}

fn route(state: &State, path: &str, id: Option<&str>) -> Response<Full<Bytes>> {
    match path {
        "/" => match page_data(state) {
            Ok((_, data)) => match serde_json::from_str(&data) {
                Ok(value) => reply(
                    StatusCode::OK,
                    "text/html; charset=utf-8",
                    render_page(&value, PageMode::Live),
                ),
                Err(error) => error_reply(StatusCode::INTERNAL_SERVER_ERROR, &error.to_string()),
            },
            Err(error) => error_reply(StatusCode::INTERNAL_SERVER_ERROR, &error.to_string()),
        },
        "/api/version" => reply(
            StatusCode::OK,
            "application/json",
            json!({"version": version_of(&state.config.watched)}).to_string(),
        ),
        "/api/data" => match page_data(state) {
            Ok((_, data)) => reply(StatusCode::OK, "application/json", data.as_bytes().to_vec()),
            Err(error) => error_reply(StatusCode::INTERNAL_SERVER_ERROR, &error.to_string()),
        },
        "/api/context" => {
            let Some(id) = id else {
                return error_reply(StatusCode::BAD_REQUEST, "no `id`");
            };
            match (state.config.loader)()
                .and_then(|session| context_data(&session, id, &state.config.options))
            {
                Ok(context) => reply(
                    StatusCode::OK,
                    "application/json",
                    script_safe_json(&context),
                ),
                Err(WebError::UnknownEntry { id }) => {
                    error_reply(StatusCode::NOT_FOUND, &format!("no entry `{id}`"))
                }
                Err(error) => error_reply(StatusCode::INTERNAL_SERVER_ERROR, &error.to_string()),
            }
        }
        _ => error_reply(StatusCode::NOT_FOUND, "no such page"),
    }
}

/// The page data of the file as it is now (built again only when its version changed).
fn page_data(state: &State) -> Result<(String, Arc<String>), WebError> {
    let version = version_of(&state.config.watched);
    if let Ok(cache) = state.cache.lock()
        && cache.version == version
        && let Some(data) = &cache.data
    {
        return Ok((version, Arc::clone(data)));
    }
    let session = (state.config.loader)()?;
    let mut options = state.config.options.clone();
    options.contexts = ContextPolicy::OnDemand;
    let mut data = build_page_data(&session, &options)?;
    if let Some(object) = data.as_object_mut() {
        object.insert("live".to_owned(), json!({"version": version}));
    }
    let text = Arc::new(script_safe_json(&data));
    if let Ok(mut cache) = state.cache.lock() {
        cache.version = version.clone();
        cache.data = Some(Arc::clone(&text));
    }
    Ok((version, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole_and_queries_decode() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abd", "abc"));
        assert!(!same_secret("ab", "abc"));
        assert_eq!(
            query_value("a=1&id=x%2Fy+z&token=t", "id").as_deref(),
            Some("x/y z")
        );
        assert_eq!(query_value("tokenx=1", "token"), None);
    }
}
