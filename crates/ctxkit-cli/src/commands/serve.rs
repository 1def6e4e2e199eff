//! `ctxkit serve --stdio`: the engine over JSON-RPC on stdin/stdout, and `ctxkit serve --listen`:
//! the same over WebSocket (see `docs/protocol.md`, `docs/deployment.md`).

use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use ctxkit_agent::ChatModel;
use ctxkit_server::{AgentConfig, Listener, ModelSource, ServerConfig, StoreBinding};
use ctxkit_store::AnyStore;
use tokio_util::sync::PollSender;

use super::Locations;
use super::resources;
use super::settings::ProcessSettings;
use super::summary_setup::{self, SummaryFlags, SummaryUse};
use super::tool_boundary::ToolBoundary;
use crate::Outcome;

/// `ctxkit serve`: over WebSocket when `listen` names an address, else on stdio.
pub fn serve(
    process: &ProcessSettings<'_>,
    locations: &Locations,
    listen: Option<String>,
    out: &mut dyn std::io::Write,
) -> Result<Outcome> {
    match listen {
        Some(address) => serve_listen(process, locations, &address, out),
        None => serve_stdio(process, locations, out),
    }
}

fn serve_stdio(
    process: &ProcessSettings<'_>,
    locations: &Locations,
    out: &mut dyn std::io::Write,
) -> Result<Outcome> {
    let runtime = runtime()?;
    let config = server_config(process, locations, &runtime)?;
    // `out` is the locked stdout of the process: the server writes lines into a channel and this
    // thread copies them out, so there is one writer and nothing is interleaved. The channel holds
    // a few writes: a client that does not read holds the server's writer back, and the server
    // bounds what waits (see `docs/protocol.md`).
    let (sender, receiver) = tokio::sync::mpsc::channel::<Vec<u8>>(OUTPUT_CHUNKS);
    let stopped = Arc::new(std::sync::OnceLock::new());
    let (client_gone, gone) = tokio::sync::oneshot::channel::<()>();
    let input = {
        let _inside = runtime.enter();
        UntilStopped::new(tokio::io::stdin(), Arc::clone(&stopped), gone)
    };
    let signalled = Arc::clone(&stopped);
    let server = runtime.spawn(async move {
        // SIGTERM, SIGHUP (the client's terminal or pipe went away), Ctrl-C or a client that
        // stopped reading ends the input as the client closing it would, which the server takes as
        // `shutdown`: a running compaction or agent run is cancelled (its command's process group
        // killed), the requests read are answered, and the open session is closed (its entries
        // written, a database session's lease released, its private copy removed) before the
        // process exits.
        let input = tokio::io::BufReader::new(input);
        let output = ChannelWriter(PollSender::new(sender));
        ctxkit_server::serve_until_signalled(config, input, output, signalled).await
    });
    let written = copy_out(receiver, out, client_gone);
    runtime
        .block_on(server)
        .context("the server stopped unexpectedly")??;
    // A command of a tool the server abandoned (stuck past its cancel) runs in a process group
    // of its own, which no signal to this process reaches: it must not outlive the server.
    ctxkit_agent::tools::stop_running_commands();
    // Stdin may still be open (the client only sent `shutdown`, or stopped reading): do not
    // wait for it.
    runtime.shutdown_background();
    // A client that closed its end of stdout: the broken pipe ends the command as on any other
    // command's output (status 0), the session written first.
    written?;
    // A signal (SIGTERM, SIGHUP, Ctrl-C) ends the server as it would have ended any process, with
    // 128 + its number once the session is written, as `serve --listen` and `ctxkit chat` do: the
    // parent (an agent in another language, a supervisor) tells a stop it asked for from a crash
    // or a clean `shutdown` (0).
    match stopped.get() {
        Some(&number) => Ok(Outcome::Signalled {
            number: u8::try_from(number).unwrap_or(15),
        }),
        None => Ok(Outcome::Success),
    }
}

