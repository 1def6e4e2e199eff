//! The Anthropic cache rule checked against what Anthropic billed: a Claude Code transcript records
//! each request's `usage` (`input_tokens`, `cache_creation_input_tokens`,
//! `cache_read_input_tokens`); replaying the requests Claude Code sent through
//! [`CacheState::bill_at`] must predict the cache reads it recorded.
//!
//! **The requests.** Each assistant message (one `message.id`, written as one record per content
//! block) answered one request: the main chain (`parentUuid` links; sidechains and synthetic error
//! messages left out) from the root to the record before it, consecutive records of one role merged
//! into one API message, after Claude Code's system prompt and tools (one unit of `P` tokens, with
//! its own breakpoint). **Sizes.** The transcript holds no per-message token counts, only each
//! request's exact total `T` (input + cache writes + cache reads). A message keeps the size it was
//! given when it first appeared; the new messages of a request share what its total adds (`T` − `P`
//! − the known messages) in proportion to their JSON length; `P` is a request's total minus its
//! messages' chars/4 estimate, the least over its first five requests. When a request is smaller
//! than its known messages (something was stripped, or an earlier request held more than its
//! messages), all its messages are scaled to fit: every replayed request has its recorded total. **Breakpoints** (`Placement`): on the system prompt and
//! on the last message, or the last two. **Lifetime**: one hour when the request wrote to the
//! one-hour cache, five minutes when it wrote to the five-minute one, else as before. The first
//! request of a file is left out of the comparison: whether the system prompt was already cached by
//! an earlier session is not in the file.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::SimulateError;
use super::cache_rule::{ANTHROPIC_LOOKBACK_BLOCKS, CacheRule, CacheState};
use super::meter::Request;

/// Where the replayed requests carry their message breakpoints (the system prompt has one always).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// The last message only.
    LastMessage,
    /// The last two messages (Claude Code's `cache_control` on the two latest).
    LastTwoMessages,
}

/// The rule the requests are billed with: the simulator's Anthropic rule, and two ablations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum CheckRule {
    /// Breakpoints, the 20-block lookback, the 1,024-token minimum, the cache's lifetime.
    Anthropic,
    /// The same with entries that never expire (the simulator's replays are timeless).
    AnthropicTimeless,
    /// What the simulator billed every provider before issue 41: the longest prefix shared with
    /// the previous request, whole messages, no minimum.
    LongestPrefix,
}

/// Cache tokens of a set of requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CacheTokens {
    pub read: u64,
    pub write: u64,
    /// Every input token (read, written and plain).
    pub input: u64,
}

/// One transcript's recorded and simulated cache tokens.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheCheck {
    pub path: String,
    /// Requests compared (the first of the file left out).
    pub requests: usize,
    pub recorded: CacheTokens,
    pub simulated: CacheTokens,
    /// Requests whose messages were rescaled (the recorded total was below the known part).
    pub estimated_requests: usize,
}

impl CacheCheck {
    /// (simulated − recorded) / recorded reads.
    pub fn read_error(&self) -> f64 {
        relative(self.simulated.read, self.recorded.read)
    }
}

fn relative(simulated: u64, recorded: u64) -> f64 {
    if recorded == 0 {
        0.0
    } else {
        (simulated as f64 - recorded as f64) / recorded as f64
    }
}

/// One API message of the transcript.
#[derive(Debug, Clone)]
struct Unit {
    key: String,
    chars: u64,
    blocks: u32,
}

/// One request: its messages, when it was sent, what it recorded.
#[derive(Debug)]
struct Recorded {
    model: String,
    units: Vec<Unit>,
    time_ms: i64,
    lifetime_ms: Option<i64>,
    input: u64,
    write: u64,
    read: u64,
}

const FIVE_MINUTES_MS: i64 = 5 * 60 * 1000;
const ONE_HOUR_MS: i64 = 60 * 60 * 1000;
/// Claude Code's models (Sonnet and Opus 4.x): a prefix under 1,024 tokens is not cached.
const MIN_CACHEABLE: u64 = 1_024;

