//! One WebSocket connection is one client of [`crate::serve_client`]: each text message is one
//! request line, each response or event line one text message. The messages go through the same
//! reader as stdio's lines, so the same limits hold (`server.maxRequestBytes`,
//! `server.maxQueuedBytes`, backpressure: the server stops reading the socket while its queue is
//! full).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use futures::{SinkExt as _, StreamExt as _};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream};
use tokio::sync::watch;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use crate::ServerConfig;
use crate::budget::{Budgeted, Held, MemoryBudget};
use crate::drain::{Phase, Shutdown};

/// The bytes buffered between the socket and the server, each way.
const PIPE_BYTES: usize = 64 * 1024;

/// Serves one upgraded connection until the client closes it or the server drains (`draining`
/// leaves [`Phase::Serving`]: no more requests are read; those read are answered, their writes
/// committed, or cancelled once the drain's grace is over), then closes it: 1001 with the drain's
/// reason, 1000 when the session ended otherwise.
pub(crate) async fn serve_socket(
    socket: WebSocketStream<Budgeted<TokioIo<Upgraded>>>,
    config: Arc<ServerConfig>,
    mut draining: watch::Receiver<Phase>,
    queue_budget: MemoryBudget,
    held: Held,
) {
    let (sink, mut stream) = socket.split();
    let (mut requests, server_input) = tokio::io::duplex(PIPE_BYTES);
    let (server_output, responses) = tokio::io::duplex(PIPE_BYTES);
    // A client that disconnects stops its requests (as `shutdown` does, so its session is
    // released at once); a drain lets them finish.
    let phase = draining.clone();
    let gone = Arc::new(AtomicBool::new(false));
    let server = tokio::spawn(crate::serve_client(
        config,
        BufReader::new(server_input),
        server_output,
        None,
        Some(crate::Listened {
            draining: draining.clone(),
            gone: Arc::clone(&gone),
            queue_budget,
        }),
    ));
    // Why the client's input ended, when the close says more than "normal" (set before the
    // server sees the end of its input, so before the writer closes).
    let (failed, failure) = tokio::sync::oneshot::channel::<CloseFrame>();
    let reader = async move {
        loop {
            let message = tokio::select! {
                message = stream.next() => message,
                _ = draining.wait_for(|phase| *phase != Phase::Serving) => break,
            };
            // The client closed or dropped the connection: what it queued is not run.
            let ended = matches!(message, Some(Err(_)) | Some(Ok(Message::Close(_))) | None);
            if ended {
                gone.store(true, Ordering::SeqCst);
            }
            let bytes = match message {
                Some(Ok(Message::Text(text))) => Bytes::from(text),
                Some(Ok(Message::Binary(bytes))) => bytes,
                // A control frame holds no share (a message it came in the middle of keeps its).
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
                Some(Err(error)) => {
                    if let Some(close) = close_for(&error) {
                        let _ = failed.send(close);
                    }
                    break;
                }
                Some(Ok(Message::Close(_))) | None => break,
            };
            let written = write_line(&mut requests, bytes).await;
            // The message is the server's now: its queue holds its share from here.
            held.release();
            if written.is_err() {
                break;
            }
        }
        // The end of the client's input: the server answers what it read, then ends.
        let _ = requests.shutdown().await;
    };
    let writer = write_to_client(responses, sink, phase, failure);
    // The reader ends with the client's input or the drain; when the server ended first
    // (`shutdown`), it is not waited for.
    let reader = tokio::spawn(reader);
    writer.await;
    reader.abort();
    let _ = server.await;
}

