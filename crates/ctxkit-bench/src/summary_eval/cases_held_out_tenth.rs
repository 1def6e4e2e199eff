//! The tenth held-out set, written on 2026-11-26 (evening) before any summary of it was read, by
//! someone who had not read the summarizer's code (`crates/ctxkit-compaction/src/offline/`) and did
//! not run `summary-eval` or the tests of ctxkit-bench and ctxkit-compaction while writing it. What
//! was read: issue 18 (`issues show 18`); the `summary-eval` section of `docs/summaries.md` on
//! scoring (a search for that word also showed the first forty lines of the section on what the
//! summary holds, read in passing, not used); the case format in `mod.rs` and `builder.rs`; and
//! `cases_held_out_third.rs` as a format example. No other held-out file was opened (a search for
//! case names showed their one-line names) and no output of an earlier run was read. The facts are
//! what an engineer taking over each session would list. Reported apart as the "10th set".

use ctxkit_compaction::SummaryPurpose;
use serde_json::json;

use super::{Case, SessionBuilder, fact, parallel_turn};

pub(super) fn cases() -> Vec<Case> {
    vec![
        flutter_notes(),
        airflow_dbt_update(),
        laravel_reservas_spanish(),
        wasm_size_branch(),
    ]
}

const PUB_GET: &str = "Resolving dependencies... \nDownloading packages... \n  _fe_analyzer_shared 72.0.0 (76.0.0 available)\n  analyzer 6.7.0 (6.11.0 available)\n  async 2.11.0 (2.12.0 available)\n  build 2.4.1\n  build_config 1.1.1\n  build_daemon 4.0.2\n  build_resolvers 2.4.2\n  build_runner 2.4.13\n  build_runner_core 7.3.2\n  built_value 8.9.2\n  collection 1.18.0 (1.19.1 available)\n  crypto 3.0.5\n  dart_style 2.3.7 (3.0.1 available)\n  flutter_riverpod 2.5.1 (2.6.1 available)\n  hive 2.2.3\n  hive_flutter 1.1.0\n+ hive_generator 2.0.1\n  http 1.2.2\n  json_annotation 4.9.0\n  leak_tracker 10.0.5 (10.0.9 available)\n  meta 1.15.0 (1.16.0 available)\n  path_provider 2.1.4\n  riverpod 2.5.1 (2.6.1 available)\n  source_gen 1.5.0 (2.0.0 available)\n  test_api 0.7.2 (0.7.4 available)\n  vm_service 14.2.5 (15.0.0 available)\nChanged 1 dependency!\n19 packages have newer versions incompatible with dependency constraints.\nTry `flutter pub outdated` for more information.";

const BUILD_RUNNER: &str = "[INFO] Generating build script...\n[INFO] Generating build script completed, took 412ms\n[INFO] Precompiling build script......\n[INFO] Precompiling build script... completed, took 6.1s\n[INFO] Initializing inputs\n[INFO] Reading cached asset graph...\n[WARNING] Throwing away cached asset graph because the build phases have changed. This most commonly would happen as a result of adding a new dependency or updating your dependencies.\n[INFO] Cleaning up outputs from previous builds....\n[INFO] Terminating. No further builds will be scheduled\n[INFO] Building new asset graph...\n[INFO] Building new asset graph completed, took 1.2s\n[INFO] Checking for unexpected pre-existing outputs....\n[INFO] Deleting 3 declared outputs which already existed on disk.\n[INFO] Checking for unexpected pre-existing outputs. completed, took 3ms\n[INFO] Running build...\n[INFO] 1.1s elapsed, 0/8 actions completed.\n[INFO] 2.3s elapsed, 5/8 actions completed.\n[INFO] Running build completed, took 3.0s\n[INFO] Caching finalized dependency graph...\n[INFO] Caching finalized dependency graph completed, took 54ms\n[INFO] Succeeded after 3.1s with 4 outputs (16 actions)";