/// Copies the server's output to `out` until the server ends. When a write fails (the client
/// closed its end: EPIPE), the client is taken as gone (`client_gone`: the server's input ends,
/// which cancels what runs and closes the session, as a closed stdin does); the rest of the output
/// is read and dropped, so the server is never held back by it. Returns the failed write's error.
fn copy_out(
    mut receiver: tokio::sync::mpsc::Receiver<Vec<u8>>,
    out: &mut dyn std::io::Write,
    client_gone: tokio::sync::oneshot::Sender<()>,
) -> std::io::Result<()> {
    let mut client_gone = Some(client_gone);
    let mut failed = None;
    while let Some(chunk) = receiver.blocking_recv() {
        if failed.is_some() {
            continue;
        }
        if let Err(error) = out.write_all(&chunk).and_then(|()| out.flush()) {
            failed = Some(error);
            if let Some(gone) = client_gone.take() {
                let _ = gone.send(());
            }
        }
    }
    failed.map_or(Ok(()), Err)
}

/// The last line of a listening server: what its stop achieved, claiming only what is true.
fn stopped_line(stopped: ctxkit_server::Stopped) -> String {
    match stopped.cut_off {
        0 => "Stopped: every client told, every request read answered or cancelled, every \
              session written and released"
            .to_owned(),
        count => format!(
            "Stopped: every client told; {count} client(s) cut off after the grace with a request \
             unanswered or a session not closed (the database did not answer, or a command did \
             not end)"
        ),
    }
}

/// The multi-threaded runtime both transports run on.
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// What every client of this process is given: the settings, the summarizer, the agent's tools
/// and models, the limits, and the database store when `--store` names one.
fn server_config(
    process: &ProcessSettings<'_>,
    locations: &Locations,
    runtime: &tokio::runtime::Runtime,
) -> Result<ServerConfig> {
    // Budgets nobody set follow the window of the model the client sets (`model.set`), in the
    // engine, as in chat.
    let flags = SummaryFlags {
        summary_use: SummaryUse::Serves,
        ..SummaryFlags::default()
    };
    let setup = summary_setup::resolve(process, flags)?;
    if let Some(provider) = &setup.key_missing_for {
        // Pi's RPC mode starts without a key too; what needs the model fails until one is set.
        let _ = writeln!(
            crate::redact::stderr(),
            "warning: no API key for `{provider}`: summaries and runs with its model fail until one is set (`ctxkit login {provider}`)"
        );
    }
    let environment = process.environment()?;
    let settings = process.settings()?;
    let boundary = ToolBoundary::new(environment, settings, &locations.sessions_root);
    let typed = settings.settings();
    let bash_timeout = Duration::from_secs(typed.chat.bash_timeout_seconds);
    let (loaded, cwd) = resources::load(process)?;
    resources::warn_of_resources(&loaded)?;
    // A `write` killed before its rename left its temporary file beside the target (stderr: stdout
    // is the protocol).
    let removed = ctxkit_agent::tools::remove_leftover_temporaries(&cwd);
    if removed > 0 {
        let _ = writeln!(
            crate::redact::stderr(),
            "Removed {removed} temporary file(s) a killed write left in the project"
        );
    }
    if locations.database.is_some() {
        let temporary = std::env::temp_dir();
        let removed = ctxkit_session::remove_abandoned_private_folders(&temporary);
        if removed > 0 {
            let _ = writeln!(
                crate::redact::stderr(),
                "Removed {removed} private session folder(s) a killed ctxkit left in {}",
                temporary.display()
            );
        }
    }
    let agent = AgentConfig {
        models: Arc::new(ConfiguredModels {
            options: summary_setup::llm_options(settings)?,
            threads: ctxkit_llm::MessageThreads::new(),
        }),
        system_prompt: resources::system_prompt_per_project(environment),
        bash_timeout,
        shell: super::settings::shell_of(typed, environment),
        pass_env: typed.chat.pass_env.clone().unwrap_or_default(),
        auto_resize_images: typed.images.auto_resize,
        tools: super::default_tools::coding_tools(typed)?,
        home: Some(boundary.home),
        readable_paths: boundary.readable_paths,
        secrets: boundary.secrets,
        guarded: boundary.guarded,
        skill_folders: loaded
            .skills
            .skills
            .iter()
            .map(|skill| skill.base_dir.clone())
            .collect(),
        warmer: Some(summary_setup::cache_warmer(process)?),
        steering_all: typed.steering_mode == "all",
        follow_ups_all: typed.follow_up_mode == "all",
    };
    let config = ServerConfig {
        settings: setup.engine_settings,
        summarizer: Arc::from(setup.summarizer),
        prompts: setup.prompts,
        model: None,
        sessions_root: locations.sessions_root.clone(),
        agent: Some(agent),
        max_request_bytes: usize::try_from(typed.server.max_request_bytes).unwrap_or(usize::MAX),
        max_queued_bytes: usize::try_from(typed.server.max_queued_bytes).unwrap_or(usize::MAX),
        foreign_hint: Some(crate::foreign::import_hint),
        store: match &locations.database {
            Some(url) => Some(StoreBinding {
                store: runtime
                    .block_on(AnyStore::open(url))
                    .with_context(|| format!("cannot open the store `{}`", url.redacted()))?,
                lease: Duration::from_secs(typed.store.lease_seconds),
                owner: writer_name(),
            }),
            None => None,
        },
    };
    Ok(config)
}

