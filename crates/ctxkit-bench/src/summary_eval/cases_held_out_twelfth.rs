//! The twelfth held-out set, four sessions written on 2026-11-26 before any summary of them was
//! read, by someone who had not read the offline summarizer's code (`ctxkit-compaction`'s
//! `offline/`). What was read to write them: issue 18, the `summary-eval` section of
//! `docs/summaries.md` (scoring only), this module's `mod.rs` and `builder.rs`, and
//! `cases_held_out_third.rs` as a format example (besides, a grep for how `parallel_turn` is called
//! showed a few lines of the seventh and eleventh sets, and their case names; none of their facts).
//! The fact lists were written as an engineer taking over each session would list what they must
//! know, and `summary-eval` was not run before commit.
//! Reported apart from the other held-out sessions ("12th set").

use ctxkit_compaction::SummaryPurpose;
use serde_json::json;

use super::{Case, SessionBuilder, fact, parallel_turn};

pub(super) fn cases() -> Vec<Case> {
    vec![
        turbo_checkout_flake(),
        go_ledger_update(),
        vue_cart_in_italian(),
        abandoned_antlr_branch(),
    ]
}

const TURBO_JSON: &str = "{\n  \"$schema\": \"https://turbo.build/schema.json\",\n  \"globalDependencies\": [\"**/.env.*local\"],\n  \"tasks\": {\n    \"build\": {\n      \"dependsOn\": [\"^build\"],\n      \"outputs\": [\"dist/**\"]\n    },\n    \"lint\": {},\n    \"test\": {\n      \"dependsOn\": [\"^build\"]\n    },\n    \"e2e\": {\n      \"dependsOn\": [\"build\"],\n      \"cache\": false\n    }\n  }\n}";

const ROOT_PACKAGE_JSON: &str = "{\n  \"name\": \"shopfront\",\n  \"private\": true,\n  \"packageManager\": \"pnpm@9.12.3\",\n  \"scripts\": {\n    \"build\": \"turbo run build\",\n    \"test\": \"turbo run test\",\n    \"e2e\": \"turbo run e2e\",\n    \"lint\": \"turbo run lint\"\n  },\n  \"devDependencies\": {\n    \"turbo\": \"^2.2.3\",\n    \"typescript\": \"5.6.3\"\n  }\n}";

const CHECKOUT_SPEC: &str = "import { test, expect } from '@playwright/test';\n\ntest.describe('checkout', () => {\n  test.beforeEach(async ({ page }) => {\n    await page.goto('/cart?seed=basic');\n  });\n\n  test('applies coupon', async ({ page }) => {\n    await page.getByLabel('Coupon code').fill('SAVE8');\n    await page.getByRole('button', { name: 'Apply' }).click();\n    await expect(page.getByTestId('cart-total')).toHaveText('$42.00');\n  });\n\n  test('removes item', async ({ page }) => {\n    await page.getByRole('button', { name: 'Remove Mug' }).click();\n    await expect(page.getByTestId('cart-count')).toHaveText('1');\n  });\n});\n";

const FLAKY_RUN: &str = "Running 20 tests using 4 workers\n\n  ✓  1 [chromium] › checkout.spec.ts:8:3 › checkout › applies coupon (1.9s)\n  ✓  2 [chromium] › checkout.spec.ts:8:3 › checkout › applies coupon (2.1s)\n  ✘  3 [chromium] › checkout.spec.ts:8:3 › checkout › applies coupon (5.4s)\n  ✓  4 [chromium] › checkout.spec.ts:8:3 › checkout › applies coupon (1.8s)\n  ✘  5 [chromium] › checkout.spec.ts:8:3 › checkout › applies coupon (5.3s)\n  ✓  6 [chromium] › checkout.spec.ts:8:3 › checkout › applies coupon (2.0s)\n  ...\n\n  1) [chromium] › checkout.spec.ts:8:3 › checkout › applies coupon ───────────\n\n    Error: Timed out 5000ms waiting for expect(locator).toHaveText(expected)\n\n    Locator: getByTestId('cart-total')\n    Expected string: \"$42.00\"\n    Received string: \"$50.00\"\n    Call log:\n      - expect.toHaveText with timeout 5000ms\n      - waiting for getByTestId('cart-total')\n      -   locator resolved to <span data-testid=\"cart-total\">$50.00</span>\n      -   unexpected value \"$50.00\"\n\n       9 |     await page.getByLabel('Coupon code').fill('SAVE8');\n      10 |     await page.getByRole('button', { name: 'Apply' }).click();\n    > 11 |     await expect(page.getByTestId('cart-total')).toHaveText('$42.00');\n         |                                                   ^\n\n  3 failed\n    [chromium] › checkout.spec.ts:8:3 › checkout › applies coupon\n  17 passed (41.2s)\n\nCommand exited with code 1";

