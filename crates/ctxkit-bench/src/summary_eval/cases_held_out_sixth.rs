//! The sixth held-out set, written on 2026-11-26 before any summary of these sessions was read, by
//! someone who had not read the offline summarizer's rules or code. The facts are what an engineer
//! taking over each session would need to know, not a guess at what a summarizer keeps. Reported
//! apart from the other held-out sessions ("6th set" in the case names).

use ctxkit_compaction::SummaryPurpose;
use serde_json::json;

use super::{Case, SessionBuilder, fact};

pub(super) fn cases() -> Vec<Case> {
    vec![
        laravel_export(),
        phoenix_update(),
        fastapi_spanish(),
        vite_branch(),
    ]
}

/// A Laravel app over three requests: a streamed CSV export (a wrong attempt, then a fix and a
/// commit), a rate limit on the route, and a feature test still being written when the span ends.
fn laravel_export() -> Case {
    let messages = SessionBuilder::new()
        .user("The orders CSV export at /admin/orders/export dies on big shops (memory). Make it stream. Production is stuck on PHP 8.1 until January, so nothing that needs 8.2 (no readonly classes, no DNF types). And don't touch the migrations.")
        .bash("php -v && composer show laravel/framework | head -3", "PHP 8.1.27 (cli) (built: Dec 21 2023 20:19:54) (NTS)\nname     : laravel/framework\ndescr.   : The Laravel Framework.\nversions : * v10.48.4")
        .bash("ls app/Http/Controllers/Admin", "CustomerController.php\nDashboardController.php\nOrderExportController.php\nOrderController.php\nSettingsController.php")
        .read("app/Http/Controllers/Admin/OrderExportController.php", "<?php\n\nnamespace App\\Http\\Controllers\\Admin;\n\nclass OrderExportController extends Controller\n{\n    public function __invoke(Request $request)\n    {\n        $orders = Order::with('customer')->where('shop_id', $request->user()->shop_id)->get();\n        $csv = Writer::createFromString();\n        foreach ($orders as $order) {\n            $csv->insertOne($this->row($order));\n        }\n        return response($csv->toString(), 200, ['Content-Type' => 'text/csv']);\n    }\n}")
        .read("routes/web.php", "Route::middleware(['auth', 'can:admin'])->prefix('admin')->group(function () {\n    Route::get('/orders', [OrderController::class, 'index']);\n    Route::get('/orders/export', OrderExportController::class);\n});")
        .read("tests/Feature/Admin/OrderExportTest.php", "public function test_admin_can_export_orders(): void\n{\n    $this->actingAs($this->admin)->get('/admin/orders/export')->assertOk();\n}")
        .bash("grep -rn \"league/csv\" composer.json", "  \"league/csv\": \"^9.15\",")
        .assistant("It loads every order with `->get()` and builds the whole CSV in memory. I'll return a `StreamedResponse` and iterate with `->lazy()`.")
        .edit("app/Http/Controllers/Admin/OrderExportController.php", "$orders = Order::with('customer')->where('shop_id', $request->user()->shop_id)->get();", "$orders = Order::with('customer')->where('shop_id', $request->user()->shop_id)->lazy();")
        .bash("php artisan test --filter=OrderExportTest", "   FAIL  Tests\\Feature\\Admin\\OrderExportTest\n  ⨯ admin can export orders\n\n  RuntimeException\n\n  You must specify an orderBy clause when using this function.\n\n  at vendor/laravel/framework/src/Illuminate/Database/Query/Builder.php:3046\n\n  Tests:    1 failed (1 assertions)\n\nCommand exited with code 1")
        .assistant("`lazy()` needs an explicit order. Ordering by `created_at` would page unstably with equal timestamps, so I'll use `lazyById(500)` which pages on the primary key.")
        .edit("app/Http/Controllers/Admin/OrderExportController.php", "->lazy();", "->lazyById(500);")
        .edit("app/Http/Controllers/Admin/OrderExportController.php", "return response($csv->toString(), 200, ['Content-Type' => 'text/csv']);", "return response()->streamDownload(function () use ($orders) {\n            $out = fopen('php://output', 'w');\n            foreach ($orders as $order) {\n                fputcsv($out, $this->row($order));\n            }\n            fclose($out);\n        }, 'orders.csv', ['Content-Type' => 'text/csv']);")
        .bash("php artisan test --filter=OrderExportTest", "   PASS  Tests\\Feature\\Admin\\OrderExportTest\n  ✓ admin can export orders                0.41s\n\n  Tests:    1 passed (2 assertions)")
        .bash("php -d memory_limit=128M artisan orders:export-probe --shop=42", "exported 184113 rows, peak memory 38.2 MB")
        .bash("./vendor/bin/pint --test app/Http/Controllers/Admin/OrderExportController.php", "  PASS   ........................................ 1 file")
        .bash("git checkout -b fix/stream-order-export && git add -A && git commit -m \"Stream the admin orders CSV export\"", "Switched to a new branch 'fix/stream-order-export'\n[fix/stream-order-export 7c2e41b9] Stream the admin orders CSV export\n 1 file changed, 11 insertions(+), 6 deletions(-)")
        .assistant("Committed `7c2e41b9` on `fix/stream-order-export`: the export streams with `lazyById(500)`; 184113 rows peak at 38.2 MB under a 128M limit.")
        .user("good. also somebody hammered that endpoint yesterday. limit it to 5 exports per minute per user")
        .read("app/Providers/RouteServiceProvider.php", "RateLimiter::for('api', function (Request $request) {\n    return Limit::perMinute(60)->by($request->user()?->id ?: $request->ip());\n});")
        .edit("app/Providers/RouteServiceProvider.php", "RateLimiter::for('api',", "RateLimiter::for('exports', function (Request $request) {\n    return Limit::perMinute(5)->by($request->user()->id);\n});\n\nRateLimiter::for('api',")
        .edit("routes/web.php", "Route::get('/orders/export', OrderExportController::class);", "Route::get('/orders/export', OrderExportController::class)->middleware('throttle:exports');")
        .bash("php artisan route:list --path=admin/orders/export -v", "  GET|HEAD  admin/orders/export .... Admin\\OrderExportController\n            ⇂ web\n            ⇂ auth\n            ⇂ can:admin\n            ⇂ throttle:exports")
        .bash("php artisan test", "  Tests:    212 passed (655 assertions)\n  Duration: 14.87s")
        .bash("git commit -am \"Throttle the orders export to 5 per minute per user\"", "[fix/stream-order-export 0d93fa17] Throttle the orders export to 5 per minute per user\n 2 files changed, 5 insertions(+), 1 deletion(-)")
        .user("now add a feature test that the 6th export in a minute gets a 429, and check the Content-Disposition filename is orders.csv")
        .read("tests/Feature/Admin/OrderExportTest.php", "public function test_admin_can_export_orders(): void\n{\n    $this->actingAs($this->admin)->get('/admin/orders/export')->assertOk();\n}")
        .tool("edit", json!({"path": "tests/Feature/Admin/OrderExportTest.php", "edits": [{"oldText": "}\n", "newText": "}\n\npublic function test_sixth_export_in_a_minute_is_throttled(): void\n{\n    for ($i = 0; $i < 5; $i++) {\n        $this->actingAs($this->admin)->get('/admin/orders/export')->assertOk();\n    }\n    $this->actingAs($this->admin)->get('/admin/orders/export')->assertStatus(429);\n}\n"}]}), None)
        .build();
    Case {
        name: "laravel export (held out, 6th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "constraint: PHP 8.1, nothing needing 8.2",
                &["PHP 8.1", "8.1"],
            ),
            fact("constraint: migrations untouched", &["migrations"]),
            fact(
                "controller file",
                &[
                    "app/Http/Controllers/Admin/OrderExportController.php",
                    "OrderExportController",
                ],
            ),
            fact("the failure of the first attempt", &["orderBy clause"]),
            fact("the fix: lazyById", &["lazyById"]),
            fact("streamed response", &["streamDownload", "stream"]),
            fact("test command", &["php artisan test"]),
            fact("branch", &["fix/stream-order-export"]),
            fact("first commit", &["7c2e41b9"]),
            fact("measured peak memory", &["38.2 MB", "38.2MB"]),
            fact(
                "rate limit 5 per minute",
                &["perMinute(5)", "5 per minute", "5 exports per minute"],
            ),
            fact("named limiter on the route", &["throttle:exports"]),
            fact("second commit", &["0d93fa17"]),
            fact("open: 429 test", &["429"]),
            fact(
                "open: filename check",
                &["Content-Disposition", "orders.csv"],
            ),
            fact(
                "test file",
                &["tests/Feature/Admin/OrderExportTest.php", "OrderExportTest"],
            ),
        ],
    }
}

