//! Developed cases written on 2026-11-26 for the noise kinds the held-out sessions showed, on other
//! stacks than those sessions: passing side commands (migrations applied, benchmarks, health checks,
//! `git rebase --continue`), words with a slash that are not paths (`upstream/dev`, `and/or`,
//! `2026/11`, `n/a`), a validator whose summary line names less than the line before it, and an
//! earlier summary whose items later work superseded. The fact lists were written before the
//! summaries were read; the rules were then changed with these cases in view, so they are developed
//! cases, not held out.

use ctxkit_compaction::SummaryPurpose;
use serde_json::json;

use super::{Case, SessionBuilder, fact};

pub(super) fn cases() -> Vec<Case> {
    vec![
        django_orders(),
        terraform_kubernetes(),
        rate_limit_update(),
        go_ledger(),
    ]
}

/// A Django app: a slow list endpoint fixed with `select_related` and an index (a migration made and
/// applied), a test failing on the way, a benchmark, a rebase on `upstream/dev`, and a docs request
/// that ends on the assistant's question.
fn django_orders() -> Case {
    let messages = SessionBuilder::new()
        .user("The /api/orders/ list is slow in staging (p95 ~310ms). Add select_related('customer') in orders/views.py and an index on Order.created_at. Don't touch the legacy reports/ app, it's frozen until 2026/11. Filters by status and/or month must keep working.")
        .read("orders/views.py", "class OrderListView(ListAPIView):\n    serializer_class = OrderSerializer\n\n    def get_queryset(self):\n        qs = Order.objects.all()\n        return filter_orders(qs, self.request.query_params)")
        .assistant("The view loads each customer separately (an N+1). I'll use `select_related('customer')` and add `models.Index(fields=['created_at'])` in `Order.Meta` rather than `db_index=True`, so the index gets a name we choose.")
        .edit("orders/views.py", "qs = Order.objects.all()", "qs = Order.objects.select_related('customer')")
        .edit("orders/models.py", "ordering = ['-created_at']", "ordering = ['-created_at']\n        indexes = [models.Index(fields=['created_at'], name='order_created_at_idx')]")
        .bash("python manage.py makemigrations orders", "Migrations for 'orders':\n  orders/migrations/0012_order_created_at_idx.py\n    - Create index order_created_at_idx on field(s) created_at of model order")
        .bash("python manage.py migrate", "Operations to perform:\n  Apply all migrations: admin, auth, contenttypes, orders, sessions\nRunning migrations:\n  Applying orders.0012_order_created_at_idx... OK")
        .bash("python manage.py test orders", "Creating test database for alias 'default'...\n..F...........\n======================================================================\nFAIL: test_list_filters_by_month (orders.tests.test_views.OrderListTests)\n----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"/app/orders/tests/test_views.py\", line 88, in test_list_filters_by_month\n    self.assertEqual(len(response.data['results']), 2)\nAssertionError: 3 != 2\n\n----------------------------------------------------------------------\nRan 14 tests in 1.204s\n\nFAILED (failures=1)\n\nCommand exited with code 1")
        .read("orders/filters.py", "def filter_orders(qs, params):\n    month = params.get('month')\n    if month:\n        qs = qs.filter(created_at__month=int(month))\n    return qs")
        .assistant("The month filter ignores the year, so November 2025 orders match too; the new ordering only exposed it. I'll filter on `created_at__year` and `created_at__month` parsed from the `YYYY/MM` value.")
        .edit("orders/filters.py", "qs = qs.filter(created_at__month=int(month))", "year, number = month.split('/')\n        qs = qs.filter(created_at__year=int(year), created_at__month=int(number))")
        .bash("python manage.py test orders", "Creating test database for alias 'default'...\n..............\n----------------------------------------------------------------------\nRan 14 tests in 1.187s\n\nOK")
        .bash("make bench", "python scripts/bench_orders.py --requests 500\norders_list: p50 38ms p95 84ms (500 requests)")
        .assistant("Tests pass, and `make bench` gives p95 84ms for the orders list, down from about 310ms.")
        .bash("git checkout -b perf/orders-list && git commit -am \"orders: select_related and created_at index\"", "Switched to a new branch 'perf/orders-list'\n[perf/orders-list 5c2e9a71] orders: select_related and created_at index\n 4 files changed, 31 insertions(+), 3 deletions(-)\n create mode 100644 orders/migrations/0012_order_created_at_idx.py")
        .user("good. rebase on upstream/dev and push the branch")
        .bash("git fetch upstream && git rebase upstream/dev", "From github.com:shopco/backend\n   8a1f2c3..d94e7b1  dev        -> upstream/dev\nSuccessfully rebased and updated refs/heads/perf/orders-list.")
        .bash("git push -u origin perf/orders-list", "To github.com:shopco/backend.git\n * [new branch]      perf/orders-list -> perf/orders-list\nbranch 'perf/orders-list' set up to track 'origin/perf/orders-list'.")
        .assistant("Rebased on `upstream/dev` and pushed `perf/orders-list`.")
        .user("now document the month filter format (YYYY/MM) in docs/api/orders.md")
        .read("docs/api/orders.md", "## GET /api/orders/\n\n| Param | Format | Default |\n|---|---|---|\n| status | pending/paid/refunded | n/a |")
        .edit("docs/api/orders.md", "| status | pending/paid/refunded | n/a |", "| status | pending/paid/refunded | n/a |\n| month | YYYY/MM | n/a |")
        .assistant("Added the `month` row. Should the docs also say that months before 2024/01 return nothing, since those orders were archived to the reports/ app?")
        .build();
    Case {
        name: "django orders (developed, 2026-11-26)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: false,
        facts: vec![
            fact("constraint: legacy reports app frozen", &["reports/"]),
            fact("the fix: select_related", &["select_related"]),
            fact("view file", &["orders/views.py"]),
            fact("index in the model", &["orders/models.py", "models.Index"]),
            fact("migration made", &["0012_order_created_at_idx"]),
            fact("test command", &["python manage.py test orders"]),
            fact("failing test on the way", &["test_list_filters_by_month"]),
            fact("filter fix: year and month", &["created_at__year"]),
            fact("filter file", &["orders/filters.py"]),
            fact("benchmark result", &["84ms"]),
            fact("commit", &["5c2e9a71"]),
            fact("branch", &["perf/orders-list"]),
            fact("rebased on", &["upstream/dev"]),
            fact("docs file", &["docs/api/orders.md"]),
            fact("month format", &["YYYY/MM"]),
            fact(
                "open question about archived months",
                &["2024/01", "archived"],
            ),
        ],
    }
}

