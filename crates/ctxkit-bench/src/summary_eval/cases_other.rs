//! The other sessions of the corpus: updates of an earlier summary (ctxkit's format and Claude Code's
//! numbered sections), a session held in Chinese, and an abandoned branch.

use ctxkit_compaction::SummaryPurpose;

use super::{Case, SessionBuilder, fact};

pub(super) fn cases() -> Vec<Case> {
    vec![
        update_ctxkit_format(),
        update_claude_code_format(),
        chinese_session(),
        go_branch(),
    ]
}

/// An update of ctxkit's own earlier summary: the open item gets finished, a new request arrives.
fn update_ctxkit_format() -> Case {
    let previous = "_Extractive summary written offline by ctxkit (no model was used)._\n\n## Goal\n- Add retries to the registry client in `crates/fetch`\n\n## Constraints & Preferences\n- Prefer the `backon` crate; no hand-written sleep loops\n\n## Progress\n### Done\n- [x] Edited `crates/fetch/src/client.rs` (3×)\n\n### In Progress\n- [ ] Retry `fetch_manifest` in `crates/fetch/src/manifest.rs` on 503\n\n### Blocked\n- (none)\n\n## Key Decisions\n- Exponential backoff with jitter, at most 5 attempts\n\n## Next Steps\n1. Run `cargo test -p fetch`\n\n## Critical Context\n- Branch: `feat/retries`\n- Last error (`cargo test -p fetch`): `thread 'retries_on_503' panicked at crates/fetch/tests/retry.rs:40:5`";
    let messages = SessionBuilder::new()
        .user("go on with fetch_manifest")
        .read("crates/fetch/src/manifest.rs", "pub async fn fetch_manifest(&self, name: &str) -> Result<Manifest> {\n    self.get(&format!(\"/m/{name}\")).await\n}")
        .edit("crates/fetch/src/manifest.rs", "self.get(&format!(\"/m/{name}\")).await", "(|| self.get(&format!(\"/m/{name}\"))).retry(self.backoff()).when(is_transient).await")
        .bash("cargo test -p fetch", "running 19 tests\n...................\ntest result: ok. 19 passed; 0 failed")
        .assistant("`fetch_manifest` now retries on 503 through `backon`; `cargo test -p fetch` passes (19 tests).")
        .user("great. now log each retry at debug level with the attempt number")
        .edit("crates/fetch/src/client.rs", ".when(is_transient)", ".when(is_transient).notify(|error, delay| tracing::debug!(%error, ?delay, \"retrying\"))")
        .bash("cargo build -p fetch", "error[E0425]: cannot find value `attempt` in this scope\n  --> crates/fetch/src/client.rs:88:51\n\nCommand exited with code 101")
        .assistant("`backon`'s notify callback does not pass the attempt number, so I need to count attempts myself.")
        .build();
    Case {
        name: "update (ctxkit format)",
        messages,
        previous: Some(previous.to_owned()),
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: false,
        facts: vec![
            fact(
                "earlier goal: retries in the registry client",
                &["Add retries to the registry client"],
            ),
            fact("earlier constraint: backon, no sleep loops", &["backon"]),
            fact(
                "earlier decision: backoff with jitter, 5 attempts",
                &["jitter"],
            ),
            fact("branch", &["feat/retries"]),
            fact("manifest.rs (now done)", &["crates/fetch/src/manifest.rs"]),
            fact("client.rs edited", &["crates/fetch/src/client.rs"]),
            fact("test command", &["cargo test -p fetch"]),
            fact(
                "latest request: debug log with attempt number",
                &["attempt number"],
            ),
            fact(
                "current failure verbatim",
                &["cannot find value `attempt` in this scope"],
            ),
            fact("failing command", &["cargo build -p fetch"]),
        ],
    }
}