/// `ctxkit serve --listen HOST:PORT`: WebSocket clients until SIGTERM, SIGHUP or Ctrl-C, then a
/// graceful stop (`docs/protocol.md`), exiting with 128 + the signal's number.
fn serve_listen(
    process: &ProcessSettings<'_>,
    locations: &Locations,
    address: &str,
    out: &mut dyn std::io::Write,
) -> Result<Outcome> {
    let address = listen_address(address)?;
    let server = process.settings()?.settings().server.clone();
    let token = crate::cli::server_token_from_environment()
        .or(server.token.filter(|token| !token.is_empty()));
    // A client sends it after `Bearer `, where spaces end it: one holding any matched nothing,
    // and every client was refused.
    if token
        .as_ref()
        .is_some_and(|token| token.chars().any(char::is_whitespace))
    {
        anyhow::bail!(
            "the server's token (`CTXKIT_SERVER_TOKEN` or setting `server.token`) holds a space or \
             line break, which no `Authorization: Bearer` header can carry; use letters, digits \
             and punctuation (`openssl rand -hex 32`)"
        );
    }
    // The token is all that stands between the network and the agent's shell (a client may run
    // `bash` with `approve: "all"`): a guessable one is refused (QA 2026-12-07: `a` was taken).
    if let Some(short) = token
        .as_ref()
        .filter(|token| token.chars().count() < MIN_TOKEN_CHARS)
    {
        anyhow::bail!(
            "the server's token (`CTXKIT_SERVER_TOKEN` or setting `server.token`) has {} \
             characters; whoever guesses it runs commands as you, so it needs at least \
             {MIN_TOKEN_CHARS} (`openssl rand -hex 32`)",
            short.chars().count()
        );
    }
    let runtime = runtime()?;
    let config = server_config(process, locations, &runtime)?;
    let mut listener = runtime.block_on(Listener::bind(address, token, config))?;
    let max_connections = usize::try_from(server.max_connections).unwrap_or(usize::MAX);
    listener.set_limits(ctxkit_http::ConnectionLimits::new(max_connections));
    listener.set_memory_budget(usize::try_from(server.max_buffered_bytes).unwrap_or(usize::MAX));
    // Caught before "Listening" is printed: a stop sent right after it stops the server.
    let (stop, hurry, signalled) = {
        let _inside = runtime.enter();
        stop_signals()
    };
    let bound = listener.local_addr();
    let who = if listener.has_token() {
        "clients with the token"
    } else {
        "no token: this user's programs only"
    };
    writeln!(
        out,
        "Listening on ws://{bound}/rpc (health: http://{bound}/health; {who})"
    )?;
    out.flush()?;
    let stopped = runtime.block_on(listener.run_until(stop, hurry));
    // A command of a tool a cancelled run abandoned runs in a process group of its own, which no
    // signal to this process reaches: it must not outlive the server.
    ctxkit_agent::tools::stop_running_commands();
    // Said if the output is still read (a supervisor may have closed it): the exit status says
    // it anyway.
    let _ = writeln!(out, "{}", stopped_line(stopped)).and_then(|()| out.flush());
    runtime.shutdown_timeout(Duration::from_secs(1));
    // Ended as the signal would have ended it (128 + its number), after cleaning up.
    Ok(match signalled.get() {
        Some(&number) => Outcome::Signalled {
            number: u8::try_from(number).unwrap_or(1),
        },
        None => Outcome::Success,
    })
}

