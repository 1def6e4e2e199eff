//! How a run's outcome, its error line, its kind of step and its measurement are read, and how an
//! earlier summary's placeholders and finished steps are carried: unit rules and small requests.

use super::commands::{created_files, failure_line, is_step, measurement, naming_score};
use super::tests::{request, section};
use super::*;

#[test]
fn zero_counts_in_any_spelling_are_not_failures() {
    for line in [
        "Done. PASS=3 WARN=0 ERROR=0 SKIP=0 TOTAL=3",
        "Passed!  - Failed:     0, Passed:   412, Skipped:     0, Total:   412",
        "Tests run: 48, Failures: 0, Errors: 0, Skipped: 2",
        "lint finished, errors: 0, warnings: 3",
        "12 passed, 0 failed",
    ] {
        assert!(!errors::is_error_line(line), "{line}");
    }
    for line in [
        "Done. PASS=2 WARN=0 ERROR=1 SKIP=0 TOTAL=3",
        "error: 0 is not a valid port",
    ] {
        assert!(errors::is_error_line(line), "{line}");
    }
}

#[test]
fn a_run_reporting_no_errors_passes() {
    let conversation = "[User]: build the orders model\n\n\
        [Assistant tool calls]: bash(command=\"dbt build --select orders\")\n\n\
        [Tool result]: 1 of 2 OK created sql table model dev.orders ... [CREATE TABLE in 3.1s]\n\n\
        Done. PASS=2 WARN=0 ERROR=0 SKIP=0 TOTAL=2";
    let summary = summarize_offline(&request(conversation, None, 2_000));
    assert!(
        section(&summary, "### Done").contains("`dbt build --select orders`: passed"),
        "{summary}"
    );
    assert!(
        section(&summary, "### Blocked").contains("(none)"),
        "{summary}"
    );
    assert!(!summary.contains("Last error"), "{summary}");
}

#[test]
fn the_error_itself_wins_over_a_build_banner() {
    let msbuild = "src/Shop/Cart.cs(12,9): error CS0246: The type or namespace name 'Money' could not be found [src/Shop/Shop.csproj]\n\nBuild FAILED.\n    0 Warning(s)\n    1 Error(s)";
    assert!(commands::error_line(msbuild).is_some_and(|line| line.contains("CS0246")));
    let ninja = "FAILED: lib/CMakeFiles/codec.dir/frame.cpp.o\n/home/dev/codec/lib/frame.cpp:31:5: error: 'optional' is not a member of 'std'\nninja: build stopped: subcommand failed.";
    assert!(commands::error_line(ninja).is_some_and(|line| line.contains("frame.cpp:31:5")));
    let make = "gcc -c util.c\nutil.c:7:3: error: implicit declaration of function 'strlcpy'\nmake: *** [Makefile:12: util.o] Error 1";
    assert!(commands::error_line(make).is_some_and(|line| line.contains("strlcpy")));
    let npm = "npm ERR! code 1\nnpm ERR! path /w/app\nsrc/app.ts(4,7): error TS2322: Type 'string' is not assignable to type 'number'.";
    assert!(commands::error_line(npm).is_some_and(|line| line.contains("TS2322")));
    // A banner alone is still the failure.
    assert_eq!(commands::error_line("Build FAILED."), Some("Build FAILED."));
    for banner in [
        "Build FAILED.",
        "FAILED: lib/CMakeFiles/codec.dir/frame.cpp.o",
        "make: *** [Makefile:12: util.o] Error 1",
        "npm ERR! code 1",
        "> Task :api:compileKotlin FAILED",
        "BUILD FAILED in 14s",
        "FAILURE: Build failed with an exception.",
        "Execution failed for task ':api:compileKotlin'.",
        "x Build failed in 3.12s",
    ] {
        assert!(errors::is_generic_banner(banner), "{banner}");
    }
    for named in [
        "FAILED tests/test_cart.py::test_total - AssertionError: 3 != 2",
        "--- FAIL: TestTotal (0.00s)",
        "FAIL src/a.test.ts > cart > totals",
    ] {
        assert!(!errors::is_generic_banner(named), "{named}");
    }
}