/// A long pnpm/Turborepo monorepo session over three requests with two questions midway: a
/// constraint stated once, a flaky Playwright test fixed after a wrong attempt (the user first asks
/// to skip it, then changes their mind), a commit and a PR, a Turborepo cache fix, and a last
/// request still failing when the span ends.
fn turbo_checkout_flake() -> Case {
    let mut messages = SessionBuilder::new()
        .user("The checkout e2e test \"applies coupon\" in apps/web is flaky on CI, maybe 1 run in 5. Look into it. One rule for this whole repo: do not touch anything under packages/ui, the design-system team owns it and they review every change there.")
        .assistant("I'll look at the Playwright config, the spec and the coupon code path first.")
        .build();
    messages.extend(parallel_turn(
        |index| format!("toolu_turbo_{index:02}"),
        "",
        &[
            ("read", json!({"path": "package.json"}), ROOT_PACKAGE_JSON),
            ("read", json!({"path": "turbo.json"}), TURBO_JSON),
            (
                "read",
                json!({"path": "apps/web/e2e/checkout.spec.ts"}),
                CHECKOUT_SPEC,
            ),
            (
                "bash",
                json!({"command": "ls apps packages"}),
                "apps:\nadmin\nweb\n\npackages:\napi-client\neslint-config\ntsconfig\nui",
            ),
        ],
    ));
    messages.extend(
        SessionBuilder::new()
            .bash("cat apps/web/playwright.config.ts", "import { defineConfig, devices } from '@playwright/test';\n\nexport default defineConfig({\n  testDir: './e2e',\n  fullyParallel: true,\n  retries: process.env.CI ? 0 : 0,\n  workers: process.env.CI ? 4 : undefined,\n  use: { baseURL: 'http://localhost:3000', trace: 'on-first-retry' },\n  webServer: { command: 'pnpm start', port: 3000, reuseExistingServer: !process.env.CI },\n  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'] } }],\n});")
            .bash("grep -rn \"applyCoupon\" apps/web/src | head", "apps/web/src/cart/useCart.ts:31:export async function applyCoupon(code: string) {\napps/web/src/cart/CouponForm.tsx:4:import { applyCoupon } from './useCart';\napps/web/src/cart/CouponForm.tsx:19:    await applyCoupon(code);")
            .read("apps/web/src/cart/useCart.ts", "export async function applyCoupon(code: string) {\n  const response = await fetch('/api/cart/coupon', { method: 'POST', body: JSON.stringify({ code }) });\n  if (!response.ok) throw new CouponError(await response.text());\n  mutate('/api/cart');\n}")
            .bash("pnpm -F web exec playwright test e2e/checkout.spec.ts -g \"applies coupon\" --repeat-each=20", FLAKY_RUN)
            .assistant("Reproduced: 3 of 20 runs fail with the total still at `$50.00`. The total is refetched by `mutate('/api/cart')` after the POST, and under load that refetch takes longer than the 5s expect timeout. I'll raise the expect timeout for this assertion to 15s.")
            .edit("apps/web/e2e/checkout.spec.ts", "toHaveText('$42.00');", "toHaveText('$42.00', { timeout: 15_000 });")
            .bash("pnpm -F web exec playwright test e2e/checkout.spec.ts -g \"applies coupon\" --repeat-each=20", "Running 20 tests using 4 workers\n\n  1) [chromium] › checkout.spec.ts:8:3 › checkout › applies coupon ───────────\n\n    Error: Timed out 15000ms waiting for expect(locator).toHaveText(expected)\n\n    Locator: getByTestId('cart-total')\n    Expected string: \"$42.00\"\n    Received string: \"$50.00\"\n\n  1 failed\n    [chromium] › checkout.spec.ts:8:3 › checkout › applies coupon\n  19 passed (58.7s)\n\nCommand exited with code 1")
            .assistant("Still failing once in 20 even at 15s, so it is not slowness: the total never changes in that run. A longer timeout is the wrong fix.")
            .user("ugh. just mark it test.fixme for now and move on")
            .assistant("Will do — one thing first: the failing run received `$50.00` for 15 seconds, which looks like the coupon was never applied rather than applied late.")
            .user("ok no, you're right, don't skip it. find the actual cause, I'd rather not hide a real bug")
            .read("apps/web/src/cart/CouponForm.tsx", "export function CouponForm() {\n  const [code, setCode] = useState('');\n  const { isLoading } = useCart();\n  return (\n    <form onSubmit={async (e) => { e.preventDefault(); await applyCoupon(code); }}>\n      <input aria-label=\"Coupon code\" value={code} onChange={(e) => setCode(e.target.value)} />\n      <button disabled={isLoading}>Apply</button>\n    </form>\n  );\n}")
            .bash("git log --oneline -5 -- apps/web/src/cart", "9d1e2aa cart: hydrate from server state\n51bb0c3 coupon form\n0c77aa1 cart page skeleton\n3fa0c9e init web")
            .assistant("Found it: the cart hydrates from the server after the page loads, and hydration resets the form's `code` state. When the test fills the coupon field before `/api/cart` has answered, hydration wipes the field and Apply submits an empty code, which the API ignores. The test must wait for the cart to load before typing, and the form should not reset a field the user has typed in. I'll fix the test by waiting for the `/api/cart` response with `page.waitForResponse` in `beforeEach`, and leave the component as it is.")
            .edit("apps/web/e2e/checkout.spec.ts", "    await page.goto('/cart?seed=basic');", "    const cartLoaded = page.waitForResponse((r) => r.url().endsWith('/api/cart') && r.ok());\n    await page.goto('/cart?seed=basic');\n    await cartLoaded;")
            .edit("apps/web/e2e/checkout.spec.ts", "toHaveText('$42.00', { timeout: 15_000 });", "toHaveText('$42.00');")
            .bash("pnpm -F web exec playwright test e2e/checkout.spec.ts --repeat-each=20", "Running 40 tests using 4 workers\n\n  40 passed (1.1m)")
            .bash("pnpm -F web test", "> web@0.14.0 test /repo/apps/web\n> vitest run\n\n ✓ src/cart/useCart.test.ts (9 tests) 38ms\n ✓ src/cart/CouponForm.test.tsx (4 tests) 112ms\n ✓ src/lib/money.test.ts (12 tests) 6ms\n\n Test Files  3 passed (3)\n      Tests  25 passed (25)\n   Duration  2.41s")
            .bash("git checkout -b fix/checkout-coupon-flake && git add apps/web/e2e/checkout.spec.ts && git commit -m \"e2e(checkout): wait for cart hydration before applying coupon\"", "Switched to a new branch 'fix/checkout-coupon-flake'\n[fix/checkout-coupon-flake 7e3b91fa] e2e(checkout): wait for cart hydration before applying coupon\n 1 file changed, 3 insertions(+), 1 deletion(-)")
            .bash("git push -u origin fix/checkout-coupon-flake && gh pr create --fill --base main", "branch 'fix/checkout-coupon-flake' set up to track 'origin/fix/checkout-coupon-flake'.\nhttps://github.com/shopfront/shopfront/pull/1284")
            .assistant("Committed `7e3b91fa` on `fix/checkout-coupon-flake` and opened PR #1284. 40/40 runs pass with `--repeat-each=20`, `pnpm -F web test` passes (25 tests). The component still resets a typed coupon on hydration; that is a real (minor) UX bug worth a ticket.")
            .user("thanks. unrelated question: why is `pnpm build` so slow on CI? it takes like 6 minutes even when nothing changed in web")
            .bash("pnpm turbo run build --filter=web --dry=json | jq '.tasks[] | {taskId, cache: .cache.status, outputs}'", "{\n  \"taskId\": \"@shopfront/api-client#build\",\n  \"cache\": \"HIT\",\n  \"outputs\": [\"dist/**\"]\n}\n{\n  \"taskId\": \"web#build\",\n  \"cache\": \"MISS\",\n  \"outputs\": [\"dist/**\"]\n}")
            .bash("ls apps/web/.next | head", "BUILD_ID\nbuild-manifest.json\ncache\nserver\nstatic\ntrace")
            .assistant("Because Turborepo never restores web's build: `turbo.json` declares `outputs: [\"dist/**\"]` for every build, but web is a Next.js app that writes to `.next/`, so turbo caches nothing for `web#build` and rebuilds it every time (the api-client package does hit the cache). Adding `.next/**` (without `.next/cache/**`) to the build outputs would make unchanged builds a cache hit.")
            .user("makes sense. do that, but only for web — put it in apps/web/turbo.json, not the root one")
            .write("apps/web/turbo.json", "{\n  \"extends\": [\"//\"],\n  \"tasks\": {\n    \"build\": {\n      \"outputs\": [\".next/**\", \"!.next/cache/**\"]\n    }\n  }\n}\n")
            .bash("pnpm turbo run build --filter=web && pnpm turbo run build --filter=web", " Tasks:    2 successful, 2 total\nCached:    1 cached, 2 total\n  Time:    1m48.204s\n\n Tasks:    2 successful, 2 total\nCached:    2 cached, 2 total\n  Time:    412ms >>> FULL TURBO")
            .assistant("Added `apps/web/turbo.json` with build outputs `.next/**` and `!.next/cache/**`. The second build is a full cache hit: 1m48s → 412ms (FULL TURBO).")
            .user("nice. last thing for today: add an e2e test for an expired coupon in apps/web/e2e/coupon-expired.spec.ts — seed `expired`, code OLD10, should show the alert \"This coupon has expired\" and keep the total at $50.00")
            .write("apps/web/e2e/coupon-expired.spec.ts", "import { test, expect } from '@playwright/test';\n\ntest('expired coupon shows an alert', async ({ page }) => {\n  const cartLoaded = page.waitForResponse((r) => r.url().endsWith('/api/cart') && r.ok());\n  await page.goto('/cart?seed=expired');\n  await cartLoaded;\n  await page.getByLabel('Coupon code').fill('OLD10');\n  await page.getByRole('button', { name: 'Apply' }).click();\n  await expect(page.getByRole('alert')).toHaveText('This coupon has expired');\n  await expect(page.getByTestId('cart-total')).toHaveText('$50.00');\n});\n")
            .bash("pnpm -F web exec playwright test e2e/coupon-expired.spec.ts", "Running 1 test using 1 worker\n\n  1) [chromium] › coupon-expired.spec.ts:3:1 › expired coupon shows an alert ──────\n\n    Error: Timed out 5000ms waiting for expect(locator).toHaveText(expected)\n\n    Locator: getByRole('alert')\n    Expected string: \"This coupon has expired\"\n    Received: <element(s) not found>\n\n  1 failed\n    [chromium] › coupon-expired.spec.ts:3:1 › expired coupon shows an alert\n\nCommand exited with code 1")
            .assistant("The alert is not rendered at all. `applyCoupon` throws `CouponError` but `CouponForm` never catches it, so there is no `role=\"alert\"` element. I'll check how errors are shown elsewhere in the cart before deciding where to render it.")
            .bash("grep -rn \"role=\\\"alert\\\"\" apps/web/src | head", "apps/web/src/checkout/PaymentForm.tsx:48:        <p role=\"alert\" className={styles.error}>{error}</p>")
            .build(),
    );
    Case {
        name: "pnpm turborepo checkout flake (held out, 12th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("constraint: never touch packages/ui", &["packages/ui"]),
            fact("flaky spec file", &["checkout.spec.ts"]),
            fact("flake symptom", &["$50.00", "expected string: \"$42.00\""]),
            fact(
                "wrong attempt: a longer timeout did not fix it",
                &["15_000", "15s", "15000ms", "15 s", "longer timeout"],
            ),
            fact("root cause: hydration resets the coupon field", &["hydrat"]),
            fact("the fix: wait for /api/cart", &["waitForResponse"]),
            fact(
                "e2e command",
                &["pnpm -F web exec playwright test", "playwright test"],
            ),
            fact("unit test command", &["pnpm -F web test"]),
            fact("branch", &["fix/checkout-coupon-flake"]),
            fact("commit", &["7e3b91fa"]),
            fact("PR", &["#1284", "pull/1284", "PR 1284"]),
            fact(
                "turbo cache fix: .next outputs in apps/web/turbo.json",
                &["apps/web/turbo.json", ".next/**"],
            ),
            fact(
                "latest request: expired-coupon e2e test",
                &["coupon-expired.spec.ts", "expired coupon"],
            ),
            fact(
                "last failure: alert not rendered",
                &["getByRole('alert')", "element(s) not found", "CouponError"],
            ),
        ],
    }
}