/// An update of a Claude Code numbered-section summary on a Phoenix LiveView app: the pending item
/// is done after an error, a new request moves on; the earlier decisions must survive.
fn phoenix_update() -> Case {
    let previous = "This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nAnalysis:\nThe user wants presence on the support dashboard.\n\nSummary:\n1. Primary Request and Intent:\n   Show which support agents are viewing a ticket on the LiveView dashboard (`lib/helpdesk_web/live/ticket_live/show.ex`), tracked in issue #388.\n\n2. Key Technical Concepts:\n   - Phoenix.Presence tracked per ticket topic `ticket:<id>`\n   - PubSub server `Helpdesk.PubSub`\n\n3. Files and Code Sections:\n   - lib/helpdesk_web/presence.ex\n      - New `HelpdeskWeb.Presence` module, added to the supervision tree in lib/helpdesk/application.ex\n   - lib/helpdesk_web/live/ticket_live/show.ex\n      - `mount/3` calls `Presence.track/4` when `connected?(socket)`\n\n4. Errors and fixes:\n   - `** (ArgumentError) unknown registry: Helpdesk.PubSub`: Presence started before PubSub; fixed by moving it after `{Phoenix.PubSub, name: Helpdesk.PubSub}` in the children list\n\n5. Problem Solving:\n   Chose Presence over a custom ETS table because the app runs on 3 nodes with libcluster.\n\n6. All user messages:\n   - \"show who is looking at a ticket\"\n   - \"no new hex dependencies, the security review takes weeks\"\n\n7. Pending Tasks:\n   - Render the avatars of the viewers in the ticket header\n   - Hide the current user from the list\n\n8. Current Work:\n   Handling `presence_diff` in `handle_info/2`; commit 3b81f0ce on branch `feat/ticket-presence`.\n\n9. Optional Next Step:\n   Render the viewer avatars in the header.";
    let messages = SessionBuilder::new()
        .user("continue")
        .read("lib/helpdesk_web/live/ticket_live/show.ex", "def handle_info(%{event: \"presence_diff\"}, socket) do\n  {:noreply, assign(socket, :viewers, list_viewers(socket.assigns.ticket.id))}\nend")
        .read("lib/helpdesk_web/live/ticket_live/show.html.heex", "<header class=\"ticket-header\">\n  <h1><%= @ticket.subject %></h1>\n</header>")
        .bash("ls lib/helpdesk_web/components", "core_components.ex\nlayouts.ex\navatar.ex")
        .read("lib/helpdesk_web/components/avatar.ex", "attr :user, :map, required: true\ndef avatar(assigns) do\n  ~H\"<img class=\\\"avatar\\\" src={@user.avatar_url} alt={@user.name} />\"\nend")
        .edit("lib/helpdesk_web/live/ticket_live/show.html.heex", "<h1><%= @ticket.subject %></h1>", "<h1><%= @ticket.subject %></h1>\n  <div class=\"viewers\">\n    <.avatar :for={viewer <- @viewers} user={viewer} />\n  </div>")
        .bash("mix test test/helpdesk_web/live/ticket_live_test.exs", "..\n\n  1) test shows other viewers in the header (HelpdeskWeb.TicketLiveTest)\n     ** (KeyError) key :avatar_url not found in: %{name: \"Ana\", online_at: 1764160512}\n     code: {:ok, view, _html} = live(conn, ~p\"/tickets/#{ticket}\")\n\nFinished in 0.9 seconds\n3 tests, 1 failure\n\nCommand exited with code 1")
        .assistant("The presence meta only carries `name` and `online_at`. I'll add `avatar_url` to the meta in `Presence.track/4` rather than load users from the database on every diff.")
        .edit("lib/helpdesk_web/live/ticket_live/show.ex", "%{name: user.name, online_at: System.os_time(:second)}", "%{name: user.name, avatar_url: user.avatar_url, online_at: System.os_time(:second)}")
        .edit("lib/helpdesk_web/live/ticket_live/show.ex", "defp list_viewers(ticket_id) do", "defp list_viewers(ticket_id, current_user_id) do")
        .bash("mix test test/helpdesk_web/live/ticket_live_test.exs", "...\nFinished in 0.8 seconds\n4 tests, 0 failures")
        .bash("mix format --check-formatted && mix credo --strict", "Checking 61 source files ...\n\nAnalysis took 1.4 seconds\n213 mods/funs, found no issues.")
        .bash("git commit -am \"Show ticket viewers in the header, without the current user\"", "[feat/ticket-presence 9a0d66c2] Show ticket viewers in the header, without the current user\n 3 files changed, 14 insertions(+), 3 deletions(-)")
        .user("nice. next: show a 'someone is typing a reply' hint when another agent types in the reply box. throttle the broadcasts, I don't want one message per keystroke")
        .read("lib/helpdesk_web/live/ticket_live/reply_form.ex", "def handle_event(\"validate\", %{\"reply\" => params}, socket) do\n  {:noreply, assign(socket, :form, to_form(params))}\nend")
        .thinking("A typing flag in presence meta via Presence.update would broadcast a diff; throttle to one per 2 seconds with a timestamp in assigns.")
        .assistant("I'll set `typing: true` in the presence meta with `Presence.update/4`, at most once every 2 seconds per agent, and clear it after 5 seconds without input.")
        .edit("lib/helpdesk_web/live/ticket_live/reply_form.ex", "{:noreply, assign(socket, :form, to_form(params))}", "socket = maybe_mark_typing(socket)\n  {:noreply, assign(socket, :form, to_form(params))}")
        .bash("mix compile --warnings-as-errors", "Compiling 2 files (.ex)\n    error: undefined function maybe_mark_typing/1 (expected HelpdeskWeb.TicketLive.ReplyForm to define such a function or for it to be imported, but none are available)\n    │\n 14 │   socket = maybe_mark_typing(socket)\n\n== Compilation error in file lib/helpdesk_web/live/ticket_live/reply_form.ex ==\n\nCommand exited with code 1")
        .build();
    Case {
        name: "phoenix update, Claude Code earlier summary (held out, 6th set)",
        messages,
        previous: Some(previous.to_owned()),
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "constraint: no new hex dependencies",
                &["hex dependencies", "hex deps", "no new dependencies"],
            ),
            fact("issue", &["#388"]),
            fact("branch", &["feat/ticket-presence"]),
            fact(
                "decision: Presence over ETS (3 nodes)",
                &["ETS", "libcluster", "3 nodes"],
            ),
            fact(
                "LiveView file",
                &["lib/helpdesk_web/live/ticket_live/show.ex"],
            ),
            fact("earlier error: PubSub start order", &["unknown registry"]),
            fact("avatars done", &["avatar"]),
            fact("error on the way: missing avatar_url", &["avatar_url"]),
            fact("current user hidden", &["current user"]),
            fact("commit of the avatars", &["9a0d66c2"]),
            fact("test command", &["mix test"]),
            fact("new request: typing hint", &["typing"]),
            fact("throttle every 2 seconds", &["2 seconds", "2s"]),
            fact(
                "reply form file",
                &[
                    "lib/helpdesk_web/live/ticket_live/reply_form.ex",
                    "reply_form.ex",
                ],
            ),
            fact("open compile error", &["maybe_mark_typing"]),
        ],
    }
}

