//! `ctxkit view`: the page served on loopback, following the session as an agent appends. Every
//! request must carry the random token printed with the URL and a loopback `Host` (a page from
//! another site cannot read the session, DNS rebinding included). The page polls a cheap version
//! (the file's size and modification time) and fetches the data again when it changes; contexts
//! are built on demand for the entry a person clicks. Connections are accepted within
//! [`VIEW_CONNECTION_LIMIT`] and `ctxkit_http`'s header-read timeout.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::UNIX_EPOCH;

use bytes::Bytes;
use ctxkit_http::{Acceptor, ConnectionLimits};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::TcpListener;

use crate::error::WebError;
use crate::loader::SessionLoader;
use crate::model::{ContextPolicy, PageOptions, context_data_sharing};
use crate::page::{PageMode, content_security_policy, live_page, script_safe_json};
use crate::parsed::{ParsedMessages, SharedParsed};
use crate::stream::{ScriptSafe, write_page_data};

/// What `ctxkit view` serves.
#[derive(Clone)]
pub struct ViewConfig {
    /// The files whose changes the page follows: the session file, or a database and its
    /// write-ahead log for a session inside one (`opencode.db#<id>` names no file).
    pub watched: Vec<PathBuf>,
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
    data: Option<PageData>,
}

/// The data document of one version of the file, escaped for the page's script element, and the
/// page's title. Held once: the page and `/api/data` send it without copying it.
#[derive(Clone)]
struct PageData {
    title: String,
    data: Bytes,
}

/// Connections the view keeps open at once (a browser opens a few); one more is answered 503.
pub const VIEW_CONNECTION_LIMIT: usize = 64;

/// Most messages a context built on demand may hold: a longer one (the context at the end of a
/// session of a million messages never compacted) would take gigabytes to build, so the view says
/// how long it is and that `ctxkit context` prints it.
pub const MAX_VIEW_CONTEXT_MESSAGES: usize = 100_000;

/// Contexts the view builds at once; later requests wait their turn. Each build holds every message
/// of its context (shared with the builds of the same version running beside it): 16 clicks in a
/// row on a 65 MB transcript built 16 at once and took the view past a gigabyte.
pub const MAX_CONTEXT_BUILDS: usize = 2;

/// A response body sent as its chunks, in order (the page: the template's parts around the
/// shared data document).
struct Chunks(std::collections::VecDeque<Bytes>);

impl hyper::body::Body for Chunks {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        std::task::Poll::Ready(
            self.get_mut()
                .0
                .pop_front()
                .map(|chunk| Ok(hyper::body::Frame::data(chunk))),
        )
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_empty()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        let length = self.0.iter().map(|chunk| chunk.len() as u64).sum();
        hyper::body::SizeHint::with_exact(length)
    }
}

struct State {
    config: ViewConfig,
    address: SocketAddr,
    cache: Mutex<Cache>,
    /// Held while the data is built: one rebuild at a time (see [`page_data`]).
    rebuild: Mutex<()>,
    /// A permit per context being built ([`MAX_CONTEXT_BUILDS`]).
    context_builds: Arc<tokio::sync::Semaphore>,
    /// The messages the running builds parsed.
    parsed: SharedParsed,
    /// The page options of the last version a context was built for, with the values the session
    /// gives to secret names learned ([`PageOptions::for_session`]): read once per version, not
    /// once per context asked for.
    learned: Mutex<Option<(String, Arc<PageOptions>)>>,
}

/// The watched files' version: each one's size and modification time (changes on every append);
/// "missing" when none is there. The page polls it, and a loader keys what it imported by it
/// ([`crate::ImportCache`]).
pub fn watched_version(paths: &[PathBuf]) -> String {
    let versions: Vec<String> = paths.iter().map(|path| file_version(path)).collect();
    if versions.iter().all(|version| version == "missing") {
        return "missing".to_owned();
    }
    versions.join("+")
}