#[test]
fn a_benchmark_is_measured_by_its_mean_not_its_spread() {
    let output = "Benchmark            Time      CPU   Iterations\n\
        BM_Encode/64_mean     912 ns   910 ns   5\n\
        BM_Encode/64_median   905 ns   903 ns   5\n\
        BM_Encode/64_stddev  12.4 ns  12.1 ns   5\n\
        BM_Encode/64_cv       1.36 %   1.33 %   5";
    let measured = commands::measurement(output).unwrap_or_default();
    assert!(
        measured.starts_with("BM_Encode/64_median 905 ns"),
        "{measured}"
    );
}

#[test]
fn placeholders_of_an_earlier_summary_are_not_items_and_finished_steps_leave_next_steps() {
    let previous = "## Goal\nShip 1.8.2 of the exporter.\n\n## Progress\n### Done\n- [x] Fixed the retry loop\n\n### Blocked\n- n/a\n- TBD\n\n## Next Steps\n1. Changelog entry for 1.8.2\n2. Open the release PR\n3. Then the S3 multipart upload\n\n## Critical Context\n- None.";
    let conversation = "[User]: continue\n\n\
        [Assistant tool calls]: edit(path=\"CHANGELOG.md\", edits=[{\"oldText\":\"a\",\"newText\":\"b\"}])\n\n\
        [Tool result]: Successfully replaced text in CHANGELOG.md.\n\n\
        [Assistant tool calls]: bash(command=\"git commit -am \\\"changelog for 1.8.2\\\"\")\n\n\
        [Tool result]: [release/1.8 5d1e0a7c] changelog for 1.8.2\n 1 file changed\n\n\
        [Assistant tool calls]: bash(command=\"gh pr create --base release/1.8 --fill\")\n\n\
        [Tool result]: https://example.com/acme/exporter/pull/77";
    let summary = summarize_offline(&request(conversation, Some(previous), 2_000));
    let next = section(&summary, "## Next Steps");
    assert!(!next.contains("Changelog entry"), "{summary}");
    assert!(!next.contains("release PR"), "{summary}");
    assert!(next.contains("S3 multipart upload"), "{summary}");
    let blocked = section(&summary, "### Blocked");
    assert!(
        !blocked.contains("n/a") && !blocked.contains("TBD"),
        "{summary}"
    );
    assert!(
        !section(&summary, "## Critical Context").contains("None."),
        "{summary}"
    );
}

#[test]
fn a_commit_tells_an_item_only_with_its_version() {
    assert!(merge::finished(
        "Release notes for 2.3.4",
        &[],
        &["2.3.4 release notes and version".to_owned()]
    ));
    assert!(!merge::finished(
        "Release notes for 2.4.0",
        &[],
        &["2.3.4 release notes and version".to_owned()]
    ));
    // Without a version, half of the item's words: a commit removing files does not tell that
    // their imports were updated.
    assert!(!merge::told_by_own_line(
        "Update all imports in both the old (`app.ts`, `view-renderer.ts`) and new (`app-next.ts`, `shell-mode.ts`) files",
        &[],
        &["Remove old files (app.ts, view-renderer.ts), rename new files".to_owned()]
    ));
    assert!(merge::told_by_own_line(
        "Read per-tenant limits from `config/tenants.toml`",
        &[],
        &["Read per-tenant limits from config/tenants.toml".to_owned()]
    ));
    assert!(!merge::finished(
        "Open the release PR",
        &["gh pr list".to_owned()],
        &[]
    ));
    assert!(merge::finished(
        "Open the release PR",
        &["gh pr create --fill".to_owned()],
        &[]
    ));
}

#[test]
fn steps_are_builds_tests_checks_and_shipping() {
    for step in [
        "cargo test -p core",
        "python manage.py test orders",
        "bundle exec rspec spec/a_spec.rb",
        "npm run test:unit",
        "terraform validate",
        "helm template charts/api | kubeconform -strict",
        "git push -u origin x",
        "git fetch upstream && git rebase upstream/dev",
        "make",
        "npm install zod",
        "./scripts/test.sh --fast",
        "pnpm --filter api test",
        "./gradlew :payments:test",
        "python -m pytest -q",
    ] {
        assert!(is_step(step), "{step}");
    }
    for side in [
        "python manage.py migrate",
        "npm run migrate --workspace services/orders",
        "git add -A && git rebase --continue",
        "cargo generate-lockfile && git add Cargo.lock && git rebase --continue",
        "git checkout -b fix/x",
        "make bench",
        "curl -s localhost:8080/healthz",
        "bin/rails runner 'puts Client.timeout'",
        "terraform plan -out=tfplan",
        "dotnet run -c Release --project bench/Inventory.Bench",
        "dotnet ef database update --project src/Inventory.Data",
    ] {
        assert!(!is_step(side), "{side}");
    }
}

