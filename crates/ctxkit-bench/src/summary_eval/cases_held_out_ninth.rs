//! The ninth held-out set, written on 2026-11-26 (late afternoon, 17:13–17:40 UTC) before any summary
//! of it was read, by someone who had not read the summarizer's code. What was read to write it:
//! issue 18, the `summary-eval` section of `docs/summaries.md` (how recall, noise and size are
//! scored), `summary_eval/mod.rs` (`Case`, `fact`), `builder.rs` and `cases_held_out_third.rs` as a
//! format example; nothing of `ctxkit-compaction/src/offline/`, no other held-out file, no earlier
//! evaluation output. `summary-eval` was not run on these cases before they were committed. Each fact
//! list is what an engineer taking the session over would write down. Reported apart as the 9th set.

use ctxkit_compaction::SummaryPurpose;
use ctxkit_protocol::AgentMessage;
use serde_json::{Value, json};

use super::{Case, SessionBuilder, fact};

pub(super) fn cases() -> Vec<Case> {
    vec![
        swiftui_export(),
        axum_idempotency_update(),
        nestjs_commandes_french(),
        zgc_branch(),
    ]
}

/// One assistant turn making several tool calls at once, then their results in order.
fn parallel_calls(prefix: &str, calls: &[(&str, Value, &str)]) -> Vec<AgentMessage> {
    let ids: Vec<String> = (0..calls.len())
        .map(|index| format!("toolu_{prefix}_{index:02}"))
        .collect();
    let content: Vec<Value> = calls
        .iter()
        .zip(&ids)
        .map(|((name, arguments, _), id)| {
            json!({"type": "toolCall", "id": id, "name": name, "arguments": arguments})
        })
        .collect();
    let mut values =
        vec![json!({"role": "assistant", "content": content, "stopReason": "toolUse"})];
    for ((name, _, result), id) in calls.iter().zip(&ids) {
        values.push(json!({
            "role": "toolResult",
            "toolCallId": id,
            "toolName": name,
            "content": [{"type": "text", "text": result}],
            "isError": false
        }));
    }
    values
        .into_iter()
        .filter_map(|value| serde_json::from_value(value).ok())
        .collect()
}

const XCODEBUILD_FAILED: &str = "Command line invocation:\n    /Applications/Xcode.app/Contents/Developer/usr/bin/xcodebuild test -scheme Trailhead -destination \"platform=iOS Simulator,name=iPad (10th generation),OS=17.5\"\n\nUser defaults from command line:\n    IDEPackageSupportUseBuiltinSCM = YES\n\nPrepare packages\nComputePackagePrebuildTargetDependencyGraph\nCreateBuildRequest\nSendProjectDescription\nCreateBuildOperation\nComputeTargetDependencyGraph\nnote: Building targets in dependency order\nnote: Target dependency graph (3 targets)\n    Target 'TrailheadTests' in project 'Trailhead'\n        ➜ Explicit dependency on target 'Trailhead' in project 'Trailhead'\n    Target 'Trailhead' in project 'Trailhead'\n        ➜ Explicit dependency on target 'GPXKit' in project 'GPXKit'\nGatherProvisioningInputs\nCreateBuildDescription\nCompileSwift normal arm64 /Users/dev/Trailhead/Trailhead/Settings/SettingsView.swift (in target 'Trailhead' from project 'Trailhead')\n/Users/dev/Trailhead/Trailhead/Settings/SettingsView.swift:48:14: error: 'onChange(of:initial:_:)' is only available in iOS 17.0 or newer\n            .onChange(of: viewModel.exportURL, initial: false) { _, url in\n             ^\n/Users/dev/Trailhead/Trailhead/Settings/SettingsView.swift:48:14: note: add 'if #available' version check\n\nTesting failed:\n\t'onChange(of:initial:_:)' is only available in iOS 17.0 or newer\n\tTesting cancelled because the build failed.\n\n** TEST FAILED **\n\nCommand exited with code 65";

const XCODEBUILD_PASSED: &str = "Test Suite 'All tests' started at 2026-11-26 16:02:11.482.\nTest Suite 'TrailheadTests.xctest' started at 2026-11-26 16:02:11.483.\nTest Suite 'ExportViewModelTests' started at 2026-11-26 16:02:11.484.\nTest Case '-[TrailheadTests.ExportViewModelTests testExportProducesGPXFile]' passed (0.112 seconds).\nTest Case '-[TrailheadTests.ExportViewModelTests testExportURLIsClearedAfterShare]' passed (0.004 seconds).\nTest Suite 'ExportViewModelTests' passed at 2026-11-26 16:02:11.601.\n\t Executed 2 tests, with 0 failures (0 unexpected) in 0.116 (0.117) seconds\nTest Suite 'RouteStoreTests' started at 2026-11-26 16:02:11.602.\nTest Suite 'RouteStoreTests' passed at 2026-11-26 16:02:12.030.\n\t Executed 19 tests, with 0 failures (0 unexpected) in 0.427 (0.428) seconds\nTest Suite 'All tests' passed at 2026-11-26 16:02:13.915.\n\t Executed 48 tests, with 0 failures (0 unexpected) in 2.405 (2.432) seconds\n\n** TEST SUCCEEDED **";