/// How `serve --listen` stops: SIGTERM (a service manager's stop) drains, letting running
/// requests finish within [`ctxkit_server::SHUTDOWN_GRACE`]; SIGHUP (the operator's terminal went
/// away) and Ctrl-C cancel them at once; any of them during a drain ends the grace. Returns the
/// stop, the hurry (the second signal) and where the first signal's number is kept. Caught from
/// the call on (inside the runtime).
fn stop_signals() -> (
    impl std::future::Future<Output = ctxkit_server::Shutdown> + Send + 'static,
    impl std::future::Future<Output = ()> + Send + 'static,
    Arc<std::sync::OnceLock<i32>>,
) {
    use super::signals::{Stops, stop_signal_named};
    let first = stop_signal_named(Stops::OnTerminateAndHangup);
    let signalled = Arc::new(std::sync::OnceLock::new());
    let noted = Arc::clone(&signalled);
    let (hurried, hurry) = tokio::sync::oneshot::channel::<()>();
    let stop = async move {
        let number = first.await;
        let _ = noted.set(number);
        // Caught from now on, so the first signal is not taken for a second one.
        let second = stop_signal_named(Stops::OnTerminateAndHangup);
        tokio::spawn(async move {
            second.await;
            let _ = hurried.send(());
        });
        let name = signal_name(number);
        if number == tokio::signal::unix::SignalKind::terminate().as_raw_value() {
            ctxkit_server::Shutdown::drain(name, ctxkit_server::SHUTDOWN_GRACE)
        } else {
            ctxkit_server::Shutdown::now(name)
        }
    };
    let hurry = async move {
        let _ = hurry.await;
    };
    (stop, hurry, signalled)
}

/// The name a signal number goes by (the three that stop a server).
fn signal_name(number: i32) -> &'static str {
    use tokio::signal::unix::SignalKind;
    if number == SignalKind::hangup().as_raw_value() {
        "SIGHUP"
    } else if number == SignalKind::interrupt().as_raw_value() {
        "SIGINT"
    } else {
        "SIGTERM"
    }
}

/// The address `--listen` names: an IP address and a port, or `localhost:PORT`, which is the
/// loopback address 127.0.0.1 (never resolved: a hosts file cannot turn it into another address).
fn listen_address(text: &str) -> Result<SocketAddr, crate::usage::UsageError> {
    if let Ok(address) = text.parse() {
        return Ok(address);
    }
    let localhost = text
        .rsplit_once(':')
        .filter(|(host, _)| host.eq_ignore_ascii_case("localhost"))
        .and_then(|(_, port)| port.parse::<u16>().ok());
    localhost
        .map(|port| SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port)))
        .ok_or_else(|| crate::usage::UsageError {
            message: format!("`--listen {text}` is not an address and a port"),
            hint: "name an IP address and a port: `127.0.0.1:8477` (`localhost:8477`), or \
                   `0.0.0.0:8477` for every interface (with a token)"
                .to_owned(),
        })
}