/// A long Flutter session over three requests: offline caching with Hive (a test failure fixed
/// after one wrong attempt, a commit on a feature branch, a PR), an analyzer deprecation, and a
/// refresh control the user changes their mind about, whose widget test still fails at the end.
fn flutter_notes() -> Case {
    let mut messages = SessionBuilder::new()
        .user("The notes list is empty when the phone is offline. Cache the notes locally with Hive (it's already in pubspec) so the list shows the last synced notes. Two rules for this whole repo: never edit the generated *.g.dart files by hand, always regenerate them with build_runner; and we stay on Riverpod 2.x, don't migrate anything to Riverpod 3.")
        .build();
    messages.extend(parallel_turn(
        |index| format!("par_flutter_{index}"),
        "Let me look at the repository layer and the dependencies first.",
        &[
            ("read", json!({"path": "pubspec.yaml"}), "name: fieldnotes\ndescription: Field notes for inspectors.\nversion: 1.8.2+58\nenvironment:\n  sdk: '>=3.4.0 <4.0.0'\n  flutter: '>=3.24.0'\ndependencies:\n  flutter:\n    sdk: flutter\n  flutter_riverpod: ^2.5.1\n  hive: ^2.2.3\n  hive_flutter: ^1.1.0\n  http: ^1.2.2\n  json_annotation: ^4.9.0\ndev_dependencies:\n  build_runner: ^2.4.13\n  flutter_lints: ^4.0.0\n  flutter_test:\n    sdk: flutter\n  json_serializable: ^6.8.0\n  mocktail: ^1.0.4"),
            ("read", json!({"path": "lib/data/notes_repository.dart"}), "import 'package:http/http.dart' as http;\n\nimport 'note.dart';\nimport 'notes_api.dart';\n\nclass NotesRepository {\n  NotesRepository(this._api);\n\n  final NotesApi _api;\n\n  Future<List<Note>> fetchNotes() async {\n    final notes = await _api.getNotes();\n    return notes;\n  }\n}"),
            ("bash", json!({"command": "git status --short && git branch --show-current"}), "main"),
        ],
    ));
    messages.extend(SessionBuilder::new()
        .bash("ls lib/data test/data", "lib/data:\nnote.dart\nnote.g.dart\nnotes_api.dart\nnotes_repository.dart\n\ntest/data:\nnotes_api_test.dart\nnotes_repository_test.dart")
        .read("lib/data/note.dart", "import 'package:json_annotation/json_annotation.dart';\n\npart 'note.g.dart';\n\n@JsonSerializable()\nclass Note {\n  Note({required this.id, required this.title, required this.body, required this.updatedAt});\n  final String id;\n  final String title;\n  final String body;\n  final DateTime updatedAt;\n  factory Note.fromJson(Map<String, dynamic> json) => _$NoteFromJson(json);\n  Map<String, dynamic> toJson() => _$NoteToJson(this);\n}")
        .assistant("I'll store the notes as JSON maps in a Hive box named `notes_cache` through a small `NoteCache` class, rather than a generated TypeAdapter — that keeps `Note` unchanged. The repository writes the cache after every successful fetch and reads it when the API throws a `SocketException`.")
        .bash("git checkout -b feat/offline-notes-cache", "Switched to a new branch 'feat/offline-notes-cache'")
        .write("lib/data/note_cache.dart", "import 'package:hive/hive.dart';\n\nimport 'note.dart';\n\nclass NoteCache {\n  NoteCache(this._box);\n  final Box<Map> _box;\n\n  static Future<NoteCache> open() async => NoteCache(await Hive.openBox<Map>('notes_cache'));\n\n  List<Note> read() => _box.values.map((m) => Note.fromJson(Map<String, dynamic>.from(m))).toList();\n\n  Future<void> write(List<Note> notes) async {\n    await _box.clear();\n    await _box.putAll({for (final n in notes) n.id: n.toJson()});\n  }\n}\n")
        .edit("lib/data/notes_repository.dart", "  Future<List<Note>> fetchNotes() async {\n    final notes = await _api.getNotes();\n    return notes;\n  }", "  Future<List<Note>> fetchNotes() async {\n    try {\n      final notes = await _api.getNotes();\n      await _cache.write(notes);\n      return notes;\n    } on SocketException {\n      return _cache.read();\n    }\n  }")
        .edit("lib/data/notes_repository.dart", "  NotesRepository(this._api);\n\n  final NotesApi _api;", "  NotesRepository(this._api, this._cache);\n\n  final NotesApi _api;\n  final NoteCache _cache;")
        .bash("flutter pub get", PUB_GET)
        .bash("dart run build_runner build --delete-conflicting-outputs", BUILD_RUNNER)
        .write("test/data/notes_repository_test.dart", "import 'dart:io';\n\nimport 'package:flutter_test/flutter_test.dart';\nimport 'package:hive_flutter/hive_flutter.dart';\nimport 'package:mocktail/mocktail.dart';\n\nvoid main() {\n  setUpAll(() async {\n    await Hive.initFlutter();\n  });\n\n  test('NotesRepository returns cached notes when offline', () async {\n    final cache = await NoteCache.open();\n    await cache.write(threeNotes);\n    when(() => api.getNotes()).thenThrow(const SocketException('offline'));\n    expect((await NotesRepository(api, cache).fetchNotes()).length, 3);\n  });\n}\n")
        .bash("flutter test test/data/notes_repository_test.dart", "00:02 +0: loading /home/dev/fieldnotes/test/data/notes_repository_test.dart\n00:03 +0: (setUpAll)\n00:03 +0 -1: (setUpAll) [E]\n  MissingPluginException(No implementation found for method getApplicationDocumentsDirectory on channel plugins.flutter.io/path_provider)\n  package:flutter/src/services/platform_channel.dart 332:7  MethodChannel._invokeMethod\n  ===== asynchronous gap ===========================\n  package:path_provider/path_provider.dart 127:24          getApplicationDocumentsDirectory\n  package:hive_flutter/src/hive_extensions.dart 14:20      HiveX.initFlutter\n  test/data/notes_repository_test.dart 9:5                 main.<fn>\n\n00:03 +0 -1: Some tests failed.\n\nCommand exited with code 1")
        .assistant("`Hive.initFlutter()` needs the path_provider plugin, which is not there in a unit test. Registering the binding should give it a platform channel.")
        .edit("test/data/notes_repository_test.dart", "  setUpAll(() async {\n    await Hive.initFlutter();", "  TestWidgetsFlutterBinding.ensureInitialized();\n  setUpAll(() async {\n    await Hive.initFlutter();")
        .bash("flutter test test/data/notes_repository_test.dart", "00:02 +0: loading /home/dev/fieldnotes/test/data/notes_repository_test.dart\n00:03 +0 -1: (setUpAll) [E]\n  MissingPluginException(No implementation found for method getApplicationDocumentsDirectory on channel plugins.flutter.io/path_provider)\n  package:flutter/src/services/platform_channel.dart 332:7  MethodChannel._invokeMethod\n\n00:03 +0 -1: Some tests failed.\n\nCommand exited with code 1")
        .assistant("The binding does not provide path_provider either. Tests should not touch the plugin at all: I'll initialise Hive on a temporary directory with `Hive.init(Directory.systemTemp.createTempSync().path)` and close the boxes in `tearDownAll`.")
        .edit("test/data/notes_repository_test.dart", "  TestWidgetsFlutterBinding.ensureInitialized();\n  setUpAll(() async {\n    await Hive.initFlutter();\n  });", "  setUpAll(() {\n    Hive.init(Directory.systemTemp.createTempSync('notes_cache_test').path);\n  });\n  tearDownAll(() => Hive.close());")
        .bash("flutter test test/data/notes_repository_test.dart", "00:02 +0: loading /home/dev/fieldnotes/test/data/notes_repository_test.dart\n00:03 +1: NotesRepository returns cached notes when offline\n00:03 +1: All tests passed!")
        .bash("flutter test", "00:01 +0: loading /home/dev/fieldnotes/test/data/notes_api_test.dart\n00:04 +12: /home/dev/fieldnotes/test/ui/note_tile_test.dart: NoteTile shows the relative date\n00:06 +23: All tests passed!")
        .bash("git add -A && git commit -m \"Cache notes in Hive for offline use\"", "[feat/offline-notes-cache 7c3e91ab] Cache notes in Hive for offline use\n 4 files changed, 71 insertions(+), 4 deletions(-)\n create mode 100644 lib/data/note_cache.dart")
        .bash("git push -u origin feat/offline-notes-cache && gh pr create --fill --base main", "remote: \nremote: Create a pull request for 'feat/offline-notes-cache' on GitHub by visiting:\nremote:      https://github.com/inspecta/fieldnotes/pull/new/feat/offline-notes-cache\nremote: \nTo github.com:inspecta/fieldnotes.git\n * [new branch]      feat/offline-notes-cache -> feat/offline-notes-cache\nbranch 'feat/offline-notes-cache' set up to track 'origin/feat/offline-notes-cache'.\n\nCreating pull request for feat/offline-notes-cache into main in inspecta/fieldnotes\n\nhttps://github.com/inspecta/fieldnotes/pull/214")
        .assistant("Offline caching is in: `NoteCache` in `lib/data/note_cache.dart`, used by `NotesRepository`; all 23 tests pass. Committed `7c3e91ab` on `feat/offline-notes-cache`, PR #214.")
        .user("CI fails on the analyze step of #214, can you fix it")
        .bash("flutter analyze", "Analyzing fieldnotes...\n\n   info • 'withOpacity' is deprecated and shouldn't be used. Use .withValues() to avoid precision loss • lib/ui/note_tile.dart:41:38 • deprecated_member_use\n   info • 'withOpacity' is deprecated and shouldn't be used. Use .withValues() to avoid precision loss • lib/ui/notes_screen.dart:88:52 • deprecated_member_use\n   info • Don't use 'BuildContext's across async gaps • lib/ui/notes_screen.dart:102:7 • use_build_context_synchronously\n\n3 issues found. (ran in 4.2s)\n\nCommand exited with code 1")
        .read("analysis_options.yaml", "include: package:flutter_lints/flutter.yaml\n\nanalyzer:\n  exclude:\n    - \"**/*.g.dart\"\n  errors:\n    deprecated_member_use: error\n")
        .edit("lib/ui/note_tile.dart", "color: theme.colorScheme.onSurface.withOpacity(0.6)", "color: theme.colorScheme.onSurface.withValues(alpha: 0.6)")
        .edit("lib/ui/notes_screen.dart", "Colors.black.withOpacity(0.08)", "Colors.black.withValues(alpha: 0.08)")
        .read("lib/ui/notes_screen.dart", "    96\t  Future<void> _delete(Note note) async {\n    97\t    await ref.read(notesRepositoryProvider).delete(note.id);\n    98\t    ScaffoldMessenger.of(context).showSnackBar(\n    99\t      SnackBar(content: Text('Deleted ${note.title}')),\n   100\t    );\n   101\t  }\n   102\t")
        .edit("lib/ui/notes_screen.dart", "    await ref.read(notesRepositoryProvider).delete(note.id);\n    ScaffoldMessenger", "    await ref.read(notesRepositoryProvider).delete(note.id);\n    if (!mounted) return;\n    ScaffoldMessenger")
        .bash("flutter analyze", "Analyzing fieldnotes...\nNo issues found! (ran in 3.9s)")
        .bash("git commit -am \"Replace deprecated withOpacity, guard context after await\" && git push", "[feat/offline-notes-cache d41f0a27] Replace deprecated withOpacity, guard context after await\n 2 files changed, 3 insertions(+), 2 deletions(-)\nTo github.com:inspecta/fieldnotes.git\n   7c3e91ab..d41f0a27  feat/offline-notes-cache -> feat/offline-notes-cache")
        .assistant("`flutter analyze` is clean: `withOpacity` became `withValues(alpha: …)` (the repo treats `deprecated_member_use` as an error) and `_delete` checks `mounted` after the await. Pushed `d41f0a27` to #214.")
        .user("nice. now add pull-to-refresh on the notes screen so inspectors can force a sync")
        .edit("lib/ui/notes_screen.dart", "      body: ListView.builder(", "      body: RefreshIndicator(\n        onRefresh: () => ref.refresh(notesProvider.future),\n        child: ListView.builder(")
        .user("hmm actually no, the list is inside a PageView and swipe gestures conflict. forget pull-to-refresh, put a refresh button in the AppBar instead")
        .edit("lib/ui/notes_screen.dart", "      body: RefreshIndicator(\n        onRefresh: () => ref.refresh(notesProvider.future),\n        child: ListView.builder(", "      body: ListView.builder(")
        .edit("lib/ui/notes_screen.dart", "      appBar: AppBar(title: const Text('Notes')),", "      appBar: AppBar(\n        title: const Text('Notes'),\n        actions: [\n          IconButton(\n            key: const Key('refresh-notes'),\n            icon: const Icon(Icons.refresh),\n            tooltip: 'Sync now',\n            onPressed: () => ref.invalidate(notesProvider),\n          ),\n        ],\n      ),")
        .bash("flutter analyze", "Analyzing fieldnotes...\nNo issues found! (ran in 3.7s)")
        .assistant("Removed the `RefreshIndicator` again and added a refresh `IconButton` to the AppBar that invalidates `notesProvider`. Analyze is clean.")
        .user("good. add a widget test for the refresh button, then push it to the PR")
        .write("test/ui/notes_screen_test.dart", "import 'package:flutter/material.dart';\nimport 'package:flutter_riverpod/flutter_riverpod.dart';\nimport 'package:flutter_test/flutter_test.dart';\n\nvoid main() {\n  testWidgets('refresh button refetches the notes', (tester) async {\n    var calls = 0;\n    await tester.pumpWidget(ProviderScope(\n      overrides: [notesProvider.overrideWith((ref) async { calls++; return []; })],\n      child: const MaterialApp(home: NotesScreen()),\n    ));\n    await tester.tap(find.byKey(const Key('refresh-button')));\n    await tester.pump();\n    expect(calls, 2);\n  });\n}\n")
        .bash("flutter test test/ui/notes_screen_test.dart", "00:02 +0: loading /home/dev/fieldnotes/test/ui/notes_screen_test.dart\n00:04 +0: refresh button refetches the notes\n══╡ EXCEPTION CAUGHT BY FLUTTER TEST FRAMEWORK ╞════════════════════════════════════════════════════\nThe following assertion was thrown running a test:\nThe finder \"Found 0 widgets with key [<'refresh-button'>]: []\" (used in a call to \"tap()\") could not\nfind any matching widgets.\n\nWhen the exception was thrown, this was the stack:\n#0      WidgetController._getElementPoint (package:flutter_test/src/controller.dart:1855:7)\n#1      WidgetController.tap (package:flutter_test/src/controller.dart:1015:7)\n#2      main.<anonymous closure> (file:///home/dev/fieldnotes/test/ui/notes_screen_test.dart:12:18)\n════════════════════════════════════════════════════════════════════════════════════════════════════\n00:04 +0 -1: refresh button refetches the notes [E]\n  Test failed. See exception logs above.\n00:04 +0 -1: Some tests failed.\n\nCommand exited with code 1")
        .build());
    Case {
        name: "flutter notes, long (held out, 10th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("constraint: never hand-edit generated files", &[".g.dart"]),
            fact(
                "constraint: stay on Riverpod 2.x",
                &["riverpod 2", "riverpod 3"],
            ),
            fact("new cache file", &["lib/data/note_cache.dart"]),
            fact("repository file", &["lib/data/notes_repository.dart"]),
            fact(
                "codegen command",
                &["dart run build_runner build", "build_runner build"],
            ),
            fact(
                "the test failure on the way",
                &["MissingPluginException", "getApplicationDocumentsDirectory"],
            ),
            fact(
                "the fix: Hive on a temp dir in tests",
                &[
                    "Hive.init(",
                    "systemTemp",
                    "temporary directory",
                    "temp dir",
                ],
            ),
            fact("branch", &["feat/offline-notes-cache"]),
            fact("first commit", &["7c3e91ab"]),
            fact("PR", &["#214", "pull/214"]),
            fact("analyzer issue", &["withOpacity"]),
            fact("analyzer fix", &["withValues"]),
            fact("second commit", &["d41f0a27"]),
            fact(
                "changed mind: AppBar refresh button, not pull-to-refresh",
                &["AppBar", "IconButton"],
            ),
            fact(
                "latest: widget test file",
                &["test/ui/notes_screen_test.dart"],
            ),
            fact(
                "last failure: key mismatch",
                &["Found 0 widgets with key", "refresh-button"],
            ),
        ],
    }
}

