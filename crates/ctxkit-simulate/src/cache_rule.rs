//! How each provider's prompt cache decides what part of a request it serves, replayed request by
//! request.
//!
//! - **Anthropic** ([`CacheRule::Breakpoints`]): a prefix is written to the cache only at a
//!   `cache_control` breakpoint (at most four per request), and only when it is at least the
//!   model's minimum cacheable length (1,024 tokens for Sonnet 4.5 and Opus 4.1; 4,096 for Opus
//!   4.5 and Haiku 4.5). A later request reads the longest cached prefix it can reach: from each of
//!   its breakpoints the API checks that position and the block boundaries up to 20 blocks before
//!   it, and takes the first one an earlier request wrote. What lies between the read and the last
//!   breakpoint is a cache write; what lies after the last breakpoint is plain input. Breakpoints
//!   are placed as ctxkit's Anthropic client places them (`ctxkit-llm`, `anthropic_cache.rs`): on
//!   the last message when it is the user's (a tool result is a user block), and on the last pruned
//!   tool result (the end of the stable, pruned part of the prefix). The simulated requests carry
//!   no system prompt or tools, so their two breakpoints are not modelled. Sources: Anthropic's
//!   prompt-caching guide (platform.claude.com/docs/en/build-with-claude/prompt-caching, read
//!   2026): "up to 4 cache breakpoints", "the system automatically checks for cache hits at all
//!   previous content block boundaries (up to approximately 20 blocks before your explicit
//!   breakpoint)", minimum cacheable prompt length per model. Checked against the cache reads real
//!   Claude Code sessions recorded (`claude_check`, docs/simulator.md): within 1.4% over 35
//!   transcripts, 3.4% over 4 held out.
//! - **OpenAI** ([`CacheRule::Prefix`] with 1,024 and 128): automatic; the longest prefix shared
//!   with a recent request is read when it is at least 1,024 tokens, in 128-token increments; there
//!   is no write fee (OpenAI's prompt-caching guide).
//! - **Gemini** ([`CacheRule::Prefix`] with 2,048 and 1): implicit caching of a prefix shared with
//!   a recent request, from 2,048 tokens on Gemini 2.5 (ai.google.dev/gemini-api/docs/caching, read
//!   2026); no write fee.
//!
//! Prefixes are compared by hashes of the serialized messages, in whole messages. A cache entry
//! never expires in a simulated replay (its calls are seconds apart); given request times
//! ([`CacheState::bill_at`], as `claude_check` replays Claude Code transcripts with their real
//! gaps) an Anthropic entry lives for its lifetime (5 minutes or 1 hour) after it was last written
//! or read.

use std::collections::HashMap;

use serde::Serialize;

use super::meter::Request;

/// The Anthropic API's lookback from a breakpoint, in content blocks.
pub const ANTHROPIC_LOOKBACK_BLOCKS: u64 = 20;

/// A provider's prompt-cache rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "rule")]
pub enum CacheRule {
    /// Anthropic: explicit breakpoints, a lookback, a minimum cacheable length.
    Breakpoints {
        min_tokens: u64,
        lookback_blocks: u64,
    },
    /// OpenAI and Gemini: the longest prefix shared with an earlier request, from `min_tokens`, in
    /// steps of `increment` tokens.
    Prefix { min_tokens: u64, increment: u64 },
}

/// How one request's input is billed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheBill {
    /// Read from the cache.
    pub read: u64,
    /// Written to the cache (Anthropic) — with no write fee, plain input.
    pub write: u64,
    /// Neither: after the last breakpoint, or no cache at all.
    pub plain: u64,
}

/// The cache a provider holds for one conversation.
#[derive(Debug, Clone)]
pub(crate) struct CacheState {
    rule: CacheRule,
    /// Anthropic: the prefix hashes written at breakpoints, when each expires (ms; `i64::MAX` when
    /// requests carry no time) and its lifetime (a read refreshes an entry for its own lifetime:
    /// an hour-long entry read by a five-minute request lives another hour).
    written: HashMap<u64, (i64, i64)>,
    /// Prefix rules: the prefix hashes of the previous request.
    previous: Vec<u64>,
    /// Prefix rules: when the previous request's prefix expires (ms; `i64::MAX` when timeless).
    previous_expires: i64,
}

