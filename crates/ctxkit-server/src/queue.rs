//! The request queue. Requests run one after another, in order; cancellations, `initialize` and
//! `shutdown` are answered at once. The queue is bounded by the bytes of the lines it holds
//! (`server.maxQueuedBytes`): each request holds its line's share of the budget until it has run,
//! and past the budget the server stops reading its input (backpressure on a client that
//! pipelines faster than requests run), while cancellations already read are still answered.
//! The client's end (the end of its input) stops what runs, as `shutdown` does.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use ctxkit_engine::InterruptCause;
use serde_json::Value;
use tokio::io::AsyncBufRead;
use tokio::sync::{AcquireError, OwnedSemaphorePermit, Semaphore, mpsc};

use crate::envelope::{Reply, Request};
use crate::{Shared, input, methods, params, stop};

/// Ordinary requests read while the one before them waits for room in the queue: reading stops
/// once this many wait, so memory holds the budget and a few lines more.
const WAITING: usize = 2;

/// A request as read.
pub(crate) type Incoming = Request;

/// A request waiting for the one before it, with its share of the queue's byte budget (none for
/// the requests queued by `shutdown`, which are answered at once as abandoned).
pub(crate) struct Queued {
    pub(crate) reply: Reply,
    pub(crate) method: String,
    pub(crate) params: Value,
    pub(crate) held: Option<Shares>,
    /// The `compact.cancel`s read before it.
    pub(crate) compact_cancels_before: u64,
    /// The error a line that is no request is answered with, in its turn.
    pub(crate) refused: Option<crate::MethodError>,
}

/// A queued request's shares: of its client's queue, and of the server's budget or, for a small
/// line, its client's own allowance (`--listen`).
pub(crate) struct Shares {
    _queue: OwnedSemaphorePermit,
    _server: Option<OwnedSemaphorePermit>,
}

fn queued(request: Incoming, held: Option<Shares>) -> Queued {
    Queued {
        reply: request.reply,
        method: request.method,
        params: request.params,
        held,
        compact_cancels_before: request.compact_cancels_before,
        refused: request.refused,
    }
}