fn file_version(path: &std::path::Path) -> String {
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
        rebuild: Mutex::new(()),
        context_builds: Arc::new(tokio::sync::Semaphore::new(MAX_CONTEXT_BUILDS)),
        parsed: SharedParsed::default(),
        learned: Mutex::default(),
    });
    let limits = ConnectionLimits::new(VIEW_CONNECTION_LIMIT);
    Ok((
        bound,
        serve_within(Acceptor::new(listener, limits), state, shutdown),
    ))
}

/// Serves the connections `acceptor` hands out until `shutdown` completes.
async fn serve_within(
    acceptor: Acceptor,
    state: Arc<State>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = acceptor.accept() => accepted,
            () = &mut shutdown => break,
        };
        let state = Arc::clone(&state);
        let builder = acceptor.limits().http1();
        tokio::spawn(async move {
            let _slot = accepted.slot;
            let service = service_fn(move |request| {
                let state = Arc::clone(&state);
                async move { Ok::<_, std::convert::Infallible>(respond(&state, request).await) }
            });
            let _ = builder
                .serve_connection(TokioIo::new(accepted.stream), service)
                .await;
        });
    }
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

/// Whether `host`, the request's `Host` header, names this server on loopback.
fn loopback_host(host: Option<&str>, address: SocketAddr) -> bool {
    let Some(host) = host else {
        return false;
    };
    let port = address.port();
    // A browser leaves the scheme's default port out of `Host` (`view --port 80`).
    let (name, given_port) = match host.rsplit_once(':') {
        Some((name, given)) if !given.contains(']') => (name, given.parse::<u16>().ok()),
        Some(_) | None => (host, (port == 80).then_some(80)),
    };
    given_port == Some(port) && ["127.0.0.1", "localhost", "[::1]"].contains(&name)
}

fn reply(
    status: StatusCode,
    content_type: &'static str,
    body: impl Into<Bytes>,
) -> Response<Chunks> {
    reply_chunks(status, content_type, vec![body.into()])
}

fn reply_chunks(
    status: StatusCode,
    content_type: &'static str,
    chunks: Vec<Bytes>,
) -> Response<Chunks> {
    let mut response = Response::new(Chunks(chunks.into()));
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

fn error_reply(status: StatusCode, message: &str) -> Response<Chunks> {
    reply(
        status,
        "application/json",
        json!({"error": message}).to_string(),
    )
}

/// The page when the session cannot be read (the file moved away for a moment, a damaged first
/// line): the reason, in a page that asks again every two seconds, as the live page does once
/// it has loaded.
fn error_page(message: &str) -> Response<Chunks> {
    let page = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"refresh\" content=\"2\"><title>ctxkit view</title></head>\
         <body><p>The session cannot be shown: {}</p><p>This page tries again every two \
         seconds.</p></body></html>\n",
        crate::page::escape_html(message)
    );
    reply(
        StatusCode::SERVICE_UNAVAILABLE,
        "text/html; charset=utf-8",
        page,
    )
}