/// Writes the server's lines to the client, each a text message, until the server ends; then the
/// close frame. The stop is told by this task, the one that writes the close frame after it, so the
/// notice cannot miss the close (a task of its own could be aborted before it ran): at once when
/// the server starts stopping, ahead of the answers still to come, and at the latest before the
/// close.
async fn write_to_client<S>(
    responses: DuplexStream,
    mut sink: S,
    phase: watch::Receiver<Phase>,
    mut failure: tokio::sync::oneshot::Receiver<CloseFrame>,
) where
    S: futures::Sink<Message> + Unpin,
{
    let mut responses = BufReader::new(responses);
    let mut line = Vec::new();
    let mut connected = true;
    let mut stopping = phase.clone();
    let mut told = false;
    loop {
        let read = if told {
            responses.read_until(b'\n', &mut line).await
        } else {
            let read = tokio::select! {
                biased;
                _ = stopping.wait_for(|phase| *phase != Phase::Serving) => None,
                read = responses.read_until(b'\n', &mut line) => Some(read),
            };
            let Some(read) = read else {
                told = true;
                let shutdown = phase.borrow().shutdown().cloned();
                if connected && let Some(shutdown) = shutdown {
                    connected = tell_stopping(&mut sink, &shutdown).await;
                }
                // A line read in part stays in `line`, to be read on.
                continue;
            };
            read
        };
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        // A client gone is still read from, so the server is never blocked on it.
        if connected {
            let text = String::from_utf8_lossy(&line).into_owned();
            connected = sink.send(Message::text(text)).await.is_ok();
        }
        line.clear();
    }
    // One look at the phase decides both the notice and the close: a 1001 is always told first.
    let shutdown = phase.borrow().shutdown().cloned();
    if connected
        && !told
        && let Some(shutdown) = &shutdown
    {
        connected = tell_stopping(&mut sink, shutdown).await;
    }
    if connected {
        let close = failure
            .try_recv()
            .unwrap_or_else(|_| ending_close(shutdown.as_ref()));
        let _ = sink.send(Message::Close(Some(close))).await;
        let _ = sink.close().await;
    }
}

/// Sends the `server_stopping` notification; false when the client is gone.
async fn tell_stopping<S>(sink: &mut S, shutdown: &Shutdown) -> bool
where
    S: futures::Sink<Message> + Unpin,
{
    sink.send(Message::text(crate::drain::notice(shutdown)))
        .await
        .is_ok()
}

/// The close of a session that ended without a failure: 1001 ("going away") with the reason when
/// the server stops, 1000 otherwise (`shutdown`, the client's end).
fn ending_close(shutdown: Option<&Shutdown>) -> CloseFrame {
    match shutdown {
        Some(shutdown) => CloseFrame {
            code: CloseCode::Away,
            reason: shutdown.close_reason().into(),
        },
        None => CloseFrame {
            code: CloseCode::Normal,
            reason: "the server ended the session".into(),
        },
    }
}

/// The close for a message the connection cannot go on from: a text message that is not UTF-8
/// (1007), one far over the request limit (1009), a frame RFC 6455 forbids (1002, "protocol
/// error", so a client tells its framing bug from the end of its session). Other errors (the
/// connection lost) close as the end of the session does.
fn close_for(error: &tungstenite::Error) -> Option<CloseFrame> {
    match error {
        tungstenite::Error::Protocol(violation) if breaks_framing(violation) => Some(CloseFrame {
            code: CloseCode::Protocol,
            reason: close_reason(&violation.to_string()).into(),
        }),
        tungstenite::Error::Utf8(_) => Some(CloseFrame {
            code: CloseCode::Invalid,
            reason: "a text message was not UTF-8".into(),
        }),
        tungstenite::Error::Capacity(_) => Some(CloseFrame {
            code: CloseCode::Size,
            reason: "the message is over 2 × (`server.maxRequestBytes` + 64 KiB)".into(),
        }),
        // A message that stalled or trickled in while it held the server's budget.
        tungstenite::Error::Io(error) if error.kind() == std::io::ErrorKind::TimedOut => {
            Some(CloseFrame {
                code: CloseCode::Policy,
                reason: error.to_string().into(),
            })
        }
        tungstenite::Error::ConnectionClosed
        | tungstenite::Error::AlreadyClosed
        | tungstenite::Error::Io(_)
        | tungstenite::Error::Tls(_)
        | tungstenite::Error::Protocol(_)
        | tungstenite::Error::WriteBufferFull(_)
        | tungstenite::Error::AttackAttempt
        | tungstenite::Error::Url(_)
        | tungstenite::Error::Http(_)
        | tungstenite::Error::HttpFormat(_) => None,
    }
}