/// An update of a model-written free-markdown summary on a Go service: the span finishes the open
/// wiring item and the lint finding, the user drops the Redis plan, a new error in a concurrency
/// test, and a decision on how to handle it.
fn go_ledger_update() -> Case {
    let previous = "## Context\nWe're adding idempotency keys to `ledger-svc` (Go 1.22, chi router, Postgres via pgx/v5) so that retried `POST /v1/transfers` requests don't create duplicate transfers. The user asked to keep dependencies to the standard library plus pgx — no new modules.\n\n## What we did\n- Created `internal/idempotency/store.go`: a Postgres-backed store with `Get`/`Put`, rows expire after 24h (TTL checked on read).\n- Added migration `migrations/0007_idempotency_keys.sql` (table `idempotency_keys`, primary key on `(key, account_id)`).\n- Added `internal/idempotency/middleware.go` that reads the `Idempotency-Key` header and replays the stored response.\n- `go test ./...` passes (212 tests, ~9s).\n\n## Open questions\n- The middleware is not yet wired into the router in `cmd/ledger/main.go`.\n- `golangci-lint run` reports `internal/idempotency/store.go:88:12: Error return value of rows.Close is not checked (errcheck)` — not fixed yet.\n- Plan: move the key store to Redis later for lower latency (would need go-redis).\n\n## Notes\n- Branch: `feat/idempotency`, last commit `c0ffee12` (\"idempotency store + migration\").\n- Run tests with `go test ./...`, lint with `golangci-lint run`.";
    let messages = SessionBuilder::new()
        .user("ok let's continue where we left off")
        .read("cmd/ledger/main.go", "func main() {\n\tcfg := config.MustLoad()\n\tpool := db.MustConnect(cfg.DatabaseURL)\n\tr := chi.NewRouter()\n\tr.Use(middleware.RequestID, middleware.Recoverer)\n\tr.Route(\"/v1\", func(r chi.Router) {\n\t\tr.Post(\"/transfers\", transfers.Create(pool))\n\t\tr.Get(\"/transfers/{id}\", transfers.Get(pool))\n\t})\n\tlog.Fatal(http.ListenAndServe(cfg.Addr, r))\n}")
        .edit("cmd/ledger/main.go", "\t\tr.Post(\"/transfers\", transfers.Create(pool))", "\t\tr.With(idempotency.Middleware(idempotency.NewStore(pool))).Post(\"/transfers\", transfers.Create(pool))")
        .read("internal/idempotency/store.go", "func (s *Store) Get(ctx context.Context, key, accountID string) (*Response, error) {\n\trows, err := s.pool.Query(ctx, selectSQL, key, accountID)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\tdefer rows.Close()\n...")
        .edit("internal/idempotency/store.go", "\trows, err := s.pool.Query(ctx, selectSQL, key, accountID)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\tdefer rows.Close()", "\trow := s.pool.QueryRow(ctx, selectSQL, key, accountID)")
        .bash("golangci-lint run", "")
        .bash("go build ./... && go test ./...", "ok  \tgithub.com/paysuite/ledger-svc/internal/accounts\t1.204s\nok  \tgithub.com/paysuite/ledger-svc/internal/idempotency\t0.811s\nok  \tgithub.com/paysuite/ledger-svc/internal/transfers\t3.377s\n?   \tgithub.com/paysuite/ledger-svc/cmd/ledger\t[no test files]\nok  \tgithub.com/paysuite/ledger-svc/internal/db\t2.950s")
        .assistant("The middleware is wired on `POST /v1/transfers` in `cmd/ledger/main.go`, and the errcheck finding is gone (`Get` uses `QueryRow`, no rows to close). `golangci-lint run` is clean and `go test ./...` passes. Next I'd start on the Redis store from the plan.")
        .user("forget Redis. we're not adding go-redis to this service, Postgres is fast enough for this. what I want instead: a test where two identical requests with the same key hit the server at the same time")
        .write("internal/idempotency/middleware_concurrency_test.go", "func TestConcurrentSameKey(t *testing.T) {\n\tsrv := newTestServer(t)\n\tvar wg sync.WaitGroup\n\tcodes := make([]int, 2)\n\tfor i := range codes {\n\t\twg.Add(1)\n\t\tgo func() {\n\t\t\tdefer wg.Done()\n\t\t\tcodes[i] = postTransfer(t, srv, \"key-123\")\n\t\t}()\n\t}\n\twg.Wait()\n\t...\n}\n")
        .bash("go test ./internal/idempotency/ -run TestConcurrentSameKey -count=20", "--- FAIL: TestConcurrentSameKey (0.31s)\n    middleware_concurrency_test.go:41: request 1: status 500, body: {\"error\":\"internal\"}\n    middleware_concurrency_test.go:42: server log: idempotency put: ERROR: duplicate key value violates unique constraint \"idempotency_keys_pkey\" (SQLSTATE 23505)\n--- FAIL: TestConcurrentSameKey (0.29s)\n    middleware_concurrency_test.go:41: request 0: status 500, body: {\"error\":\"internal\"}\n    middleware_concurrency_test.go:42: server log: idempotency put: ERROR: duplicate key value violates unique constraint \"idempotency_keys_pkey\" (SQLSTATE 23505)\nFAIL\nFAIL\tgithub.com/paysuite/ledger-svc/internal/idempotency\t4.918s\nFAIL\n\nCommand exited with code 1")
        .thinking("Both requests miss on Get, both run the handler, both Put; the second Put hits the primary key. Worse, both transfers were created. Need to claim the key before running the handler.")
        .assistant("Both requests miss the lookup, both create a transfer, and the second `Put` hits the primary key, so the duplicate transfer is already made by then. I'll claim the key before running the handler: `INSERT ... ON CONFLICT DO NOTHING` with a `pending` state; the request that doesn't win the insert gets `409 Conflict` while the first is in flight, and the stored response once it's done. I'm not using an advisory lock: it would hold a connection for the whole request.")
        .edit("internal/idempotency/store.go", "const insertSQL = `INSERT INTO idempotency_keys (key, account_id, status, body) VALUES ($1, $2, $3, $4)`", "const claimSQL = `INSERT INTO idempotency_keys (key, account_id, state) VALUES ($1, $2, 'pending') ON CONFLICT (key, account_id) DO NOTHING`")
        .edit("internal/idempotency/middleware.go", "\tresp, err := store.Get(ctx, key, account)", "\tclaimed, err := store.Claim(ctx, key, account)\n\tif err == nil && !claimed {\n\t\twriteConflict(w)\n\t\treturn\n\t}")
        .write("migrations/0008_idempotency_state.sql", "ALTER TABLE idempotency_keys ADD COLUMN state text NOT NULL DEFAULT 'done';\n")
        .bash("go test ./internal/idempotency/ -run TestConcurrentSameKey -count=20 -race", "ok  \tgithub.com/paysuite/ledger-svc/internal/idempotency\t7.102s")
        .bash("go test ./... && golangci-lint run", "ok  \tgithub.com/paysuite/ledger-svc/internal/accounts\t1.198s\nok  \tgithub.com/paysuite/ledger-svc/internal/idempotency\t1.655s\nok  \tgithub.com/paysuite/ledger-svc/internal/transfers\t3.402s\n?   \tgithub.com/paysuite/ledger-svc/cmd/ledger\t[no test files]\nok  \tgithub.com/paysuite/ledger-svc/internal/db\t2.871s")
        .bash("git add -A && git commit -m \"idempotency: claim key with ON CONFLICT, 409 while in flight; wire middleware\"", "[feat/idempotency 4d2a9e7b] idempotency: claim key with ON CONFLICT, 409 while in flight; wire middleware\n 6 files changed, 118 insertions(+), 14 deletions(-)")
        .assistant("Committed `4d2a9e7b` on `feat/idempotency`. The concurrency test passes 20/20 with `-race`; `go test ./...` and `golangci-lint run` are clean. New migration `migrations/0008_idempotency_state.sql` adds the `state` column.")
        .build();
    Case {
        name: "go ledger idempotency update, model-written markdown summary (held out, 12th set)",
        messages,
        previous: Some(previous.to_owned()),
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "constraint: stdlib + pgx only, no new modules",
                &["pgx", "no new modules"],
            ),
            fact("endpoint", &["/v1/transfers"]),
            fact("store file", &["internal/idempotency/store.go"]),
            fact("first migration", &["0007_idempotency_keys"]),
            fact("keys expire after 24h", &["24h", "24 h"]),
            fact(
                "middleware wired in main.go (done)",
                &["cmd/ledger/main.go"],
            ),
            fact("errcheck finding fixed", &["errcheck"]),
            fact("Redis plan dropped", &["redis"]),
            fact(
                "new error",
                &[
                    "duplicate key value violates unique constraint",
                    "idempotency_keys_pkey",
                    "23505",
                ],
            ),
            fact("decision: claim the key with ON CONFLICT", &["on conflict"]),
            fact("409 while the first request is in flight", &["409"]),
            fact("new migration", &["0008_idempotency_state"]),
            fact("test command", &["go test ./..."]),
            fact("lint command", &["golangci-lint run"]),
            fact("branch", &["feat/idempotency"]),
            fact("new commit", &["4d2a9e7b"]),
        ],
    }
}