/// A long SwiftUI session over three requests: an iPad crash fixed after a build broken by an
/// iOS 17 API (the standing constraint), a change of mind on distance units, and an archive that
/// fails on signing while the assistant waits for the user's answer.
fn swiftui_export() -> Case {
    let mut messages = SessionBuilder::new()
        .user("Export GPX in Settings crashes on iPad (iPhone is fine). Crash log from TestFlight:\n\n*** Terminating app due to uncaught exception 'NSGenericException', reason: 'UIPopoverPresentationController (<UIPopoverPresentationController: 0x10b41c2a0>) should have a non-nil sourceView or barButtonItem set before the presentation occurs.'\n*** First throw call stack:\n(0x1a2b0c 0x19f8e1 0x1a4410 ...)\n\nOne thing for the whole session: we still ship to iOS 16, so no iOS 17-only APIs — no @Observable, keep ObservableObject.")
        .assistant("Let me look at the settings screen, the export view model and the activity sheet wrapper.")
        .build();
    messages.extend(parallel_calls(
        "swift",
        &[
            ("read", json!({"path": "Trailhead/Settings/SettingsView.swift"}), "import SwiftUI\n\nstruct SettingsView: View {\n    @StateObject private var viewModel = ExportViewModel()\n    @State private var showShare = false\n\n    var body: some View {\n        Form {\n            Section(\"Data\") {\n                Button(\"Export GPX\") { viewModel.export(); showShare = true }\n            }\n        }\n        .sheet(isPresented: $showShare) {\n            ActivityView(items: [viewModel.exportURL as Any])\n        }\n    }\n}"),
            ("read", json!({"path": "Trailhead/Settings/ExportViewModel.swift"}), "final class ExportViewModel: ObservableObject {\n    @Published var exportURL: URL?\n    func export() {\n        exportURL = try? GPXWriter().write(RouteStore.shared.routes)\n    }\n}"),
            ("read", json!({"path": "Trailhead/Shared/ActivityView.swift"}), "struct ActivityView: UIViewControllerRepresentable {\n    let items: [Any]\n    func makeUIViewController(context: Context) -> UIActivityViewController {\n        UIActivityViewController(activityItems: items, applicationActivities: nil)\n    }\n    func updateUIViewController(_ controller: UIActivityViewController, context: Context) {}\n}"),
        ],
    ));
    messages.extend(
        SessionBuilder::new()
            .bash("xcodebuild -list -project Trailhead.xcodeproj", "Information about project \"Trailhead\":\n    Targets:\n        Trailhead\n        TrailheadTests\n        TrailheadUITests\n\n    Build Configurations:\n        Debug\n        Release\n\n    If no build configuration is specified and -scheme is not passed then \"Release\" is used.\n\n    Schemes:\n        GPXKit\n        Trailhead")
            .thinking("The UIActivityViewController is wrapped in a sheet; on iPad it is presented as a popover without an anchor. ShareLink exists since iOS 16, so it fits the constraint.")
            .assistant("On iPad `UIActivityViewController` becomes a popover and needs a `sourceView`; the wrapper never sets one. I'll replace the wrapper with SwiftUI's `ShareLink` (available since iOS 16) instead of patching the popover anchor, and delete `ActivityView.swift`.")
            .edit("Trailhead/Settings/SettingsView.swift", ".sheet(isPresented: $showShare) {\n            ActivityView(items: [viewModel.exportURL as Any])\n        }", ".onChange(of: viewModel.exportURL, initial: false) { _, url in\n            showShare = url != nil\n        }")
            .edit("Trailhead/Settings/SettingsView.swift", "Button(\"Export GPX\") { viewModel.export(); showShare = true }", "if let url = viewModel.exportURL {\n                    ShareLink(\"Share GPX\", item: url)\n                } else {\n                    Button(\"Export GPX\") { viewModel.export() }\n                }")
            .bash("rm Trailhead/Shared/ActivityView.swift && git status --short", " M Trailhead/Settings/SettingsView.swift\n D Trailhead/Shared/ActivityView.swift")
            .bash("xcodebuild test -scheme Trailhead -destination 'platform=iOS Simulator,name=iPad (10th generation),OS=17.5' 2>&1 | tail -40", XCODEBUILD_FAILED)
            .assistant("My mistake: the two-parameter `onChange(of:initial:)` is iOS 17 only. `ShareLink` shows itself once the URL exists, so the `onChange` and `showShare` are not needed at all; I'll remove them.")
            .failed_edit("Trailhead/Settings/SettingsView.swift", ".onChange(of: viewModel.exportURL, initial: false) { _, url in\n        showShare = url != nil\n    }")
            .read("Trailhead/Settings/SettingsView.swift", "struct SettingsView: View {\n    @StateObject private var viewModel = ExportViewModel()\n    @State private var showShare = false\n    ...\n        .onChange(of: viewModel.exportURL, initial: false) { _, url in\n            showShare = url != nil\n        }\n    }\n}")
            .edit("Trailhead/Settings/SettingsView.swift", "        .onChange(of: viewModel.exportURL, initial: false) { _, url in\n            showShare = url != nil\n        }\n", "")
            .edit("Trailhead/Settings/SettingsView.swift", "    @State private var showShare = false\n", "")
            .bash("xcodebuild test -scheme Trailhead -destination 'platform=iOS Simulator,name=iPad (10th generation),OS=17.5' 2>&1 | tail -40", XCODEBUILD_PASSED)
            .bash("xcodebuild test -scheme Trailhead -destination 'platform=iOS Simulator,name=iPhone 15,OS=17.5' -quiet", "** TEST SUCCEEDED **")
            .bash("git checkout -b fix/ipad-export-crash && git add -A && git commit -m \"Share GPX with ShareLink; fixes the iPad popover crash\"", "Switched to a new branch 'fix/ipad-export-crash'\n[fix/ipad-export-crash 3e9b1f7] Share GPX with ShareLink; fixes the iPad popover crash\n 2 files changed, 6 insertions(+), 22 deletions(-)\n delete mode 100644 Trailhead/Shared/ActivityView.swift")
            .assistant("Committed `3e9b1f7` on `fix/ipad-export-crash`: the export uses `ShareLink`, no popover anchor needed; 48 tests pass on iPad and iPhone simulators.")
            .user("nice. next: distances are always km. add a km/mi toggle in Settings, persisted with @AppStorage(\"distanceUnit\")")
            .read("Trailhead/Shared/DistanceText.swift", "func distanceText(_ meters: Double) -> String {\n    String(format: \"%.1f km\", meters / 1000)\n}")
            .write("Trailhead/Settings/DistanceUnit.swift", "enum DistanceUnit: String, CaseIterable { case kilometers, miles }\n")
            .user("hmm, actually scrap the toggle. Just follow the device locale's measurement system, no setting and no AppStorage key.")
            .bash("rm Trailhead/Settings/DistanceUnit.swift", "")
            .assistant("Dropped the toggle. `distanceText` will use `MeasurementFormatter` with `Locale.current.measurementSystem` (iOS 16+), so US locales get miles.")
            .edit("Trailhead/Shared/DistanceText.swift", "func distanceText(_ meters: Double) -> String {\n    String(format: \"%.1f km\", meters / 1000)\n}", "func distanceText(_ meters: Double, locale: Locale = .current) -> String {\n    let formatter = MeasurementFormatter()\n    formatter.locale = locale\n    formatter.unitOptions = .naturalScale\n    formatter.numberFormatter.maximumFractionDigits = 1\n    let unit: UnitLength = locale.measurementSystem == .us ? .miles : .kilometers\n    return formatter.string(from: Measurement(value: meters, unit: UnitLength.meters).converted(to: unit))\n}")
            .write("TrailheadTests/DistanceTextTests.swift", "final class DistanceTextTests: XCTestCase {\n    func testUSLocaleUsesMiles() {\n        XCTAssertEqual(distanceText(1609.34, locale: Locale(identifier: \"en_US\")), \"1 mi\")\n    }\n    func testFrenchLocaleUsesKilometers() {\n        XCTAssertEqual(distanceText(1500, locale: Locale(identifier: \"fr_FR\")), \"1,5 km\")\n    }\n}\n")
            .bash("xcodebuild test -scheme Trailhead -destination 'platform=iOS Simulator,name=iPhone 15,OS=17.5' -only-testing:TrailheadTests/DistanceTextTests -quiet", "Test Suite 'DistanceTextTests' passed at 2026-11-26 16:31:40.207.\n\t Executed 2 tests, with 0 failures (0 unexpected) in 0.006 (0.007) seconds\n** TEST SUCCEEDED **")
            .bash("git add -A && git commit -m \"Format distances by the locale's measurement system\"", "[fix/ipad-export-crash 8ac04d2] Format distances by the locale's measurement system\n 2 files changed, 18 insertions(+), 2 deletions(-)\n create mode 100644 TrailheadTests/DistanceTextTests.swift")
            .user("ok. now bump the build number and archive for TestFlight: xcodebuild archive -scheme Trailhead -archivePath build/Trailhead.xcarchive")
            .bash("agvtool next-version -all", "Setting version of project Trailhead to: \n    143.\n\nAlso setting CFBundleVersion key (assuming it exists)\n\nUpdating CFBundleVersion in Info.plist(s)...\n\nUpdated CFBundleVersion in \"Trailhead.xcodeproj/../Trailhead/Info.plist\" to 143")
            .bash("xcodebuild archive -scheme Trailhead -archivePath build/Trailhead.xcarchive -destination 'generic/platform=iOS' 2>&1 | tail -15", "GatherProvisioningInputs\nCreateBuildDescription\n\nerror: No signing certificate \"iOS Distribution\" found: No \"iOS Distribution\" signing certificate matching team ID \"7KX2Q9LM4D\" with a private key was found. (in target 'Trailhead' from project 'Trailhead')\n\n** ARCHIVE FAILED **\n\nCommand exited with code 65")
            .assistant("The archive fails on signing: no \"iOS Distribution\" certificate for team `7KX2Q9LM4D` is installed on this machine. Build number is already 143 (not committed). Should I retry with automatic signing (`-allowProvisioningUpdates`), or will you install the distribution certificate?")
            .build(),
    );
    Case {
        name: "swiftui export, archive pending (held out, 9th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "constraint: iOS 16 support, no iOS 17-only APIs",
                &["iOS 16", "@Observable"],
            ),
            fact(
                "the iPad crash",
                &["sourceView", "UIPopoverPresentationController"],
            ),
            fact(
                "settings view file",
                &["Trailhead/Settings/SettingsView.swift"],
            ),
            fact(
                "decision: ShareLink instead of the activity wrapper",
                &["ShareLink"],
            ),
            fact(
                "wrong attempt: iOS 17 onChange",
                &["onChange(of:initial", "only available in iOS 17"],
            ),
            fact("test command", &["xcodebuild test -scheme Trailhead"]),
            fact("tests pass", &["48 tests", "TEST SUCCEEDED"]),
            fact("branch", &["fix/ipad-export-crash"]),
            fact("first commit", &["3e9b1f7"]),
            fact(
                "changed mind: units follow the locale, no toggle",
                &["measurementSystem", "locale"],
            ),
            fact(
                "distance file",
                &["Trailhead/Shared/DistanceText.swift", "distanceText"],
            ),
            fact("second commit", &["8ac04d2"]),
            fact("build number 143, uncommitted", &["143"]),
            fact("archive command", &["xcodebuild archive"]),
            fact(
                "last error: signing certificate",
                &["No signing certificate"],
            ),
            fact(
                "open question: automatic signing or install the certificate",
                &["allowProvisioningUpdates", "automatic signing"],
            ),
        ],
    }
}