async fn respond(state: &Arc<State>, request: Request<Incoming>) -> Response<Chunks> {
    // One `Host` only: with two, which one a proxy or a cache on the way read is anyone's guess.
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let host = hosts.next().and_then(|host| host.to_str().ok());
    if hosts.next().is_some() {
        return error_reply(StatusCode::BAD_REQUEST, "more than one Host header");
    }
    if !loopback_host(host, state.address) {
        return error_reply(StatusCode::FORBIDDEN, "not a loopback host");
    }
    // A target with its own authority (`GET http://evil.example/… HTTP/1.1`) names another host
    // than `Host` may; a browser sends a path only (QA: it was answered).
    if request.uri().authority().is_some() {
        return error_reply(StatusCode::BAD_REQUEST, "a request target with a host");
    }
    let query = request.uri().query().unwrap_or("");
    let token_ok =
        query_value(query, "token").is_some_and(|token| same_secret(&token, &state.config.token));
    if !token_ok {
        return error_reply(StatusCode::FORBIDDEN, "missing or wrong token");
    }
    // HEAD is answered as GET: hyper sends the headers of the answer and leaves its body out.
    if request.method() != hyper::Method::GET && request.method() != hyper::Method::HEAD {
        return error_reply(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD");
    }
    let path = request.uri().path().to_owned();
    let id = query_value(query, "id");
    // A context waits for a permit before it is built (the semaphore is never closed); a request
    // given up while it waits is dropped from the queue with this future. The permit goes with the
    // build, so a build whose requester left still counts until it stops.
    let permit = match path.as_str() {
        "/api/context" => Arc::clone(&state.context_builds).acquire_owned().await.ok(),
        _ => None,
    };
    let requester = Requester::default();
    let left = Arc::clone(&requester.left);
    let shared = Arc::clone(state);
    let answer = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        route(&shared, &path, id.as_deref(), &left)
    })
    .await;
    drop(requester);
    answer.unwrap_or_else(|_| error_reply(StatusCode::INTERNAL_SERVER_ERROR, "the request failed"))
}

/// Says, once dropped, that the request's answer is no longer awaited: hyper drops a request's
/// future when its client closes the connection (the page aborts the fetch of a context when
/// the reader moves on), and the build it started stops at its next step.
#[derive(Default)]
struct Requester {
    left: Arc<AtomicBool>,
}

impl Drop for Requester {
    fn drop(&mut self) {
        self.left.store(true, Ordering::SeqCst);
    }
}

fn route(state: &State, path: &str, id: Option<&str>, left: &AtomicBool) -> Response<Chunks> {
    match path {
        "/" => match page_data(state).and_then(|page| live_page(&page.title, &page.data)) {
            Ok(chunks) => reply_chunks(StatusCode::OK, "text/html; charset=utf-8", chunks),
            Err(error) => error_page(&error.to_string()),
        },
        "/api/version" => reply(
            StatusCode::OK,
            "application/json",
            json!({"version": watched_version(&state.config.watched)}).to_string(),
        ),
        "/api/data" => match page_data(state) {
            Ok(page) => reply(StatusCode::OK, "application/json", page.data),
            Err(error) => error_reply(StatusCode::INTERNAL_SERVER_ERROR, &error.to_string()),
        },
        "/api/context" => {
            let Some(id) = id else {
                return error_reply(StatusCode::BAD_REQUEST, "no `id`");
            };
            match context_at(state, id, left) {
                // Nobody reads this answer.
                Ok(None) => {
                    error_reply(StatusCode::SERVICE_UNAVAILABLE, "the request was given up")
                }
                Ok(Some(context)) => reply(
                    StatusCode::OK,
                    "application/json",
                    script_safe_json(&context),
                ),
                Err(WebError::UnknownEntry { id }) => {
                    error_reply(StatusCode::NOT_FOUND, &format!("no entry `{id}`"))
                }
                Err(WebError::ContextTooLong { id, messages }) => error_reply(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!(
                        "the context at {id} holds {messages} messages, more than the view builds \
                         ({MAX_VIEW_CONTEXT_MESSAGES}); `ctxkit context --leaf {id}` prints it"
                    ),
                ),
                Err(error) => error_reply(StatusCode::INTERNAL_SERVER_ERROR, &error.to_string()),
            }
        }
        _ => error_reply(StatusCode::NOT_FOUND, "no such page"),
    }
}

