//! Held-out sessions: written with their facts after the summarizer's rules were settled on the
//! other cases, and not used to change them since. Their numbers are reported apart. The first two
//! were written on 2026-11-25; the last three on 2026-11-26, before that day's changes to the
//! summarizer and before their summaries were looked at.

use ctxkit_compaction::SummaryPurpose;
use serde_json::json;

use super::{Case, SessionBuilder, fact};

pub(super) fn cases() -> Vec<Case> {
    vec![
        node_api(),
        infra_update(),
        java_payments(),
        python_branch(),
        chinese_cache(),
    ]
}

/// A Node API over four requests: a migration, a rebase conflict, a flaky test, and a deploy
/// command still running when the span ends.
fn node_api() -> Case {
    let messages = SessionBuilder::new()
        .user("In services/orders: add a `cancelled_at` column to orders and expose it in GET /orders/:id. Don't touch the v1 routes, they are frozen. Use knex migrations only.")
        .bash("ls services/orders/migrations", "20240102_create_orders.js\n20240311_add_status.js")
        .write("services/orders/migrations/20241125_add_cancelled_at.js", "exports.up = (knex) => knex.schema.alterTable('orders', (t) => t.timestamp('cancelled_at'));\n")
        .edit("services/orders/src/routes/v2/orders.js", "select('id', 'status')", "select('id', 'status', 'cancelled_at')")
        .bash("npm run migrate --workspace services/orders", "Batch 3 run: 1 migrations")
        .bash("npm test --workspace services/orders", "PASS test/orders.v2.test.js\nTests: 18 passed, 18 total")
        .assistant("Added the `cancelled_at` migration and exposed it in the v2 route; the v1 routes are untouched.")
        .user("rebase on main and push")
        .bash("git fetch origin && git rebase origin/main", "CONFLICT (content): Merge conflict in services/orders/src/routes/v2/orders.js\nerror: could not apply 7b3e0d2... Orders: expose cancelled_at\n\nCommand exited with code 1")
        .read("services/orders/src/routes/v2/orders.js", "<<<<<<< HEAD\n  .select('id', 'status', 'total')\n=======\n  .select('id', 'status', 'cancelled_at')\n>>>>>>> 7b3e0d2")
        .assistant("main added `total` to the same select; I'll keep both columns rather than dropping either.")
        .edit("services/orders/src/routes/v2/orders.js", "<<<<<<< HEAD", ".select('id', 'status', 'total', 'cancelled_at')")
        .bash("git add -A && git rebase --continue", "Successfully rebased and updated refs/heads/feat/cancelled-at.")
        .bash("git push --force-with-lease origin feat/cancelled-at", "To github.com:acme/shop.git\n + 7b3e0d2...e41a9c07 feat/cancelled-at -> feat/cancelled-at (forced update)")
        .user("CI says test/orders.v2.test.js is flaky on 'lists cancelled orders', look into it")
        .bash("npm test --workspace services/orders -- -t 'lists cancelled orders'", "FAIL test/orders.v2.test.js\n  ● lists cancelled orders\n    expect(received).toEqual(expected)\n    Expected: \"2024-11-25T10:00:00.000Z\"\n    Received: \"2024-11-25T10:00:00.001Z\"\n\nCommand exited with code 1")
        .assistant("The fixture uses `new Date()` twice, so the two timestamps can differ by a millisecond. I'll freeze time with `jest.useFakeTimers` instead of comparing real clocks.")
        .edit("services/orders/test/orders.v2.test.js", "beforeEach(() => {", "beforeEach(() => {\n  jest.useFakeTimers().setSystemTime(new Date('2024-11-25T10:00:00Z'));")
        .bash("npm test --workspace services/orders", "PASS test/orders.v2.test.js\nTests: 19 passed, 19 total")
        .user("ship it to staging")
        .tool("bash", json!({"command": "./scripts/deploy.sh staging orders"}), None)
        .build();
    Case {
        name: "node api (held out)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("first task: cancelled_at column", &["cancelled_at"]),
            fact("constraint: v1 routes frozen", &["v1 routes"]),
            fact("constraint: knex migrations only", &["knex"]),
            fact(
                "migration file",
                &["services/orders/migrations/20241125_add_cancelled_at.js"],
            ),
            fact("route file", &["services/orders/src/routes/v2/orders.js"]),
            fact("test command", &["npm test --workspace services/orders"]),
            fact("branch", &["feat/cancelled-at"]),
            fact("pushed commit", &["e41a9c07"]),
            fact(
                "conflict resolution: keep total and cancelled_at",
                &["total"],
            ),
            fact("flaky test name", &["lists cancelled orders"]),
            fact("fix: fake timers", &["useFakeTimers"]),
            fact("latest: deploy to staging, still running", &["staging"]),
            fact("deploy command", &["./scripts/deploy.sh staging orders"]),
        ],
    }
}