#[test]
fn finds_measurements_and_created_files() {
    assert_eq!(
        measurement("python bench.py\norders_list: p50 38ms p95 84ms (500 requests)").as_deref(),
        Some("orders_list: p50 38ms p95 84ms (500 requests)")
    );
    assert_eq!(
        measurement("BenchmarkB-2   \t 2481\t 482113 ns/op\nPASS").as_deref(),
        Some("BenchmarkB-2 2481 482113 ns/op")
    );
    assert_eq!(measurement("Applying orders.0012_x... OK\n60"), None);
    assert_eq!(
        measurement("2026/11/26 13:20:01 OK 2026_a.sql (12.4ms)"),
        None
    );
    assert_eq!(measurement("added 28 packages in 4s"), None);
    assert_eq!(
        created_files(
            "Migrations for 'orders':\n  orders/migrations/0012_idx.py\n    - Create index x"
        ),
        ["orders/migrations/0012_idx.py"]
    );
    assert!(created_files("Applying orders.0012_x.py... OK").is_empty());
}

#[test]
fn a_failing_test_and_its_message_are_joined() {
    let output =
        "FAIL src/a.test.ts > loads\nAssertionError: expected 'a' to be 'b'\nTests: 1 failed";
    assert_eq!(
        failure_line(output).as_deref(),
        Some("FAIL src/a.test.ts > loads — AssertionError: expected 'a' to be 'b'")
    );
    assert_eq!(
        failure_line("error[E0308]: mismatched types\n --> src/a.rs:3:5").as_deref(),
        Some("error[E0308]: mismatched types")
    );
}

#[test]
fn summary_lines_name_less_than_the_line_naming_the_field() {
    let field = "a.yaml - Deployment x is invalid: jsonschema: '/spec/replicas' does not validate";
    let summary = "Summary: 4 resources found parsing stdin - Valid: 3, Invalid: 1";
    assert!(naming_score(field) > naming_score(summary));
    assert!(
        naming_score("FAIL: test_filters_by_month (orders.tests.T)")
            > naming_score("AssertionError: 3 != 2")
    );
}

#[test]
fn a_python_traceback_fails_with_its_exception_line() {
    let output = "loaded 3 files\nTraceback (most recent call last):\n  File \"/srv/app/load.py\", line 12, in <module>\n    main()\n  File \"/srv/app/load.py\", line 9, in main\n    frame = merge(parts)\nmyproject.errors.SchemaMismatch: column 'zip' changed type:\nzip: int32\nvs\nzip: string\n\nCommand exited with code 1";
    assert_eq!(
        commands::error_line(output),
        Some("myproject.errors.SchemaMismatch: column 'zip' changed type:")
    );
    assert_eq!(
        failure_line(output).as_deref(),
        Some("myproject.errors.SchemaMismatch: column 'zip' changed type:")
    );
    // Of chained tracebacks, the last exception; a bare exception name counts too.
    let chained = "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n    x = d['k']\nKeyError: 'k'\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"a.py\", line 5, in <module>\n    raise Stop\nStopIteration";
    assert_eq!(errors::traceback_exception(chained), Some("StopIteration"));
    // A cut-off traceback still fails with its heading.
    let cut = "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>";
    assert_eq!(errors::traceback_exception(cut), None);
    assert_eq!(
        commands::error_line(cut),
        Some("Traceback (most recent call last):")
    );
}