/// A reader that ends (reads nothing more) once SIGTERM, SIGHUP or Ctrl-C arrives, the signal's
/// number kept in `stopped`, or once the client is known gone (`gone`: its end of stdout closed).
/// The signals are caught from [`UntilStopped::new`] on (inside the runtime), before the first
/// request is read.
struct UntilStopped<R> {
    inner: R,
    stop: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
    ended: bool,
}

impl<R> UntilStopped<R> {
    fn new(
        inner: R,
        stopped: Arc<std::sync::OnceLock<i32>>,
        gone: tokio::sync::oneshot::Receiver<()>,
    ) -> Self {
        let signal = super::signals::stop_signal_named(super::signals::Stops::OnTerminateAndHangup);
        Self {
            inner,
            stop: Box::pin(async move {
                tokio::select! {
                    number = signal => {
                        let _ = stopped.set(number);
                    }
                    Ok(()) = gone => {}
                }
            }),
            ended: false,
        }
    }
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for UntilStopped<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
        buffer: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        if !self.ended && self.stop.as_mut().poll(context).is_ready() {
            self.ended = true;
        }
        if self.ended {
            return std::task::Poll::Ready(Ok(()));
        }
        std::pin::Pin::new(&mut self.inner).poll_read(context, buffer)
    }
}

/// Who writes database sessions: this process, so `session_in_use` names it.
fn writer_name() -> String {
    super::store_copy::process_writer("serve")
}

/// The fewest characters a server's token may have.
const MIN_TOKEN_CHARS: usize = 16;

/// The writes the channel from the server to stdout holds.
const OUTPUT_CHUNKS: usize = 16;

/// An `AsyncWrite` that hands every write to a bounded channel (pending while it is full).
struct ChannelWriter(PollSender<Vec<u8>>);

impl tokio::io::AsyncWrite for ChannelWriter {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
        buffer: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let closed = || std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        match self.0.poll_reserve(context) {
            std::task::Poll::Pending => std::task::Poll::Pending,
            std::task::Poll::Ready(Err(_)) => std::task::Poll::Ready(Err(closed())),
            std::task::Poll::Ready(Ok(())) => std::task::Poll::Ready(
                self.0
                    .send_item(buffer.to_vec())
                    .map(|()| buffer.len())
                    .map_err(|_| closed()),
            ),
        }
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// What `agent.run` answers (`-32002`) when no model is named: the protocol's ways to name one.
const NO_MODEL_FOR_RUN: &str = "No model configured for `agent.run`; pass `model` (\"provider/id\") in its params, or set `defaultModel` in the settings (`ctxkit config set defaultModel provider/id`)";

/// `agent.run`'s models: `defaultModel` or the run's `model`, resolved like `ctxkit chat --model`,
/// each bound to its session's message thread (kept across runs in `threads`).
struct ConfiguredModels {
    options: ctxkit_llm::LlmOptions,
    threads: ctxkit_llm::MessageThreads,
}

impl ConfiguredModels {
    fn client(&self, spec: Option<&str>) -> Result<ctxkit_llm::ModelClient, String> {
        summary_setup::agent_model_client(&self.options, spec)
            .map(|(client, _)| client)
            .map_err(|error| {
                if error.is::<summary_setup::NoModelConfigured>() {
                    NO_MODEL_FOR_RUN.to_owned()
                } else {
                    format!("{error:#}")
                }
            })
    }
}

impl ModelSource for ConfiguredModels {
    fn chat_model(&self, spec: Option<&str>) -> Result<Arc<dyn ChatModel>, String> {
        self.client(spec)
            .map(|client| Arc::new(client) as Arc<dyn ChatModel>)
    }

    fn chat_model_for_session(
        &self,
        spec: Option<&str>,
        session_id: &str,
    ) -> Result<Arc<dyn ChatModel>, String> {
        self.client(spec).map(|client| {
            Arc::new(client.with_message_threads(&self.threads, session_id)) as Arc<dyn ChatModel>
        })
    }
}