/// Replays the requests of the Claude Code transcript at `path` and compares the cache reads.
pub fn check_claude_code(
    path: &Path,
    placement: Placement,
    rule: CheckRule,
) -> Result<CacheCheck, SimulateError> {
    let failed = |reason: String| SimulateError::Session {
        path: path.to_path_buf(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|error| failed(error.to_string()))?;
    let records: Vec<Value> = text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let requests = requests(&records);
    if requests.len() < 2 {
        return Err(failed(
            "fewer than two requests with recorded usage".to_owned(),
        ));
    }
    Ok(replay(path, &requests, placement, rule))
}

fn replay(path: &Path, requests: &[Recorded], placement: Placement, rule: CheckRule) -> CacheCheck {
    let (cache_rule, timed) = match rule {
        CheckRule::Anthropic | CheckRule::AnthropicTimeless => (
            CacheRule::Breakpoints {
                min_tokens: MIN_CACHEABLE,
                lookback_blocks: ANTHROPIC_LOOKBACK_BLOCKS,
            },
            rule == CheckRule::Anthropic,
        ),
        CheckRule::LongestPrefix => (
            CacheRule::Prefix {
                min_tokens: 0,
                increment: 1,
            },
            false,
        ),
    };
    let mut caches: HashMap<&str, CacheState> = HashMap::new();
    let mut sizes: HashMap<&str, u64> = HashMap::new();
    let systems = system_sizes(requests);
    let mut first_seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut lifetime = FIVE_MINUTES_MS;
    let mut check = CacheCheck {
        path: path.display().to_string(),
        requests: 0,
        recorded: CacheTokens::default(),
        simulated: CacheTokens::default(),
        estimated_requests: 0,
    };
    for (index, recorded) in requests.iter().enumerate() {
        let total = recorded.input + recorded.write + recorded.read;
        let first_of_model = first_seen.insert(recorded.model.as_str());
        let system_tokens = systems.get(recorded.model.as_str()).copied().unwrap_or(0);
        let estimated = size_units(&mut sizes, &recorded.units, total, system_tokens);
        let request = request_of(recorded, &sizes, system_tokens);
        let last = request.tokens.len() - 1;
        let mut breakpoints = vec![0];
        match placement {
            Placement::LastMessage => {}
            Placement::LastTwoMessages if last >= 2 => breakpoints.push(last - 1),
            Placement::LastTwoMessages => {}
        }
        if last >= 1 {
            breakpoints.push(last);
        }
        lifetime = recorded.lifetime_ms.unwrap_or(lifetime);
        let cache = caches
            .entry(recorded.model.as_str())
            .or_insert_with(|| CacheState::new(cache_rule));
        let bill = cache.bill_at(
            &request,
            &breakpoints,
            timed.then_some((recorded.time_ms, lifetime)),
        );
        if index == 0 || first_of_model {
            continue;
        }
        check.requests += 1;
        check.estimated_requests += usize::from(estimated);
        check.recorded.read += recorded.read;
        check.recorded.write += recorded.write;
        check.recorded.input += total;
        check.simulated.read += bill.read;
        check.simulated.write += bill.write;
        check.simulated.input += request.total_tokens();
    }
    check
}

/// Requests of a model whose totals estimate its system prompt and tools.
const SYSTEM_SAMPLE: usize = 5;

/// Each model's system prompt and tools: the least of total − the messages' chars/4 over its first
/// [`SYSTEM_SAMPLE`] requests (a session's first request is sometimes larger: a resumed history, a
/// different prompt), at least 0.
fn system_sizes(requests: &[Recorded]) -> HashMap<&str, u64> {
    let mut sizes: HashMap<&str, (usize, u64)> = HashMap::new();
    for recorded in requests {
        let total = recorded.input + recorded.write + recorded.read;
        let messages: u64 = recorded.units.iter().map(|unit| unit.chars / 4).sum();
        let (count, least) = sizes
            .entry(recorded.model.as_str())
            .or_insert((0, u64::MAX));
        if *count < SYSTEM_SAMPLE {
            *count += 1;
            *least = (*least).min(total.saturating_sub(messages));
        }
    }
    sizes
        .into_iter()
        .map(|(model, (_, least))| (model, least))
        .collect()
}

/// Sizes the request's messages so that they and the system prompt make `total`: the messages
/// not sized yet share what `total` adds over the known ones, in proportion to their JSON length;
/// when it adds nothing (a known message was sized too large: a request is sometimes smaller than
/// the one before, when something was stripped or a first request held more than its messages),
/// every message of the request is scaled to fit, the new ones first given chars/4. `true` when it
/// rescaled.
fn size_units<'a>(
    sizes: &mut HashMap<&'a str, u64>,
    units: &'a [Unit],
    total: u64,
    system_tokens: u64,
) -> bool {
    let target = total.saturating_sub(system_tokens);
    let known: u64 = units
        .iter()
        .filter_map(|unit| sizes.get(unit.key.as_str()))
        .sum();
    let new: Vec<&Unit> = units
        .iter()
        .filter(|unit| !sizes.contains_key(unit.key.as_str()))
        .collect();
    let new_chars: u64 = new.iter().map(|unit| unit.chars).sum();
    let added = target.saturating_sub(known);
    if added > 0 && new_chars > 0 {
        let mut given = 0;
        for (position, unit) in new.iter().enumerate() {
            let size = if position + 1 == new.len() {
                added - given
            } else {
                added * unit.chars / new_chars
            };
            given += size;
            sizes.insert(unit.key.as_str(), size);
        }
        return false;
    }
    for unit in &new {
        sizes.insert(unit.key.as_str(), (unit.chars / 4).max(1));
    }
    let sum: u64 = units
        .iter()
        .filter_map(|unit| sizes.get(unit.key.as_str()))
        .sum();
    if sum == target || sum == 0 {
        return false;
    }
    for unit in units {
        if let Some(size) = sizes.get_mut(unit.key.as_str()) {
            *size = u64::try_from(u128::from(*size) * u128::from(target) / u128::from(sum))
                .unwrap_or(u64::MAX);
        }
    }
    true
}