#[test]
fn a_compiler_error_at_an_absolute_path_in_parentheses_beats_the_banner() {
    let output = "  Restored /w/Shop.csproj\n/w/src/Shop/Cart.cs(21,14): warning CS0168: The variable 'ex' is declared but never used [/w/Shop.csproj]\n/w/src/Shop/Cart.cs(40,9): error CS0103: The name 'total' does not exist in the current context [/w/Shop.csproj]\n\nBuild FAILED.\n    1 Warning(s)\n    1 Error(s)";
    assert!(commands::error_line(output).is_some_and(|line| line.contains("CS0103")));
    assert!(errors::is_error_line(
        "/w/src/Shop/Cart.cs(40,9): error CS0103: The name 'total' does not exist"
    ));
    for warning in [
        "/w/src/Shop/Cart.cs(21,14): warning CS0168: The variable 'ex' is declared but never used",
        "src/Shop/Cart.cs(3,1): warning CS8019: Unnecessary using directive, type not found",
    ] {
        assert!(!errors::is_error_line(warning), "{warning}");
    }
}

#[test]
fn a_query_command_is_not_a_step_and_keeps_its_value() {
    for query in [
        "docker image ls app:ci --format '{{.Size}}'",
        "gh run list --branch x",
        "nix path-info -Sh ./result",
    ] {
        assert!(!is_step(query), "{query}");
    }
    for step in [
        "pytest tests/view",
        "nix build .#app && nix path-info -Sh ./result",
    ] {
        assert!(is_step(step), "{step}");
    }
    // What a query showed is kept when the assistant reports it, not otherwise.
    let conversation = "[User]: how big is the image?\n\n\
        [Assistant tool calls]: bash(command=\"docker image ls api:ci --format '{{.Size}}'\")\n\n\
        [Tool result]: 512MB";
    let reported = format!("{conversation}\n\n[Assistant]: The image is 512 MB.");
    let summary = summarize_offline(&request(&reported, None, 2_000));
    assert!(
        section(&summary, "### Done")
            .contains("`docker image ls api:ci --format '{{.Size}}'`: 512MB"),
        "{summary}"
    );
    let unreported = format!("{conversation}\n\n[Assistant]: Checked the image.");
    let summary = summarize_offline(&request(&unreported, None, 2_000));
    assert!(
        !section(&summary, "### Done").contains("512MB"),
        "{summary}"
    );
}

#[test]
fn a_benchmark_table_is_kept_on_one_line() {
    let output = "rows: 1,204\n\n| step | old (ms) | new (ms) |\n|------|---------:|---------:|\n| parse | 310 | 120 |\n| total | 505 | 298 |\n\ndone";
    assert_eq!(
        measurement(output).as_deref(),
        Some("step old (ms) new (ms); parse 310 120; total 505 298")
    );
    // A table of words is not a measurement.
    assert_eq!(
        measurement("| name | owner |\n|---|---|\n| api | team-a |"),
        None
    );
}

/// Steps that simply passed are told on one line; a failure on the way and a measured value keep
/// their own lines.
#[test]
fn steps_that_simply_passed_share_one_line() {
    let conversation = "[User]: tidy the ledger service and open a PR\n\n\
        [Assistant tool calls]: bash(command=\"go build ./...\")\n\n[Tool result]: \n\n\
        [Assistant tool calls]: bash(command=\"go vet ./...\")\n\n[Tool result]: \n\n\
        [Assistant tool calls]: bash(command=\"go test ./...\")\n\n[Tool result]: --- FAIL: TestPost (0.00s)\n    ledger_test.go:31: want 2 got 3\nFAIL\n\nCommand exited with code 1\n\n\
        [Assistant tool calls]: bash(command=\"go test ./...\")\n\n[Tool result]: ok  \tledger\t0.41s\n\n\
        [Assistant tool calls]: bash(command=\"go vet ./...\")\n\n[Tool result]: \n\n\
        [Assistant tool calls]: bash(command=\"gh pr create --fill\")\n\n[Tool result]: https://github.com/acme/ledger/pull/12\n\n\
        [Assistant]: Opened PR #12.";
    let summary = summarize_offline(&request(conversation, None, 2_000));
    let done = section(&summary, "### Done");
    assert!(
        done.contains("- [x] Passed: `go build ./...`, `go vet ./...` (2×), `gh pr create --fill`"),
        "{summary}"
    );
    assert!(
        done.contains("`go test ./...`: passed after 1 failed run(s)"),
        "{summary}"
    );
    assert_eq!(done.matches("go vet").count(), 1, "{summary}");
}