/// An update of a summary Claude Code wrote (numbered sections).
fn update_claude_code_format() -> Case {
    let previous = "This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nAnalysis:\nThe user asked for a rate limiter.\n\nSummary:\n1. Primary Request and Intent:\n   The user wants per-tenant rate limiting in the API gateway (`gateway/`), configurable per plan, tracked in issue #231.\n\n2. Key Technical Concepts:\n   - Token bucket per tenant, stored in Redis with a Lua script\n   - Plans: free (10 rps), pro (100 rps)\n\n3. Files and Code Sections:\n   - gateway/src/limit.rs\n      - New `TenantLimiter` with `check(tenant_id)`\n   - gateway/config/plans.toml\n      - Added `rps` per plan\n\n4. Errors and fixes:\n   - `WRONGTYPE Operation against a key holding the wrong kind of value`: old keys were strings; fixed by prefixing keys with `rl:v2:`\n\n5. Problem Solving:\n   Chose Redis over in-process buckets because the gateway runs 6 replicas.\n\n6. All user messages:\n   - \"add per-tenant rate limits to the gateway\"\n   - \"never block health checks\"\n\n7. Pending Tasks:\n   - Exempt `/healthz` from limiting\n   - Return `Retry-After` on 429\n\n8. Current Work:\n   Wiring `TenantLimiter` into the middleware in gateway/src/middleware.rs; commit 5d7e9a13 on branch `feat/tenant-limits`.\n\n9. Optional Next Step:\n   Add the `/healthz` exemption.";
    let messages = SessionBuilder::new()
        .user("continue")
        .read("gateway/src/middleware.rs", "pub async fn limit(req: Request, next: Next) -> Response {\n    let tenant = tenant_of(&req);\n    if !LIMITER.check(tenant).await { return too_many(); }\n    next.run(req).await\n}")
        .edit("gateway/src/middleware.rs", "let tenant = tenant_of(&req);", "if req.uri().path() == \"/healthz\" { return next.run(req).await; }\n    let tenant = tenant_of(&req);")
        .bash("cargo test -p gateway middleware", "running 7 tests\n.......\ntest result: ok. 7 passed; 0 failed")
        .assistant("`/healthz` is now exempt from rate limiting; the middleware tests pass.")
        .user("now the Retry-After header")
        .edit("gateway/src/middleware.rs", "return too_many();", "return too_many(LIMITER.retry_after(tenant));")
        .bash("cargo test -p gateway", "running 41 tests\n.........................................\ntest result: ok. 41 passed; 0 failed")
        .bash("git commit -am \"Gateway: exempt /healthz, send Retry-After on 429\"", "[feat/tenant-limits 8b21c7d4] Gateway: exempt /healthz, send Retry-After on 429\n 1 file changed, 4 insertions(+), 1 deletion(-)")
        .assistant("Done: 429 responses now carry `Retry-After`, committed as 8b21c7d4.")
        .build();
    Case {
        name: "update (Claude Code numbered sections)",
        messages,
        previous: Some(previous.to_owned()),
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: false,
        facts: vec![
            fact(
                "earlier goal: per-tenant rate limits",
                &["per-tenant rate limit"],
            ),
            fact("issue reference", &["#231"]),
            fact("earlier concept: token bucket in Redis", &["token bucket"]),
            fact("earlier file: limit.rs", &["gateway/src/limit.rs"]),
            fact("earlier error and its fix", &["WRONGTYPE", "rl:v2:"]),
            fact(
                "earlier decision: Redis because 6 replicas",
                &["6 replicas"],
            ),
            fact(
                "constraint: never block health checks",
                &["never block health checks"],
            ),
            fact("earlier commit", &["5d7e9a13"]),
            fact("branch", &["feat/tenant-limits"]),
            fact("new commit", &["8b21c7d4"]),
            fact("middleware.rs edited", &["gateway/src/middleware.rs"]),
            fact("healthz exemption done", &["/healthz"]),
            fact("Retry-After done", &["Retry-After"]),
            fact("test command", &["cargo test -p gateway"]),
        ],
    }
}