fn request_of(recorded: &Recorded, sizes: &HashMap<&str, u64>, system_tokens: u64) -> Request {
    let mut request = Request::default();
    let mut push = |key: &str, tokens: u64, blocks: u32| {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        request.prefix_hashes.last().hash(&mut hasher);
        key.hash(&mut hasher);
        request.prefix_hashes.push(hasher.finish());
        request.messages.push(std::sync::Arc::from(key));
        request.tokens.push(tokens);
        request.blocks.push(blocks);
    };
    push(&recorded.model, system_tokens, 1);
    for unit in &recorded.units {
        let tokens = sizes.get(unit.key.as_str()).copied().unwrap_or(0);
        push(&unit.key, tokens, unit.blocks);
    }
    request
}

/// The requests of a transcript, in file order.
fn requests(records: &[Value]) -> Vec<Recorded> {
    let by_uuid: HashMap<&str, &Value> = records
        .iter()
        .filter_map(|record| Some((record.get("uuid")?.as_str()?, record)))
        .collect();
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut requests = Vec::new();
    for record in records {
        if !is_message(record, "assistant") {
            continue;
        }
        let message = &record["message"];
        let (Some(id), Some(usage)) = (message["id"].as_str(), message.get("usage")) else {
            continue;
        };
        if !seen.insert(id) {
            continue;
        }
        let chain = chain_before(record, &by_uuid);
        let number = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        let creation = &usage["cache_creation"];
        let lifetime_ms = if creation["ephemeral_1h_input_tokens"].as_u64() > Some(0) {
            Some(ONE_HOUR_MS)
        } else if creation["ephemeral_5m_input_tokens"].as_u64() > Some(0) {
            Some(FIVE_MINUTES_MS)
        } else {
            None
        };
        requests.push(Recorded {
            model: message["model"].as_str().unwrap_or("").to_owned(),
            units: units_of(&chain),
            time_ms: time_ms(record["timestamp"].as_str().unwrap_or("")),
            lifetime_ms,
            input: number("input_tokens"),
            write: number("cache_creation_input_tokens"),
            read: number("cache_read_input_tokens"),
        });
    }
    requests
}

/// A user or assistant record of the main chain that was sent to the model (an `attachment`
/// record — a file, a reminder — is sent as the user's).
fn is_message(record: &Value, role: &str) -> bool {
    if role == "user" && record["type"].as_str() == Some("attachment") {
        return record["isSidechain"].as_bool() != Some(true);
    }
    record["type"].as_str() == Some(role)
        && record["isSidechain"].as_bool() != Some(true)
        && record["isApiErrorMessage"].as_bool() != Some(true)
        && record["message"]["model"].as_str() != Some("<synthetic>")
        && record.get("message").is_some()
}