const DBT_ERROR: &str = "03:12:40  Running with dbt=1.8.7\n03:12:41  Registered adapter: snowflake=1.8.4\n03:12:43  Found 41 models, 3 snapshots, 112 data tests, 19 sources, 612 macros\n03:12:43  \n03:12:45  Concurrency: 4 threads (target='dev_mk')\n03:12:45  \n03:12:45  1 of 9 START sql view model DEV_MK.stg_orders .................................. [RUN]\n03:12:47  1 of 9 OK created sql view model DEV_MK.stg_orders ............................. [SUCCESS 1 in 1.62s]\n03:12:47  2 of 9 START test not_null_stg_orders_order_id ................................. [RUN]\n03:12:48  2 of 9 PASS not_null_stg_orders_order_id ....................................... [PASS in 0.91s]\n03:12:48  3 of 9 START sql incremental model DEV_MK.fct_orders ........................... [RUN]\n03:13:02  3 of 9 ERROR creating sql incremental model DEV_MK.fct_orders .................. [ERROR in 14.20s]\n03:13:02  4 of 9 SKIP test unique_fct_orders_order_id .................................... [SKIP]\n03:13:02  5 of 9 SKIP test not_null_fct_orders_order_id .................................. [SKIP]\n03:13:02  6 of 9 SKIP test relationships_fct_orders_customer_id__customer_id__ref_dim_customers_ [SKIP]\n03:13:02  \n03:13:02  Finished running 1 view model, 1 incremental model, 7 data tests in 0 hours 0 minutes and 19.40 seconds (19.40s).\n03:13:02  \n03:13:02  Completed with 1 error and 0 warnings:\n03:13:02  \n03:13:02    Database Error in model fct_orders (models/marts/fct_orders.sql)\n  100090 (42P18): Duplicate row detected during DML action\n  Row Values: [\"ord_88213\", \"cus_1042\", 1764129600000, \"shipped\", 84.50]\n  compiled code at target/run/analytics/models/marts/fct_orders.sql\n03:13:02  \n03:13:02  Done. PASS=2 WARN=0 ERROR=1 SKIP=6 TOTAL=9\n\nCommand exited with code 1";