/// A FastAPI service, the user writing in Spanish: a paginated endpoint with a constraint, a failed
/// Alembic migration fixed, a commit, and a question still open.
fn fastapi_spanish() -> Case {
    let messages = SessionBuilder::new()
        .user("Hola. El endpoint GET /facturas devuelve todas las facturas de golpe y tarda 9 segundos. Añade paginación por cursor (no offset, la tabla tiene 4 millones de filas). Seguimos con SQLAlchemy síncrono, nada de async por ahora.")
        .bash("cat pyproject.toml | grep -A8 dependencies", "dependencies = [\n  \"fastapi==0.111.0\",\n  \"sqlalchemy==2.0.30\",\n  \"alembic==1.13.1\",\n  \"psycopg[binary]==3.1.19\",\n]")
        .read("app/routers/facturas.py", "@router.get(\"/facturas\")\ndef listar_facturas(db: Session = Depends(get_db)):\n    return db.scalars(select(Factura)).all()")
        .read("app/models.py", "class Factura(Base):\n    __tablename__ = \"facturas\"\n    id: Mapped[int] = mapped_column(primary_key=True)\n    cliente_id: Mapped[int]\n    emitida_en: Mapped[datetime]\n    total: Mapped[Decimal]")
        .bash("git status --short && git branch --show-current", "main")
        .assistant("Voy a paginar por `(emitida_en, id)` con un cursor opaco en base64, límite por defecto 50 y máximo 200, y un índice compuesto para que la consulta no haga un seq scan.")
        .edit("app/routers/facturas.py", "def listar_facturas(db: Session = Depends(get_db)):\n    return db.scalars(select(Factura)).all()", "def listar_facturas(cursor: str | None = None, limite: int = Query(50, le=200), db: Session = Depends(get_db)):\n    consulta = select(Factura).order_by(Factura.emitida_en.desc(), Factura.id.desc()).limit(limite + 1)\n    if cursor:\n        emitida_en, id_ = decodificar_cursor(cursor)\n        consulta = consulta.where(tuple_(Factura.emitida_en, Factura.id) < (emitida_en, id_))\n    filas = db.scalars(consulta).all()\n    return pagina(filas, limite)")
        .bash("alembic revision -m \"indice facturas emitida_en id\"", "  Generating /srv/facturas-api/migrations/versions/5f1c9d2ab7e4_indice_facturas_emitida_en_id.py ...  done")
        .edit("migrations/versions/5f1c9d2ab7e4_indice_facturas_emitida_en_id.py", "    pass", "    op.create_index(\"ix_facturas_emitida_en_id\", \"facturas\", [\"emitida_en\", \"id\"], postgresql_concurrently=True)")
        .bash("alembic upgrade head", "INFO  [alembic.runtime.migration] Running upgrade 2b7e0a91c3d8 -> 5f1c9d2ab7e4, indice facturas emitida_en id\nsqlalchemy.exc.InternalError: (psycopg.errors.ActiveSqlTransaction) CREATE INDEX CONCURRENTLY cannot run inside a transaction block\n\nCommand exited with code 1")
        .assistant("`CREATE INDEX CONCURRENTLY` no puede ir dentro de la transacción de Alembic. Lo envuelvo en `op.get_context().autocommit_block()`.")
        .edit("migrations/versions/5f1c9d2ab7e4_indice_facturas_emitida_en_id.py", "    op.create_index(", "    with op.get_context().autocommit_block():\n        op.create_index(")
        .bash("alembic upgrade head", "INFO  [alembic.runtime.migration] Running upgrade 2b7e0a91c3d8 -> 5f1c9d2ab7e4, indice facturas emitida_en id")
        .bash("pytest tests/test_facturas.py -q", "......                                                                   [100%]\n6 passed in 1.84s")
        .bash("curl -s -o /dev/null -w '%{time_total}\\n' 'localhost:8000/facturas?limite=50'", "0.043")
        .user("perfecto, 43 ms. haz commit en una rama nueva")
        .bash("git checkout -b feat/facturas-cursor && git add -A && git commit -m \"Paginación por cursor en GET /facturas\"", "Switched to a new branch 'feat/facturas-cursor'\n[feat/facturas-cursor e58b0c14] Paginación por cursor en GET /facturas\n 4 files changed, 71 insertions(+), 2 deletions(-)")
        .assistant("Hecho: commit `e58b0c14` en `feat/facturas-cursor`.")
        .user("¿y el frontend? el cliente de React todavía manda ?page=. ¿Mantenemos compatibilidad con page un tiempo o lo rompemos ya? dime qué prefieres antes de tocar nada")
        .build();
    Case {
        name: "fastapi in Spanish (held out, 6th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("endpoint", &["/facturas"]),
            fact("cursor, not offset", &["cursor"]),
            fact(
                "constraint: synchronous SQLAlchemy, no async",
                &["async", "síncrono", "sincrono"],
            ),
            fact("router file", &["app/routers/facturas.py"]),
            fact("keyset order (emitida_en, id)", &["emitida_en"]),
            fact("page size 50, max 200", &["200"]),
            fact("migration", &["5f1c9d2ab7e4"]),
            fact(
                "the migration error",
                &[
                    "CONCURRENTLY cannot run inside a transaction",
                    "inside a transaction block",
                ],
            ),
            fact("the fix", &["autocommit_block"]),
            fact("test command", &["pytest tests/test_facturas.py"]),
            fact("measured latency", &["43 ms", "0.043", "43ms"]),
            fact("branch", &["feat/facturas-cursor"]),
            fact("commit", &["e58b0c14"]),
            fact("open question: ?page= compatibility", &["page="]),
        ],
    }
}