impl CacheState {
    pub(crate) fn new(rule: CacheRule) -> Self {
        Self {
            rule,
            written: HashMap::new(),
            previous: Vec::new(),
            previous_expires: i64::MAX,
        }
    }

    /// Bills `request` and updates the cache with what it writes; breakpoints where ctxkit's client
    /// puts them, no expiry.
    #[cfg(test)]
    pub(crate) fn bill(&mut self, request: &Request) -> CacheBill {
        self.bill_at(request, &request.breakpoints(), None)
    }

    /// Bills `request` with its breakpoints at `breakpoints` (message positions, ascending), sent
    /// at `time` (ms, with the cache lifetime in ms) or timeless.
    pub(crate) fn bill_at(
        &mut self,
        request: &Request,
        breakpoints: &[usize],
        time: Option<(i64, i64)>,
    ) -> CacheBill {
        match self.rule {
            CacheRule::Breakpoints {
                min_tokens,
                lookback_blocks,
            } => {
                let rule = BreakpointRule {
                    min_tokens,
                    lookback_blocks,
                };
                self.bill_breakpoints(request, breakpoints, rule, time)
            }
            CacheRule::Prefix {
                min_tokens,
                increment,
            } => self.bill_prefix(request, min_tokens, increment, time),
        }
    }

    fn bill_prefix(
        &mut self,
        request: &Request,
        min_tokens: u64,
        increment: u64,
        time: Option<(i64, i64)>,
    ) -> CacheBill {
        let total = request.total_tokens();
        let (now, expires) = match time {
            Some((now, lifetime)) => (now, now.saturating_add(lifetime)),
            None => (i64::MIN, i64::MAX),
        };
        if self.previous_expires < now {
            self.previous.clear();
        }
        self.previous_expires = expires;
        let shared = self
            .previous
            .iter()
            .zip(&request.prefix_hashes)
            .take_while(|(before, now)| before == now)
            .count();
        let tokens: u64 = request.tokens.iter().take(shared).sum();
        let read = if tokens >= min_tokens.max(1) {
            tokens / increment.max(1) * increment.max(1)
        } else {
            0
        };
        self.previous.clone_from(&request.prefix_hashes);
        CacheBill {
            read,
            write: total - read,
            plain: 0,
        }
    }

    fn bill_breakpoints(
        &mut self,
        request: &Request,
        breakpoints: &[usize],
        rule: BreakpointRule,
        time: Option<(i64, i64)>,
    ) -> CacheBill {
        let total = request.total_tokens();
        let ends = prefix_sums(&request.tokens);
        let (now, lifetime) = time.unwrap_or((i64::MIN, i64::MAX));
        let until = |lifetime: i64| match time {
            Some(_) => now.saturating_add(lifetime),
            None => i64::MAX,
        };
        // The longest cached prefix any breakpoint reaches (in messages).
        let mut read_messages = 0usize;
        for &breakpoint in breakpoints {
            let mut blocks_back = 0u64;
            let mut position = breakpoint;
            loop {
                let hash = request.prefix_hashes[position];
                if let Some(entry) = self.written.get_mut(&hash)
                    && entry.0 >= now
                {
                    read_messages = read_messages.max(position + 1);
                    // A read refreshes the entry for its own lifetime.
                    entry.0 = until(entry.1);
                    break;
                }
                blocks_back += u64::from(request.blocks[position]);
                if position == 0 || blocks_back > rule.lookback_blocks {
                    break;
                }
                position -= 1;
            }
        }
        let read = if read_messages > 0 {
            ends[read_messages]
        } else {
            0
        };
        let min_tokens = rule.min_tokens;
        let last_breakpoint = breakpoints.last().map_or(0, |position| position + 1);
        for &breakpoint in breakpoints {
            if ends[breakpoint + 1] >= min_tokens {
                let entry = self
                    .written
                    .entry(request.prefix_hashes[breakpoint])
                    .or_insert((i64::MIN, lifetime));
                // A live entry asked for again keeps the longer of the two lifetimes.
                if entry.0 < now {
                    entry.1 = lifetime;
                } else {
                    entry.1 = entry.1.max(lifetime);
                }
                entry.0 = entry.0.max(until(entry.1));
            }
        }
        let cached_end = ends[last_breakpoint.max(read_messages)];
        let write = if ends[last_breakpoint] >= min_tokens {
            cached_end - read
        } else {
            0
        };
        CacheBill {
            read,
            write,
            plain: total - read - write,
        }
    }
}