/// The messages before `record` on its chain, root first.
fn chain_before<'a>(record: &Value, by_uuid: &HashMap<&str, &'a Value>) -> Vec<&'a Value> {
    let mut chain = Vec::new();
    let mut parent = record["parentUuid"].as_str();
    while let Some(uuid) = parent {
        let Some(found) = by_uuid.get(uuid) else {
            break;
        };
        if chain.len() > by_uuid.len() {
            break; // a cycle
        }
        chain.push(*found);
        parent = found["parentUuid"].as_str();
    }
    chain.reverse();
    chain.retain(|record| is_message(record, "user") || is_message(record, "assistant"));
    chain
}

/// Consecutive records of one role merged into API messages.
fn units_of(chain: &[&Value]) -> Vec<Unit> {
    let mut units: Vec<(&str, Unit)> = Vec::new();
    for record in chain {
        let role = match record["type"].as_str() {
            Some("assistant") => "assistant",
            Some(_) | None => "user",
        };
        let content = match record.get("attachment") {
            Some(attachment) => attachment,
            None => &record["message"]["content"],
        };
        let chars = u64::try_from(content.to_string().len()).unwrap_or(u64::MAX);
        let blocks = content
            .as_array()
            .map_or(1, |blocks| u32::try_from(blocks.len()).unwrap_or(u32::MAX));
        let uuid = record["uuid"].as_str().unwrap_or("");
        match units.last_mut() {
            Some((last_role, unit)) if *last_role == role => {
                unit.key.push(' ');
                unit.key.push_str(uuid);
                unit.chars += chars;
                unit.blocks += blocks;
            }
            Some(_) | None => units.push((
                role,
                Unit {
                    key: uuid.to_owned(),
                    chars,
                    blocks,
                },
            )),
        }
    }
    units.into_iter().map(|(_, unit)| unit).collect()
}

/// Milliseconds since the epoch of an RFC 3339 time (`0` when it is not one).
fn time_ms(text: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(text).map_or(0, |time| time.timestamp_millis())
}

/// The per-file table and the overall line, as markdown.
pub fn render_cache_checks(checks: &[CacheCheck], placement: Placement, rule: CheckRule) -> String {
    use std::fmt::Write as _;
    let mut out = format!(
        "Rule: {}. Breakpoints: the system prompt and {}.\n\n\
         | Transcript | Requests | Recorded reads | Simulated reads | Error | Recorded writes | \
         Simulated writes | Rescaled |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
        match rule {
            CheckRule::Anthropic =>
                "Anthropic's (breakpoints, 20-block lookback, 1,024-token minimum, lifetime)",
            CheckRule::AnthropicTimeless => "Anthropic's without expiry",
            CheckRule::LongestPrefix =>
                "the longest prefix shared with the previous request (before issue 41)",
        },
        match placement {
            Placement::LastMessage => "the last message",
            Placement::LastTwoMessages => "the last two messages",
        },
    );
    let mut total = CacheCheck {
        path: "overall".to_owned(),
        requests: 0,
        recorded: CacheTokens::default(),
        simulated: CacheTokens::default(),
        estimated_requests: 0,
    };
    for check in checks {
        row(&mut out, check);
        total.requests += check.requests;
        total.estimated_requests += check.estimated_requests;
        for (sum, part) in [
            (&mut total.recorded, &check.recorded),
            (&mut total.simulated, &check.simulated),
        ] {
            sum.read += part.read;
            sum.write += part.write;
            sum.input += part.input;
        }
    }
    row(&mut out, &total);
    let within = checks
        .iter()
        .filter(|check| check.read_error().abs() <= 0.10)
        .count();
    let _ = writeln!(
        out,
        "\n{within} of {} transcripts within 10%; overall error {:+.1}%.",
        checks.len(),
        total.read_error() * 100.0
    );
    out
}