/// An update of a free-form model summary (`## Branch`, `## Key Files`) on an infrastructure repo.
fn infra_update() -> Case {
    let previous = "# Checkpoint\n\n## Goal\nMove the staging stack from Terraform 1.5 to OpenTofu 1.8 without recreating the RDS instance.\n\n## Branch\n`chore/opentofu` (PR #58)\n\n## Key Files\n- `infra/staging/main.tf`\n- `.github/workflows/plan.yml`\n\n## Rules from the user\n- Never run `apply` from a laptop; only the workflow applies.\n- Keep state in the existing S3 bucket `acme-tf-state`.\n\n## Status\n- Provider pins updated\n- Pending: switch the workflow to `tofu` and check the plan shows no replacement of `aws_db_instance.main`";
    let messages = SessionBuilder::new()
        .user("continue with the workflow")
        .read(".github/workflows/plan.yml", "- uses: hashicorp/setup-terraform@v3\n- run: terraform plan -no-color")
        .edit(".github/workflows/plan.yml", "- uses: hashicorp/setup-terraform@v3\n- run: terraform plan -no-color", "- uses: opentofu/setup-opentofu@v1\n  with:\n    tofu_version: 1.8.5\n- run: tofu plan -no-color")
        .bash("tofu -chdir=infra/staging plan -no-color", "Error: Unsupported argument\n\n  on main.tf line 14, in terraform:\n  14:   experiments = [module_variable_optional_attrs]\n\nCommand exited with code 1")
        .assistant("OpenTofu rejects the old `experiments` block; optional attributes are stable now, so I'll remove it instead of pinning an older version.")
        .edit("infra/staging/main.tf", "  experiments = [module_variable_optional_attrs]\n", "")
        .bash("tofu -chdir=infra/staging plan -no-color", "Plan: 0 to add, 2 to change, 0 to destroy.\n  ~ aws_db_instance.main (update in-place)")
        .assistant("The plan shows `aws_db_instance.main` updated in place, no replacement: 0 to add, 2 to change, 0 to destroy.")
        .user("push it and ask for review from @dana")
        .bash("git commit -am \"Staging: OpenTofu 1.8 workflow\" && git push", "[chore/opentofu b7c2e913] Staging: OpenTofu 1.8 workflow\n 2 files changed, 5 insertions(+), 3 deletions(-)")
        .bash("gh pr edit 58 --add-reviewer dana", "https://github.com/acme/infra/pull/58")
        .assistant("Pushed b7c2e913 and requested review from @dana on PR #58.")
        .build();
    Case {
        name: "infra update, free-form earlier summary (held out)",
        messages,
        previous: Some(previous.to_owned()),
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "goal: OpenTofu 1.8 without recreating RDS",
                &["OpenTofu 1.8"],
            ),
            fact("branch", &["chore/opentofu"]),
            fact("PR", &["#58", "pull/58"]),
            fact("rule: never apply from a laptop", &["Never run `apply`"]),
            fact("rule: state bucket", &["acme-tf-state"]),
            fact(
                "workflow file with leading dot",
                &[".github/workflows/plan.yml"],
            ),
            fact("main.tf edited", &["infra/staging/main.tf"]),
            fact("error fixed: experiments block", &["experiments"]),
            fact(
                "plan command",
                &["tofu -chdir=infra/staging plan -no-color"],
            ),
            fact(
                "plan result: in place, no replacement",
                &["0 to destroy", "in place", "in-place"],
            ),
            fact("commit", &["b7c2e913"]),
            fact("reviewer", &["dana"]),
            fact(
                "earlier pending item now done (workflow switch)",
                &["switch the workflow"],
            ),
        ],
    }
}