/// Anthropic's rule's parameters.
#[derive(Debug, Clone, Copy)]
struct BreakpointRule {
    min_tokens: u64,
    lookback_blocks: u64,
}

/// `sums[i]` = the tokens of the first `i` messages.
fn prefix_sums(tokens: &[u64]) -> Vec<u64> {
    let mut sums = Vec::with_capacity(tokens.len() + 1);
    let mut sum = 0;
    sums.push(0);
    for token in tokens {
        sum += token;
        sums.push(sum);
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxkit_protocol::AgentMessage;
    use serde_json::json;

    const ANTHROPIC: CacheRule = CacheRule::Breakpoints {
        min_tokens: 1_024,
        lookback_blocks: ANTHROPIC_LOOKBACK_BLOCKS,
    };

    fn message(value: serde_json::Value) -> AgentMessage {
        serde_json::from_value(value).unwrap()
    }

    fn user(text: &str) -> AgentMessage {
        message(json!({"role": "user", "content": text}))
    }

    fn call(id: &str) -> AgentMessage {
        message(
            json!({"role": "assistant", "content": [{"type": "toolCall", "id": id,
            "name": "read", "arguments": {}}], "api": "anthropic-messages", "provider": "anthropic",
            "model": "m", "stopReason": "toolUse"}),
        )
    }

    fn result(id: &str, text: &str) -> AgentMessage {
        message(
            json!({"role": "toolResult", "toolCallId": id, "toolName": "read",
            "content": [{"type": "text", "text": text}], "isError": false}),
        )
    }

    /// A conversation of `calls` calls with results of `chars` characters.
    fn conversation(calls: usize, chars: usize) -> Vec<AgentMessage> {
        let mut messages = vec![user(&"task ".repeat(200))];
        for index in 0..calls {
            let id = format!("c{index}");
            messages.push(call(&id));
            messages.push(result(&id, &format!("{id} {}", "x".repeat(chars))));
        }
        messages
    }

    fn bill(state: &mut CacheState, messages: &[AgentMessage]) -> CacheBill {
        state.bill(&Request::measure(messages).unwrap())
    }

    #[test]
    fn a_growing_conversation_reads_the_previous_request_and_writes_the_new_part() {
        let messages = conversation(10, 8_000);
        let mut state = CacheState::new(ANTHROPIC);
        let first = bill(&mut state, &messages[..3]);
        assert_eq!((first.read, first.plain), (0, 0));
        let second = bill(&mut state, &messages[..5]);
        let before = Request::measure(&messages[..3]).unwrap().total_tokens();
        assert_eq!(second.read, before);
        assert_eq!(
            second.write,
            Request::measure(&messages[..5]).unwrap().total_tokens() - before
        );
    }

    #[test]
    fn a_change_before_the_previous_breakpoint_loses_everything_after_it() {
        let messages = conversation(12, 8_000);
        let mut state = CacheState::new(ANTHROPIC);
        for end in (3..=23).step_by(2) {
            bill(&mut state, &messages[..end]);
        }
        // The next request changes result 1 (a prune that moves the cut): only a breakpoint within
        // 20 blocks of one of its own can be read, and every earlier one was written at a tail.
        let mut changed = messages[..25].to_vec();
        changed[2] = result("c0", "c0 pruned");
        let after = bill(&mut state, &changed);
        assert_eq!(after.read, 0, "{after:?}");
        // A prefix rule reads up to the change.
        let mut prefix = CacheState::new(CacheRule::Prefix {
            min_tokens: 1_024,
            increment: 128,
        });
        let mut long_head = messages[..25].to_vec();
        long_head[0] = user(&"task ".repeat(2_000));
        bill(&mut prefix, &long_head[..23]);
        long_head[2] = result("c0", "c0 pruned");
        let read = bill(&mut prefix, &long_head).read;
        let head = Request::measure(&long_head[..2]).unwrap().total_tokens();
        assert!(head > 1_024);
        assert_eq!(read, head / 128 * 128);
    }

    #[test]
    fn the_lookback_reaches_twenty_blocks_and_no_further() {
        let messages = conversation(30, 8_000);
        let mut state = CacheState::new(ANTHROPIC);
        bill(&mut state, &messages[..3]);
        // 9 calls later: 18 blocks back, within reach.
        assert!(bill(&mut state, &messages[..21]).read > 0);
        let mut far = CacheState::new(ANTHROPIC);
        bill(&mut far, &messages[..3]);
        // 12 calls later: 24 blocks back, out of reach.
        assert_eq!(bill(&mut far, &messages[..27]).read, 0);
    }

    #[test]
    fn prefixes_below_the_minimum_are_not_cached() {
        let messages = conversation(3, 100);
        let mut state = CacheState::new(ANTHROPIC);
        let first = bill(&mut state, &messages[..3]);
        assert_eq!((first.read, first.write), (0, 0));
        assert!(first.plain > 0);
        assert_eq!(bill(&mut state, &messages[..5]).read, 0);
    }

    #[test]
    fn an_entry_unused_for_longer_than_its_lifetime_is_gone() {
        let messages = conversation(4, 8_000);
        let minute = 60_000;
        for rule in [
            ANTHROPIC,
            CacheRule::Prefix {
                min_tokens: 1_024,
                increment: 128,
            },
        ] {
            let mut state = CacheState::new(rule);
            let at = |state: &mut CacheState, end: usize, time: i64| {
                let request = Request::measure(&messages[..end]).unwrap();
                state.bill_at(&request, &request.breakpoints(), Some((time, 5 * minute)))
            };
            at(&mut state, 3, 0);
            // Four minutes later: read (and refreshed).
            assert!(at(&mut state, 5, 4 * minute).read > 0, "{rule:?}");
            // Eight minutes after the first request, four after the refresh: still there.
            assert!(at(&mut state, 7, 8 * minute).read > 0, "{rule:?}");
            // Six minutes of silence: expired, everything written again.
            assert_eq!(at(&mut state, 9, 14 * minute).read, 0, "{rule:?}");
        }
    }

    #[test]
    fn an_hour_long_entry_outlives_a_pause_and_a_five_minute_read_does_not_shorten_it() {
        let messages = conversation(6, 8_000);
        let minute = 60_000;
        let mut state = CacheState::new(ANTHROPIC);
        let at = |state: &mut CacheState, end: usize, time: i64, lifetime: i64| {
            let request = Request::measure(&messages[..end]).unwrap();
            state.bill_at(&request, &request.breakpoints(), Some((time, lifetime)))
        };
        let first = at(&mut state, 3, 0, 60 * minute);
        // Twenty minutes later the hour-long entry is read; the request asks for five minutes.
        let second = at(&mut state, 5, 20 * minute, 5 * minute);
        assert_eq!(second.read, first.write);
        // The read refreshed it for its own hour: forty minutes on, the first prefix is still
        // there, while the five-minute entry written at the second request is gone.
        let third = at(&mut state, 7, 60 * minute, 5 * minute);
        assert_eq!(third.read, first.write);
        // Past an hour of silence nothing is left.
        assert_eq!(at(&mut state, 9, 200 * minute, 5 * minute).read, 0);
    }
}
