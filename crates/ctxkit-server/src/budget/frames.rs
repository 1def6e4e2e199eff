//! The WebSocket frames a client sends (RFC 6455, 5.2), followed header by header so a message's
//! share of the budget is taken before its payload is read.

/// Where a socket's reads are in the WebSocket frames a client sends (RFC 6455, 5.2).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Cursor {
    /// In a frame's header, of which `filled` bytes are read.
    Header {
        bytes: [u8; MAX_HEADER],
        filled: usize,
    },
    /// Before a payload of `remaining` bytes, waiting for `wanted` bytes of the budget.
    Budget { wanted: u64, remaining: u64 },
    /// In a payload, `remaining` bytes to read.
    Payload { remaining: u64 },
}

/// A frame header's most bytes: 2, 8 of extended length, 4 of mask.
const MAX_HEADER: usize = 14;

/// A message in one frame of at most this many bytes takes no share: a connection reads one such
/// message at a time, so they hold at most this much each, and a request as small as
/// `initialize` never waits behind a large message that waits for room.
pub(crate) const SMALL_MESSAGE_BYTES: u64 = 64 * 1024;

impl Cursor {
    pub(super) fn header() -> Self {
        Self::Header {
            bytes: [0; MAX_HEADER],
            filled: 0,
        }
    }

    /// How many bytes the header has in all, once its first two are known.
    pub(super) fn header_length(first: [u8; 2]) -> usize {
        let extended = match first[1] & 0x7f {
            126 => 2,
            127 => 8,
            _ => 0,
        };
        let mask = if first[1] & 0x80 != 0 { 4 } else { 0 };
        2 + extended + mask
    }

    /// The payload length a whole header gives.
    pub(super) fn payload_length(header: &[u8]) -> u64 {
        match header[1] & 0x7f {
            126 => u64::from(u16::from_be_bytes([header[2], header[3]])),
            127 => header[2..10]
                .iter()
                .fold(0, |length, byte| (length << 8) | u64::from(*byte)),
            short => u64::from(short),
        }
    }

    /// The header bytes still to read (none once it is whole).
    pub(super) fn header_wanted(bytes: &[u8; MAX_HEADER], filled: usize) -> usize {
        if filled < 2 {
            return 2 - filled;
        }
        Self::header_length([bytes[0], bytes[1]]) - filled
    }

    /// What follows a whole header: the budget a message's first frame takes (a whole message
    /// in one frame, its payload; the first of several, `message_limit`, the most they can add up
    /// to), or the payload at once (a control frame of at most 125 bytes, a small message
    /// ([`SMALL_MESSAGE_BYTES`]), or a later fragment of the message `fragmented` says is open,
    /// covered by its first). Any other frame (a control
    /// frame claiming more, a continuation with no message open) is against the protocol: it takes
    /// its payload's share, so nothing is read beyond the budget before it is refused.
    /// `fragmented` becomes whether a fragmented message is open after this frame.
    pub(super) fn after_header(header: &[u8], message_limit: u64, fragmented: &mut bool) -> Self {
        let remaining = Self::payload_length(header);
        let (last, opcode) = (header[0] & 0x80 != 0, header[0] & 0x0f);
        let control = opcode & 0x08 != 0;
        let wanted = match (opcode, last) {
            (_, _) if control && remaining <= 125 => 0,
            (_, _) if control => remaining,
            (0, last) if *fragmented => {
                *fragmented = !last;
                0
            }
            (0, _) => remaining,
            (_, true) if remaining <= SMALL_MESSAGE_BYTES => 0,
            (_, true) => remaining,
            (_, false) => {
                *fragmented = true;
                message_limit
            }
        };
        if wanted == 0 {
            Self::Payload { remaining }
        } else {
            Self::Budget { wanted, remaining }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A masked client frame's header: `opcode` (1 text, 0 continuation, 9 ping), final or not.
    pub(crate) fn header(opcode: u8, length: usize, last: bool) -> Vec<u8> {
        let mut header = vec![opcode | if last { 0x80 } else { 0 }];
        match length {
            0..=125 => header.push(0x80 | length as u8),
            126..=65_535 => {
                header.push(0x80 | 126);
                header.extend_from_slice(&(length as u16).to_be_bytes());
            }
            _ => {
                header.push(0x80 | 127);
                header.extend_from_slice(&(length as u64).to_be_bytes());
            }
        }
        header.extend_from_slice(&[1, 2, 3, 4]);
        header
    }

    pub(crate) fn frame(opcode: u8, length: usize, last: bool) -> Vec<u8> {
        let mut frame = header(opcode, length, last);
        frame.extend(std::iter::repeat_n(b'x', length));
        frame
    }

    #[test]
    fn headers_say_how_long_they_are_and_their_payload() {
        for length in [0, 5, 125, 126, 65_535, 65_536, 3 << 30] {
            let bytes = header(1, length, true);
            assert_eq!(Cursor::header_length([bytes[0], bytes[1]]), bytes.len());
            assert_eq!(Cursor::payload_length(&bytes), length as u64);
        }
    }
}