/// The context at entry `id` of the session as it is now. Builds of one version of the file share
/// the messages they parse ([`SharedParsed`]); a build that saw the file change while it opened it
/// shares nothing (its entries may not be the version's). `None` when the requester left before
/// the build read the context's messages (the session is read again for the next request anyway).
fn context_at(
    state: &State,
    id: &str,
    left: &AtomicBool,
) -> Result<Option<serde_json::Value>, WebError> {
    if left.load(Ordering::SeqCst) {
        return Ok(None);
    }
    let version = watched_version(&state.config.watched);
    let session = (state.config.loader)()?;
    if left.load(Ordering::SeqCst) {
        return Ok(None);
    }
    let unchanged = watched_version(&state.config.watched) == version;
    let parsed = if unchanged {
        state.parsed.for_version(&version)
    } else {
        Arc::new(ParsedMessages::default())
    };
    let options = learned_options(state, &version, unchanged, &session);
    context_data_sharing(&session, &parsed, id, &options, MAX_VIEW_CONTEXT_MESSAGES).map(Some)
}

/// The page options for `session`, the file's version `version` ([`State::learned`]); learned
/// again when the version changed or the file changed while it was opened (`unchanged` false).
fn learned_options(
    state: &State,
    version: &str,
    unchanged: bool,
    session: &ctxkit_session::Session,
) -> Arc<PageOptions> {
    let mut learned = state.learned.lock().unwrap_or_else(PoisonError::into_inner);
    if unchanged
        && let Some((known, options)) = learned.as_ref()
        && known == version
    {
        return Arc::clone(options);
    }
    let options = Arc::new(state.config.options.for_session(session));
    if unchanged {
        *learned = Some((version.to_owned(), Arc::clone(&options)));
    }
    options
}

/// The page data of the file as it is now (built again only when its version changed): the data
/// document is written an entry at a time into one buffer, escaped on the way, never held as a
/// tree of values.
fn page_data(state: &State) -> Result<PageData, WebError> {
    if let Some(page) = cached(state, &watched_version(&state.config.watched)) {
        return Ok(page);
    }
    // One rebuild at a time: a request that comes while one runs waits for it and takes its data
    // when the file has not changed since (on a session of 100,000 entries a rebuild took 8.6 s,
    // and every request that came meanwhile built the same data again, eight at once). The
    // version is read again once it is this request's turn.
    let _rebuilding = state.rebuild.lock().unwrap_or_else(PoisonError::into_inner);
    let version = watched_version(&state.config.watched);
    if let Some(page) = cached(state, &version) {
        return Ok(page);
    }
    // The last version's data is let go before the new one is built.
    if let Ok(mut cache) = state.cache.lock() {
        cache.data = None;
    }
    let session = (state.config.loader)()?;
    let mut options = state.config.options.clone();
    options.contexts = ContextPolicy::OnDemand;
    // The session's name as the file says now (`ctxkit name` renames it while the view runs).
    if let Some(name) = session.session_name() {
        options.title = name;
    }
    let title = options
        .renderer(session.entries().len())
        .short(&options.title);
    let mut safe = ScriptSafe::new(Vec::new());
    write_page_data(&session, &options, &mut safe)?;
    drop(session);
    let mut data = safe.finish().map_err(|source| WebError::Write { source })?;
    // The data document ends with its closing brace: the live version goes in before it.
    if data.last() == Some(&b'}') {
        data.pop();
        data.extend_from_slice(b",\"live\":");
        let live = script_safe_json(&json!({"version": version}));
        data.extend_from_slice(live.as_bytes());
        data.push(b'}');
    }
    let page = PageData {
        title,
        data: Bytes::from(data),
    };
    if let Ok(mut cache) = state.cache.lock() {
        cache.version = version;
        cache.data = Some(page.clone());
    }
    Ok(page)
}