/// A Vue 3 + Vite + Pinia session held in Italian (tool output in English): a constraint, a
/// reactivity bug, a TypeScript build error, a version kept after the user changes their mind about
/// an upgrade, and a commit.
fn vue_cart_in_italian() -> Case {
    let messages = SessionBuilder::new()
        .user("Ciao! Nel componente CartSummary il totale non si aggiorna quando cambio la quantità di un prodotto. Usiamo solo Pinia (niente Vuex, non aggiungerlo) e in TypeScript niente `any`, il lint lo blocca comunque.")
        .bash("cat package.json | head -30", "{\n  \"name\": \"negozio-web\",\n  \"version\": \"0.9.2\",\n  \"type\": \"module\",\n  \"scripts\": {\n    \"dev\": \"vite\",\n    \"build\": \"vue-tsc -b && vite build\",\n    \"test\": \"vitest\",\n    \"lint\": \"eslint . --max-warnings 0\"\n  },\n  \"dependencies\": {\n    \"pinia\": \"^2.2.6\",\n    \"pinia-plugin-persistedstate\": \"^3.2.1\",\n    \"vue\": \"^3.5.12\",\n    \"vue-router\": \"^4.4.5\"\n  },\n  \"devDependencies\": {\n    \"@vitejs/plugin-vue\": \"^5.1.4\",\n    \"typescript\": \"~5.6.2\",\n    \"vite\": \"^5.4.10\",\n    \"vitest\": \"^2.1.4\",\n    \"vue-tsc\": \"^2.1.10\"\n  }\n}")
        .read("src/components/CartSummary.vue", "<script setup lang=\"ts\">\nimport { useCartStore } from '@/stores/cart'\n\nconst { items, total } = useCartStore()\n</script>\n\n<template>\n  <ul><li v-for=\"item in items\" :key=\"item.id\">{{ item.name }} × {{ item.qty }}</li></ul>\n  <p class=\"totale\">Totale: {{ total.toFixed(2) }} €</p>\n</template>")
        .read("src/stores/cart.ts", "export const useCartStore = defineStore('cart', {\n  state: () => ({ items: [] as CartItem[] }),\n  getters: {\n    total: (state) => state.items.reduce((sum, item) => sum + item.price * item.qty, 0),\n  },\n  actions: {\n    setQty(id: string, qty: number) {\n      const item = this.items.find((i) => i.id === id)\n      if (item) item.qty = qty\n    },\n  },\n  persist: true,\n})")
        .bash("grep -rn \"useCartStore()\" src | wc -l", "7")
        .assistant("Il problema è la destrutturazione: `const { items, total } = useCartStore()` copia i valori una volta sola e perde la reattività. Userò `storeToRefs` per `items` e `total`.")
        .edit("src/components/CartSummary.vue", "import { useCartStore } from '@/stores/cart'\n\nconst { items, total } = useCartStore()", "import { storeToRefs } from 'pinia'\nimport { useCartStore } from '@/stores/cart'\n\nconst { items, total } = storeToRefs(useCartStore())")
        .write("src/components/__tests__/CartSummary.spec.ts", "import { mount } from '@vue/test-utils'\nimport { createTestingPinia } from '@pinia/testing'\nimport CartSummary from '../CartSummary.vue'\n\nit('aggiorna il totale quando cambia la quantità', async () => {\n  const wrapper = mount(CartSummary, { global: { plugins: [createTestingPinia({ stubActions: false })] } })\n  const store = useCartStore()\n  store.items = [{ id: 'a', name: 'Tazza', price: 8, qty: 1 }]\n  store.setQty('a', 3)\n  await nextTick()\n  expect(wrapper.find('.totale').text()).toBe('Totale: 24.00 €')\n})\n")
        .bash("npx vitest run src/components/__tests__/CartSummary.spec.ts", " ✓ src/components/__tests__/CartSummary.spec.ts (1 test) 41ms\n\n Test Files  1 passed (1)\n      Tests  1 passed (1)\n   Duration  1.02s")
        .bash("npm run build", "> negozio-web@0.9.2 build\n> vue-tsc -b && vite build\n\nsrc/stores/cart.ts:27:22 - error TS7006: Parameter 'line' implicitly has an 'any' type.\n\n27   const lines = raw.map((line) => parseLine(line))\n                        ~~~~\n\nFound 1 error in src/stores/cart.ts:27\n\nCommand exited with code 2")
        .assistant("Il build fallisce per un errore già presente in `src/stores/cart.ts` (riga 27, funzione `restoreFromQuery`): `error TS7006: Parameter 'line' implicitly has an 'any' type`. Lo tipizzo come `string`, senza usare `any`.")
        .edit("src/stores/cart.ts", "const lines = raw.map((line) => parseLine(line))", "const lines = raw.map((line: string) => parseLine(line))")
        .bash("npm run build", "> negozio-web@0.9.2 build\n> vue-tsc -b && vite build\n\nvite v5.4.10 building for production...\n✓ 84 modules transformed.\ndist/index.html                   0.46 kB │ gzip:  0.30 kB\ndist/assets/index-Cq3Lr0aZ.css    4.12 kB │ gzip:  1.41 kB\ndist/assets/index-B7dkF2xw.js   96.88 kB │ gzip: 37.90 kB\n✓ built in 1.87s")
        .user("Perfetto. Già che ci sei, aggiorna Pinia alla 3, così siamo aggiornati.")
        .bash("npm view pinia-plugin-persistedstate@3 peerDependencies", "{ pinia: '^2.0.0' }")
        .bash("npm view pinia-plugin-persistedstate@4 peerDependencies", "{ pinia: '>=2.0.0' }")
        .assistant("Pinia 3 funziona, ma `pinia-plugin-persistedstate` 3.2.1 dichiara `pinia ^2.0.0`: bisogna passare alla versione 4 del plugin, che cambia il formato dell'opzione `persist` (lo store `cart` usa `persist: true` e i dati salvati nel localStorage degli utenti andrebbero migrati). Vuoi procedere?")
        .user("Ah no, allora lasciamo perdere: restiamo su Pinia 2.2.6 e sul plugin attuale, non voglio migrare i dati degli utenti adesso. Fai solo il commit della correzione.")
        .bash("npx vitest run", " ✓ src/components/__tests__/CartSummary.spec.ts (1 test) 39ms\n ✓ src/stores/__tests__/cart.spec.ts (6 tests) 22ms\n ✓ src/utils/__tests__/prezzo.spec.ts (5 tests) 4ms\n\n Test Files  3 passed (3)\n      Tests  12 passed (12)\n   Duration  1.64s")
        .bash("git add -A && git commit -m \"fix(cart): totale reattivo con storeToRefs; tipo esplicito in restoreFromQuery\"", "[main b5e07d13] fix(cart): totale reattivo con storeToRefs; tipo esplicito in restoreFromQuery\n 3 files changed, 19 insertions(+), 2 deletions(-)\n create mode 100644 src/components/__tests__/CartSummary.spec.ts")
        .assistant("Fatto: commit `b5e07d13` su `main`. Pinia resta alla 2.2.6. `npx vitest run`: 12 test passati; `npm run build` passa. Ci sono altri 6 punti che chiamano `useCartStore()`: se qualcuno destruttura lo store avrà lo stesso problema, posso controllarli se vuoi.")
        .build();
    Case {
        name: "vue pinia cart in Italian (held out, 12th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("constraint: Pinia only, no Vuex", &["vuex"]),
            fact(
                "constraint: no `any` in TypeScript",
                &["`any`", "niente any", "no any"],
            ),
            fact("component file", &["src/components/CartSummary.vue"]),
            fact("store file", &["src/stores/cart.ts"]),
            fact("cause and fix: storeToRefs", &["storeToRefs"]),
            fact("test file", &["CartSummary.spec.ts"]),
            fact("test command", &["npx vitest run", "vitest"]),
            fact("build command", &["npm run build"]),
            fact("build error", &["TS7006", "implicitly has an 'any' type"]),
            fact("Pinia stays at 2.2.6", &["2.2.6"]),
            fact(
                "why no Pinia 3: the persistedstate plugin",
                &["persistedstate"],
            ),
            fact("commit", &["b5e07d13"]),
        ],
    }
}