/// Reads requests from `input` into `lines` until the input ends, a `shutdown` is read or nobody
/// takes them any more.
pub(crate) async fn read_requests<R>(
    shared: &Shared,
    mut input: R,
    lines: mpsc::Sender<Incoming>,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
{
    let limit = shared.config.max_request_bytes;
    while let Some(line) = input::next_line(&mut input, limit).await? {
        // A batch's members one after another, as if each had a line of its own; those after a
        // `shutdown` are not run.
        for request in crate::envelope::read_line(&shared.out, line, limit) {
            let shutdown = request.method == "shutdown";
            if shutdown && let Err(error) = params::none(&request.method, &request.params) {
                request.reply.send(&shared.out, Err(error));
                continue;
            }
            if lines.send(request).await.is_err() || shutdown {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Answers control requests at once and queues the others for `queue`, in order, each once the
/// budget has room for its line. Returns where to answer the `shutdown` request when one came. The
/// end of the input stops everything as `shutdown` does, unless the server drains.
pub(crate) async fn dispatch_requests(
    shared: &Arc<Shared>,
    mut lines: mpsc::Receiver<Incoming>,
    queue: mpsc::UnboundedSender<Queued>,
) -> Option<Reply> {
    let budget_bytes = shared.config.max_queued_bytes;
    let budget = Arc::new(Semaphore::new(
        input::permits(budget_bytes, budget_bytes) as usize
    ));
    let allowance = Arc::new(Semaphore::new(OWN_ALLOWANCE_BYTES));
    let mut waiting: VecDeque<Incoming> = VecDeque::new();
    let mut reading = true;
    // The shares of the request at the front, asked for once and kept while control requests
    // are answered: it keeps its place among the clients waiting for the server's budget.
    let mut asking: Option<Asking<'_>> = None;
    loop {
        if asking.is_none()
            && let Some(request) = waiting.front()
        {
            let wanted = (input::permits(request.length, budget_bytes), request.length);
            asking = Some(Box::pin(acquire(shared, &budget, &allowance, wanted)));
        }
        tokio::select! {
            held = async {
                match asking.as_mut() {
                    Some(asking) => asking.await,
                    None => std::future::pending().await,
                }
            }, if asking.is_some() => {
                asking = None;
                if let Some(request) = waiting.pop_front() {
                    let _ = queue.send(queued(request, held.ok()));
                }
            }
            incoming = lines.recv(), if reading && waiting.len() < WAITING => {
                let Some(mut request) = incoming else {
                    // The client's end (stdin closed, SIGTERM, a dropped WebSocket) ends the server
                    // as `shutdown` does; a drain lets the requests read finish.
                    if client_left(shared) {
                        stop_everything(shared, end_of_input_cause(shared)).await;
                        queue_at_once(&mut waiting, &queue);
                        return None;
                    }
                    reading = false;
                    continue;
                };
                request.compact_cancels_before = shared.compact_cancels.load(Ordering::SeqCst);
                match request.method.as_str() {
                    "shutdown" => {
                        stop_everything(shared, InterruptCause::ServerStopping).await;
                        queue_at_once(&mut waiting, &queue);
                        return Some(request.reply);
                    }
                    "compact.cancel"
                    | "branch_summary.cancel"
                    | "agent.cancel"
                    | "agent.steer"
                    | "agent.follow_up"
                    | "initialize" => {
                        answer_at_once(shared, request).await;
                    }
                    // Read-only, and asked to see whether a compaction runs: while one holds the
                    // session, answered at once from what it found (it writes nothing until it
                    // ends), not after it with `is_compacting: false`.
                    "session.info" => {
                        let bare = params::none(&request.method, &request.params).is_ok();
                        if bare && let Some(answer) = info_while_compacting(shared).await {
                            request.reply.send(&shared.out, Ok(answer));
                        } else {
                            waiting.push_back(request);
                        }
                    }
                    // A manual compaction sent during a run stops the run first, then compacts
                    // (the reference's `compact()` aborts the running turn).
                    "compact" => {
                        interrupt_run(shared, ctxkit_engine::InterruptCause::Compaction).await;
                        waiting.push_back(request);
                    }
                    _ => waiting.push_back(request),
                }
            }
            else => return None,
        }
    }
}

/// The shares being asked for the request at the front of the queue.
type Asking<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Shares, AcquireError>> + Send + 'a>>;

/// Each `--listen` client's own room for queued lines of at most this many bytes, outside the
/// server's budget: the budget is first come, first served across clients, and without it a
/// client's `session.create` waited behind another client's large lines, themselves waiting for
/// room until that client's run ended. It bounds itself: 64 KiB for each of at most
/// `server.maxConnections` clients (16 MiB with the default 256), as a one-frame message of up to
/// 64 KiB is read outside the budget (`budget::frames`).
const OWN_ALLOWANCE_BYTES: usize = 64 * 1024;

/// The shares of a line of `wanted` (permits of the client's queue, bytes): the queue's, then,
/// when the server has a budget, the client's own allowance for a small line that finds room in
/// it, else the server's budget's.
async fn acquire(
    shared: &Shared,
    budget: &Arc<Semaphore>,
    allowance: &Arc<Semaphore>,
    (permits, bytes): (u32, usize),
) -> Result<Shares, AcquireError> {
    let queue = Arc::clone(budget).acquire_many_owned(permits).await?;
    let server = match &shared.queue_budget {
        Some(queue_budget) => match own_share(allowance, bytes) {
            Some(own) => Some(own),
            None => queue_budget.acquire(bytes).await,
        },
        None => None,
    };
    Ok(Shares {
        _queue: queue,
        _server: server,
    })
}

/// `bytes` of the client's own allowance, when the line is small and the allowance has room now.
fn own_share(allowance: &Arc<Semaphore>, bytes: usize) -> Option<OwnedSemaphorePermit> {
    let wanted = u32::try_from(bytes.max(1)).ok()?;
    if bytes > OWN_ALLOWANCE_BYTES {
        return None;
    }
    Arc::clone(allowance).try_acquire_many_owned(wanted).ok()
}

/// Whether the input ended because the client did (not because a listening server drains).
fn client_left(shared: &Shared) -> bool {
    shared
        .draining
        .as_ref()
        .is_none_or(|phase| *phase.borrow() == crate::drain::Phase::Serving)
}

/// Queues the requests waiting for room without their share of the budget: once everything is
/// told to stop, they are answered as fast as they run.
fn queue_at_once(waiting: &mut VecDeque<Incoming>, queue: &mpsc::UnboundedSender<Queued>) {
    for earlier in waiting.drain(..) {
        let _ = queue.send(queued(earlier, None));
    }
}

/// Why the input ended for a server that does not drain: a signal stopping the process (stdio),
/// else the client leaving.
fn end_of_input_cause(shared: &Shared) -> InterruptCause {
    match shared
        .signalled
        .as_ref()
        .and_then(|signalled| signalled.get())
    {
        Some(_) => InterruptCause::ServerStopping,
        None => InterruptCause::ClientGone,
    }
}

/// `shutdown`, the client's end and a server's stop: cancels what runs for `cause` (which the
/// results a cancelled turn leaves say), and tells every request to stop.
pub(crate) async fn stop_everything(shared: &Shared, cause: InterruptCause) {
    if let Some(engine) = shared.engine.read().await.as_ref() {
        engine.cancel_compaction();
        engine.cancel_branch_summary();
        engine.interrupt_turn_because(cause);
    }
    shared.stop.send_replace(stop::Stop::Everything);
}

/// Stops the running `agent.run`, if one runs, as `agent.cancel` does, for `cause` (what the
/// results it leaves say).
async fn interrupt_run(shared: &Shared, cause: ctxkit_engine::InterruptCause) {
    let running = shared
        .running
        .lock()
        .map(|running| running.as_deref() == Some("agent.run"))
        .unwrap_or(false);
    if !running {
        return;
    }
    if let Some(engine) = shared.engine.read().await.as_ref() {
        engine.interrupt_turn_because(cause);
        shared.stop.send_replace(stop::Stop::Agent);
    }
}

/// `session.info`'s answer while a compaction or branch summary runs; `None` when none does (the
/// request then waits its turn, as every other does).
async fn info_while_compacting(shared: &Shared) -> Option<crate::Answer> {
    let facts = shared
        .engine
        .read()
        .await
        .as_ref()?
        .facts_while_compacting()?;
    Some(crate::Answer::Value(methods::info_json(&facts, true)))
}

async fn answer_at_once(shared: &Arc<Shared>, request: Incoming) {
    // Counted before it runs: a `compact` read before it is cancelled when it starts.
    if request.method == "compact.cancel" {
        shared.compact_cancels.fetch_add(1, Ordering::SeqCst);
    }
    let outcome = methods::dispatch(shared, &request.method, request.params).await;
    if request.method == "agent.cancel" && outcome.is_ok() {
        shared.stop.send_replace(stop::Stop::Agent);
    }
    request.reply.send(&shared.out, outcome);
}