/// A Java service over two requests: a build broken by a dependency bump (fixed and committed), then
/// a validation bug whose test still fails, the assistant ending on a question.
fn java_payments() -> Case {
    let messages = SessionBuilder::new()
        .user("The payments-service build fails on CI since the Jackson bump. Fix it, but do not upgrade Spring Boot beyond 3.2.x, we're pinned by the platform team. Run tests with ./gradlew :payments:test")
        .bash("./gradlew :payments:test", "PaymentJsonTest > serializesCreatedAt() FAILED\n    com.fasterxml.jackson.databind.exc.InvalidDefinitionException: Java 8 date/time type `java.time.Instant` not supported by default\n\nBUILD FAILED in 38s\n\nCommand exited with code 1")
        .read("payments/src/main/java/com/acme/payments/config/JacksonConfig.java", "@Bean\nObjectMapper objectMapper() {\n    return new ObjectMapper().disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);\n}")
        .assistant("Our own `ObjectMapper` bean bypasses Spring's auto-registration, and the new Jackson no longer finds the time module by itself. I'll register `JavaTimeModule` explicitly in `JacksonConfig` instead of pinning Jackson back.")
        .edit("payments/src/main/java/com/acme/payments/config/JacksonConfig.java", "return new ObjectMapper()", "return new ObjectMapper().registerModule(new JavaTimeModule())")
        .bash("./gradlew :payments:test", "BUILD SUCCESSFUL in 41s\n212 tests completed")
        .bash("git checkout -b fix/jackson-time && git commit -am \"Register JavaTimeModule explicitly\"", "Switched to a new branch 'fix/jackson-time'\n[fix/jackson-time 9c4d1e07] Register JavaTimeModule explicitly\n 1 file changed, 1 insertion(+), 1 deletion(-)")
        .assistant("Fixed: the build passes again; committed as 9c4d1e07 on `fix/jackson-time`.")
        .user("also the refund endpoint returns 500 for amounts with more than 2 decimals (ticket PAY-3141), it should be a 400")
        .bash("grep -rn \"class RefundController\" payments/src", "payments/src/main/java/com/acme/payments/web/RefundController.java:18:public class RefundController {")
        .read("payments/src/main/java/com/acme/payments/web/RefundController.java", "@PostMapping(\"/refunds\")\npublic Refund create(@RequestBody RefundRequest request) {\n    return service.refund(request.amount().setScale(2));\n}")
        .edit("payments/src/main/java/com/acme/payments/web/RefundController.java", "public Refund create(@RequestBody RefundRequest request)", "public Refund create(@Valid @RequestBody RefundRequest request)")
        .edit("payments/src/main/java/com/acme/payments/web/RefundRequest.java", "BigDecimal amount", "@Digits(integer = 12, fraction = 2) BigDecimal amount")
        .bash("./gradlew :payments:test", "RefundControllerTest > rejectsThreeDecimals() FAILED\n    org.opentest4j.AssertionFailedError: expected: <400> but was: <422>\n\n213 tests completed, 1 failed\n\nCommand exited with code 1")
        .assistant("The validation now rejects the amount, but our global `ValidationExceptionHandler` maps every validation error to 422. Should I change the global handler to return 400, or special-case only the refund endpoint?")
        .build();
    Case {
        name: "java payments (held out, 2nd set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("constraint: Spring Boot stays 3.2.x", &["3.2.x"]),
            fact("test command", &["./gradlew :payments:test"]),
            fact("first fix: JavaTimeModule", &["JavaTimeModule"]),
            fact("config file", &["JacksonConfig"]),
            fact("commit", &["9c4d1e07"]),
            fact("branch", &["fix/jackson-time"]),
            fact("ticket", &["PAY-3141"]),
            fact(
                "latest request: 400 for more than 2 decimals",
                &["2 decimals", "more than 2"],
            ),
            fact("controller", &["RefundController"]),
            fact("failing test", &["rejectsThreeDecimals"]),
            fact("last error: 422 instead of 400", &["<422>", "422"]),
            fact(
                "open question: global handler or refund only",
                &["ValidationExceptionHandler"],
            ),
        ],
    }
}