/// An update of a ctxkit summary on an Airflow + dbt pipeline on Snowflake: the span finishes the
/// in-progress incremental model, hits a duplicate-row error, reverts the BashOperator decision for
/// astronomer-cosmos and decides the merge strategy.
fn airflow_dbt_update() -> Case {
    let previous = "_Extractive summary written offline by ctxkit (no model was used)._\n\n## Goal\n- **Latest:** Move the nightly orders load from the cron script (`scripts/load_orders.sh`) to an Airflow DAG `orders_nightly` that runs dbt on Snowflake\n\n## Constraints & Preferences\n- Never run `dbt run --full-refresh` against the PROD target; test with the `dev_mk` target\n- Keep DAG files free of top-level Snowflake connections (the scheduler parses them every 30s)\n\n## Progress\n### Done\n- [x] Created `dags/orders_nightly.py`\n- [x] `dbt build --select stg_orders --target dev_mk`: passed\n\n### In Progress\n- [ ] Make `fct_orders` incremental on `updated_at` (`models/marts/fct_orders.sql`)\n\n### Blocked\n- (none)\n\n## Key Decisions\n- Run dbt from a `BashOperator` instead of astronomer-cosmos (no extra dependency in the Airflow image)\n- Schedule `0 3 * * *` (UTC), after the Fivetran sync finishes\n\n## Next Steps\n1. `dbt build --select fct_orders --target dev_mk`\n2. Add an SLA miss alert to the DAG\n\n## Critical Context\n- Branch: `data/orders-dag`\n- Snowflake warehouse `TRANSFORM_XS`, Airflow 2.9.3";
    let messages = SessionBuilder::new()
        .user("go on with fct_orders")
        .read("models/marts/fct_orders.sql", "{{ config(materialized='table') }}\n\nselect\n    o.order_id,\n    o.customer_id,\n    o.updated_at,\n    o.status,\n    o.amount\nfrom {{ ref('stg_orders') }} o")
        .assistant("Late status changes update old orders, so an append-only incremental would leave stale rows. I'll use `incremental_strategy='merge'` with `unique_key='order_id'` rather than delete+insert, filtering on `updated_at` with a 3-day lookback.")
        .edit("models/marts/fct_orders.sql", "{{ config(materialized='table') }}", "{{ config(\n    materialized='incremental',\n    incremental_strategy='merge',\n    unique_key='order_id'\n) }}")
        .edit("models/marts/fct_orders.sql", "from {{ ref('stg_orders') }} o", "from {{ ref('stg_orders') }} o\n{% if is_incremental() %}\nwhere o.updated_at > (select dateadd(day, -3, max(updated_at)) from {{ this }})\n{% endif %}")
        .bash("dbt compile --select fct_orders --target dev_mk", "03:11:02  Running with dbt=1.8.7\n03:11:03  Registered adapter: snowflake=1.8.4\n03:11:05  Found 41 models, 3 snapshots, 112 data tests, 19 sources, 612 macros\n03:11:05  Concurrency: 4 threads (target='dev_mk')\n03:11:06  Compiled node 'fct_orders' is:\nselect o.order_id, o.customer_id, o.updated_at, o.status, o.amount from DEV_MK.stg_orders o")
        .bash("dbt build --select stg_orders+ --target dev_mk", DBT_ERROR)
        .bash("snowsql -c dev_mk -q \"select order_id, count(*) from DEV_MK.stg_orders group by 1 having count(*) > 1 limit 5\"", "+-----------+----------+\n| ORDER_ID  | COUNT(*) |\n|-----------+----------|\n| ord_88213 |        2 |\n| ord_90117 |        2 |\n| ord_90544 |        3 |\n+-----------+----------+\n3 Row(s) produced. Time Elapsed: 0.412s")
        .assistant("The merge fails because `stg_orders` has several rows per `order_id`: the raw Fivetran table keeps one row per change. I'll deduplicate in `stg_orders` with `qualify row_number() over (partition by order_id order by _fivetran_synced desc) = 1`, keeping the latest version.")
        .edit("models/staging/stg_orders.sql", "from {{ source('shop', 'orders') }}", "from {{ source('shop', 'orders') }}\nqualify row_number() over (partition by order_id order by _fivetran_synced desc) = 1")
        .bash("dbt build --select stg_orders+ --target dev_mk", "03:20:11  Running with dbt=1.8.7\n03:20:15  Concurrency: 4 threads (target='dev_mk')\n03:20:17  1 of 9 OK created sql view model DEV_MK.stg_orders ............................. [SUCCESS 1 in 1.48s]\n03:20:31  3 of 9 OK created sql incremental model DEV_MK.fct_orders ...................... [SUCCESS 48211 in 13.87s]\n03:20:35  Finished running 1 view model, 1 incremental model, 7 data tests in 0 hours 0 minutes and 23.02 seconds (23.02s).\n03:20:35  \n03:20:35  Completed successfully\n03:20:35  \n03:20:35  Done. PASS=9 WARN=0 ERROR=0 SKIP=0 TOTAL=9")
        .bash("dbt build --select fct_orders --target dev_mk", "03:21:40  Running with dbt=1.8.7\n03:21:52  1 of 4 OK created sql incremental model DEV_MK.fct_orders ...................... [SUCCESS 212 in 6.40s]\n03:21:55  Done. PASS=4 WARN=0 ERROR=0 SKIP=0 TOTAL=4")
        .assistant("`fct_orders` is incremental now: the second run merged 212 rows instead of rebuilding 48,211. The duplicate-row error came from `stg_orders`, now deduplicated.")
        .user("good. change of plan on the operator: the platform team baked astronomer-cosmos 1.7.1 into the Airflow image last week, so use cosmos instead of the BashOperator — we get one task per model and retries per model")
        .bash("docker compose exec airflow-scheduler pip show astronomer-cosmos", "Name: astronomer-cosmos\nVersion: 1.7.1\nSummary: Orchestrate your dbt projects in Airflow\nHome-page: https://github.com/astronomer/astronomer-cosmos\nLocation: /home/airflow/.local/lib/python3.11/site-packages\nRequires: aenum, attrs, importlib-metadata, Jinja2, msgpack, packaging, pydantic, virtualenv")
        .read("dags/orders_nightly.py", "from datetime import datetime\n\nfrom airflow import DAG\nfrom airflow.operators.bash import BashOperator\n\nwith DAG(\n    dag_id=\"orders_nightly\",\n    schedule=\"0 3 * * *\",\n    start_date=datetime(2026, 11, 1),\n    catchup=False,\n) as dag:\n    BashOperator(\n        task_id=\"dbt_build_orders\",\n        bash_command=\"cd /opt/dbt/analytics && dbt build --select stg_orders+ --target prod\",\n    )")
        .write("dags/orders_nightly.py", "from datetime import datetime\n\nfrom airflow import DAG\nfrom cosmos import DbtTaskGroup, ProfileConfig, ProjectConfig, RenderConfig\nfrom cosmos.profiles import SnowflakeUserPasswordProfileMapping\n\nprofile_config = ProfileConfig(\n    profile_name=\"analytics\",\n    target_name=\"prod\",\n    profile_mapping=SnowflakeUserPasswordProfileMapping(conn_id=\"snowflake_transform\"),\n)\n\nwith DAG(\n    dag_id=\"orders_nightly\",\n    schedule=\"0 3 * * *\",\n    start_date=datetime(2026, 11, 1),\n    catchup=False,\n) as dag:\n    DbtTaskGroup(\n        group_id=\"orders\",\n        project_config=ProjectConfig(\"/opt/dbt/analytics\"),\n        profile_config=profile_config,\n        render_config=RenderConfig(select=[\"stg_orders+\"]),\n    )\n")
        .bash("docker compose exec airflow-scheduler airflow dags list-import-errors", "filepath                              | error\n======================================+===================================================================\n/opt/airflow/dags/orders_nightly.py   | Traceback (most recent call last):\n                                      |   File \"/home/airflow/.local/lib/python3.11/site-packages/cosmos/converter.py\", line 241, in __init__\n                                      |     self.render()\n                                      | cosmos.dbt.graph.CosmosLoadDbtException: Unable to find the dbt executable: dbt. Please set `execution_config.dbt_executable_path`\n\nCommand exited with code 1")
        .assistant("The dbt CLI lives in its own virtualenv in the image (`/opt/dbt-venv/bin/dbt`), so cosmos can't find `dbt` on the PATH. I'll pass `ExecutionConfig(dbt_executable_path=\"/opt/dbt-venv/bin/dbt\")`.")
        .edit("dags/orders_nightly.py", "        render_config=RenderConfig(select=[\"stg_orders+\"]),", "        render_config=RenderConfig(select=[\"stg_orders+\"]),\n        execution_config=ExecutionConfig(dbt_executable_path=\"/opt/dbt-venv/bin/dbt\"),")
        .edit("dags/orders_nightly.py", "from cosmos import DbtTaskGroup, ProfileConfig, ProjectConfig, RenderConfig", "from cosmos import DbtTaskGroup, ExecutionConfig, ProfileConfig, ProjectConfig, RenderConfig")
        .bash("docker compose exec airflow-scheduler airflow dags list-import-errors", "No data found")
        .bash("docker compose exec airflow-scheduler airflow dags test orders_nightly 2026-11-25", "[2026-11-26T18:40:02.114+0000] {dag.py:4435} INFO - dagrun id: orders_nightly\n[2026-11-26T18:40:02.131+0000] {dag.py:4451} INFO - created dagrun <DagRun orders_nightly @ 2026-11-25T00:00:00+00:00: manual__2026-11-25T00:00:00+00:00, state:running>\n[2026-11-26T18:40:05.882+0000] {taskinstance.py:2905} INFO - Marking task as SUCCESS. dag_id=orders_nightly, task_id=orders.stg_orders_run\n[2026-11-26T18:40:21.407+0000] {taskinstance.py:2905} INFO - Marking task as SUCCESS. dag_id=orders_nightly, task_id=orders.fct_orders_run\n[2026-11-26T18:40:24.990+0000] {taskinstance.py:2905} INFO - Marking task as SUCCESS. dag_id=orders_nightly, task_id=orders.fct_orders_test\n[2026-11-26T18:40:25.002+0000] {dagrun.py:854} INFO - Marking run <DagRun orders_nightly @ 2026-11-25 00:00:00+00:00: manual__2026-11-25T00:00:00+00:00, state:running> successful")
        .bash("git add dags/orders_nightly.py models/ && git commit -m \"orders_nightly: cosmos task group, incremental fct_orders\"", "[data/orders-dag 5f0b2c7d] orders_nightly: cosmos task group, incremental fct_orders\n 3 files changed, 38 insertions(+), 14 deletions(-)")
        .assistant("Switched the DAG to a cosmos `DbtTaskGroup` (one task per model), with `dbt_executable_path` pointing at the image's dbt venv; `airflow dags test` passes. Committed `5f0b2c7d` on `data/orders-dag`. The SLA alert is still to do.")
        .build();
    Case {
        name: "airflow dbt update, ctxkit earlier summary (held out, 10th set)",
        messages,
        previous: Some(previous.to_owned()),
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("constraint: no full refresh on prod", &["full-refresh"]),
            fact(
                "constraint: no top-level connections in DAG files",
                &["top-level"],
            ),
            fact("incremental fct_orders finished", &["fct_orders"]),
            fact(
                "decision: merge on order_id",
                &["incremental_strategy", "unique_key"],
            ),
            fact("the new error", &["Duplicate row detected", "42P18"]),
            fact(
                "its fix: deduplicate stg_orders",
                &["qualify", "row_number"],
            ),
            fact("dbt test target", &["dev_mk"]),
            fact(
                "reverted: cosmos instead of BashOperator",
                &["cosmos", "DbtTaskGroup"],
            ),
            fact("cosmos version", &["1.7.1"]),
            fact(
                "cosmos import error and fix",
                &["dbt_executable_path", "/opt/dbt-venv/bin/dbt"],
            ),
            fact("DAG file", &["dags/orders_nightly.py"]),
            fact("DAG test command", &["airflow dags test"]),
            fact("branch", &["data/orders-dag"]),
            fact("commit", &["5f0b2c7d"]),
            fact("schedule", &["0 3 * * *"]),
            fact("still open: SLA alert", &["SLA"]),
        ],
    }
}