/// Whether the client sent a frame RFC 6455 forbids (a reserved bit or opcode, an unmasked frame,
/// a control frame fragmented or over 125 bytes, a continuation with no message open, a new
/// message inside an unfinished one, a malformed close). The handshake's errors happened before
/// the upgrade; a reset or a frame after a close ends the connection as it is.
fn breaks_framing(violation: &tungstenite::error::ProtocolError) -> bool {
    use tungstenite::error::ProtocolError;
    matches!(
        violation,
        ProtocolError::NonZeroReservedBits
            | ProtocolError::UnmaskedFrameFromClient
            | ProtocolError::FragmentedControlFrame
            | ProtocolError::ControlFrameTooBig
            | ProtocolError::UnknownControlFrameType(_)
            | ProtocolError::UnknownDataFrameType(_)
            | ProtocolError::UnexpectedContinueFrame
            | ProtocolError::ExpectedFragment(_)
            | ProtocolError::InvalidOpcode(_)
            | ProtocolError::InvalidCloseSequence
    )
}

/// `text` cut to what a close frame's reason holds (123 bytes), on a character boundary.
fn close_reason(text: &str) -> String {
    const MOST: usize = 123;
    let mut end = text.len().min(MOST);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// Writes a message as one request line, copying it only when it holds a line break.
async fn write_line(requests: &mut DuplexStream, message: Bytes) -> std::io::Result<()> {
    if message.iter().any(|byte| *byte == b'\n' || *byte == b'\r') {
        return requests.write_all(&one_line(message.to_vec())).await;
    }
    requests.write_all(&message).await?;
    requests.write_all(b"\n").await
}

/// A message as one request line: the line breaks JSON allows are whitespace between tokens (a
/// string holds them escaped), so each becomes a space and the request stays one line.
fn one_line(mut bytes: Vec<u8>) -> Vec<u8> {
    for byte in &mut bytes {
        if *byte == b'\n' || *byte == b'\r' {
            *byte = b' ';
        }
    }
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::{close_for, close_reason, one_line, tungstenite};

    #[test]
    fn a_message_that_stalled_holding_the_budget_closes_with_1008() {
        let stalled =
            std::io::Error::new(std::io::ErrorKind::TimedOut, crate::budget::STALLED_REASON);
        let close = close_for(&tungstenite::Error::Io(stalled)).unwrap();
        assert_eq!(u16::from(close.code), 1008);
        let lost = tungstenite::Error::Io(std::io::ErrorKind::ConnectionReset.into());
        assert!(close_for(&lost).is_none());
    }

    /// QA r101 serve D3: a frame RFC 6455 forbids was closed with 1000 and "the server ended
    /// the session", as a clean end.
    #[test]
    fn a_forbidden_frame_closes_with_1002_and_says_why() {
        use tungstenite::error::ProtocolError;
        for (violation, reason) in [
            (
                ProtocolError::UnexpectedContinueFrame,
                "Continue frame but nothing to continue",
            ),
            (
                ProtocolError::ControlFrameTooBig,
                "Control frame too big (payload must be 125 bytes or less)",
            ),
            (
                ProtocolError::InvalidOpcode(3),
                "Encountered invalid opcode: 3",
            ),
        ] {
            let close = close_for(&tungstenite::Error::Protocol(violation)).unwrap();
            assert_eq!(
                (u16::from(close.code), close.reason.as_str()),
                (1002, reason)
            );
        }
        let reset = ProtocolError::ResetWithoutClosingHandshake;
        assert!(close_for(&tungstenite::Error::Protocol(reset)).is_none());
        assert_eq!(close_reason(&"é".repeat(100)).len(), 122);
    }

    #[test]
    fn a_pretty_printed_request_is_one_line_with_the_same_meaning() {
        let pretty = "{\n  \"id\": 1,\r\n  \"method\": \"view.get\",\n  \"params\": {\"text\": \"a\\nb\"}\n}";
        let line = one_line(pretty.as_bytes().to_vec());
        assert_eq!(line.iter().filter(|byte| **byte == b'\n').count(), 1);
        assert_eq!(line.last(), Some(&b'\n'));
        let parsed: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(
            parsed,
            serde_json::from_str::<serde_json::Value>(pretty).unwrap()
        );
    }
}