/// An abandoned branch on a Python ETL job: polars instead of pandas, faster, but not worth it.
fn python_branch() -> Case {
    let messages = SessionBuilder::new()
        .user("try switching the CSV ingest in etl/ingest.py from pandas to polars and see if the nightly job gets under 10 minutes")
        .read("etl/ingest.py", "def load(path):\n    frame = pd.read_csv(path, parse_dates=['booked_on'], dayfirst=True)\n    return frame")
        .assistant("I'll use `pl.scan_csv` with lazy evaluation instead of `pd.read_csv`, keeping the output parquet schema the same.")
        .edit("etl/ingest.py", "frame = pd.read_csv(path, parse_dates=['booked_on'], dayfirst=True)", "frame = pl.scan_csv(path, try_parse_dates=True).collect()")
        .bash("pytest tests/test_ingest.py -q", "FAILED tests/test_ingest.py::test_dates_parsed - polars.exceptions.ComputeError: could not parse `31/12/2023` as dtype `date`\n1 failed, 5 passed in 1.92s\n\nCommand exited with code 1")
        .edit("etl/ingest.py", "pl.scan_csv(path, try_parse_dates=True).collect()", "pl.scan_csv(path).with_columns(pl.col('booked_on').str.to_date('%d/%m/%Y')).collect()")
        .bash("pytest tests/test_ingest.py -q", "6 passed in 1.84s")
        .bash("python -m etl.bench --rows 5000000", "ingest: 212.4s (pandas baseline 655.0s)\nenrich: 301.7s")
        .assistant("Polars cuts ingest from 655s to 212s, but `etl/enrich.py` still expects a pandas DataFrame, and converting with `.to_pandas()` costs about 140s of that back, so the job stays above 10 minutes unless enrich is ported too.")
        .user("hmm, not worth it right now, abandon this branch")
        .build();
    Case {
        name: "branch summary (Python, abandoned; held out, 2nd set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::Branch,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("what was tried: polars", &["polars"]),
            fact("file", &["etl/ingest.py"]),
            fact("test command", &["pytest tests/test_ingest.py"]),
            fact(
                "the date parsing failure",
                &["31/12/2023", "test_dates_parsed"],
            ),
            fact("the fix: explicit date format", &["%d/%m/%Y"]),
            fact("measured ingest time", &["212"]),
            fact("baseline", &["655"]),
            fact(
                "blocker: enrich expects pandas",
                &["etl/enrich.py", "enrich"],
            ),
            fact("conversion cost", &["to_pandas"]),
            fact("user abandoned it", &["abandon", "not worth it"]),
        ],
    }
}

/// A session held in Chinese: a Redis cache for one handler, a failing test fixed, a commit, and a
/// last request not yet answered.
fn chinese_cache() -> Case {
    let messages = SessionBuilder::new()
        .user("给 api/handlers/user.go 的 GetUser 加上缓存，用 Redis，过期时间 5 分钟。不要改动数据库的 schema。")
        .read("api/handlers/user.go", "func (h *Handler) GetUser(w http.ResponseWriter, r *http.Request) {\n\tuser, err := h.repo.Find(r.Context(), id)\n}")
        .assistant("我会在 GetUser 里先查 Redis（键 `user:{id}`），未命中再查数据库，而不是在 repository 层加缓存，因为只有这个接口需要。")
        .edit("api/handlers/user.go", "user, err := h.repo.Find(r.Context(), id)", "user, err := h.cachedFind(r.Context(), id, 5*time.Minute)")
        .bash("go test ./api/...", "--- FAIL: TestGetUser_Cached (0.01s)\n    user_test.go:44: redis: nil\nFAIL\n\nCommand exited with code 1")
        .assistant("测试里没有启动 miniredis，所以 Redis 客户端返回 nil。")
        .edit("api/handlers/user_test.go", "func TestGetUser_Cached(t *testing.T) {", "func TestGetUser_Cached(t *testing.T) {\n\tserver := miniredis.RunT(t)")
        .bash("go test ./api/...", "ok  \tgithub.com/acme/app/api/handlers\t0.31s")
        .bash("git checkout -b feat/user-cache && git commit -am \"用户接口加 Redis 缓存\"", "Switched to a new branch 'feat/user-cache'\n[feat/user-cache 3f9a0b6d] 用户接口加 Redis 缓存\n 2 files changed, 31 insertions(+), 2 deletions(-)")
        .assistant("已完成并提交 3f9a0b6d（分支 `feat/user-cache`），测试通过。")
        .user("好的。再把缓存命中率打到 Prometheus 指标里，指标名 user_cache_hits_total")
        .build();
    Case {
        name: "Chinese session (held out, 2nd set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: true,
        held_out: true,
        facts: vec![
            fact("the handler", &["GetUser"]),
            fact("file", &["api/handlers/user.go"]),
            fact("TTL 5 minutes", &["5 分钟", "5 minutes", "5*time.Minute"]),
            fact("constraint: schema unchanged", &["schema"]),
            fact("cache key", &["user:{id}"]),
            fact("test command", &["go test ./api/..."]),
            fact("the failure", &["redis: nil"]),
            fact("the fix: miniredis", &["miniredis"]),
            fact("commit", &["3f9a0b6d"]),
            fact("branch", &["feat/user-cache"]),
            fact(
                "latest request: hit-rate metric",
                &["user_cache_hits_total"],
            ),
        ],
    }
}