/// A Laravel app in Spanish: a date validation with a missing column (a new migration, under the
/// rule not to change existing ones), a validation message the user changes their mind about, a
/// commit, a framework upgrade and a PR still being opened.
fn laravel_reservas_spanish() -> Case {
    let messages = SessionBuilder::new()
        .user("Hola. El endpoint POST /api/reservas acepta reservas con la fecha de fin anterior a la de inicio. Hay que validarlo. Importante: no modifiques las migraciones existentes, si hace falta un cambio en la base de datos crea una migración nueva.")
        .bash("php artisan route:list --path=api/reservas", "\n  GET|HEAD   api/reservas ............ reservas.index › Api\\ReservaController@index\n  POST       api/reservas ............ reservas.store › Api\\ReservaController@store\n  GET|HEAD   api/reservas/{reserva} .... reservas.show › Api\\ReservaController@show\n  PUT|PATCH  api/reservas/{reserva} .... reservas.update › Api\\ReservaController@update\n  DELETE     api/reservas/{reserva} .... reservas.destroy › Api\\ReservaController@destroy\n\n                                                            Showing [5] routes\n")
        .read("app/Http/Requests/StoreReservaRequest.php", "<?php\n\nnamespace App\\Http\\Requests;\n\nuse Illuminate\\Foundation\\Http\\FormRequest;\n\nclass StoreReservaRequest extends FormRequest\n{\n    public function rules(): array\n    {\n        return [\n            'sala_id' => ['required', 'exists:salas,id'],\n            'fecha_inicio' => ['required', 'date'],\n            'duracion_min' => ['required', 'integer', 'min:15'],\n        ];\n    }\n}")
        .bash("ls database/migrations | tail -5", "2026_03_02_091200_create_salas_table.php\n2026_03_02_091300_create_reservas_table.php\n2026_05_19_140000_add_notas_to_reservas_table.php\n2026_09_08_110500_create_personal_access_tokens_table.php\n2026_10_14_083000_add_cancelada_to_reservas_table.php")
        .assistant("The request has no end date: the table stores `duracion_min`. I'll add `fecha_fin` with `after:fecha_inicio` to the rules.")
        .edit("app/Http/Requests/StoreReservaRequest.php", "            'duracion_min' => ['required', 'integer', 'min:15'],", "            'fecha_fin' => ['required', 'date', 'after:fecha_inicio'],")
        .write("tests/Feature/ReservaFechasTest.php", "<?php\n\nuse App\\Models\\Sala;\nuse App\\Models\\User;\n\nit('rechaza una fecha de fin anterior a la de inicio', function () {\n    $this->actingAs(User::factory()->create())\n        ->postJson('/api/reservas', [\n            'sala_id' => Sala::factory()->create()->id,\n            'fecha_inicio' => '2026-12-01 10:00',\n            'fecha_fin' => '2026-12-01 09:00',\n        ])->assertStatus(422)->assertJsonValidationErrors('fecha_fin');\n});\n\nit('acepta una reserva válida', function () {\n    $this->actingAs(User::factory()->create())\n        ->postJson('/api/reservas', [\n            'sala_id' => Sala::factory()->create()->id,\n            'fecha_inicio' => '2026-12-01 10:00',\n            'fecha_fin' => '2026-12-01 11:30',\n        ])->assertCreated();\n});\n")
        .bash("php artisan test --filter=ReservaFechasTest", "\n   PASS  Tests\\Feature\\ReservaFechasTest\n  ✓ rechaza una fecha de fin anterior a la de inicio                    0.41s\n\n   FAIL  Tests\\Feature\\ReservaFechasTest\n  ⨯ acepta una reserva válida                                           0.08s\n  ───────────────────────────────────────────────────────────────────────────\n   FAILED  Tests\\Feature\\ReservaFechasTest > acepta una reserva válida\n  Expected response status code [201] but received 500.\n\nThe following exception occurred during the last request:\n\nIlluminate\\Database\\QueryException: SQLSTATE[42S22]: Column not found: 1054 Unknown column 'fecha_fin' in 'field list' (Connection: mysql, SQL: insert into `reservas` (`sala_id`, `fecha_inicio`, `fecha_fin`, `user_id`, `updated_at`, `created_at`) values (1, 2026-12-01 10:00, 2026-12-01 11:30, 1, 2026-11-26 18:41:07, 2026-11-26 18:41:07)) in /var/www/vendor/laravel/framework/src/Illuminate/Database/Connection.php:825\n\n  Tests:    1 failed, 1 passed (3 assertions)\n  Duration: 0.71s\n\n\nCommand exited with code 1")
        .assistant("The `reservas` table has no `fecha_fin` column. Following your rule I won't touch `create_reservas_table`; I'll add a new migration with a nullable `fecha_fin` and fill it from `fecha_inicio + duracion_min` for existing rows.")
        .bash("php artisan make:migration add_fecha_fin_to_reservas_table --table=reservas", "\n   INFO  Migration [database/migrations/2026_11_26_184210_add_fecha_fin_to_reservas_table.php] created successfully.\n")
        .edit("database/migrations/2026_11_26_184210_add_fecha_fin_to_reservas_table.php", "        Schema::table('reservas', function (Blueprint $table) {\n            //\n        });", "        Schema::table('reservas', function (Blueprint $table) {\n            $table->dateTime('fecha_fin')->nullable()->after('fecha_inicio');\n        });\n        DB::statement('update reservas set fecha_fin = date_add(fecha_inicio, interval duracion_min minute)');")
        .bash("php artisan migrate", "\n   INFO  Running migrations.\n\n  2026_11_26_184210_add_fecha_fin_to_reservas_table ......................... 38.12ms DONE\n")
        .edit("app/Models/Reserva.php", "protected $fillable = ['sala_id', 'fecha_inicio', 'duracion_min', 'user_id'];", "protected $fillable = ['sala_id', 'fecha_inicio', 'fecha_fin', 'duracion_min', 'user_id'];")
        .bash("php artisan test --filter=ReservaFechasTest", "\n   PASS  Tests\\Feature\\ReservaFechasTest\n  ✓ rechaza una fecha de fin anterior a la de inicio                    0.38s\n  ✓ acepta una reserva válida                                           0.07s\n\n  Tests:    2 passed (5 assertions)\n  Duration: 0.62s\n")
        .user("Perfecto. El mensaje de error que sale es el genérico en inglés, \"The fecha fin field must be a date after fecha inicio.\" Ponlo en inglés pero más claro: \"The end date must be after the start date.\"")
        .edit("app/Http/Requests/StoreReservaRequest.php", "    public function rules(): array", "    public function messages(): array\n    {\n        return ['fecha_fin.after' => 'The end date must be after the start date.'];\n    }\n\n    public function rules(): array")
        .user("Espera, mejor no. La app está en español para los clientes: el mensaje tiene que ir en lang/es/validation.php, \"La fecha de fin debe ser posterior a la fecha de inicio.\", y quita el messages() del request.")
        .edit("app/Http/Requests/StoreReservaRequest.php", "    public function messages(): array\n    {\n        return ['fecha_fin.after' => 'The end date must be after the start date.'];\n    }\n\n", "")
        .edit("lang/es/validation.php", "    'custom' => [\n", "    'custom' => [\n        'fecha_fin' => [\n            'after' => 'La fecha de fin debe ser posterior a la fecha de inicio.',\n        ],\n")
        .bash("php artisan test", "\n   PASS  Tests\\Unit\\SalaTest\n  ✓ calcula la capacidad disponible                                   0.02s\n\n   PASS  Tests\\Feature\\ReservaFechasTest\n  ✓ rechaza una fecha de fin anterior a la de inicio                    0.36s\n  ✓ acepta una reserva válida                                           0.07s\n\n   PASS  Tests\\Feature\\ReservaTest\n  ✓ lista las reservas del usuario                                      0.12s\n  ✓ no deja ver reservas ajenas                                         0.05s\n  ✓ cancela una reserva                                                 0.06s\n\n  Tests:    17 passed (52 assertions)\n  Duration: 1.94s\n")
        .bash("git checkout -b fix/validacion-fechas && git add -A && git commit -m \"Validar que fecha_fin sea posterior a fecha_inicio\"", "Switched to a new branch 'fix/validacion-fechas'\n[fix/validacion-fechas 3e8a1d9f] Validar que fecha_fin sea posterior a fecha_inicio\n 5 files changed, 64 insertions(+), 1 deletion(-)\n create mode 100644 database/migrations/2026_11_26_184210_add_fecha_fin_to_reservas_table.php\n create mode 100644 tests/Feature/ReservaFechasTest.php")
        .assistant("Hecho: `fecha_fin` se valida con `after:fecha_inicio`, la columna llega con una migración nueva y el mensaje está en `lang/es/validation.php`. Los 17 tests pasan. Commit `3e8a1d9f` en `fix/validacion-fechas`.")
        .user("Ya que estamos, sube laravel/framework a la 11.31 en esta rama, seguridad nos lo pidió. Luego abre el PR contra develop.")
        .bash("composer require laravel/framework:^11.31 --with-all-dependencies", "./composer.json has been updated\nRunning composer update laravel/framework --with-all-dependencies\nLoading composer repositories with package information\nUpdating dependencies\nLock file operations: 0 installs, 6 updates, 0 removals\n  - Upgrading laravel/framework (v11.9.2 => v11.31.0)\n  - Upgrading laravel/prompts (v0.1.24 => v0.3.2)\n  - Upgrading nesbot/carbon (3.5.0 => 3.8.2)\n  - Upgrading symfony/console (v7.1.1 => v7.1.8)\n  - Upgrading symfony/http-foundation (v7.1.1 => v7.1.8)\n  - Upgrading symfony/http-kernel (v7.1.1 => v7.1.8)\nWriting lock file\nInstalling dependencies from lock file (including require-dev)\nPackage operations: 0 installs, 6 updates, 0 removals\nGenerating optimized autoload files\n> Illuminate\\Foundation\\ComposerScripts::postAutoloadDump\n> @php artisan package:discover --ansi\n\n   INFO  Discovering packages.\n\n  laravel/sanctum ................................................ DONE\n  laravel/tinker ................................................. DONE\n  nunomaduro/collision ........................................... DONE\n  nunomaduro/termwind ............................................ DONE\n\n92 packages you are using are looking for funding.\nUse the `composer fund` command to find out more!\nNo security vulnerability advisories found.")
        .bash("php artisan --version && php artisan test --compact", "Laravel Framework 11.31.0\n\n  .................\n\n  Tests:    17 passed (52 assertions)\n  Duration: 2.03s\n")
        .bash("git commit -am \"Actualizar laravel/framework a 11.31.0\" && git push -u origin fix/validacion-fechas", "[fix/validacion-fechas 9b27c4e1] Actualizar laravel/framework a 11.31.0\n 2 files changed, 96 insertions(+), 96 deletions(-)\nTo github.com:reservas-sl/reservas-api.git\n * [new branch]      fix/validacion-fechas -> fix/validacion-fechas")
        .tool("bash", json!({"command": "gh pr create --base develop --title \"Validación de fechas y Laravel 11.31\" --fill"}), None)
        .build();
    Case {
        name: "laravel reservas, in Spanish (held out, 10th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("endpoint", &["/api/reservas"]),
            fact(
                "constraint: existing migrations untouched",
                &[
                    "migraciones existentes",
                    "existing migrations",
                    "migración nueva",
                ],
            ),
            fact("request file", &["StoreReservaRequest"]),
            fact("the rule", &["after:fecha_inicio"]),
            fact("the error", &["Unknown column 'fecha_fin'", "42S22"]),
            fact("new migration", &["add_fecha_fin_to_reservas_table"]),
            fact("test command", &["php artisan test"]),
            fact(
                "changed mind: Spanish message in the lang file",
                &["lang/es/validation.php", "posterior a la fecha de inicio"],
            ),
            fact("branch", &["fix/validacion-fechas"]),
            fact("validation commit", &["3e8a1d9f"]),
            fact("framework version", &["11.31"]),
            fact("upgrade commit", &["9b27c4e1"]),
            fact(
                "pending: PR against develop",
                &["--base develop", "contra develop", "against develop"],
            ),
        ],
    }
}