#[test]
fn a_kotlin_compiler_error_beats_the_gradle_banners_around_it() {
    let output = "> Task :core:compileKotlin FAILED\n\
        e: file:///w/core/src/main/kotlin/org/x/Wiring.kt:7:5 Unresolved reference 'RetryPolicy'.\n\
        \n\
        FAILURE: Build failed with an exception.\n\
        \n\
        * What went wrong:\n\
        Execution failed for task ':core:compileKotlin'.\n\
        \n\
        BUILD FAILED in 9s";
    assert_eq!(
        commands::error_line(output),
        Some(
            "e: file:///w/core/src/main/kotlin/org/x/Wiring.kt:7:5 Unresolved reference 'RetryPolicy'."
        )
    );
    assert!(errors::is_error_line(
        "e: /w/src/A.kt: (3, 2): Unresolved reference: Foo"
    ));
    // A warning (`w:`) and a sentence starting with "e:" are not errors.
    assert!(!errors::is_error_line(
        "w: file:///w/src/A.kt:3:2 Parameter 'x' is never used"
    ));
    assert!(!errors::is_error_line("e: the value of the constant"));
    // The Gradle banner alone is still the failure.
    assert_eq!(
        commands::error_line("> Task :core:test FAILED\nBUILD FAILED in 3s"),
        Some("> Task :core:test FAILED")
    );
}

#[test]
fn an_edit_whose_old_text_did_not_match_is_not_an_error() {
    let conversation = "[User]: rename the limit\n\n\
        [Assistant tool calls]: edit(path=\"src/limits.rs\", edits=[{\"oldText\":\"LIMIT\",\"newText\":\"MAX\"}])\n\n\
        [Tool result]: Could not find the exact text in src/limits.rs. The old text must match exactly including all whitespace and newlines.\n\n\
        [Assistant tool calls]: edit(path=\"src/limits.rs\", edits=[{\"oldText\":\"LIMIT: u32\",\"newText\":\"MAX: u32\"}])\n\n\
        [Tool result]: Successfully replaced 1 block(s) in src/limits.rs.\n\n\
        [Assistant tool calls]: edit(path=\"src/missing.rs\", edits=[{\"oldText\":\"a\",\"newText\":\"b\"}])\n\n\
        [Tool result]: Error: EACCES: permission denied, open 'src/missing.rs'";
    let summary = summarize_offline(&request(conversation, None, 2_000));
    assert!(!summary.contains("must match"), "{summary}");
    assert!(!summary.contains("Could not find"), "{summary}");
    // An edit that failed for another reason is still an error.
    assert!(summary.contains("EACCES"), "{summary}");
    assert!(errors::is_edit_mismatch(
        "String to replace not found in file.\nString: fn old()"
    ));
    assert!(!errors::is_edit_mismatch(
        "Error: EACCES: permission denied"
    ));
}

#[test]
fn a_failure_a_longer_command_fixed_keeps_its_error_but_not_its_banner() {
    let conversation = "[User]: create the table\n\n\
        [Assistant tool calls]: bash(command=\"psql -f a.sql\")\n\n\
        [Tool result]: psql:a.sql:3: ERROR:  column \"day\" must be part of the key\n\nCommand exited with code 3\n\n\
        [Assistant tool calls]: bash(command=\"npx bundle\")\n\n\
        [Tool result]: x Build failed in 1.20s\n\nCommand exited with code 1\n\n\
        [Assistant tool calls]: bash(command=\"psql -f a.sql -f b.sql && npx bundle --fix\")\n\n\
        [Tool result]: CREATE TABLE\nbundled\n\n\
        [Assistant tool calls]: bash(command=\"make lint\")\n\n\
        [Tool result]: error: unused import\n\nCommand exited with code 2";
    let summary = summarize_offline(&request(conversation, None, 2_000));
    assert!(
        summary.contains("Earlier error `psql -f a.sql`"),
        "{summary}"
    );
    assert!(!summary.contains("Build failed in"), "{summary}");
}