fn row(out: &mut String, check: &CacheCheck) {
    use std::fmt::Write as _;
    let name = Path::new(&check.path)
        .file_name()
        .map_or(check.path.clone(), |name| {
            name.to_string_lossy().into_owned()
        });
    let _ = writeln!(
        out,
        "| {name} | {} | {} | {} | {:+.1}% | {} | {} | {} |",
        check.requests,
        check.recorded.read,
        check.simulated.read,
        check.read_error() * 100.0,
        check.recorded.write,
        check.simulated.write,
        check.estimated_requests,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A transcript line: a user record (tool results or a prompt) or an assistant record with
    /// its usage, chained by `parentUuid`.
    fn record(uuid: &str, parent: Option<&str>, body: Value) -> String {
        let mut line = json!({"uuid": uuid, "parentUuid": parent, "isSidechain": false});
        if let (Value::Object(line), Value::Object(body)) = (&mut line, body) {
            line.extend(body);
        }
        line.to_string()
    }

    fn user(uuid: &str, parent: Option<&str>, text: &str, time: &str) -> String {
        record(
            uuid,
            parent,
            json!({"type": "user", "timestamp": time,
                   "message": {"role": "user", "content": [{"type": "text", "text": text}]}}),
        )
    }

    fn assistant(uuid: &str, parent: &str, id: &str, usage: (u64, u64, u64), time: &str) -> String {
        record(
            uuid,
            Some(parent),
            json!({"type": "assistant", "timestamp": time, "message": {
                "id": id, "model": "claude-sonnet-4-5", "role": "assistant",
                "content": [{"type": "text", "text": "working on it"}],
                "usage": {"input_tokens": usage.0, "cache_creation_input_tokens": usage.1,
                          "cache_read_input_tokens": usage.2,
                          "cache_creation": {"ephemeral_5m_input_tokens": usage.1}}}}),
        )
    }

    /// Four requests: the second and third read what the one before wrote; the fourth comes
    /// ten minutes later, after the five-minute cache expired, and reads nothing.
    fn transcript() -> String {
        let text = "x".repeat(8_000);
        [
            user("u1", None, &text, "2026-01-01T10:00:00Z"),
            assistant("a1", "u1", "m1", (3, 12_000, 0), "2026-01-01T10:00:05Z"),
            user("u2", Some("a1"), &text, "2026-01-01T10:00:10Z"),
            assistant("a2", "u2", "m2", (3, 2_000, 12_003), "2026-01-01T10:00:15Z"),
            user("u3", Some("a2"), &text, "2026-01-01T10:00:20Z"),
            assistant("a3", "u3", "m3", (3, 2_000, 14_003), "2026-01-01T10:00:25Z"),
            user("u4", Some("a3"), &text, "2026-01-01T10:10:25Z"),
            assistant("a4", "u4", "m4", (3, 18_003, 0), "2026-01-01T10:10:30Z"),
        ]
        .join("\n")
    }

    #[test]
    fn reads_follow_the_previous_breakpoint_and_expire_after_the_lifetime() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("transcript.jsonl");
        std::fs::write(&path, transcript()).unwrap();
        let timed = check_claude_code(&path, Placement::LastMessage, CheckRule::Anthropic).unwrap();
        assert_eq!(timed.requests, 3);
        assert_eq!(timed.recorded.read, 12_003 + 14_003);
        // Requests 2 and 3 read the previous request whole, request 4 nothing.
        let timeless =
            check_claude_code(&path, Placement::LastMessage, CheckRule::AnthropicTimeless).unwrap();
        assert!(
            timed.simulated.read < timeless.simulated.read,
            "{timed:?} {timeless:?}"
        );
        assert!(timed.read_error().abs() < 0.01, "{timed:?}");
        assert!(timeless.read_error() > 0.5, "{timeless:?}");
        // Every replayed request has its recorded total.
        assert_eq!(timed.simulated.input, timed.recorded.input);
    }

    #[test]
    fn a_transcript_without_two_requests_is_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("short.jsonl");
        std::fs::write(&path, user("u1", None, "hi", "2026-01-01T10:00:00Z")).unwrap();
        let error =
            check_claude_code(&path, Placement::LastMessage, CheckRule::Anthropic).unwrap_err();
        assert!(error.to_string().contains("short.jsonl"), "{error}");
    }
}
