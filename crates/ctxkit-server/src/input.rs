//! Request lines read with a size limit: a line longer than the limit is discarded up to its
//! newline as it arrives (never held whole in memory) and answered with an error.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The default limit of one request line (`server.maxRequestBytes`).
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

/// The default byte budget of the request queue (`server.maxQueuedBytes`).
pub const DEFAULT_MAX_QUEUED_BYTES: usize = 256 * 1024 * 1024;

/// The permits a line of `length` bytes holds in a queue of `budget` bytes: its length, at least
/// one, at most the whole budget (a line longer than the budget waits for an empty queue).
pub(crate) fn permits(length: usize, budget: usize) -> u32 {
    // Counted in KiB so every budget fits the semaphore's `u32` count of permits.
    let to_kib = |bytes: usize| {
        u32::try_from(bytes.div_ceil(1024))
            .unwrap_or(u32::MAX)
            .max(1)
    };
    to_kib(length).min(to_kib(budget))
}

/// One line of input.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A whole line, without its newline.
    Text(Vec<u8>),
    /// A line longer than the limit; this many bytes of it were discarded.
    TooLong(usize),
}

/// Reads the next line (`None` at the end of input). A last line without a newline counts.
pub(crate) async fn next_line<R>(input: &mut R, limit: usize) -> std::io::Result<Option<Line>>
where
    R: AsyncBufRead + Unpin,
{
    let mut line = Vec::new();
    let mut discarded = 0usize;
    loop {
        let buffer = input.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(match (discarded, line.is_empty()) {
                (0, true) => None,
                (0, false) => Some(Line::Text(line)),
                (_, _) => Some(Line::TooLong(discarded)),
            });
        }
        let (chunk, found_newline) = match memchr_newline(buffer) {
            Some(index) => (&buffer[..index], true),
            None => (buffer, false),
        };
        let used = chunk.len() + usize::from(found_newline);
        if discarded > 0 || line.len() + chunk.len() > limit {
            discarded += line.len() + chunk.len();
            line = Vec::new();
        } else {
            line.extend_from_slice(chunk);
        }
        input.consume(used);
        if found_newline {
            return Ok(Some(if discarded > 0 {
                Line::TooLong(discarded)
            } else {
                Line::Text(line)
            }));
        }
    }
}

fn memchr_newline(buffer: &[u8]) -> Option<usize> {
    buffer.iter().position(|byte| *byte == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn long_lines_are_discarded_to_their_newline() {
        let text = format!("{}\nshort\n{}\nlast", "x".repeat(100), "y".repeat(11));
        let mut input = tokio::io::BufReader::with_capacity(8, text.as_bytes());
        let mut lines = Vec::new();
        while let Some(line) = next_line(&mut input, 10).await.unwrap() {
            lines.push(line);
        }
        assert_eq!(
            lines,
            vec![
                Line::TooLong(100),
                Line::Text(b"short".to_vec()),
                Line::TooLong(11),
                Line::Text(b"last".to_vec()),
            ]
        );
    }

    /// A line without a newline that never ends does not grow memory past the limit.
    #[tokio::test]
    async fn an_endless_line_is_never_held() {
        let (mut writer, reader) = tokio::io::duplex(1 << 16);
        let feeder = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let block = vec![b'z'; 1 << 16];
            for _ in 0..256 {
                writer.write_all(&block).await.unwrap();
            }
            writer.write_all(b"\n{}\n").await.unwrap();
        });
        let mut input = tokio::io::BufReader::new(reader);
        let first = next_line(&mut input, 1 << 20).await.unwrap();
        assert_eq!(first, Some(Line::TooLong(256 << 16)));
        let second = next_line(&mut input, 1 << 20).await.unwrap();
        assert_eq!(second, Some(Line::Text(b"{}".to_vec())));
        feeder.await.unwrap();
    }
}