const JMH_BEFORE: &str = "Benchmark                         Mode  Cnt  Score   Error  Units\nFilterParseBench.parseLong        avgt   10  2.114 ± 0.031  us/op\nFilterParseBench.parseShort       avgt   10  0.402 ± 0.009  us/op";

const JMH_ANTLR: &str = "Benchmark                         Mode  Cnt  Score   Error  Units\nFilterParseBench.parseLong        avgt   10  9.847 ± 0.212  us/op\nFilterParseBench.parseShort       avgt   10  3.911 ± 0.087  us/op";

/// A branch summary of an abandoned spike: replacing a hand-written filter parser with an ANTLR
/// generated one, what broke (tests, error messages, NOT precedence, speed, jar size), an attempt
/// to recover the speed, and why the user dropped it.
fn abandoned_antlr_branch() -> Case {
    let messages = SessionBuilder::new()
        .user("Let's try replacing the hand-written filter parser (src/main/java/com/tallyq/filter/FilterParser.java) with an ANTLR-generated one. Work on a branch spike/antlr-filter-parser. The public error messages must not change — customers match on them in their scripts.")
        .bash("git checkout -b spike/antlr-filter-parser", "Switched to a new branch 'spike/antlr-filter-parser'")
        .bash("wc -l src/main/java/com/tallyq/filter/*.java", "   88 src/main/java/com/tallyq/filter/FilterLexer.java\n  612 src/main/java/com/tallyq/filter/FilterParser.java\n  143 src/main/java/com/tallyq/filter/Node.java\n  843 total")
        .bash("mvn -q -pl filter jmh:run -Djmh.bench=FilterParseBench", JMH_BEFORE)
        .write("src/main/antlr4/com/tallyq/filter/Filter.g4", "grammar Filter;\n\nfilter : expr EOF ;\nexpr   : expr AND expr\n       | expr OR expr\n       | NOT expr\n       | '(' expr ')'\n       | comparison ;\ncomparison : FIELD OP value ;\nvalue : STRING | NUMBER | BOOL ;\n\nAND : 'and' ; OR : 'or' ; NOT : 'not' ;\nOP  : '=' | '!=' | '<' | '<=' | '>' | '>=' | '~' ;\nFIELD : [a-z_][a-z0-9_.]* ;\nSTRING : '\"' (~'\"' | '\\\\\"')* '\"' ;\nNUMBER : '-'? [0-9]+ ('.' [0-9]+)? ;\nBOOL : 'true' | 'false' ;\nWS : [ \\t\\r\\n]+ -> skip ;\n")
        .edit("pom.xml", "    <!-- parsers -->", "    <!-- parsers -->\n    <dependency>\n      <groupId>org.antlr</groupId>\n      <artifactId>antlr4-runtime</artifactId>\n      <version>4.13.1</version>\n    </dependency>")
        .write("src/main/java/com/tallyq/filter/AntlrFilterParser.java", "public final class AntlrFilterParser implements Parser {\n  public Node parse(String input) {\n    var lexer = new FilterLexer(CharStreams.fromString(input));\n    var parser = new FilterGrammarParser(new CommonTokenStream(lexer));\n    return new NodeBuilder().visit(parser.filter());\n  }\n}\n")
        .bash("mvn -q test", "[ERROR] Tests run: 318, Failures: 14, Errors: 0, Skipped: 0\n[ERROR] Failures: \n[ERROR]   FilterErrorsTest.unclosedParen:41 expected: <Expected ')' at column 8> but was: <line 1:7 missing ')' at '<EOF>'>\n[ERROR]   FilterErrorsTest.badOperator:58 expected: <Unknown operator '=>' at column 6> but was: <line 1:5 token recognition error at: '=>'>\n[ERROR]   FilterErrorsTest.trailingAnd:66 expected: <Expected expression after 'and' at column 12> but was: <line 1:11 mismatched input '<EOF>' expecting {'not', '(', FIELD}>\n[ERROR]   FilterPrecedenceTest.notBindsTighterThanAnd:22 expected: <And(Not(a=1), b=2)> but was: <Not(And(a=1, b=2))>\n  ... 10 more\n[INFO] BUILD FAILURE\n\nCommand exited with code 1")
        .assistant("14 of 318 tests fail. 13 are error-message tests: ANTLR's messages (`line 1:7 missing ')' at '<EOF>'`, `mismatched input`) differ from ours. One is precedence: in my grammar `not` binds looser than `and`, because the `NOT expr` alternative comes after `AND`. I'll move `NOT` first and write a custom `ANTLRErrorListener` that maps ANTLR errors back to our messages.")
        .edit("src/main/antlr4/com/tallyq/filter/Filter.g4", "expr   : expr AND expr\n       | expr OR expr\n       | NOT expr", "expr   : NOT expr\n       | expr AND expr\n       | expr OR expr")
        .write("src/main/java/com/tallyq/filter/LegacyMessageErrorListener.java", "final class LegacyMessageErrorListener extends BaseErrorListener {\n  @Override\n  public void syntaxError(Recognizer<?, ?> r, Object symbol, int line, int col, String msg, RecognitionException e) {\n    throw new FilterSyntaxException(LegacyMessages.translate(symbol, col, msg, e));\n  }\n}\n")
        .bash("mvn -q test", "[ERROR] Tests run: 318, Failures: 6, Errors: 0, Skipped: 0\n[ERROR]   FilterErrorsTest.trailingAnd:66 expected: <Expected expression after 'and' at column 12> but was: <Expected FIELD at column 12>\n[ERROR]   FilterErrorsTest.unterminatedString:73 expected: <Unterminated string at column 9> but was: <Unknown operator '\"' at column 9>\n  ... 4 more\n[INFO] BUILD FAILURE\n\nCommand exited with code 1")
        .assistant("Precedence is fixed; 6 message tests still fail. ANTLR's recovery reports a different token than our parser did (it sees the expected set, not the construct), so mapping messages back needs one special case per error shape.")
        .bash("mvn -q -pl filter jmh:run -Djmh.bench=FilterParseBench", JMH_ANTLR)
        .bash("mvn -q package -DskipTests && ls -l target/*.jar", "-rw-r--r-- 1 dev dev 2871544 Nov 26 19:12 target/tallyq-filter-3.8.0-SNAPSHOT.jar")
        .assistant("Speed: `parseLong` went from 2.114 to 9.847 us/op (about 4.7x slower), `parseShort` from 0.402 to 3.911 us/op. The jar grew by about 1.2 MB (2.87 MB now) with antlr4-runtime shaded in. I can try SLL prediction mode (`PredictionMode.SLL`), which usually makes ANTLR much faster on simple grammars.")
        .user("try SLL, if it gets close to the old numbers we keep going")
        .edit("src/main/java/com/tallyq/filter/AntlrFilterParser.java", "    var parser = new FilterGrammarParser(new CommonTokenStream(lexer));", "    var parser = new FilterGrammarParser(new CommonTokenStream(lexer));\n    parser.getInterpreter().setPredictionMode(PredictionMode.SLL);")
        .bash("mvn -q -pl filter jmh:run -Djmh.bench=FilterParseBench", "Benchmark                         Mode  Cnt  Score   Error  Units\nFilterParseBench.parseLong        avgt   10  6.318 ± 0.144  us/op\nFilterParseBench.parseShort       avgt   10  2.702 ± 0.051  us/op")
        .assistant("With SLL: `parseLong` 6.318 us/op, still about 3x the hand-written parser's 2.114, and 6 error-message tests still fail.")
        .user("no, that's not worth it. the error messages are the real blocker and it's still 3x slower. drop the spike — we keep the hand-written FilterParser. don't merge anything from this branch. just write down what we learned")
        .bash("git add -A && git commit -m \"spike: ANTLR filter parser (abandoned, see notes)\"", "[spike/antlr-filter-parser e91d0c4a] spike: ANTLR filter parser (abandoned, see notes)\n 6 files changed, 241 insertions(+), 2 deletions(-)")
        .bash("git checkout main", "Switched to branch 'main'\nYour branch is up to date with 'origin/main'.")
        .assistant("Abandoned. Branch `spike/antlr-filter-parser` (last commit `e91d0c4a`) is kept for reference and not merged; `main` is unchanged. Learned: ANTLR 4.13.1 can't reproduce our public error messages without a special case per error shape (6 of 318 tests still failing after the mapping listener), `not` precedence has to be encoded by alternative order, and it is 3–4.7x slower (2.114 → 9.847 us/op, 6.318 with SLL) and adds about 1.2 MB to the jar.")
        .build();
    Case {
        name: "abandoned antlr filter parser (branch summary; held out, 12th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::Branch,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("branch", &["spike/antlr-filter-parser"]),
            fact("what was tried: ANTLR", &["antlr"]),
            fact(
                "hand-written parser kept",
                &["FilterParser.java", "hand-written"],
            ),
            fact("grammar file", &["Filter.g4"]),
            fact(
                "constraint: public error messages must not change",
                &["error message"],
            ),
            fact("test command", &["mvn -q test", "mvn test"]),
            fact(
                "first test run: 14 of 318 failing",
                &["Failures: 14", "14 of 318", "14 failing", "14 tests"],
            ),
            fact(
                "ANTLR's message text",
                &["mismatched input", "missing ')' at '<EOF>'"],
            ),
            fact("NOT precedence bug", &["precedence"]),
            fact(
                "still 6 failing after the mapping listener",
                &[
                    "Failures: 6",
                    "6 of 318",
                    "6 error-message tests",
                    "6 tests",
                ],
            ),
            fact("benchmark: 2.114 → 9.847 us/op", &["9.847", "4.7x"]),
            fact("SLL attempt", &["SLL"]),
            fact("jar size", &["1.2 MB", "antlr4-runtime"]),
            fact("last commit on the branch", &["e91d0c4a"]),
            fact(
                "why dropped / not merged",
                &["not merged", "not worth", "abandon"],
            ),
        ],
    }
}