/// Kubernetes and Terraform: a PodDisruptionBudget whose first version a validator rejects (its
/// summary line names less than the line before it), an S3 ACL moved to its own resource, a plan,
/// a commit, and a PR whose creation is still pending.
fn terraform_kubernetes() -> Case {
    let messages = SessionBuilder::new()
        .user("Add a PodDisruptionBudget for the worker deployment (k8s/worker/) with minAvailable 1, and move the logs bucket ACL to the new aws_s3_bucket_acl resource in infra/logs/main.tf. Validate everything before committing. Never run terraform apply from here, CI applies.")
        .read("k8s/worker/deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: worker\n  labels:\n    app: worker\nspec:\n  replicas: 3")
        .write("k8s/worker/pdb.yaml", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: worker-pdb\nspec:\n  minAvailable: true\n  selector:\n    matchLabels:\n      app: worker\n")
        .bash("kubeconform -strict -summary k8s/worker/", "k8s/worker/pdb.yaml - PodDisruptionBudget worker-pdb is invalid: problem validating schema. Check JSON formatting: jsonschema: '/spec/minAvailable' does not validate with https://kubernetesjsonschema.dev/v1.29.0-standalone-strict/poddisruptionbudget-policy-v1.json#/properties/spec/properties/minAvailable/type: expected integer or string, but got boolean\nSummary: 3 resources found in 3 files - Valid: 2, Invalid: 1, Errors: 0, Skipped: 0\n\nCommand exited with code 1")
        .assistant("`minAvailable: true` was a slip; it must be the integer 1.")
        .edit("k8s/worker/pdb.yaml", "minAvailable: true", "minAvailable: 1")
        .bash("kubeconform -strict -summary k8s/worker/", "Summary: 3 resources found in 3 files - Valid: 3, Invalid: 0, Errors: 0, Skipped: 0")
        .read("infra/logs/main.tf", "resource \"aws_s3_bucket\" \"logs\" {\n  bucket = \"acme-logs-prod\"\n  acl    = \"log-delivery-write\"\n}")
        .edit("infra/logs/main.tf", "  acl    = \"log-delivery-write\"\n}", "}\n\nresource \"aws_s3_bucket_acl\" \"logs\" {\n  acl = \"log-delivery-write\"\n}")
        .bash("cd infra/logs && terraform validate", "╷\n│ Error: Missing required argument\n│\n│   on main.tf line 5, in resource \"aws_s3_bucket_acl\" \"logs\":\n│    5: resource \"aws_s3_bucket_acl\" \"logs\" {\n│\n│ The argument \"bucket\" is required, but no definition was found.\n╵\n\nCommand exited with code 1")
        .edit("infra/logs/main.tf", "  acl = \"log-delivery-write\"", "  bucket = aws_s3_bucket.logs.id\n  acl    = \"log-delivery-write\"")
        .bash("cd infra/logs && terraform validate", "Success! The configuration is valid.")
        .bash("cd infra/logs && terraform fmt -check", "(no output)")
        .bash("cd infra/logs && terraform plan -out=tfplan", "aws_s3_bucket.logs: Refreshing state... [id=acme-logs-prod]\n\nTerraform will perform the following actions:\n\n  # aws_s3_bucket.logs will be updated in-place\n  # aws_s3_bucket_acl.logs will be created\n\nPlan: 1 to add, 1 to change, 0 to destroy.\n\nSaved the plan to: tfplan")
        .bash("git checkout -b infra/worker-pdb-logs-acl && git add -A && git commit -m \"worker PDB; logs bucket ACL as its own resource\"", "Switched to a new branch 'infra/worker-pdb-logs-acl'\n[infra/worker-pdb-logs-acl 9d41be07] worker PDB; logs bucket ACL as its own resource\n 2 files changed, 18 insertions(+), 1 deletion(-)")
        .bash("date -u +%Y/%m/%d", "2026/11/26")
        .assistant("Committed `9d41be07` on `infra/worker-pdb-logs-acl`. The plan adds the ACL resource and changes the bucket (1 to add, 1 to change, 0 to destroy); CI will apply it.")
        .user("open the PR against main, title 'Worker PDB and logs ACL', and mention INFRA-311")
        .tool("bash", json!({"command": "gh pr create --base main --title 'Worker PDB and logs ACL' --body 'Part of INFRA-311'"}), None)
        .build();
    Case {
        name: "terraform and kubernetes (developed, 2026-11-26)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: false,
        facts: vec![
            fact("constraint: never apply", &["terraform apply"]),
            fact("PDB file", &["k8s/worker/pdb.yaml"]),
            fact("minAvailable", &["minAvailable"]),
            fact("validator command", &["kubeconform -strict"]),
            fact(
                "validator's error naming the field",
                &["/spec/minAvailable", "expected integer or string"],
            ),
            fact("terraform file", &["infra/logs/main.tf"]),
            fact("new resource", &["aws_s3_bucket_acl"]),
            fact(
                "terraform error on the way",
                &["Missing required argument", "\"bucket\" is required"],
            ),
            fact("validate command", &["terraform validate"]),
            fact("plan result", &["1 to add"]),
            fact("branch", &["infra/worker-pdb-logs-acl"]),
            fact("commit", &["9d41be07"]),
            fact("ticket", &["INFRA-311"]),
            fact("pending PR creation", &["gh pr create"]),
        ],
    }
}

/// An update of an earlier ctxkit summary whose blocker, last error and next step the new span
/// settles: clippy fixed, per-tenant limits added (a compile error on the way), a benchmark, a
/// `git pull --rebase` conflict resolved with `git rebase --continue`, a force-push.
fn rate_limit_update() -> Case {
    let previous = "_Extractive summary written offline by ctxkit (no model was used)._\n\n## Goal\n- Add rate limiting to the upload endpoint\n- **Latest:** Make the limit configurable per tenant\n\n## Constraints & Preferences\n- Don't add a Redis dependency; keep the limiter in-process\n\n## Progress\n### Done\n- [x] Edited `src/upload.rs` (3×)\n- [x] `cargo test -p upload-api`: passed after 1 failed run(s) (first error: error[E0599]: no method named `check_key` found for struct `RateLimiter`)\n- [x] Last report: The limiter now returns 429 with a `Retry-After` header.\n\n### In Progress\n- [ ] Make the limit configurable per tenant\n\n### Blocked\n- `cargo clippy -p upload-api -- -D warnings` fails: error: this `if` has identical blocks\n\n## Key Decisions\n- I'll use the `governor` crate's keyed limiter instead of a hand-written token bucket.\n\n## Next Steps\n1. Make it pass: `cargo clippy -p upload-api -- -D warnings` (error: this `if` has identical blocks)\n2. Read per-tenant limits from `config/tenants.toml`\n\n## Critical Context\n- Branch: `feat/upload-rate-limit`\n- Build/test/run commands: `cargo test -p upload-api`, `cargo clippy -p upload-api -- -D warnings`\n- Last error (`cargo clippy -p upload-api -- -D warnings`): `error: this if has identical blocks`\n- Files: `config/tenants.toml`, `origin/main`";
    let messages = SessionBuilder::new()
        .user("continue")
        .read("src/upload.rs", "if over_limit {\n        return Err(Rejection::TooMany(retry_after));\n    } else if burst_exceeded {\n        return Err(Rejection::TooMany(retry_after));\n    }")
        .edit("src/upload.rs", "if over_limit {\n        return Err(Rejection::TooMany(retry_after));\n    } else if burst_exceeded {", "if over_limit || burst_exceeded {")
        .bash("cargo clippy -p upload-api -- -D warnings", "    Checking upload-api v0.4.2 (/src/upload-api)\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 3.1s")
        .write("config/tenants.toml", "[default]\nper_minute = 60\n\n[tenants.acme]\nper_minute = 600\n")
        .edit("src/config.rs", "pub struct Config {", "pub struct TenantLimits {\n    pub per_minute: u32,\n}\n\npub struct Config {")
        .bash("cargo test -p upload-api", "   Compiling upload-api v0.4.2 (/src/upload-api)\nerror[E0277]: the trait bound `TenantLimits: serde::Deserialize<'_>` is not satisfied\n  --> src/config.rs:14:5\n   |\n14 |     pub tenants: HashMap<String, TenantLimits>,\n   |     ^^^ the trait `Deserialize<'_>` is not implemented for `TenantLimits`\n\nCommand exited with code 101")
        .edit("src/config.rs", "pub struct TenantLimits {", "#[derive(Debug, Clone, Deserialize)]\npub struct TenantLimits {")
        .bash("cargo test -p upload-api", "running 23 tests\ntest result: ok. 23 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out")
        .bash("cargo bench -p upload-api --bench limiter", "limiter/check_key        time:   [182.31 ns 184.02 ns 185.90 ns]\n                        change: [-1.2% +0.4% +2.1%] (p = 0.61 > 0.05)\n                        No change in performance detected.")
        .bash("git commit -am \"upload: per-tenant limits from config/tenants.toml\"", "[feat/upload-rate-limit 3b8f0c12] upload: per-tenant limits from config/tenants.toml\n 3 files changed, 41 insertions(+), 6 deletions(-)")
        .bash("git pull --rebase origin main", "From github.com:acme/upload-api\n * branch            main       -> FETCH_HEAD\nAuto-merging Cargo.lock\nCONFLICT (content): Merge conflict in Cargo.lock\nerror: could not apply 3b8f0c12... upload: per-tenant limits from config/tenants.toml\n\nCommand exited with code 1")
        .bash("cargo generate-lockfile && git add Cargo.lock && git rebase --continue", "Successfully rebased and updated refs/heads/feat/upload-rate-limit.")
        .assistant("Per-tenant limits are read from `config/tenants.toml` (`acme` gets 600 per minute, the default 60); clippy and the tests pass, and the branch is rebased on main.")
        .user("push it")
        .bash("git push --force-with-lease origin feat/upload-rate-limit", "To github.com:acme/upload-api.git\n + 3b8f0c12...a7d2e915 feat/upload-rate-limit -> feat/upload-rate-limit (forced update)")
        .assistant("Pushed `feat/upload-rate-limit`; after the rebase its head is `a7d2e915`.")
        .build();
    Case {
        name: "rate limit update, ctxkit earlier summary (developed, 2026-11-26)",
        messages,
        previous: Some(previous.to_owned()),
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: false,
        facts: vec![
            fact("constraint: no Redis", &["redis"]),
            fact("goal: rate limiting", &["rate limit"]),
            fact("per-tenant limits", &["per tenant", "per-tenant"]),
            fact("tenant config file", &["config/tenants.toml"]),
            fact("clippy command", &["cargo clippy -p upload-api"]),
            fact("test command", &["cargo test -p upload-api"]),
            fact(
                "compile error on the way",
                &["TenantLimits: serde::Deserialize", "E0277"],
            ),
            fact("429 with Retry-After", &["Retry-After"]),
            fact("decision: governor", &["governor"]),
            fact("branch", &["feat/upload-rate-limit"]),
            fact("pushed head after the rebase", &["a7d2e915"]),
            fact("upload file", &["src/upload.rs"]),
            fact("config code", &["src/config.rs"]),
            fact("acme's limit", &["600"]),
        ],
    }
}

/// A Go service: batched lookups with a test failing on the way, a migration applied with goose, a
/// benchmark, a health check, a commit pushed, then a timeout change not yet committed. The user's
/// words hold slashes that are not paths (`I/O`, `and/or`, `client/server`, `w/o`).
fn go_ledger() -> Case {
    let messages = SessionBuilder::new()
        .user("The ledger service's /balances endpoint times out under load (I/O bound, probably an N+1 on accounts). Batch the account lookups in internal/ledger/balances.go. Keep the public API and/or JSON shape unchanged, clients depend on it.")
        .read("internal/ledger/balances.go", "func (s *Service) Balances(ctx context.Context, ids []string) ([]Balance, error) {\n\tfor _, id := range ids {\n\t\tacct, err := s.repo.Account(ctx, id)\n\t\tif err != nil {\n\t\t\treturn nil, err\n\t\t}")
        .assistant("Each id costs one query. I'll add `AccountsByIDs` with a single `WHERE id = ANY($1)` query rather than a cache.")
        .edit("internal/ledger/repo.go", "func (r *Repo) Account(", "func (r *Repo) AccountsByIDs(ctx context.Context, ids []string) ([]Account, error) {\n\treturn r.query(ctx, accountsByIDs, pq.Array(ids))\n}\n\nfunc (r *Repo) Account(")
        .edit("internal/ledger/balances.go", "for _, id := range ids {", "accounts, err := s.repo.AccountsByIDs(ctx, ids)")
        .write("db/migrations/20261126120000_ledger_entries_account_idx.sql", "-- +goose Up\nCREATE INDEX ledger_entries_account_idx ON ledger_entries (account_id);\n-- +goose Down\nDROP INDEX ledger_entries_account_idx;\n")
        .bash("goose -dir db/migrations postgres \"$DATABASE_URL\" up", "2026/11/26 13:20:01 OK   20261126120000_ledger_entries_account_idx.sql (12.4ms)\n2026/11/26 13:20:01 goose: successfully migrated database to version: 20261126120000")
        .bash("go test ./internal/ledger/...", "--- FAIL: TestBalancesKeepsOrder (0.01s)\n    balances_test.go:42: got [acc-2 acc-1], want [acc-1 acc-2]\nFAIL\nFAIL\tgithub.com/acme/ledger/internal/ledger\t0.31s\n\nCommand exited with code 1")
        .assistant("`ANY($1)` returns rows in index order, so I'll reorder the result by the requested ids.")
        .edit("internal/ledger/balances.go", "return balances, nil", "return inRequestOrder(balances, ids), nil")
        .bash("go test ./internal/ledger/...", "ok  \tgithub.com/acme/ledger/internal/ledger\t0.29s")
        .bash("make bench", "go test -run=^$ -bench=Balances ./internal/ledger/\nBenchmarkBalances100-2   \t    2481\t    482113 ns/op\nPASS")
        .bash("curl -s localhost:8080/healthz", "{\"status\":\"ok\"}")
        .assistant("Tests pass; `BenchmarkBalances100` runs at 482µs per call, one query instead of 100.")
        .user("squash it into one commit on perf/batch-balances and push. no force-push to main, ever")
        .bash("git checkout -b perf/batch-balances && git add -A && git commit -m \"ledger: batch account lookups in Balances\"", "Switched to a new branch 'perf/batch-balances'\n[perf/batch-balances e6a01f3c] ledger: batch account lookups in Balances\n 4 files changed, 58 insertions(+), 9 deletions(-)")
        .bash("git push -u origin perf/batch-balances", "remote: Create a pull request for 'perf/batch-balances' on GitHub by visiting:\nremote:      https://github.com/acme/ledger/pull/new/perf/batch-balances\nTo github.com:acme/ledger.git\n * [new branch]      perf/batch-balances -> perf/batch-balances")
        .assistant("Pushed `perf/batch-balances` with one commit, `e6a01f3c`.")
        .user("the client/server read timeout in cmd/ledgerd/main.go is still 5s; raise it to 15s w/o touching the write timeout")
        .read("cmd/ledgerd/main.go", "srv := &http.Server{\n\tAddr:         addr,\n\tReadTimeout:  5 * time.Second,\n\tWriteTimeout: 10 * time.Second,\n}")
        .edit("cmd/ledgerd/main.go", "ReadTimeout:  5 * time.Second,", "ReadTimeout:  15 * time.Second,")
        .bash("go build ./... && go vet ./...", "(no output)")
        .assistant("`ReadTimeout` is 15s now and `WriteTimeout` stays 10s; build and vet pass. Not committed yet.")
        .build();
    Case {
        name: "go ledger (developed, 2026-11-26)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: false,
        facts: vec![
            fact(
                "constraint: API and JSON shape",
                &["JSON shape", "public API"],
            ),
            fact("balances file", &["internal/ledger/balances.go"]),
            fact("new query", &["AccountsByIDs"]),
            fact("repo file", &["internal/ledger/repo.go"]),
            fact(
                "migration",
                &["ledger_entries_account_idx", "20261126120000"],
            ),
            fact("test command", &["go test ./internal/ledger/..."]),
            fact("failing test on the way", &["TestBalancesKeepsOrder"]),
            fact("benchmark result", &["482"]),
            fact("branch", &["perf/batch-balances"]),
            fact("commit", &["e6a01f3c"]),
            fact("constraint: no force-push to main", &["force-push"]),
            fact("server file", &["cmd/ledgerd/main.go"]),
            fact("read timeout 15s", &["ReadTimeout"]),
            fact(
                "timeout change not committed",
                &["not committed", "uncommitted"],
            ),
        ],
    }
}

/// A second batch, written after the rules above were settled and run once before any change
/// (their first run is reported apart in `docs/summaries.md`): a pnpm monorepo with Prisma, a .NET
/// service, and an update of a free-form earlier summary.
pub(super) fn second_batch() -> Vec<Case> {
    vec![prisma_monorepo(), dotnet_inventory(), free_form_update()]
}

/// A pnpm monorepo: a Prisma migration made (its file named in the output), a client generated, a
/// lint fix, a test failing with the test and its message on separate lines, a health check with
/// curl, a stash; the span ends while the last test run is pending.
fn prisma_monorepo() -> Case {
    let messages = SessionBuilder::new()
        .user("Add a soft-delete to Project in packages/db (a deletedAt column) and hide deleted projects from listProjects in apps/api. Use pnpm, not npm. Read/write paths must both respect it.")
        .read("packages/db/prisma/schema.prisma", "model Project {\n  id        String   @id @default(cuid())\n  name      String\n  createdAt DateTime @default(now())\n}")
        .edit("packages/db/prisma/schema.prisma", "  createdAt DateTime @default(now())", "  createdAt DateTime @default(now())\n  deletedAt DateTime?")
        .bash("cd packages/db && pnpm prisma migrate dev --name project_soft_delete", "Environment variables loaded from .env\nApplying migration `20261126140500_project_soft_delete`\n\nThe following migration(s) have been created and applied from new schema changes:\n\nmigrations/\n  └─ 20261126140500_project_soft_delete/\n    └─ migration.sql\n\nYour database is now in sync with your schema.")
        .bash("cd packages/db && pnpm prisma generate", "✔ Generated Prisma Client (v5.22.0) to ./node_modules/@prisma/client in 212ms")
        .read("apps/api/src/projects/list.ts", "export async function listProjects(db: Db, ownerId: string) {\n  return db.project.findMany({ where: { ownerId } });\n}")
        .assistant("I'll filter with `deletedAt: null` in `listProjects` rather than a Prisma middleware, so the rule stays visible where it applies.")
        .edit("apps/api/src/projects/list.ts", "where: { ownerId }", "where: { ownerId, deletedAt: null }")
        .bash("pnpm --filter api lint", "apps/api/src/projects/list.ts\n  3:3  error  Unexpected any. Specify a different type  @typescript-eslint/no-explicit-any\n\n✖ 1 problem (1 error, 0 warnings)\n\nCommand exited with code 1")
        .edit("apps/api/src/projects/list.ts", "db: any", "db: PrismaClient")
        .bash("pnpm --filter api lint", "(no output)")
        .bash("pnpm --filter api test", " FAIL  src/projects/list.test.ts > listProjects > hides deleted projects\nAssertionError: expected [ { id: 'p1' }, { id: 'p2' } ] to have a length of 1 but got 2\n\n Test Files  1 failed | 6 passed (7)\n      Tests  1 failed | 41 passed (42)\n\nCommand exited with code 1")
        .assistant("The test fixture builds its own in-memory db that ignores `deletedAt`; I'll make the fake honour the filter.")
        .edit("apps/api/src/test/fake-db.ts", "return rows.filter((row) => row.ownerId === where.ownerId);", "return rows.filter((row) => row.ownerId === where.ownerId && (where.deletedAt !== null || row.deletedAt == null));")
        .bash("pnpm --filter api test", " Test Files  7 passed (7)\n      Tests  42 passed (42)")
        .bash("curl -s -o /dev/null -w '%{http_code}' localhost:4000/health", "200")
        .assistant("Lint and tests pass; deleted projects are hidden from `listProjects`.")
        .user("also make deleteProject set deletedAt instead of deleting the row, then run the api tests again")
        .bash("git stash && git stash pop", "Saved working directory and index state WIP on feat/soft-delete: 1c2d3e4 wip\nOn branch feat/soft-delete\nChanges not staged for commit:\n\tmodified:   apps/api/src/projects/list.ts")
        .edit("apps/api/src/projects/delete.ts", "return db.project.delete({ where: { id } });", "return db.project.update({ where: { id }, data: { deletedAt: new Date() } });")
        .tool("bash", json!({"command": "pnpm --filter api test"}), None)
        .build();
    Case {
        name: "prisma monorepo (developed, second batch)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: false,
        facts: vec![
            fact("constraint: pnpm", &["pnpm, not npm", "not npm"]),
            fact("schema file", &["packages/db/prisma/schema.prisma"]),
            fact("deletedAt column", &["deletedAt"]),
            fact(
                "migration made",
                &["20261126140500_project_soft_delete", "project_soft_delete"],
            ),
            fact("list file", &["apps/api/src/projects/list.ts"]),
            fact("lint command", &["pnpm --filter api lint"]),
            fact(
                "lint error on the way",
                &["no-explicit-any", "Unexpected any"],
            ),
            fact("test command", &["pnpm --filter api test"]),
            fact("failing test on the way", &["hides deleted projects"]),
            fact("fake db fix", &["apps/api/src/test/fake-db.ts"]),
            fact("delete file", &["apps/api/src/projects/delete.ts"]),
            fact("branch", &["feat/soft-delete"]),
            fact("pending test run", &["pending", "Check the result"]),
        ],
    }
}

/// A .NET service: an EF Core migration added and applied, a test failing with xUnit's split
/// output, a benchmark with BenchmarkDotNet, a commit; the last request answered.
fn dotnet_inventory() -> Case {
    let messages = SessionBuilder::new()
        .user("StockLevel lookups by SKU are slow. Add a unique index on Sku in src/Inventory.Data and make GetBySkuAsync use it. Never edit the generated *.Designer.cs files by hand.")
        .read("src/Inventory.Data/InventoryContext.cs", "protected override void OnModelCreating(ModelBuilder modelBuilder)\n{\n    modelBuilder.Entity<StockLevel>().HasKey(s => s.Id);\n}")
        .edit("src/Inventory.Data/InventoryContext.cs", "modelBuilder.Entity<StockLevel>().HasKey(s => s.Id);", "modelBuilder.Entity<StockLevel>().HasKey(s => s.Id);\n    modelBuilder.Entity<StockLevel>().HasIndex(s => s.Sku).IsUnique();")
        .bash("dotnet ef migrations add StockLevelSkuIndex --project src/Inventory.Data", "Build started...\nBuild succeeded.\nDone. To undo this action, use 'ef migrations remove'")
        .bash("dotnet ef database update --project src/Inventory.Data", "Build started...\nBuild succeeded.\nApplying migration '20261126141200_StockLevelSkuIndex'.\nDone.")
        .bash("dotnet test tests/Inventory.Tests", "  Failed Inventory.Tests.StockLevelRepositoryTests.GetBySku_IsCaseInsensitive [18 ms]\n  Error Message:\n   Assert.NotNull() Failure: Value is null\n  Stack Trace:\n     at Inventory.Tests.StockLevelRepositoryTests.GetBySku_IsCaseInsensitive() in /src/tests/Inventory.Tests/StockLevelRepositoryTests.cs:line 41\n\nFailed!  - Failed:     1, Passed:    27, Skipped:     0, Total:    28\n\nCommand exited with code 1")
        .assistant("SKUs are stored upper-case, and the test looks up `abc-123`. I'll normalise with `ToUpperInvariant()` in `GetBySkuAsync` instead of a case-insensitive collation.")
        .edit("src/Inventory.Data/StockLevelRepository.cs", "s.Sku == sku", "s.Sku == sku.ToUpperInvariant()")
        .bash("dotnet test tests/Inventory.Tests", "Passed!  - Failed:     0, Passed:    28, Skipped:     0, Total:    28, Duration: 2 s")
        .bash("dotnet run -c Release --project bench/Inventory.Bench", "| Method      | Mean     | Error    |\n|------------ |---------:|---------:|\n| GetBySku    | 41.27 us | 0.812 us |")
        .assistant("Tests pass; `GetBySku` now takes about 41 µs in the benchmark.")
        .bash("git commit -am \"Inventory: unique index on StockLevel.Sku, case-insensitive lookup\"", "[perf/sku-index 0b7c4d21] Inventory: unique index on StockLevel.Sku, case-insensitive lookup\n 5 files changed, 112 insertions(+), 2 deletions(-)")
        .user("what was the p50 before?")
        .assistant("I didn't measure before the change, so I can't give a before figure; `git stash` and a rerun of `bench/Inventory.Bench` on the parent commit `0b7c4d21~1` would give it.")
        .build();
    Case {
        name: ".NET inventory (developed, second batch)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: false,
        facts: vec![
            fact("constraint: generated designer files", &["Designer.cs"]),
            fact("context file", &["src/Inventory.Data/InventoryContext.cs"]),
            fact("unique index on Sku", &["HasIndex", "unique index"]),
            fact("migration", &["StockLevelSkuIndex"]),
            fact("test command", &["dotnet test tests/Inventory.Tests"]),
            fact("failing test on the way", &["GetBySku_IsCaseInsensitive"]),
            fact("fix: upper-case", &["ToUpperInvariant"]),
            fact(
                "repository file",
                &["src/Inventory.Data/StockLevelRepository.cs"],
            ),
            fact("benchmark result", &["41.27", "41 µs"]),
            fact("commit", &["0b7c4d21"]),
            fact("branch", &["perf/sku-index"]),
            fact("no before figure", &["didn't measure", "before figure"]),
        ],
    }
}

/// An update of a free-form earlier summary (a model's headings) whose next step and last error
/// the span settles, with a new request on top.
fn free_form_update() -> Case {
    let previous = "## Objective\nMigrate the CI from Travis to GitHub Actions for the `tally` gem.\n\n## Status\n- Done: `.github/workflows/ci.yml` with a Ruby 3.2/3.3 matrix\n- Pending: the `rubocop` job fails on `Style/FrozenStringLiteralComment` in lib/tally/counter.rb\n\n## Key Files\n- `.github/workflows/ci.yml`\n- `.travis.yml` (to delete once Actions is green)\n\n## Last error\n- `bundle exec rubocop`: lib/tally/counter.rb:1:1: C: Style/FrozenStringLiteralComment: Missing frozen string literal comment.\n\n## Next Steps\n1. Add the magic comment and rerun `bundle exec rubocop`\n2. Delete `.travis.yml`";
    let messages = SessionBuilder::new()
        .user("go on")
        .edit("lib/tally/counter.rb", "module Tally", "# frozen_string_literal: true\n\nmodule Tally")
        .bash("bundle exec rubocop", "Inspecting 14 files\n..............\n\n14 files inspected, no offenses detected")
        .bash("git rm .travis.yml && git commit -m \"CI: GitHub Actions only\"", "rm '.travis.yml'\n[ci/actions 5e6f7a8b] CI: GitHub Actions only\n 2 files changed, 1 insertion(+), 31 deletions(-)")
        .bash("gh run watch --exit-status", "✓ ci/actions CI · 11843920117\nTriggered via push about 1 minute ago\n\nJOBS\n✓ test (3.2) in 48s\n✓ test (3.3) in 51s\n✓ rubocop in 22s")
        .assistant("Rubocop is clean and the Actions run passed on both Rubies; `.travis.yml` is gone (commit `5e6f7a8b`).")
        .user("add a badge for the workflow to the README, and cache the bundle in the workflow")
        .read(".github/workflows/ci.yml", "      - uses: ruby/setup-ruby@v1\n        with:\n          ruby-version: ${{ matrix.ruby }}")
        .edit(".github/workflows/ci.yml", "          ruby-version: ${{ matrix.ruby }}", "          ruby-version: ${{ matrix.ruby }}\n          bundler-cache: true")
        .edit("README.md", "# tally", "# tally\n\n[![CI](https://github.com/acme/tally/actions/workflows/ci.yml/badge.svg)](https://github.com/acme/tally/actions/workflows/ci.yml)")
        .assistant("Added `bundler-cache: true` to the setup step and the CI badge to `README.md`; not pushed yet.")
        .build();
    Case {
        name: "free-form update, CI migration (developed, second batch)",
        messages,
        previous: Some(previous.to_owned()),
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: false,
        facts: vec![
            fact(
                "objective: Travis to Actions",
                &["GitHub Actions", "Travis"],
            ),
            fact("workflow file", &[".github/workflows/ci.yml"]),
            fact("ruby matrix", &["3.2/3.3", "3.3"]),
            fact("rubocop fixed file", &["lib/tally/counter.rb"]),
            fact("rubocop command", &["bundle exec rubocop"]),
            fact(
                "the cop",
                &["FrozenStringLiteralComment", "frozen_string_literal"],
            ),
            fact("travis removed", &[".travis.yml"]),
            fact("commit", &["5e6f7a8b"]),
            fact("branch", &["ci/actions"]),
            fact("bundler cache", &["bundler-cache"]),
            fact("readme badge", &["README.md", "badge"]),
            fact("not pushed", &["not pushed"]),
        ],
    }
}