/// A branch summary of an abandoned move of a React app from webpack to Vite: measured numbers,
/// the breakage, and why it was dropped.
fn vite_branch() -> Case {
    let messages = SessionBuilder::new()
        .user("let's try moving web/ from webpack 5 to Vite on a branch. measure dev startup and build before deciding. it's a module federation remote for portal-shell, that has to keep working")
        .bash("git checkout -b spike/vite-migration", "Switched to a new branch 'spike/vite-migration'")
        .bash("cd web && time npx webpack serve --mode development --no-open & sleep 45; kill %1", "webpack 5.91.0 compiled successfully in 38214 ms\n\nreal\t0m41.302s")
        .bash("cd web && npm run build && du -sh dist && ls dist/*.js | wc -l", "webpack 5.91.0 compiled with 2 warnings in 96410 ms\n4.1M\tdist\n37")
        .read("web/webpack.config.js", "new ModuleFederationPlugin({\n  name: 'billing',\n  filename: 'remoteEntry.js',\n  exposes: { './BillingApp': './src/BillingApp' },\n  shared: { react: { singleton: true, requiredVersion: '^18.2.0' }, 'react-dom': { singleton: true } },\n})")
        .bash("cd web && npm install -D vite@5.2.11 @vitejs/plugin-react@4.2.1 @originjs/vite-plugin-federation@1.3.5", "added 31 packages, and audited 1204 packages in 19s")
        .write("web/vite.config.ts", "import { defineConfig } from 'vite'\nimport react from '@vitejs/plugin-react'\nimport federation from '@originjs/vite-plugin-federation'\n\nexport default defineConfig({\n  plugins: [react(), federation({ name: 'billing', filename: 'remoteEntry.js', exposes: { './BillingApp': './src/BillingApp' }, shared: ['react', 'react-dom'] })],\n  build: { target: 'esnext' },\n})")
        .bash("cd web && npx vite --port 5174", "  VITE v5.2.11  ready in 1870 ms\n\n  ➜  Local:   http://localhost:5174/")
        .bash("cd web && npx vite build", "x Build failed in 3.12s\nerror during build:\n[commonjs--resolver] src/legacy/chartHelpers.js: 'default' is not exported by node_modules/highcharts-legacy/index.js")
        .assistant("`highcharts-legacy` is CommonJS with `module.exports =`; I'll add it to `optimizeDeps.include` and `build.commonjsOptions.include`.")
        .edit("web/vite.config.ts", "build: { target: 'esnext' },", "optimizeDeps: { include: ['highcharts-legacy'] },\n  build: { target: 'esnext', commonjsOptions: { include: [/highcharts-legacy/, /node_modules/] } },")
        .bash("cd web && time npx vite build && du -sh dist", "✓ 1412 modules transformed.\n✓ built in 21.48s\n\nreal\t0m23.901s\n3.3M\tdist")
        .bash("cd ../portal-shell && npm run dev", "webpack 5.91.0 compiled successfully in 12877 ms\n<i> [webpack-dev-server] Project is running at http://localhost:3000/")
        .bash("cd ../portal-shell && npx playwright test e2e/billing.spec.ts", "  1) e2e/billing.spec.ts:12:3 › billing remote renders invoices\n    Error: page.waitForSelector: Timeout 30000ms exceeded.\n    Browser console: Warning: Invalid hook call. Hooks can only be called inside of the body of a function component.\n    Browser console: Uncaught TypeError: Cannot read properties of null (reading 'useState')\n\n  1 failed\n\nCommand exited with code 1")
        .assistant("The shell loads a second React: the Vite plugin's `shared` does not negotiate singletons with a webpack host, so the remote gets its own copy and hooks break.")
        .edit("web/vite.config.ts", "shared: ['react', 'react-dom']", "shared: { react: { requiredVersion: '^18.2.0' }, 'react-dom': { requiredVersion: '^18.2.0' } }")
        .bash("cd ../portal-shell && npx playwright test e2e/billing.spec.ts", "    Browser console: Warning: Invalid hook call. Hooks can only be called inside of the body of a function component.\n  1 failed\n\nCommand exited with code 1")
        .bash("cd web && npm ls react", "billing-web@3.4.0\n├── react@18.2.0\n└─┬ @originjs/vite-plugin-federation@1.3.5\n  └── (no shared scope for webpack hosts — see issue #421)")
        .user("ok so dev startup 38s -> 1.9s and build 96s -> 21s is great, but if portal-shell breaks it's dead. portal-shell won't move off webpack before Q2. drop the spike, keep the numbers, we revisit when the shell moves to Vite or Module Federation 2.0")
        .bash("git stash -u && git checkout main", "Saved working directory and index state WIP on spike/vite-migration: 4e6a2d1 vite config\nSwitched to branch 'main'")
        .build();
    Case {
        name: "vite spike, branch summary (held out, 6th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::Branch,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("branch", &["spike/vite-migration"]),
            fact(
                "must stay a federation remote for portal-shell",
                &["portal-shell"],
            ),
            fact("webpack dev start 38s", &["38s", "38214", "38 s"]),
            fact("Vite dev start 1.9s", &["1.9s", "1870", "1.9 s"]),
            fact("webpack build 96s", &["96s", "96410", "96 s"]),
            fact("Vite build 21s", &["21s", "21.48", "21 s"]),
            fact(
                "federation plugin used",
                &["@originjs/vite-plugin-federation", "vite-plugin-federation"],
            ),
            fact("CommonJS dependency fixed", &["highcharts-legacy"]),
            fact(
                "the breakage: second React, invalid hook call",
                &["Invalid hook call", "second React", "singleton"],
            ),
            fact("e2e test", &["e2e/billing.spec.ts", "playwright"]),
            fact("dropped because the shell stays on webpack", &["Q2"]),
            fact("revisit condition", &["Module Federation 2.0"]),
            fact("work stashed", &["stash"]),
        ],
    }
}