/// An update of an earlier ctxkit summary on an axum + sqlx service: the in-progress layer is wired
/// in, the sqlx offline cache and a race fail on the way, a decision on in-flight duplicates, a
/// purge task, and the user asks not to commit yet.
fn axum_idempotency_update() -> Case {
    let previous = "_Extractive summary written offline by ctxkit (no model was used)._\n\n## Goal\n- **Latest:** Add idempotency keys to `POST /transfers` in ledger-api (header `Idempotency-Key`)\n\n## Constraints & Preferences\n- No `unwrap`/`expect` in request handlers\n- Every migration must be reversible (an `.up.sql` and a `.down.sql`)\n- Stay on sqlx 0.7; no upgrade to 0.8 in this branch\n\n## Progress\n### Done\n- [x] Created `migrations/20261124093000_idempotency_keys.up.sql` and `.down.sql` (table `idempotency_keys`, primary key `(key, account_id)`)\n- [x] `sqlx migrate run` applied it to the test database\n\n### In Progress\n- [ ] `IdempotencyLayer` in `src/idempotency.rs`: written, not yet wired into the router\n\n### Blocked\n- (none)\n\n## Key Decisions\n- Store the status and body of the first response per `(key, account_id)` and replay it; keys expire after 24 hours\n\n## Next Steps\n1. Wire `IdempotencyLayer` into `src/routes.rs` for `POST /transfers` only\n2. Run `cargo test`\n\n## Critical Context\n- Branch: `feat/idempotency`\n- Test database: `DATABASE_URL=postgres://ledger:ledger@localhost:5433/ledger_test`";
    let messages = SessionBuilder::new()
        .user("continue where you left off")
        .read("src/routes.rs", "pub fn router(state: AppState) -> Router {\n    Router::new()\n        .route(\"/transfers\", post(transfers::create))\n        .route(\"/transfers/:id\", get(transfers::show))\n        .route(\"/health\", get(health))\n        .with_state(state)\n}")
        .edit("src/routes.rs", ".route(\"/transfers\", post(transfers::create))", ".route(\n            \"/transfers\",\n            post(transfers::create).layer(IdempotencyLayer::new(state.pool.clone())),\n        )")
        .bash("cargo build 2>&1 | tail -5", "   Compiling ledger-api v0.9.0 (/home/dev/ledger-api)\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 41.87s")
        .bash("cargo test 2>&1 | tail -20", "   Compiling ledger-api v0.9.0 (/home/dev/ledger-api)\nerror: `SQLX_OFFLINE=true` but there is no cached data for this query, run `cargo sqlx prepare` to update the query cache or unset `SQLX_OFFLINE`\n  --> src/idempotency.rs:88:23\n   |\n88 |         let stored = sqlx::query_as!(\n   |  ______________________^\n89 | |             StoredResponse,\n90 | |             \"SELECT status, body FROM idempotency_keys WHERE key = $1 AND account_id = $2 AND created_at > now() - interval '24 hours'\",\n   | |_____________^\n\nerror: could not compile `ledger-api` (lib) due to 2 previous errors\n\nCommand exited with code 101")
        .assistant("`.cargo/config.toml` sets `SQLX_OFFLINE=true` for CI, and the new queries are not in `.sqlx/` yet. I'll regenerate the cache against the test database rather than unset offline mode.")
        .bash("cargo sqlx prepare -- --all-targets", "query data written to .sqlx in the current directory; please check this into version control")
        .bash("cargo test 2>&1 | tail -25", "running 37 tests\ntest transfers::tests::create_rejects_negative_amount ... ok\ntest transfers::tests::create_returns_201 ... ok\ntest idempotency::tests::replays_stored_response ... ok\ntest idempotency::tests::different_accounts_do_not_share_keys ... ok\ntest idempotency::tests::expired_key_is_treated_as_new ... ok\ntest idempotency::tests::concurrent_duplicate_requests_return_same_response ... FAILED\n\nfailures:\n\n---- idempotency::tests::concurrent_duplicate_requests_return_same_response stdout ----\nthread 'idempotency::tests::concurrent_duplicate_requests_return_same_response' panicked at src/idempotency.rs:212:9:\nassertion `left == right` failed\n  left: 201\n right: 409\n\nfailures:\n    idempotency::tests::concurrent_duplicate_requests_return_same_response\n\ntest result: FAILED. 36 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.94s\n\nCommand exited with code 101")
        .thinking("Both requests read no stored row, both run the handler, both insert. The second insert hits the primary key. The test expected both to get the same response, but the first is still in flight when the second arrives.")
        .assistant("Two concurrent requests with the same key both miss the lookup and both run the transfer — a double transfer, which is what the feature is meant to stop. Decision: claim the key first with `INSERT ... ON CONFLICT (key, account_id) DO NOTHING` before running the handler; a duplicate that arrives while the first is still in flight gets `409 Conflict` with `Retry-After: 1`, and once the first has finished, duplicates get the stored response. I prefer this to a `pg_advisory_xact_lock`, which would hold a connection for the whole request. The test's expectation changes to 409 for the in-flight case.")
        .edit("src/idempotency.rs", "let stored = sqlx::query_as!(", "let claimed = sqlx::query!(\n            \"INSERT INTO idempotency_keys (key, account_id, status) VALUES ($1, $2, NULL) ON CONFLICT (key, account_id) DO NOTHING\",\n            key, account_id\n        ).execute(&pool).await?.rows_affected() == 1;\n        let stored = sqlx::query_as!(")
        .edit("src/idempotency.rs", "assert_eq!(second.status(), StatusCode::CREATED);", "assert_eq!(second.status(), StatusCode::CONFLICT);\n        assert_eq!(second.headers()[\"retry-after\"], \"1\");")
        .bash("cargo sqlx prepare -- --all-targets && cargo test 2>&1 | tail -4", "query data written to .sqlx in the current directory; please check this into version control\n\ntest result: ok. 37 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.88s")
        .bash("cargo clippy --all-targets -- -D warnings 2>&1 | tail -3", "    Checking ledger-api v0.9.0 (/home/dev/ledger-api)\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 12.40s")
        .user("good. expired keys are never deleted though. add a cleanup — a tokio interval task in the service itself, every 10 minutes. no cron job, ops doesn't want another k8s CronJob")
        .read("src/main.rs", "#[tokio::main]\nasync fn main() -> anyhow::Result<()> {\n    let pool = PgPoolOptions::new().max_connections(20).connect(&env::var(\"DATABASE_URL\")?).await?;\n    let app = routes::router(AppState { pool });\n    let listener = TcpListener::bind(\"0.0.0.0:8080\").await?;\n    axum::serve(listener, app).await?;\n    Ok(())\n}")
        .edit("src/idempotency.rs", "pub struct IdempotencyLayer {", "pub async fn purge_expired_keys(pool: PgPool) {\n    let mut ticker = tokio::time::interval(Duration::from_secs(600));\n    loop {\n        ticker.tick().await;\n        if let Err(error) = sqlx::query!(\"DELETE FROM idempotency_keys WHERE created_at < now() - interval '24 hours'\").execute(&pool).await {\n            tracing::warn!(%error, \"purging expired idempotency keys failed\");\n        }\n    }\n}\n\npub struct IdempotencyLayer {")
        .edit("src/main.rs", "let app = routes::router(AppState { pool });", "tokio::spawn(idempotency::purge_expired_keys(pool.clone()));\n    let app = routes::router(AppState { pool });")
        .bash("cargo sqlx prepare -- --all-targets && cargo test 2>&1 | tail -3", "query data written to .sqlx in the current directory; please check this into version control\n\ntest result: ok. 37 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.90s")
        .assistant("`purge_expired_keys` runs every 600 s from `main.rs` and deletes keys older than 24 hours; tests and clippy pass. Want me to commit on `feat/idempotency`?")
        .user("don't commit yet, I want to review the whole diff myself first. leave it staged-free")
        .assistant("Understood, nothing is committed; the changes are in the working tree (`src/routes.rs`, `src/idempotency.rs`, `src/main.rs`, `.sqlx/`).")
        .build();
    Case {
        name: "axum idempotency update, ctxkit earlier summary (held out, 9th set)",
        messages,
        previous: Some(previous.to_owned()),
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("constraint: no unwrap in handlers", &["unwrap"]),
            fact(
                "constraint: reversible migrations",
                &["reversible", ".down.sql"],
            ),
            fact(
                "constraint: stay on sqlx 0.7",
                &["sqlx 0.7", "sqlx` 0.7", "sqlx 0.8"],
            ),
            fact(
                "migration done earlier",
                &["20261124093000_idempotency_keys"],
            ),
            fact(
                "in-progress item finished: layer wired into the router",
                &["src/routes.rs"],
            ),
            fact("the layer", &["IdempotencyLayer"]),
            fact(
                "error: sqlx offline cache",
                &["no cached data for this query", "SQLX_OFFLINE"],
            ),
            fact("fix: regenerate the query cache", &["cargo sqlx prepare"]),
            fact("race found by a test", &["concurrent_duplicate_requests"]),
            fact(
                "decision: claim the key with ON CONFLICT, 409 for in-flight duplicates",
                &["ON CONFLICT", "409"],
            ),
            fact("tests pass", &["37 passed"]),
            fact("purge task", &["purge_expired_keys"]),
            fact(
                "purge interval 10 minutes",
                &["10 minutes", "600", "10 min"],
            ),
            fact("preference: no cron job", &["cron"]),
            fact("branch", &["feat/idempotency"]),
            fact(
                "constraint: do not commit until the user reviewed the diff",
                &[
                    "commit yet",
                    "not commit",
                    "review the diff",
                    "uncommitted",
                    "no commit",
                ],
            ),
        ],
    }
}