/// A session held in Chinese: the summary's contents should be Chinese too.
fn chinese_session() -> Case {
    let messages = SessionBuilder::new()
        .user("请修复 src/lexer.rs 里 `next_token` 的越界错误：输入以反斜杠结尾时会 panic。不要修改公共接口，提交信息用英文。")
        .read("src/lexer.rs", "pub fn next_token(&mut self) -> Option<Token> {\n    let c = self.bytes[self.pos];\n    if c == b'\\\\' { let escaped = self.bytes[self.pos + 1]; }\n}")
        .assistant("问题在 `next_token`：遇到末尾的反斜杠时读取了 `self.pos + 1`，越界了。我决定用 `get()` 代替直接索引，并返回 `Token::Error`。")
        .edit("src/lexer.rs", "let escaped = self.bytes[self.pos + 1];", "let Some(&escaped) = self.bytes.get(self.pos + 1) else { return Some(Token::Error) };")
        .bash("cargo test -p lexer", "error[E0599]: no variant named `Error` found for enum `Token`\n  --> src/lexer.rs:57:71\n\nCommand exited with code 101")
        .assistant("`Token` 没有 `Error` 变体。为了不改公共接口，我改为返回 `None` 并记录错误位置。")
        .edit("src/lexer.rs", "return Some(Token::Error)", "self.error_at = Some(self.pos); return None")
        .bash("cargo test -p lexer", "running 31 tests\n...............................\ntest result: ok. 31 passed; 0 failed")
        .bash("git commit -am \"Lexer: no panic on a trailing backslash\"", "[main 3a9d41be] Lexer: no panic on a trailing backslash\n 1 file changed, 3 insertions(+), 1 deletion(-)")
        .assistant("已修复并提交（3a9d41be）：末尾反斜杠不再 panic，测试全部通过。")
        .user("好的。再给 tests/lexer_edge.rs 加一个回归测试")
        .build();
    Case {
        name: "chinese session",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: true,
        held_out: false,
        facts: vec![
            fact("task: out-of-bounds in next_token", &["越界"]),
            fact("function", &["next_token"]),
            fact("file", &["src/lexer.rs"]),
            fact(
                "constraint: do not change the public API",
                &["不要修改公共接口"],
            ),
            fact("constraint: English commit messages", &["提交信息用英文"]),
            fact("decision: get() instead of indexing", &["get()"]),
            fact("earlier failure: no Error variant", &["E0599"]),
            fact("test command", &["cargo test -p lexer"]),
            fact("commit hash", &["3a9d41be"]),
            fact(
                "latest request: regression test file",
                &["tests/lexer_edge.rs"],
            ),
        ],
    }
}

/// An abandoned branch: what was tried, why it failed, what was learned.
fn go_branch() -> Case {
    let messages = SessionBuilder::new()
        .user("try replacing the mutex in internal/cache/cache.go with sync.Map and see if BenchmarkGet improves")
        .read("internal/cache/cache.go", "type Cache struct {\n\tmu    sync.Mutex\n\titems map[string]entry\n}")
        .assistant("I'll switch `Cache` to `sync.Map` instead of the mutex-guarded map and keep the eviction loop as is.")
        .edit("internal/cache/cache.go", "mu    sync.Mutex\n\titems map[string]entry", "items sync.Map")
        .bash("go test ./internal/cache/...", "--- FAIL: TestEvictOldest (0.00s)\n    cache_test.go:58: evicted \"b\", want \"a\"\nFAIL\nFAIL\tgithub.com/acme/svc/internal/cache\t0.014s\n\nCommand exited with code 1")
        .assistant("Eviction order broke: `sync.Map` has no ordering, so `evictOldest` picks an arbitrary key.")
        .bash("go test -bench BenchmarkGet -run ^$ ./internal/cache/", "BenchmarkGet-8   \t41234567\t  28.1 ns/op\nok  \tgithub.com/acme/svc/internal/cache\t1.9s")
        .assistant("BenchmarkGet improves from 41.7 ns/op to 28.1 ns/op, but eviction would need a separate ordered index, which costs more than the gain. I'd keep the mutex.")
        .user("ok, forget it, go back")
        .build();
    Case {
        name: "branch summary (Go, abandoned)",
        messages,
        previous: None,
        purpose: SummaryPurpose::Branch,
        chinese: false,
        held_out: false,
        facts: vec![
            fact("what was tried: sync.Map", &["sync.Map"]),
            fact("file", &["internal/cache/cache.go"]),
            fact("benchmark", &["BenchmarkGet"]),
            fact(
                "the failure",
                &["TestEvictOldest", "evicted \"b\", want \"a\""],
            ),
            fact("test command", &["go test ./internal/cache/..."]),
            fact("numbers", &["28.1 ns/op"]),
            fact("conclusion: keep the mutex", &["keep the mutex", "mutex"]),
            fact("user abandoned it", &["forget it", "go back"]),
        ],
    }
}
