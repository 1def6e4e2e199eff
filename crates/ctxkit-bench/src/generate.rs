//! The seeded session generator: realistic Pi v3 session files written entry by entry.
//!
//! A session is a run of turns (a user prompt, assistant tool calls with heavy-tailed tool outputs,
//! a final answer), with model and thinking-level changes, labels, custom messages, bash executions,
//! images, Chinese/Japanese text, compactions and branches (with branch summaries) mixed in. Entries
//! are serialized and written one at a time and only a bounded window of recent path ids is kept, so
//! memory stays constant from 1k to 1M entries. The same options always give the same bytes.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::error::GenerateError;
use ctxkit_simulate::Rng;
use ctxkit_simulate::text;

/// How many recent path entries the generator remembers (branch points and compaction cut points
/// are drawn from them).
const WINDOW: usize = 4096;
/// 2025-06-02T09:00:00Z, where generated sessions start.
const START_MS: i64 = 1_748_854_800_000;

/// What to generate.
#[derive(Debug, Clone)]
pub struct GenerateOptions {
    /// Equal seeds give byte-identical files.
    pub seed: u64,
    /// Entries after the header.
    pub entries: u64,
    /// Largest tool output in bytes (the tail of the size distribution is cut here).
    pub max_tool_output: usize,
    /// The header's `cwd`.
    pub cwd: String,
}

impl Default for GenerateOptions {
    fn default() -> Self {
        Self {
            seed: 1,
            entries: 10_000,
            max_tool_output: 1 << 20,
            cwd: "/home/dev/projects/ctxkit-bench".to_owned(),
        }
    }
}

/// What a generated session holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GenerateStats {
    /// Entries after the header.
    pub entries: u64,
    /// Bytes written, header included.
    pub bytes: u64,
    /// Branch points (a new entry whose parent is not the previous leaf).
    pub branches: u64,
    /// Compaction entries.
    pub compactions: u64,
    /// Image blocks.
    pub images: u64,
    /// The session id in the header.
    pub session_id: String,
}

struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(buf)?;
        self.bytes += written as u64;
        Ok(written)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[derive(Clone, Copy)]
struct PathItem {
    id: u32,
    is_user_message: bool,
}

struct Generator<W> {
    out: Counting<W>,
    rng: Rng,
    options: GenerateOptions,
    next_id: u32,
    id_salt: u32,
    clock_ms: i64,
    window: VecDeque<PathItem>,
    since_compaction: usize,
    context_tokens: u64,
    stats: GenerateStats,
}

fn entry_id(counter: u32, salt: u32) -> String {
    // Multiplying by an odd constant is a bijection on u32: ids never repeat within 2^32 entries.
    format!("{:08x}", counter.wrapping_mul(0x9e37_79b1) ^ salt)
}

fn uuid_like(rng: &mut Rng) -> String {
    let (a, b) = (rng.next_u64(), rng.next_u64());
    format!(
        "{:08x}-{:04x}-7{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | ((b >> 48) & 0x3fff),
        b & 0xffff_ffff_ffff
    )
}

impl<W: Write> Generator<W> {
    fn done(&self) -> bool {
        self.stats.entries >= self.options.entries
    }

    fn tick(&mut self, max_seconds: usize) -> i64 {
        self.clock_ms += 200 + self.rng.below(max_seconds * 1000) as i64;
        self.clock_ms
    }