const TWIGGY: &str = " Shallow Bytes │ Shallow % │ Item\n───────────────┼───────────┼──────────────────────────────────────────────────────────\n        241733 ┊    12.84% ┊ data[0]\n        118204 ┊     6.28% ┊ core::fmt::write::h3c9a0e7d1f4b5a21\n         96512 ┊     5.13% ┊ serde_json::de::Deserializer<R>::parse_any::h81ad\n         77340 ┊     4.11% ┊ editor_core::parse::Parser::parse_block::h02ce\n         61288 ┊     3.26% ┊ dlmalloc::dlmalloc::Dlmalloc<A>::malloc::h9f1e\n         58004 ┊     3.08% ┊ <editor_core::ast::Node as serde::Deserialize>::deserialize::h55a0\n         44120 ┊     2.34% ┊ regex_automata::meta::strategy::new::h7d21\n         39876 ┊     2.12% ┊ core::str::pattern::TwoWaySearcher::next::h4410\n         31022 ┊     1.65% ┊ std::panicking::rust_panic_with_hook::hb0c3\n       1113954 ┊    59.19% ┊ ... and 2981 more.\n       1882013 ┊   100.00% ┊ Σ [2990 Total Rows]";

/// A branch summary of an abandoned Rust/WASM bundle-size experiment: measured sizes and timings,
/// a dependency swap that did not compile, an allocator the user first asked for and then ruled
/// out, and the reason the branch was dropped.
fn wasm_size_branch() -> Case {
    let mut messages = SessionBuilder::new()
        .user("On branch perf/wasm-size: editor_core_bg.wasm is 1.84 MB (612 KB gzipped) and mobile users wait for it. Get it under 400 KB gzipped. Parsing must stay fast: the 5 MB document has to parse in under 250 ms in Chrome, that's our perf budget.")
        .build();
    messages.extend(parallel_turn(
        |index| format!("par_wasm_{index}"),
        "Measuring where the bytes are and the current build setup.",
        &[
            ("bash", json!({"command": "twiggy top -n 10 pkg/editor_core_bg.wasm"}), TWIGGY),
            ("read", json!({"path": "Cargo.toml"}), "[package]\nname = \"editor_core\"\nversion = \"0.14.0\"\nedition = \"2021\"\n\n[lib]\ncrate-type = [\"cdylib\", \"rlib\"]\n\n[dependencies]\nwasm-bindgen = \"0.2.95\"\nserde = { version = \"1\", features = [\"derive\"] }\nserde_json = \"1\"\nregex = \"1.11\"\n\n[profile.release]\nopt-level = 3\n"),
            ("bash", json!({"command": "ls -la pkg/ && gzip -9 -c pkg/editor_core_bg.wasm | wc -c"}), "total 2216\ndrwxr-xr-x  2 dev dev    4096 Nov 26 17:02 .\ndrwxr-xr-x 11 dev dev    4096 Nov 26 17:02 ..\n-rw-r--r--  1 dev dev    1180 Nov 26 17:02 editor_core.d.ts\n-rw-r--r--  1 dev dev   21944 Nov 26 17:02 editor_core.js\n-rw-r--r--  1 dev dev 1882013 Nov 26 17:02 editor_core_bg.wasm\n-rw-r--r--  1 dev dev     398 Nov 26 17:02 package.json\n626688"),
        ],
    ));
    messages.extend(SessionBuilder::new()
        .assistant("Baseline: 1,882,013 bytes, 612 KB gzipped. The biggest items are the data section, `core::fmt` (118 KB — panics and `format!`), serde_json's deserializer and regex. First the release profile: size-optimised code, LTO, one codegen unit, abort on panic.")
        .edit("Cargo.toml", "[profile.release]\nopt-level = 3\n", "[profile.release]\nopt-level = \"z\"\nlto = true\ncodegen-units = 1\npanic = \"abort\"\n")
        .bash("wasm-pack build --release --target web 2>&1 | tail -3 && gzip -9 -c pkg/editor_core_bg.wasm | wc -c && ls -l pkg/editor_core_bg.wasm", "[INFO]: :-) Done in 1m 48s\n[INFO]: :-) Your wasm pkg is ready to publish at /home/dev/editor/pkg.\n441344\n-rw-r--r-- 1 dev dev 1268730 Nov 26 17:21 pkg/editor_core_bg.wasm")
        .bash("wasm-opt -Oz --strip-debug pkg/editor_core_bg.wasm -o pkg/editor_core_bg.wasm && gzip -9 -c pkg/editor_core_bg.wasm | wc -c && ls -l pkg/editor_core_bg.wasm", "398336\n-rw-r--r-- 1 dev dev 1069412 Nov 26 17:23 pkg/editor_core_bg.wasm")
        .assistant("Profile alone: 1.27 MB, 431 KB gzipped. With `wasm-opt -Oz` on top: 1.07 MB, 389 KB gzipped — under the 400 KB target. Now the parse timing.")
        .bash("npm run bench:parse -- --browser chrome --doc fixtures/large-5mb.md", "> editor@3.2.0 bench:parse\n> node scripts/bench-parse.mjs --browser chrome --doc fixtures/large-5mb.md\n\nlaunching chrome 131.0.6778.85 (headless)\nwarmup 3 runs ...\nparse large-5mb.md  runs=20  mean=293.4ms  p50=291.0ms  p95=307.8ms  min=286.2ms\nbaseline (main)     runs=20  mean=212.1ms  p50=210.7ms  p95=221.3ms  min=207.9ms\nregression: +38.3%")
        .assistant("Parsing went from 212 ms to 293 ms (+38%), over the 250 ms budget: `opt-level = \"z\"` stops inlining in the parser's hot loop. Trying `opt-level = \"s\"` for a middle ground.")
        .edit("Cargo.toml", "opt-level = \"z\"", "opt-level = \"s\"")
        .bash("wasm-pack build --release --target web 2>&1 | tail -1 && wasm-opt -Os pkg/editor_core_bg.wasm -o pkg/editor_core_bg.wasm && gzip -9 -c pkg/editor_core_bg.wasm | wc -c && npm run bench:parse -- --browser chrome --doc fixtures/large-5mb.md 2>&1 | grep -E 'parse|regression'", "[INFO]: :-) Your wasm pkg is ready to publish at /home/dev/editor/pkg.\n421888\nparse large-5mb.md  runs=20  mean=261.7ms  p50=259.9ms  p95=270.2ms  min=255.0ms\nregression: +23.4%")
        .assistant("`opt-level = \"s\"`: 412 KB gzipped and 262 ms — misses both limits. The other lever is dependencies: serde_json's deserializer is 96 KB; miniserde is much smaller.")
        .edit("Cargo.toml", "serde_json = \"1\"", "miniserde = \"0.1\"")
        .bash("cargo build --release --target wasm32-unknown-unknown 2>&1 | head -20", "   Compiling miniserde v0.1.40\n   Compiling editor_core v0.14.0 (/home/dev/editor)\nerror[E0277]: the trait bound `Node: miniserde::Deserialize` is not satisfied\n   --> src/ast.rs:12:10\n    |\n12  | #[derive(Deserialize)]\n    |          ^^^^^^^^^^^ the trait `miniserde::Deserialize` is not implemented for `Node`\n    |\nnote: miniserde derives do not support enums with data; `Node::Heading(u8, Vec<Inline>)` is a tuple variant\n    = note: this error originates in the derive macro `Deserialize`\n\nerror: could not compile `editor_core` (lib) due to 14 previous errors\n\nCommand exited with code 101")
        .assistant("miniserde cannot derive for `Node`'s tuple variants; porting the AST to it would mean rewriting 14 types by hand. Reverting that. Next idea: swap dlmalloc (61 KB) for wee_alloc.")
        .edit("Cargo.toml", "miniserde = \"0.1\"", "serde_json = \"1\"")
        .user("try wee_alloc then")
        .edit("Cargo.toml", "regex = \"1.11\"", "regex = \"1.11\"\nwee_alloc = \"0.4\"")
        .user("no wait — wee_alloc is unmaintained and has a known leak, security flagged it in another project. Don't use it.")
        .edit("Cargo.toml", "regex = \"1.11\"\nwee_alloc = \"0.4\"", "regex = \"1.11\"")
        .bash("curl -sI -H 'Accept-Encoding: br' https://cdn.example-editor.app/v3.2.0/editor_core_bg.wasm | grep -i -E 'content-(length|encoding)'", "content-encoding: br\ncontent-length: 305152")
        .assistant("Removed wee_alloc. One more data point: the CDN already serves the unchanged main build with brotli at 298 KB (305,152 bytes) — smaller than any gzip size we reached on this branch, with no parse cost.")
        .user("ok then this isn't worth it. brotli on the CDN already gets us there and we can't take a parse regression. drop the branch, keep notes of the numbers for later.")
        .bash("git checkout Cargo.toml && git status --short && git checkout main", "Switched to branch 'main'\nYour branch is up to date with 'origin/main'.")
        .assistant("Dropped `perf/wasm-size`; back on `main` with nothing changed. Numbers: baseline 612 KB gz; `opt-level=\"z\"`+LTO 431 KB; plus `wasm-opt -Oz` 389 KB but parse 293 ms (+38%); `opt-level=\"s\"` 412 KB / 262 ms; miniserde does not compile; wee_alloc ruled out; CDN brotli 298 KB.")
        .build());
    Case {
        name: "wasm bundle size, abandoned branch (held out, 10th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::Branch,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("branch", &["perf/wasm-size"]),
            fact("target under 400 KB gzipped", &["400 KB", "400kb"]),
            fact("perf budget 250 ms", &["250 ms", "250ms"]),
            fact("baseline 612 KB gzipped", &["612"]),
            fact("release profile tried", &["opt-level"]),
            fact("size after profile", &["431"]),
            fact("wasm-opt step", &["wasm-opt -Oz", "wasm-opt"]),
            fact("size after wasm-opt", &["389"]),
            fact("parse regression 212 → 293 ms", &["293"]),
            fact("opt-level s middle ground", &["262", "412"]),
            fact("miniserde did not compile", &["miniserde"]),
            fact("wee_alloc ruled out", &["wee_alloc"]),
            fact("why dropped: CDN brotli", &["brotli"]),
        ],
    }
}