const JEST_E2E_FAILED: &str = "> api-commandes@2.4.1 test:e2e\n> jest --config ./test/jest-e2e.json commandes\n\n[Nest] 48213  - 26/11/2026 15:41:07     LOG [NestFactory] Starting Nest application...\n[Nest] 48213  - 26/11/2026 15:41:07     LOG [InstanceLoader] PrismaModule dependencies initialized +14ms\n[Nest] 48213  - 26/11/2026 15:41:07     LOG [InstanceLoader] CommandesModule dependencies initialized +1ms\n[Nest] 48213  - 26/11/2026 15:41:07     LOG [RoutesResolver] CommandesController {/commandes}: +3ms\n[Nest] 48213  - 26/11/2026 15:41:07     LOG [RouterExplorer] Mapped {/commandes, POST} route +1ms\n[Nest] 48213  - 26/11/2026 15:41:07     LOG [RouterExplorer] Mapped {/commandes/:id, GET} route +0ms\n FAIL  test/commandes.e2e-spec.ts\n  CommandesController (e2e)\n    ✓ POST /commandes crée une commande (118 ms)\n    ✕ POST /commandes avec un panier vide renvoie 422 (21 ms)\n\n  ● CommandesController (e2e) › POST /commandes avec un panier vide renvoie 422\n\n    expected 422 \"Unprocessable Entity\", got 400 \"Bad Request\"\n\n      41 |       .send({ clientId: 'c-17', lignes: [] })\n    > 42 |       .expect(422);\n         |        ^\n\nTests:       1 failed, 11 passed, 12 total\nTime:        3.912 s\n\nCommand exited with code 1";

