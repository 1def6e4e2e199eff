//! `ctxkit serve --stdio`: the engine over JSON-RPC on stdin/stdout (see `docs/protocol.md`).

use std::sync::Arc;

use anyhow::{Context as _, Result};
use ctxkit_engine::server::{ServerConfig, serve};

use super::Locations;
use super::summary_setup::{self, SummaryFlags};
use crate::Outcome;
use crate::cli::GlobalArgs;

pub fn serve_stdio(
    global: &GlobalArgs,
    locations: &Locations,
    out: &mut dyn std::io::Write,
) -> Result<Outcome> {
    // Budgets nobody set follow the window of the model the client sets (`model.set`), in the
    // engine, as in chat.
    let setup = summary_setup::resolve(global, SummaryFlags::default())?;
    let config = ServerConfig {
        settings: setup.engine_settings,
        summarizer: Arc::from(setup.summarizer),
        prompts: setup.prompts,
        model: None,
        sessions_root: locations.sessions_root.clone(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // `out` is the locked stdout of the process: the server writes lines into a channel and this
    // thread copies them out, so there is one writer and nothing is interleaved.
    let (sender, receiver) = std::sync::mpsc::channel::<Vec<u8>>();
    let server = runtime.spawn(async move {
        let input = tokio::io::BufReader::new(tokio::io::stdin());
        serve(config, input, ChannelWriter(sender)).await
    });
    for chunk in receiver {
        out.write_all(&chunk)?;
        out.flush()?;
    }
    runtime
        .block_on(server)
        .context("the server stopped unexpectedly")??;
    // Stdin may still be open (the client only sent `shutdown`): do not wait for it.
    runtime.shutdown_background();
    Ok(Outcome::Success)
}

/// An `AsyncWrite` that hands every write to a channel.
struct ChannelWriter(std::sync::mpsc::Sender<Vec<u8>>);

impl tokio::io::AsyncWrite for ChannelWriter {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _context: &mut std::task::Context<'_>,
        buffer: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::task::Poll::Ready(
            self.0
                .send(buffer.to_vec())
                .map(|()| buffer.len())
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe)),
        )
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