/// The page data of `version`, when it is the one built last.
fn cached(state: &State, version: &str) -> Option<PageData> {
    let cache = state.cache.lock().ok()?;
    (cache.version == version).then(|| cache.data.clone())?
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::OpenedSession;
    use ctxkit_session::Session;

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

    /// A session of `replies` turns whose text needs escaping in a script element.
    fn session_file(dir: &std::path::Path, replies: usize) -> PathBuf {
        let mut text = String::from(
            r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp/p"}"#,
        );
        let mut parent = serde_json::Value::Null;
        for turn in 0..replies * 2 {
            let id = format!("{:08x}", turn + 1);
            let message = if turn % 2 == 0 {
                json!({"role": "user", "content": "a </script> & b \u{2028}", "timestamp": turn})
            } else {
                json!({"role": "assistant", "content": [{"type": "text", "text": "<b>ok</b>"}],
                       "stopReason": "stop", "timestamp": turn})
            };
            let entry = json!({"type": "message", "id": id, "parentId": parent,
                               "timestamp": "2026-01-01T00:00:00.000Z", "message": message});
            text.push('\n');
            text.push_str(&entry.to_string());
            parent = json!(id);
        }
        text.push('\n');
        let path = dir.join("s.jsonl");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn state(path: &std::path::Path) -> State {
        let watched = vec![path.to_owned()];
        let loaded = path.to_owned();
        let loader: SessionLoader =
            Arc::new(move || Ok(OpenedSession::new(Session::open(&loaded)?)));
        let options = PageOptions::new("a <title>", crate::Redactor::new(Vec::new(), &[]).unwrap());
        State {
            config: ViewConfig {
                watched,
                loader,
                options,
                token: "t".to_owned(),
            },
            address: "127.0.0.1:1".parse().unwrap(),
            cache: Mutex::new(Cache::default()),
            rebuild: Mutex::new(()),
            context_builds: Arc::new(tokio::sync::Semaphore::new(MAX_CONTEXT_BUILDS)),
            parsed: SharedParsed::default(),
            learned: Mutex::default(),
        }
    }

    /// Starts `state` on a new loopback port and returns the address.
    async fn serve_state(mut state: State) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        state.address = address;
        let limits = ConnectionLimits::new(VIEW_CONNECTION_LIMIT);
        tokio::spawn(serve_within(
            Acceptor::new(listener, limits),
            Arc::new(state),
            std::future::pending(),
        ));
        address
    }

    /// 16 clicks in a row on an imported 65 MB transcript built 16 contexts at once (the view
    /// went past a gigabyte): at most [`MAX_CONTEXT_BUILDS`] are built at once, and every
    /// request is answered.
    #[tokio::test]
    async fn contexts_are_built_a_few_at_a_time() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use tokio::io::AsyncWriteExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = session_file(dir.path(), 3);
        let mut state = state(&path);
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let (loaded, counted, highest) = (path.clone(), Arc::clone(&running), Arc::clone(&most));
        state.config.loader = Arc::new(move || {
            let now = counted.fetch_add(1, Ordering::SeqCst) + 1;
            highest.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(150));
            counted.fetch_sub(1, Ordering::SeqCst);
            Ok(OpenedSession::new(Session::open(&loaded)?))
        });
        let address = serve_state(state).await;
        let asks = (0..8).map(|_| async move {
            let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
            let request = format!(
                "GET /api/context?token=t&id=00000002 HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
            );
            stream.write_all(request.as_bytes()).await.unwrap();
            read_to_close(&mut stream).await
        });
        let tasks: Vec<_> = asks.map(tokio::spawn).collect();
        for task in tasks {
            let answer = task.await.unwrap();
            assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        }
        let most = most.load(Ordering::SeqCst);
        assert!(most <= MAX_CONTEXT_BUILDS, "{most} built at once");
    }

    /// The page gives up the fetch of a context when the reader moves on, and the build went on
    /// reading the whole session, holding one of the [`MAX_CONTEXT_BUILDS`] slots: a build whose
    /// requester left stops before it reads the context's messages, and its slot is free again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_build_whose_requester_left_stops() {
        use tokio::io::AsyncWriteExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = session_file(dir.path(), 3);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let mut state = state(&path);
        state.address = address;
        let (entered, loading) = std::sync::mpsc::channel::<()>();
        let (release, released) = std::sync::mpsc::channel::<()>();
        let (entered, released) = (Mutex::new(entered), Mutex::new(released));
        let loaded = path.clone();
        state.config.loader = Arc::new(move || {
            entered.lock().unwrap().send(()).unwrap();
            released.lock().unwrap().recv().unwrap();
            Ok(OpenedSession::new(Session::open(&loaded)?))
        });
        let state = Arc::new(state);
        let limits = ConnectionLimits::new(VIEW_CONNECTION_LIMIT);
        let served = Arc::clone(&state);
        tokio::spawn(serve_within(
            Acceptor::new(listener, limits),
            served,
            std::future::pending(),
        ));
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        let request =
            format!("GET /api/context?token=t&id=00000002 HTTP/1.1\r\nHost: {address}\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        tokio::task::spawn_blocking(move || loading.recv().unwrap())
            .await
            .unwrap();
        drop(stream);
        // The request's future and its connection hold the state: both let go once hyper saw
        // the client leave (the test, the accepting loop and the build keep theirs).
        wait_until(|| Arc::strong_count(&state) <= 3).await;
        release.send(()).unwrap();
        wait_until(|| state.context_builds.available_permits() == MAX_CONTEXT_BUILDS).await;
        assert!(
            !state.parsed.was_asked(),
            "a build went on to read the messages"
        );
    }

    /// Polls `done` until it holds (a generous deadline for a loaded machine).
    async fn wait_until(done: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !done() {
            assert!(std::time::Instant::now() < deadline, "waited 20 s");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    #[test]
    fn the_live_page_is_the_page_of_its_data_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = session_file(dir.path(), 3);
        let state = state(&path);
        let page = page_data(&state).unwrap();
        // What the view served before it wrote the data as a stream: the data as a value, the
        // live version added, escaped whole, and the page rendered from the value.
        let session = Session::open(&path).unwrap();
        let mut options = state.config.options.clone();
        options.contexts = ContextPolicy::OnDemand;
        let mut value = crate::build_page_data(&session, &options).unwrap();
        let version = watched_version(std::slice::from_ref(&path));
        value
            .as_object_mut()
            .unwrap()
            .insert("live".to_owned(), json!({"version": version}));
        assert_eq!(page.data, script_safe_json(&value).into_bytes());
        let chunks = live_page(&page.title, &page.data).unwrap();
        let served: Vec<u8> = chunks.iter().flat_map(|chunk| chunk.to_vec()).collect();
        assert_eq!(
            String::from_utf8(served).unwrap(),
            crate::render_page(&value, PageMode::Live)
        );
        // The data is one buffer, shared by the page and `/api/data`.
        assert_eq!(chunks[1].as_ptr(), page.data.as_ptr());
        assert_eq!(page_data(&state).unwrap().data.as_ptr(), page.data.as_ptr());
    }

    /// Everything the server sends until it closes the connection.
    async fn read_to_close(stream: &mut tokio::net::TcpStream) -> String {
        use tokio::io::AsyncReadExt as _;
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer).await;
        String::from_utf8_lossy(&answer).into_owned()
    }

    /// A socket that never finishes its request's headers is closed after the timeout, and
    /// does not keep the view from answering others.
    #[tokio::test]
    async fn a_request_whose_headers_never_end_is_closed() {
        use tokio::io::AsyncWriteExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = session_file(dir.path(), 1);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let mut state = state(&path);
        state.address = address;
        let limits = ConnectionLimits {
            header_read_timeout: std::time::Duration::from_millis(300),
            ..ConnectionLimits::new(2)
        };
        let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let shutdown = async move {
            let _ = stopped.await;
        };
        tokio::spawn(serve_within(
            Acceptor::new(listener, limits),
            Arc::new(state),
            shutdown,
        ));
        let mut partial = tokio::net::TcpStream::connect(address).await.unwrap();
        partial
            .write_all(b"GET /api/version?token=t HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        let started = std::time::Instant::now();
        let cut = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            read_to_close(&mut partial),
        )
        .await
        .expect("the view closed the connection");
        assert!(
            started.elapsed() >= std::time::Duration::from_millis(250),
            "{cut}"
        );
        let mut whole = tokio::net::TcpStream::connect(address).await.unwrap();
        let request = format!(
            "GET /api/version?token=t HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
        );
        whole.write_all(request.as_bytes()).await.unwrap();
        let answer = read_to_close(&mut whole).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }

    /// A page on a large session asked for the data again before the last rebuild ended, and
    /// the server built each request's data anew (eight rebuilds of 55 MB at once): requests of
    /// one version share one rebuild.
    #[test]
    fn concurrent_requests_of_one_version_share_one_rebuild() {
        let dir = tempfile::tempdir().unwrap();
        let path = session_file(dir.path(), 3);
        let mut state = state(&path);
        let loads = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = Arc::clone(&loads);
        let loaded = path.clone();
        state.config.loader = Arc::new(move || {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            // A slow rebuild, so the requests overlap.
            std::thread::sleep(std::time::Duration::from_millis(300));
            Ok(OpenedSession::new(Session::open(&loaded)?))
        });
        let state = Arc::new(state);
        let requests: Vec<_> = (0..4)
            .map(|_| {
                let state = Arc::clone(&state);
                std::thread::spawn(move || page_data(&state).map(|page| page.data))
            })
            .collect();
        let answers: Vec<Bytes> = requests
            .into_iter()
            .map(|request| request.join().unwrap().unwrap())
            .collect();
        assert_eq!(loads.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(answers.iter().all(|data| data == &answers[0]));
    }

    /// A browser opening the view while the file is missing got a line of JSON: it gets a page
    /// saying why, which asks again until the file is back.
    #[test]
    fn the_page_of_a_missing_file_says_why_and_asks_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = session_file(dir.path(), 3);
        let state = state(&path);
        let moved = dir.path().join("moved.jsonl");
        std::fs::rename(&path, &moved).unwrap();
        let missing = route(&state, "/", None, &AtomicBool::new(false));
        assert_eq!(missing.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            missing.headers()[header::CONTENT_TYPE],
            "text/html; charset=utf-8"
        );
        let body: Vec<u8> = missing
            .body()
            .0
            .iter()
            .flat_map(|chunk| chunk.to_vec())
            .collect();
        let body = String::from_utf8(body).unwrap();
        assert!(body.contains("http-equiv=\"refresh\""), "{body}");
        assert!(body.contains("The session cannot be shown: "), "{body}");
        std::fs::rename(&moved, &path).unwrap();
        assert_eq!(
            route(&state, "/", None, &AtomicBool::new(false)).status(),
            StatusCode::OK
        );
    }

    #[test]
    fn a_context_longer_than_the_bound_is_refused_with_its_length() {
        let dir = tempfile::tempdir().unwrap();
        let path = session_file(dir.path(), 3);
        let session = Session::open(&path).unwrap();
        let options = state(&path).config.options;
        let whole = crate::context_data_within(&session, "00000006", &options, 6).unwrap();
        assert_eq!(whole["messages"].as_array().unwrap().len(), 6);
        let refused = crate::context_data_within(&session, "00000006", &options, 5).unwrap_err();
        assert!(
            matches!(&refused, WebError::ContextTooLong { id, messages: 6 } if id == "00000006"),
            "{refused:?}"
        );
    }

    /// `view --port 80`: a browser sends `Host: 127.0.0.1` without the scheme's default port,
    /// and the printed URL was always refused.
    #[test]
    fn the_default_port_may_be_left_out_of_the_host() {
        let on_80: SocketAddr = "127.0.0.1:80".parse().unwrap();
        let on_8080: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        for host in ["127.0.0.1", "localhost", "[::1]", "127.0.0.1:80"] {
            assert!(loopback_host(Some(host), on_80), "{host}");
        }
        assert!(!loopback_host(Some("127.0.0.1"), on_8080));
        assert!(!loopback_host(Some("evil.example"), on_80));
        assert!(!loopback_host(Some("127.0.0.1:81"), on_80));
        assert!(!loopback_host(None, on_80));
    }

    /// `view` answered `HEAD` with 405 "only GET": it answers as to GET, without a body.
    #[tokio::test]
    async fn head_is_answered_as_get_without_a_body() {
        use tokio::io::AsyncWriteExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = session_file(dir.path(), 1);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let mut state = state(&path);
        state.address = address;
        let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let shutdown = async move {
            let _ = stopped.await;
        };
        tokio::spawn(serve_within(
            Acceptor::new(listener, ConnectionLimits::new(2)),
            Arc::new(state),
            shutdown,
        ));
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        let request =
            format!("HEAD /?token=t HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let answer = read_to_close(&mut stream).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("\r\n\r\n"), "a body was sent: {answer}");
    }

    /// QA 2026-12-07: a request with two `Host` headers, the first a loopback one, was answered.
    #[tokio::test]
    async fn two_host_headers_are_refused() {
        use tokio::io::AsyncWriteExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = session_file(dir.path(), 1);
        let address = serve_state(state(&path)).await;
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        let request = format!(
            "GET /?token=t HTTP/1.1\r\nHost: {address}\r\nHost: evil.example\r\nConnection: close\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let answer = read_to_close(&mut stream).await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    }

    /// QA: `GET http://evil.com/api/version?token=T` with a loopback `Host` was answered.
    #[tokio::test]
    async fn a_request_target_with_a_host_is_refused() {
        use tokio::io::AsyncWriteExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = session_file(dir.path(), 1);
        let address = serve_state(state(&path)).await;
        for target in [
            "http://evil.example/?token=t",
            &format!("http://{address}/?token=t"),
        ] {
            let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
            let request =
                format!("GET {target} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
            stream.write_all(request.as_bytes()).await.unwrap();
            let answer = read_to_close(&mut stream).await;
            assert!(answer.starts_with("HTTP/1.1 400"), "{target}: {answer}");
        }
    }

    /// `view opencode.db#<id>` watched the name `opencode.db#<id>`, no file: its version was
    /// always "missing", so the page never followed and a reload showed the cached start. The
    /// version follows every watched file (the database and its write-ahead log).
    #[test]
    fn the_version_follows_each_watched_file() {
        let dir = tempfile::tempdir().unwrap();
        let database = dir.path().join("opencode.db");
        let log = dir.path().join("opencode.db-wal");
        std::fs::write(&database, b"one").unwrap();
        let watched = vec![database.clone(), log.clone()];
        let first = watched_version(&watched);
        std::fs::write(&log, b"a page").unwrap();
        let logged = watched_version(&watched);
        assert_ne!(first, logged);
        std::fs::write(&database, b"checkpointed").unwrap();
        std::fs::remove_file(&log).unwrap();
        assert_ne!(watched_version(&watched), logged);
        assert_ne!(watched_version(&watched), "missing");
    }

    /// After `ctxkit name FILE NEW` the tab kept the name the view started with, even on a
    /// fresh load: the title is the session's name as the file now says.
    #[test]
    fn the_title_follows_a_rename() {
        let dir = tempfile::tempdir().unwrap();
        let path = session_file(dir.path(), 1);
        let state = state(&path);
        assert_eq!(page_data(&state).unwrap().title, "a <title>");
        let info = json!({"type": "session_info", "id": "0000abcd", "parentId": "00000002",
                          "timestamp": "2026-01-01T00:00:00.000Z", "name": "renamed"});
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(&format!("{info}\n"));
        std::fs::write(&path, text).unwrap();
        let page = page_data(&state).unwrap();
        assert_eq!(page.title, "renamed");
        let data: serde_json::Value = serde_json::from_slice(&page.data).unwrap();
        assert_eq!(data["title"], json!("renamed"));
    }
}