/// A NestJS session held in French: a 500 on an empty cart, a change of mind from 400 to 422, an
/// end-to-end test caught by the DTO's validation, a commit and a patch release, a changelog entry
/// whose commit is still running.
fn nestjs_commandes_french() -> Case {
    let messages = SessionBuilder::new()
        .user("Salut ! POST /commandes renvoie une 500 quand le panier est vide. Tu peux corriger ça dans src/commandes/commandes.service.ts ? Attention : on ne touche pas au schéma Prisma (prisma/schema.prisma), les migrations sont gelées jusqu'à la release.")
        .read("src/commandes/commandes.service.ts", "@Injectable()\nexport class CommandesService {\n  constructor(private readonly prisma: PrismaService) {}\n\n  calculerTotal(lignes: LigneDto[]): number {\n    return lignes.reduce((total, ligne) => total + ligne.prix * ligne.quantite, lignes[0].prix * 0);\n  }\n\n  async creer(dto: CreerCommandeDto) {\n    const total = this.calculerTotal(dto.lignes);\n    return this.prisma.commande.create({ data: { clientId: dto.clientId, total } });\n  }\n}")
        .bash("curl -s -X POST localhost:3000/commandes -H 'content-type: application/json' -d '{\"clientId\":\"c-17\",\"lignes\":[]}' ; tail -n 8 logs/app.log", "{\"statusCode\":500,\"message\":\"Internal server error\"}\n[Nest] 47702  - 26/11/2026 15:32:54   ERROR [ExceptionsHandler] Cannot read properties of undefined (reading 'prix')\nTypeError: Cannot read properties of undefined (reading 'prix')\n    at CommandesService.calculerTotal (/app/src/commandes/commandes.service.ts:9:86)\n    at CommandesService.creer (/app/src/commandes/commandes.service.ts:13:24)\n    at CommandesController.creer (/app/src/commandes/commandes.controller.ts:18:33)\n    at /app/node_modules/@nestjs/core/router/router-execution-context.js:38:29")
        .assistant("`calculerTotal` lit `lignes[0].prix` même quand `lignes` est vide. Je fais démarrer le `reduce` à 0 et je rejette un panier vide avec une `BadRequestException('Le panier est vide')` dans `creer`.")
        .edit("src/commandes/commandes.service.ts", "lignes[0].prix * 0);", "0);")
        .edit("src/commandes/commandes.service.ts", "    const total = this.calculerTotal(dto.lignes);", "    if (dto.lignes.length === 0) {\n      throw new BadRequestException('Le panier est vide');\n    }\n    const total = this.calculerTotal(dto.lignes);")
        .bash("npm run test -- commandes.service", "> api-commandes@2.4.1 test\n> jest commandes.service\n\n PASS  src/commandes/commandes.service.spec.ts\n  CommandesService\n    ✓ calcule le total (4 ms)\n    ✓ refuse un panier vide (2 ms)\n\nTests:       6 passed, 6 total\nTime:        1.207 s")
        .user("Finalement non, renvoie plutôt une 422 : le front traite les 422 comme des erreurs métier et affiche le message. Ajoute aussi le cas dans les tests e2e.")
        .edit("src/commandes/commandes.service.ts", "throw new BadRequestException('Le panier est vide');", "throw new UnprocessableEntityException('Le panier est vide');")
        .edit("test/commandes.e2e-spec.ts", "describe('CommandesController (e2e)', () => {", "describe('CommandesController (e2e)', () => {\n  it('POST /commandes avec un panier vide renvoie 422', () =>\n    request(app.getHttpServer())\n      .post('/commandes')\n      .send({ clientId: 'c-17', lignes: [] })\n      .expect(422));")
        .bash("npm run test:e2e -- commandes", JEST_E2E_FAILED)
        .read("src/commandes/dto/creer-commande.dto.ts", "export class CreerCommandeDto {\n  @IsString()\n  clientId: string;\n\n  @IsArray()\n  @ArrayNotEmpty()\n  @ValidateNested({ each: true })\n  @Type(() => LigneDto)\n  lignes: LigneDto[];\n}")
        .assistant("Le `ValidationPipe` global rejette le panier vide avant le service, à cause de `@ArrayNotEmpty()` sur `lignes`, d'où la 400. Je retire `@ArrayNotEmpty()` du DTO pour que la règle métier reste dans le service ; je ne change pas `errorHttpStatusCode` du pipe global, ce qui ferait passer toutes les erreurs de validation en 422.")
        .edit("src/commandes/dto/creer-commande.dto.ts", "  @IsArray()\n  @ArrayNotEmpty()\n", "  @IsArray()\n")
        .bash("npm run test:e2e -- commandes 2>&1 | tail -6", "  CommandesController (e2e)\n    ✓ POST /commandes crée une commande (104 ms)\n    ✓ POST /commandes avec un panier vide renvoie 422 (12 ms)\n\nTests:       12 passed, 12 total\nTime:        3.644 s")
        .bash("npm run lint && npx tsc --noEmit", "> api-commandes@2.4.1 lint\n> eslint \"{src,apps,libs,test}/**/*.ts\"\n")
        .user("Top. Commit sur main puis sors une version patch.")
        .bash("git add -A && git commit -m \"fix(commandes): 422 quand le panier est vide\"", "[main 5d07c3a] fix(commandes): 422 quand le panier est vide\n 3 files changed, 14 insertions(+), 3 deletions(-)")
        .bash("npm version patch -m \"chore(release): %s\"", "v2.4.2")
        .bash("git log --oneline -3", "b81e6f0 (HEAD -> main, tag: v2.4.2) chore(release): 2.4.2\n5d07c3a fix(commandes): 422 quand le panier est vide\n91c2d4a feat(clients): pagination par curseur")
        .assistant("C'est fait : correctif `5d07c3a`, version `v2.4.2` (commit `b81e6f0` et tag créés par `npm version`). Rien n'est poussé.")
        .user("Ah, il manque l'entrée dans CHANGELOG.md pour la 2.4.2. Ajoute-la et amende le commit de release, sans pousser.")
        .edit("CHANGELOG.md", "## [2.4.1]", "## [2.4.2]\n### Corrigé\n- `POST /commandes` renvoie 422 (et non plus 500) quand le panier est vide.\n\n## [2.4.1]")
        .tool("bash", json!({"command": "git add CHANGELOG.md && git commit --amend --no-edit && git tag -f v2.4.2"}), None)
        .build();
    Case {
        name: "nestjs commandes, in French (held out, 9th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("constraint: Prisma schema frozen", &["Prisma"]),
            fact("endpoint", &["POST /commandes"]),
            fact("service file", &["src/commandes/commandes.service.ts"]),
            fact("the 500's error", &["Cannot read properties of undefined"]),
            fact(
                "changed mind: 422 instead of 400",
                &["422", "UnprocessableEntityException"],
            ),
            fact("e2e failure", &["got 400"]),
            fact(
                "decision: drop @ArrayNotEmpty from the DTO, not the global pipe",
                &["ArrayNotEmpty"],
            ),
            fact("DTO file", &["src/commandes/dto/creer-commande.dto.ts"]),
            fact("e2e command", &["npm run test:e2e"]),
            fact("fix commit", &["5d07c3a"]),
            fact("version", &["2.4.2"]),
            fact("nothing pushed", &["pouss", "push"]),
            fact(
                "pending: changelog entry and amended release commit",
                &["CHANGELOG", "--amend", "amend"],
            ),
        ],
    }
}