    fn write_line(&mut self, value: &Value) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, value)?;
        self.out.write_all(b"\n")
    }

    /// Writes one entry as a child of the current leaf and makes it the leaf.
    fn emit(
        &mut self,
        entry_type: &str,
        fields: Map<String, Value>,
        is_user_message: bool,
    ) -> io::Result<String> {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        let parent = self
            .window
            .back()
            .map(|item| entry_id(item.id, self.id_salt));
        let timestamp = ctxkit_session::iso_from_ms(self.tick(20));
        let mut entry = Map::new();
        entry.insert("type".into(), entry_type.into());
        entry.insert("id".into(), entry_id(id, self.id_salt).into());
        entry.insert("parentId".into(), parent.map_or(Value::Null, Value::String));
        entry.insert("timestamp".into(), timestamp.into());
        entry.extend(fields);
        self.write_line(&Value::Object(entry))?;
        if self.window.len() == WINDOW {
            self.window.pop_front();
        }
        self.window.push_back(PathItem {
            id,
            is_user_message,
        });
        self.since_compaction += 1;
        self.stats.entries += 1;
        Ok(entry_id(id, self.id_salt))
    }

    fn message(&mut self, message: Value) -> io::Result<String> {
        let is_user = message.get("role").and_then(Value::as_str) == Some("user");
        let mut fields = Map::new();
        fields.insert("message".into(), message);
        self.emit("message", fields, is_user)
    }

    fn prose_or_cjk(&mut self, bytes: usize, cjk_share: f64) -> String {
        let mut out = String::new();
        if self.rng.chance(cjk_share) {
            text::cjk(&mut self.rng, &mut out, bytes / 3);
        } else {
            text::prose(&mut self.rng, &mut out, bytes);
        }
        out
    }

    fn image(&mut self) -> Value {
        self.stats.images += 1;
        let bytes = self.rng.pareto(8_000.0, 1.5, 400_000);
        json!({"type": "image", "data": text::base64(&mut self.rng, bytes), "mimeType": "image/png"})
    }

    fn user(&mut self) -> io::Result<()> {
        let size = self.rng.pareto(60.0, 1.3, 20_000);
        let prompt = self.prose_or_cjk(size, 0.15);
        let ts = self.clock_ms;
        let message = if self.rng.chance(0.02) {
            let image = self.image();
            json!({"role": "user", "content": [{"type": "text", "text": prompt}, image], "timestamp": ts})
        } else {
            json!({"role": "user", "content": prompt, "timestamp": ts})
        };
        self.message(message)?;
        Ok(())
    }

    fn usage(&mut self, output: u64) -> Value {
        self.context_tokens += output + self.rng.below(3000) as u64;
        let cache_read = self.context_tokens * 7 / 10;
        let input = self.context_tokens - cache_read;
        json!({"input": input, "output": output, "cacheRead": cache_read, "cacheWrite": 0,
            "totalTokens": input + output + cache_read,
            "cost": {"input": input as f64 * 3e-6, "output": output as f64 * 15e-6,
                "cacheRead": cache_read as f64 * 3e-7, "cacheWrite": 0, "total": 0.0}})
    }

    fn assistant(&mut self, calls: &[(String, String, Value)]) -> io::Result<()> {
        let mut content = Vec::new();
        if self.rng.chance(0.4) {
            let size = self.rng.pareto(80.0, 1.4, 8_000);
            let thinking = self.prose_or_cjk(size, 0.05);
            content.push(
                json!({"type": "thinking", "thinking": thinking, "thinkingSignature": "c2lnLTE="}),
            );
        }
        if calls.is_empty() || self.rng.chance(0.5) {
            let size = self.rng.pareto(100.0, 1.3, 30_000);
            let reply = self.prose_or_cjk(size, 0.1);
            content.push(json!({"type": "text", "text": reply}));
        }
        for (id, name, arguments) in calls {
            content
                .push(json!({"type": "toolCall", "id": id, "name": name, "arguments": arguments}));
        }
        let output = 50 + self.rng.below(2000) as u64;
        let usage = self.usage(output);
        let stop = if calls.is_empty() { "stop" } else { "toolUse" };
        let ts = self.clock_ms;
        self.message(json!({"role": "assistant", "content": content, "api": "anthropic-messages",
            "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage, "stopReason": stop,
            "timestamp": ts}))?;
        Ok(())
    }

    fn tool_call(&mut self) -> (String, String, Value) {
        let id = format!(
            "toolu_{:016x}{:08x}",
            self.rng.next_u64(),
            self.rng.next_u64() as u32
        );
        let path = text::file_path(&mut self.rng);
        let (name, arguments) = match self.rng.below(5) {
            0 | 1 => ("read", json!({"path": path})),
            2 => (
                "bash",
                json!({"command": format!("cargo test -p {}", text::file_path(&mut self.rng))}),
            ),
            3 => ("grep", json!({"pattern": "fn [a-z_]+", "path": path})),
            _ => {
                let old = self.prose_or_cjk(60, 0.05);
                let new = self.prose_or_cjk(80, 0.05);
                (
                    "edit",
                    json!({"path": path, "oldText": old, "newText": new}),
                )
            }
        };
        (id, name.to_owned(), arguments)
    }

    fn tool_result(&mut self, call_id: &str, name: &str) -> io::Result<()> {
        let size = self.rng.pareto(900.0, 1.1, self.options.max_tool_output);
        let mut output = String::with_capacity(size + 64);
        match name {
            "read" if self.rng.chance(0.1) => text::cjk(&mut self.rng, &mut output, size / 3),
            "read" => text::code(&mut self.rng, &mut output, size, true),
            "bash" => text::log(&mut self.rng, &mut output, size),
            "grep" => text::grep(&mut self.rng, &mut output, size),
            _ => output.push_str("Successfully replaced text."),
        }
        let mut content = vec![json!({"type": "text", "text": output})];
        if name == "read" && self.rng.chance(0.01) {
            content.push(self.image());
        }
        let is_error = self.rng.chance(0.05);
        let ts = self.clock_ms;
        self.message(
            json!({"role": "toolResult", "toolCallId": call_id, "toolName": name,
            "content": content, "isError": is_error, "timestamp": ts}),
        )?;
        Ok(())
    }

    fn turn(&mut self) -> io::Result<()> {
        self.user()?;
        let steps = self.rng.pareto(1.0, 1.2, 40);
        for _ in 0..steps {
            if self.done() {
                return Ok(());
            }
            let calls: Vec<_> = (0..self.rng.range(1, 2))
                .map(|_| self.tool_call())
                .collect();
            self.assistant(&calls)?;
            for (id, name, _) in &calls {
                if self.done() {
                    return Ok(());
                }
                self.tool_result(id, name)?;
            }
        }
        if !self.done() {
            self.assistant(&[])?;
        }
        Ok(())
    }

    fn compaction(&mut self) -> io::Result<()> {
        // The first kept entry: a user message among the recent path entries, after the last compaction.
        let reach = self.since_compaction.min(self.window.len()).min(200);
        let back = self.rng.range(reach / 4, reach.saturating_sub(1));
        let len = self.window.len();
        let kept = (len - 1 - back.min(len - 1)..len)
            .filter_map(|i| self.window.get(i))
            .find(|item| item.is_user_message)
            .or_else(|| self.window.back())
            .map(|item| entry_id(item.id, self.id_salt));
        let Some(kept) = kept else { return Ok(()) };
        let mut summary = String::from("## Goal\n");
        text::prose(&mut self.rng, &mut summary, 300);
        summary.push_str("\n\n## Progress\n");
        let size = self.rng.range(300, 4000);
        text::prose(&mut self.rng, &mut summary, size);
        let (read, modified) = (
            text::file_path(&mut self.rng),
            text::file_path(&mut self.rng),
        );
        let mut fields = Map::new();
        fields.insert("summary".into(), summary.into());
        fields.insert("firstKeptEntryId".into(), kept.into());
        fields.insert("tokensBefore".into(), self.context_tokens.into());
        fields.insert(
            "details".into(),
            json!({"readFiles": [read], "modifiedFiles": [modified]}),
        );
        self.emit("compaction", fields, false)?;
        self.stats.compactions += 1;
        self.since_compaction = 0;
        self.context_tokens /= 5;
        Ok(())
    }

    fn branch(&mut self) -> io::Result<()> {
        if self.window.len() < 4 {
            return Ok(());
        }
        let old_leaf = self
            .window
            .back()
            .map(|item| entry_id(item.id, self.id_salt));
        let back = self.rng.range(2, (self.window.len() - 2).min(300));
        for _ in 0..back {
            self.window.pop_back();
        }
        self.since_compaction = self.since_compaction.saturating_sub(back);
        self.stats.branches += 1;
        if let Some(from) = old_leaf.filter(|_| self.rng.chance(0.5)) {
            let mut summary = String::from("Explored another approach: ");
            let size = self.rng.range(100, 1500);
            text::prose(&mut self.rng, &mut summary, size);
            let mut fields = Map::new();
            fields.insert("fromId".into(), from.into());
            fields.insert("summary".into(), summary.into());
            fields.insert(
                "details".into(),
                json!({"readFiles": [], "modifiedFiles": []}),
            );
            self.emit("branch_summary", fields, false)?;
        }
        Ok(())
    }

    fn interlude(&mut self) -> io::Result<()> {
        let roll = self.rng.unit();
        if roll < 0.03 {
            let target = self
                .window
                .get(self.rng.below(self.window.len()))
                .map(|item| item.id);
            if let Some(target) = target {
                let mut fields = Map::new();
                fields.insert("targetId".into(), entry_id(target, self.id_salt).into());
                fields.insert(
                    "label".into(),
                    format!("checkpoint-{}", self.rng.below(100)).into(),
                );
                self.emit("label", fields, false)?;
            }
        } else if roll < 0.05 {
            let model = *self
                .rng
                .pick(&["claude-sonnet-4-5", "claude-opus-4-1", "gpt-5"])
                .unwrap_or(&"gpt-5");
            let mut fields = Map::new();
            fields.insert("provider".into(), "anthropic".into());
            fields.insert("modelId".into(), model.into());
            self.emit("model_change", fields, false)?;
        } else if roll < 0.07 {
            let mut fields = Map::new();
            let level = *self
                .rng
                .pick(&["off", "low", "medium", "high"])
                .unwrap_or(&"off");
            fields.insert("thinkingLevel".into(), level.into());
            self.emit("thinking_level_change", fields, false)?;
        } else if roll < 0.09 {
            let mut fields = Map::new();
            fields.insert("customType".into(), "reminder".into());
            fields.insert("content".into(), self.prose_or_cjk(200, 0.1).into());
            fields.insert("display".into(), self.rng.chance(0.5).into());
            self.emit("custom_message", fields, false)?;
        } else if roll < 0.12 {
            let size = self.rng.pareto(200.0, 1.1, self.options.max_tool_output);
            let mut output = String::new();
            text::log(&mut self.rng, &mut output, size);
            let ts = self.clock_ms;
            self.message(
                json!({"role": "bashExecution", "command": "cargo build", "output": output,
                "exitCode": 0, "cancelled": false, "truncated": false, "timestamp": ts}),
            )?;
        } else if roll < 0.17 {
            self.branch()?;
        } else if self.since_compaction > 300 && roll < 0.3 {
            self.compaction()?;
        }
        Ok(())
    }

    fn run(mut self) -> io::Result<GenerateStats> {
        let ts = ctxkit_session::iso_from_ms(self.clock_ms);
        let header = json!({"type": "session", "version": 3, "id": self.stats.session_id,
            "timestamp": ts, "cwd": self.options.cwd});
        self.write_line(&header)?;
        let mut fields = Map::new();
        fields.insert("provider".into(), "anthropic".into());
        fields.insert("modelId".into(), "claude-sonnet-4-5".into());
        if !self.done() {
            self.emit("model_change", fields, false)?;
        }
        let mut fields = Map::new();
        fields.insert(
            "name".into(),
            format!("Generated session {}", self.options.seed).into(),
        );
        if !self.done() {
            self.emit("session_info", fields, false)?;
        }
        while !self.done() {
            self.turn()?;
            if !self.done() {
                self.interlude()?;
            }
        }
        self.out.flush()?;
        self.stats.bytes = self.out.bytes;
        Ok(self.stats)
    }
}

/// Writes one generated session to `out` (buffer it: entries are written one `write` per piece).
pub fn write_session<W: Write>(out: W, options: &GenerateOptions) -> io::Result<GenerateStats> {
    let mut rng = Rng::new(options.seed);
    let session_id = uuid_like(&mut rng);
    let id_salt = rng.next_u64() as u32;
    let clock_ms = START_MS + rng.below(30 * 86_400_000) as i64;
    let generator = Generator {
        out: Counting {
            inner: out,
            bytes: 0,
        },
        rng,
        options: options.clone(),
        next_id: 0,
        id_salt,
        clock_ms,
        window: VecDeque::with_capacity(WINDOW),
        since_compaction: 0,
        context_tokens: 3000,
        stats: GenerateStats {
            session_id,
            ..GenerateStats::default()
        },
    };
    generator.run()
}

/// Writes one generated session to the file at `path` (created or truncated).
pub fn write_session_file(
    path: &Path,
    options: &GenerateOptions,
) -> Result<GenerateStats, GenerateError> {
    let io_error = |source| GenerateError::Io {
        path: path.to_owned(),
        source,
    };
    let file = File::create(path).map_err(io_error)?;
    write_session(BufWriter::with_capacity(1 << 20, file), options).map_err(io_error)
}