const K6_BASELINE: &str = "          /\\      |‾‾| /‾‾/   /‾‾/\n     /\\  /  \\     |  |/  /   /  /\n    /  \\/    \\    |     (   /   ‾‾\\\n   /          \\   |  |\\  \\ |  (‾)  |\n  / __________ \\  |__| \\__\\ \\_____/ .io\n\n     execution: local\n        script: load/quote.js\n        output: -\n\n     scenarios: (100.00%) 1 scenario, 400 max VUs, 5m30s max duration (incl. graceful stop):\n              * quotes: 2000.00 iterations/s for 5m0s (maxVUs: 400, gracefulStop: 30s)\n\n     ✓ status is 200\n\n     checks.........................: 100.00% ✓ 599874      ✗ 0\n     data_received..................: 412 MB  1.4 MB/s\n     data_sent......................: 98 MB   326 kB/s\n     http_req_blocked...............: avg=4.1µs    min=1µs     med=3µs     max=2.1ms    p(90)=5µs     p(95)=6µs\n     http_req_duration..............: avg=23.87ms  min=3.02ms  med=14.2ms  max=611.3ms  p(90)=48.1ms  p(95)=77.9ms  p(99)=182.4ms\n     http_reqs......................: 599874  1999.58/s\n     iteration_duration.............: avg=24.02ms  min=3.1ms   med=14.3ms  max=611.5ms  p(90)=48.3ms  p(95)=78.1ms\n     vus............................: 61      min=12        max=400\n\nrunning (5m00.1s), 000/400 VUs, 599874 complete and 0 interrupted iterations\nquotes ✓ [======================================] 000/400 VUs  5m0s  2000.00 iters/s";

/// A branch summary of an abandoned JVM GC experiment: ZGC halves p99 but overruns the memory
/// limit the user fixed at the start, a softer heap target loses most of the gain, and the work
/// goes back to main to look at allocations instead.
fn zgc_branch() -> Case {
    let messages = SessionBuilder::new()
        .user("pricing-engine's p99 at 2000 rps is way over the 100 ms SLO. Try ZGC on a branch and measure. The pod memory limit stays at 3Gi — platform won't raise it, don't even propose it.")
        .bash("git checkout -b perf/zgc-trial && java -version 2>&1", "Switched to a new branch 'perf/zgc-trial'\nopenjdk version \"21.0.5\" 2024-10-15 LTS\nOpenJDK Runtime Environment Temurin-21.0.5+11 (build 21.0.5+11-LTS)\nOpenJDK 64-Bit Server VM Temurin-21.0.5+11 (build 21.0.5+11-LTS, mixed mode, sharing)")
        .read("deploy/k8s/pricing-engine.yaml", "        env:\n          - name: JAVA_OPTS\n            value: \"-XX:+UseG1GC -XX:MaxRAMPercentage=75 -Xlog:gc*:file=/tmp/gc.log\"\n        resources:\n          requests: { cpu: \"2\", memory: 3Gi }\n          limits: { cpu: \"4\", memory: 3Gi }")
        .bash("k6 run load/quote.js", K6_BASELINE)
        .assistant("Baseline with G1 on JDK 21: p99 182.4 ms at 1999.58 req/s. Now generational ZGC (`-XX:+UseZGC -XX:+ZGenerational`), same `MaxRAMPercentage=75`.")
        .edit("deploy/k8s/pricing-engine.yaml", "-XX:+UseG1GC -XX:MaxRAMPercentage=75", "-XX:+UseZGC -XX:+ZGenerational -XX:MaxRAMPercentage=75")
        .bash("kubectl -n pricing-staging apply -f deploy/k8s/pricing-engine.yaml && kubectl -n pricing-staging rollout status deploy/pricing-engine", "deployment.apps/pricing-engine configured\nWaiting for deployment \"pricing-engine\" rollout to finish: 1 of 3 updated replicas are available...\nWaiting for deployment \"pricing-engine\" rollout to finish: 2 of 3 updated replicas are available...\ndeployment \"pricing-engine\" successfully rolled out")
        .bash("k6 run load/quote.js 2>&1 | grep -E 'http_req_duration|http_reqs'", "     http_req_duration..............: avg=11.02ms  min=2.88ms  med=9.1ms   max=204.7ms  p(90)=21.4ms  p(95)=30.2ms  p(99)=61.42ms\n     http_reqs......................: 599910  1999.70/s")
        .bash("kubectl -n pricing-staging top pod -l app=pricing-engine; kubectl -n pricing-staging get pod -l app=pricing-engine", "NAME                              CPU(cores)   MEMORY(bytes)\npricing-engine-6d9f7c5b8-4xk2p    3012m        3398Mi\npricing-engine-6d9f7c5b8-9qnzw    2987m        3402Mi\npricing-engine-6d9f7c5b8-tl7vd    0m           0Mi\nNAME                              READY   STATUS      RESTARTS      AGE\npricing-engine-6d9f7c5b8-4xk2p    1/1     Running     0             9m\npricing-engine-6d9f7c5b8-9qnzw    1/1     Running     1 (40s ago)   9m\npricing-engine-6d9f7c5b8-tl7vd    0/1     OOMKilled   2 (12s ago)   9m")
        .bash("kubectl -n pricing-staging describe pod pricing-engine-6d9f7c5b8-tl7vd | sed -n '/Last State/,/Exit Code/p'", "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137")
        .assistant("ZGC brings p99 down to 61.42 ms, but resident memory climbs to ~3.4 GiB (the heap plus ZGC's off-heap structures and multi-mapped memory), past the 3Gi limit: two of three pods were OOMKilled within 9 minutes. Next: keep ZGC but cap the heap with `-XX:SoftMaxHeapSize=1800m` and `MaxRAMPercentage=60` to leave headroom.")
        .edit("deploy/k8s/pricing-engine.yaml", "-XX:+UseZGC -XX:+ZGenerational -XX:MaxRAMPercentage=75", "-XX:+UseZGC -XX:+ZGenerational -XX:MaxRAMPercentage=60 -XX:SoftMaxHeapSize=1800m")
        .bash("kubectl -n pricing-staging apply -f deploy/k8s/pricing-engine.yaml && kubectl -n pricing-staging rollout status deploy/pricing-engine && k6 run load/quote.js 2>&1 | grep -E 'http_req_duration|http_reqs'", "deployment.apps/pricing-engine configured\ndeployment \"pricing-engine\" successfully rolled out\n     http_req_duration..............: avg=19.7ms   min=2.91ms  med=12.8ms  max=388.0ms  p(90)=39.9ms  p(95)=66.3ms  p(99)=118.3ms\n     http_reqs......................: 599702  1999.00/s")
        .bash("grep -c 'Allocation Stall' /tmp/gc.log; kubectl -n pricing-staging top pod -l app=pricing-engine", "1184\nNAME                              CPU(cores)   MEMORY(bytes)\npricing-engine-7b44d9f6c-2mfrz    3560m        2790Mi\npricing-engine-7b44d9f6c-8wdbl    3498m        2801Mi\npricing-engine-7b44d9f6c-rk5hn    3577m        2786Mi")
        .assistant("With the smaller heap the pods stay under the limit (~2.8 GiB) but p99 is back to 118.3 ms: 1184 allocation stalls in the GC log, ZGC can't keep up with the allocation rate in 1800m. For comparison I'll try G1 with a pause target.")
        .edit("deploy/k8s/pricing-engine.yaml", "-XX:+UseZGC -XX:+ZGenerational -XX:MaxRAMPercentage=60 -XX:SoftMaxHeapSize=1800m", "-XX:+UseG1GC -XX:MaxGCPauseMillis=100 -XX:MaxRAMPercentage=75")
        .bash("kubectl -n pricing-staging apply -f deploy/k8s/pricing-engine.yaml && kubectl -n pricing-staging rollout status deploy/pricing-engine && k6 run load/quote.js 2>&1 | grep http_req_duration", "deployment.apps/pricing-engine configured\ndeployment \"pricing-engine\" successfully rolled out\n     http_req_duration..............: avg=22.1ms   min=3.0ms   med=13.9ms  max=512.6ms  p(90)=45.0ms  p(95)=71.2ms  p(99)=140.6ms")
        .bash("./async-profiler/bin/asprof -e alloc -d 60 -f /tmp/alloc.html $(pgrep -f pricing-engine.jar) && grep -o 'com\\.acme\\.pricing\\.[A-Za-z.]*' /tmp/alloc.html | sort | uniq -c | sort -rn | head -4", "Profiling for 60 seconds\nDone\n  41877 com.acme.pricing.cache.PriceCache.lookup\n   9120 com.acme.pricing.quote.QuoteAssembler.assemble\n   3302 com.acme.pricing.fx.FxRates.convert\n   1015 com.acme.pricing.http.QuoteHandler.handle")
        .assistant("The allocation profile is dominated by `PriceCache.lookup` (41877 samples), which builds a new `BigDecimal` and key string per call. Summary of the trial: G1 182.4 ms, ZGC 61.42 ms but OOMKilled at 3Gi, ZGC with SoftMaxHeapSize=1800m 118.3 ms, G1 with MaxGCPauseMillis=100 140.6 ms. No GC setting meets the SLO within 3Gi.")
        .user("ok, drop the GC experiment — we can't buy the memory. Go back to main and reset staging to the G1 config; we'll attack the PriceCache.lookup allocations instead.")
        .bash("git checkout deploy/k8s/pricing-engine.yaml && git checkout main && kubectl -n pricing-staging apply -f deploy/k8s/pricing-engine.yaml", "Switched to branch 'main'\nYour branch is up to date with 'origin/main'.\ndeployment.apps/pricing-engine configured")
        .build();
    Case {
        name: "jvm zgc trial, abandoned branch (held out, 9th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::Branch,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "goal: p99 under the 100 ms SLO",
                &["100 ms", "100ms", "SLO"],
            ),
            fact(
                "load: 2000 rps",
                &[
                    "2000 rps",
                    "2,000 rps",
                    "2000 req/s",
                    "2000 iterations",
                    "1999",
                ],
            ),
            fact("constraint: memory limit stays 3Gi", &["3Gi", "3 GiB"]),
            fact("branch", &["perf/zgc-trial"]),
            fact("deployment file", &["deploy/k8s/pricing-engine.yaml"]),
            fact("load test command", &["k6 run load/quote.js"]),
            fact("baseline G1 p99", &["182.4"]),
            fact("ZGC flags", &["ZGenerational", "UseZGC"]),
            fact("ZGC p99", &["61.42", "61.4 ms", "61 ms"]),
            fact("ZGC pods OOMKilled", &["OOMKilled"]),
            fact("capped heap attempt", &["SoftMaxHeapSize"]),
            fact("capped heap p99", &["118.3", "118 ms"]),
            fact("G1 pause target result", &["140.6", "MaxGCPauseMillis"]),
            fact(
                "why dropped: memory cannot be raised",
                &[
                    "can't buy the memory",
                    "memory limit",
                    "within 3Gi",
                    "past the 3Gi",
                    "over the limit",
                ],
            ),
            fact("next: allocation hot spot", &["PriceCache.lookup"]),
        ],
    }
}
