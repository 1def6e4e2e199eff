//! The fifth held-out set, written on 2026-11-26 before any summary of it was read, by someone who
//! had not read the summarizer's code and never ran the evaluation or the summarizer on these
//! sessions (`docs/summaries.md`, which also outlines the rules in prose, was read for how the
//! evaluation scores). The fact lists are what an engineer taking over each session would write
//! down, not guesses at what a summarizer keeps. Reported apart from the other held-out sessions.

use ctxkit_compaction::SummaryPurpose;

use super::{Case, SessionBuilder, fact};

pub(super) fn cases() -> Vec<Case> {
    vec![
        phoenix_renewals(),
        dotnet_export_update(),
        python_dedupe_pipeline(),
        nix_flake_branch(),
    ]
}

/// A long Elixir/Phoenix session: loan renewals with a migration constraint stated once at the
/// start, a compile error after a wrong first attempt, a failing then passing test run, credo, a
/// commit, a version bump and a last request nobody answered.
fn phoenix_renewals() -> Case {
    let messages = SessionBuilder::new()
        .user("We need loan renewals in shelf. A member can renew a loan at most twice, each renewal adds 14 days to due_on. Ground rules: never edit a migration that's already in priv/repo/migrations, they're all deployed, add a new one. And the /api/v1 JSON has to stay backward compatible, the mobile app 3.x parses it strictly.")
        .bash("ls lib/shelf lib/shelf_web/controllers", "lib/shelf:\naccounts  accounts.ex  application.ex  catalog  catalog.ex  lending  lending.ex  mailer.ex  repo.ex\n\nlib/shelf_web/controllers:\nerror_json.ex  fallback_controller.ex  loan_controller.ex  loan_json.ex  member_controller.ex  page_controller.ex")
        .read("lib/shelf/lending/loan.ex", "defmodule Shelf.Lending.Loan do\n  use Ecto.Schema\n  import Ecto.Changeset\n\n  schema \"loans\" do\n    field :due_on, :date\n    field :returned_at, :utc_datetime\n    belongs_to :member, Shelf.Accounts.Member\n    belongs_to :copy, Shelf.Catalog.Copy\n    timestamps()\n  end\nend")
        .bash("grep -rn \"due_on\" lib test | head -20", "lib/shelf/lending.ex:31:      due_on: Date.add(today, 21)\nlib/shelf/lending/loan.ex:6:    field :due_on, :date\nlib/shelf_web/controllers/loan_json.ex:12:      due_on: loan.due_on,\ntest/shelf/lending_test.exs:18:      assert loan.due_on == ~D[2026-12-17]")
        .read("lib/shelf/lending.ex", "defmodule Shelf.Lending do\n  alias Shelf.Repo\n  alias Shelf.Lending.Loan\n\n  def checkout(member, copy, today \\\\ Date.utc_today()) do\n    %Loan{}\n    |> Loan.changeset(%{member_id: member.id, copy_id: copy.id, due_on: Date.add(today, 21)})\n    |> Repo.insert()\n  end\nend")
        .bash("ls priv/repo/migrations", "20250302101500_create_members.exs\n20250302101600_create_copies.exs\n20250302101700_create_loans.exs\n20250911083000_add_returned_at_to_loans.exs")
        .thinking("The loans table has no counter. The rule says new migration only. Controller next.")
        .read("lib/shelf_web/controllers/loan_controller.ex", "defmodule ShelfWeb.LoanController do\n  use ShelfWeb, :controller\n  alias Shelf.Lending\n\n  action_fallback ShelfWeb.FallbackController\n\n  def show(conn, %{\"id\" => id}) do\n    loan = Lending.get_loan!(id)\n    render(conn, :show, loan: loan)\n  end\nend")
        .assistant("Plan: a new migration adding `renewal_count` (default 0) to `loans`, a `renew_loan/2` in the `Shelf.Lending` context, and a `POST /api/v1/loans/:id/renew` action. The existing loan JSON keeps exactly its fields, so 3.x clients are unaffected.")
        .bash("mix ecto.gen.migration add_renewal_count_to_loans", "* creating priv/repo/migrations/20261126091500_add_renewal_count_to_loans.exs")
        .write("priv/repo/migrations/20261126091500_add_renewal_count_to_loans.exs", "defmodule Shelf.Repo.Migrations.AddRenewalCountToLoans do\n  use Ecto.Migration\n\n  def change do\n    alter table(:loans) do\n      add :renewal_count, :integer, null: false, default: 0\n    end\n  end\nend\n")
        .edit("lib/shelf/lending/loan.ex", "    field :returned_at, :utc_datetime", "    field :returned_at, :utc_datetime\n    field :renewal_count, :integer, default: 0")
        .edit("lib/shelf_web/controllers/loan_controller.ex", "  def show(conn", "  def renew(conn, %{\"id\" => id}) do\n    loan = Lending.get_loan!(id)\n    new_due = due_date(loan)\n    render(conn, :show, loan: %{loan | due_on: new_due})\n  end\n\n  def show(conn")
        .edit("lib/shelf_web/router.ex", "    resources \"/loans\", LoanController, only: [:show]", "    resources \"/loans\", LoanController, only: [:show]\n    post \"/loans/:id/renew\", LoanController, :renew")
        .bash("mix compile", "Compiling 3 files (.ex)\nerror: undefined function due_date/1 (expected ShelfWeb.LoanController to define such a function or for it to be imported, but none are available)\n│\n 58 │     new_due = due_date(loan)\n│               ^^^^^^^^\n│\n└─ lib/shelf_web/controllers/loan_controller.ex:58:15: ShelfWeb.LoanController.renew/2\n\n== Compilation error in file lib/shelf_web/controllers/loan_controller.ex ==\n** (CompileError) lib/shelf_web/controllers/loan_controller.ex: cannot compile module ShelfWeb.LoanController (errors have been logged)\n\nCommand exited with code 1")
        .assistant("Wrong layer: the controller computed the date itself and never saved it. I'll put the rule in the context as `Lending.renew_loan/2`, which checks the limit and updates `due_on` and `renewal_count` in one changeset, and keep the controller thin.")
        .edit("lib/shelf/lending.ex", "  def checkout(member, copy", "  @max_renewals Application.compile_env(:shelf, :max_renewals, 2)\n\n  def renew_loan(%Loan{renewal_count: count}, _today) when count >= @max_renewals,\n    do: {:error, :renewal_limit_reached}\n\n  def renew_loan(%Loan{} = loan, today) do\n    loan\n    |> Loan.changeset(%{due_on: Date.add(loan.due_on, 14), renewal_count: loan.renewal_count + 1})\n    |> Repo.update()\n  end\n\n  def checkout(member, copy")
        .edit("lib/shelf_web/controllers/loan_controller.ex", "    new_due = due_date(loan)\n    render(conn, :show, loan: %{loan | due_on: new_due})", "    with {:ok, loan} <- Lending.renew_loan(loan, Date.utc_today()) do\n      render(conn, :show, loan: loan)\n    end")
        .edit("lib/shelf_web/controllers/fallback_controller.ex", "  def call(conn, {:error, :not_found}) do", "  def call(conn, {:error, :renewal_limit_reached}) do\n    conn\n    |> put_status(:unprocessable_entity)\n    |> json(%{error: \"renewal_limit_reached\"})\n  end\n\n  def call(conn, {:error, :not_found}) do")
        .bash("mix compile", "Compiling 4 files (.ex)\nGenerated shelf app")
        .write("test/shelf/lending_renewal_test.exs", "defmodule Shelf.LendingRenewalTest do\n  use Shelf.DataCase\n  alias Shelf.Lending\n\n  test \"renew_loan/2 adds 14 days\" do\n    loan = insert(:loan, due_on: ~D[2026-12-01])\n    assert {:ok, %{due_on: ~D[2026-12-15]}} = Lending.renew_loan(loan, ~D[2026-11-26])\n  end\n\n  test \"renew_loan/2 refuses a third renewal\" do\n    loan = insert(:loan)\n    {:ok, _} = Lending.renew_loan(loan, ~D[2026-11-26])\n    {:ok, _} = Lending.renew_loan(loan, ~D[2026-11-26])\n    assert {:error, :renewal_limit_reached} = Lending.renew_loan(loan, ~D[2026-11-26])\n  end\nend\n")
        .bash("mix test test/shelf/lending_renewal_test.exs", "Running ExUnit with seed: 40211, max_cases: 4\n\n  1) test renew_loan/2 refuses a third renewal (Shelf.LendingRenewalTest)\n     test/shelf/lending_renewal_test.exs:22\n     match (=) failed\n     code:  assert {:error, :renewal_limit_reached} = Lending.renew_loan(loan, ~D[2026-11-26])\n     left:  {:error, :renewal_limit_reached}\n     right: {:ok, %Shelf.Lending.Loan{renewal_count: 1}}\n\nFinished in 0.3 seconds (0.00s async, 0.3s sync)\n2 tests, 1 failure\n\nCommand exited with code 1")
        .assistant("The test passes a stale struct: every `renew_loan` call got the original loan with `renewal_count: 0`. The context is right; the test must pass the updated loan along.")
        .edit("test/shelf/lending_renewal_test.exs", "{:ok, _} = Lending.renew_loan(loan, ~D[2026-11-26])\n    {:ok, _} = Lending.renew_loan(loan, ~D[2026-11-26])", "{:ok, loan} = Lending.renew_loan(loan, ~D[2026-11-26])\n    {:ok, loan} = Lending.renew_loan(loan, ~D[2026-11-26])")
        .bash("mix test test/shelf/lending_renewal_test.exs", "Running ExUnit with seed: 40211, max_cases: 4\n\nFinished in 0.3 seconds (0.00s async, 0.3s sync)\n2 tests, 0 failures")
        .user("ok. run the whole suite and credo too")
        .bash("mix test", "Running ExUnit with seed: 912, max_cases: 4\n\n..................................................\nFinished in 2.1 seconds (0.8s async, 1.3s sync)\n50 tests, 0 failures")
        .bash("mix credo --strict", "Checking 61 source files ...\n\n  Code Readability                                                             \n┃ \n┃ [R] → Modules should have a @moduledoc tag.\n┃       test/shelf/lending_renewal_test.exs:1:11 #(Shelf.LendingRenewalTest)\n\nPlease report incorrect results: https://github.com/rrrene/credo/issues\n\nAnalysis took 0.9 seconds (0.05s to load, 0.8s running 55 checks on 61 source files)\n197 mods/funs, found 1 code readability issue.\n\nCommand exited with code 8")
        .edit("test/shelf/lending_renewal_test.exs", "defmodule Shelf.LendingRenewalTest do\n", "defmodule Shelf.LendingRenewalTest do\n  @moduledoc false\n")
        .bash("mix credo --strict", "Checking 61 source files ...\n\nAnalysis took 0.9 seconds (0.05s to load, 0.8s running 55 checks on 61 source files)\n197 mods/funs, found no issues.")
        .user("good, commit on a branch and bump the version, this is a minor release")
        .read("mix.exs", "defmodule Shelf.MixProject do\n  use Mix.Project\n\n  def project do\n    [\n      app: :shelf,\n      version: \"0.14.2\",\n      elixir: \"~> 1.16\",")
        .edit("mix.exs", "version: \"0.14.2\"", "version: \"0.15.0\"")
        .bash("git checkout -b feat/loan-renewals && git add -A && git commit -m \"Loan renewals: at most 2, +14 days each; bump to 0.15.0\"", "Switched to a new branch 'feat/loan-renewals'\n[feat/loan-renewals 3f9c2ab1] Loan renewals: at most 2, +14 days each; bump to 0.15.0\n 9 files changed, 88 insertions(+), 4 deletions(-)\n create mode 100644 priv/repo/migrations/20261126091500_add_renewal_count_to_loans.exs\n create mode 100644 test/shelf/lending_renewal_test.exs")
        .assistant("Committed `3f9c2ab1` on `feat/loan-renewals`: the migration, `Lending.renew_loan/2`, `POST /api/v1/loans/:id/renew` (422 `renewal_limit_reached` past the limit), tests, and the version bump 0.14.2 → 0.15.0. `mix test`: 50 tests, 0 failures; credo clean.")
        .user("add a CHANGELOG.md entry for 0.15.0 and open the PR against develop, not main")
        .build();
    Case {
        name: "phoenix renewals (held out, 5th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "constraint: never edit deployed migrations, add new ones",
                &["edit a migration", "existing migration", "already deployed"],
            ),
            fact(
                "constraint: /api/v1 JSON backward compatible",
                &[
                    "backward compatible",
                    "backwards compatible",
                    "backward-compatible",
                ],
            ),
            fact(
                "rule: at most two renewals",
                &[
                    "at most twice",
                    "at most 2",
                    "max_renewals",
                    "@max_renewals",
                ],
            ),
            fact(
                "the new migration",
                &["add_renewal_count_to_loans", "renewal_count"],
            ),
            fact(
                "the compile error of the first attempt",
                &["undefined function due_date/1", "loan_controller.ex:58"],
            ),
            fact("context function", &["renew_loan"]),
            fact("limit error", &["renewal_limit_reached"]),
            fact("test command", &["mix test"]),
            fact(
                "full suite passed",
                &["0 failures", "mix test` passed", "mix test passed"],
            ),
            fact("lint command", &["mix credo --strict"]),
            fact("branch", &["feat/loan-renewals"]),
            fact("commit", &["3f9c2ab1"]),
            fact("version bump", &["0.15.0"]),
            fact("latest request: changelog", &["changelog"]),
            fact(
                "PR base is develop",
                &[
                    "against develop",
                    "against `develop`",
                    "base develop",
                    "into develop",
                ],
            ),
        ],
    }
}

/// An update of an earlier summary in ctxkit's format on a .NET service: the in-progress item and
/// two of three next steps finished in the new span (one after a compiler error), the third
/// deferred by the user, and a new request finished.
fn dotnet_export_update() -> Case {
    let previous = "_Extractive summary written offline by ctxkit (no model was used)._\n\n## Goal\n- **Latest:** Replace the hand-rolled CSV export in `Reports.Api` with CsvHelper and stream it\n\n## Constraints & Preferences\n- Don't bump the target framework, stay on net8.0\n- Keep the column order of the export exactly as it is (finance imports it into SAP)\n\n## Progress\n### Done\n- [x] Added package `CsvHelper` 33.0.1 to `src/Reports.Api/Reports.Api.csproj`\n- [x] Edited `src/Reports.Api/Export/LedgerExport.cs` (3×)\n\n### In Progress\n- [ ] Stream the response from `ExportController.GetLedger` instead of buffering a `MemoryStream`\n\n### Blocked\n- (none)\n\n## Key Decisions\n- `LedgerRowMap` (a CsvHelper `ClassMap`) fixes the column order, rather than attributes on the DTO\n- Dates written as ISO 8601 (`yyyy-MM-dd`), invariant culture\n\n## Next Steps\n1. Run `dotnet test tests/Reports.Api.Tests`\n2. Add a test that the header row matches `docs/export-columns.md`\n3. Update the PR description (#231)\n\n## Critical Context\n- Branch: `feat/csvhelper-export`\n- PR: #231\n- Build: `dotnet build Reports.sln -warnaserror`";
    let messages = SessionBuilder::new()
        .user("continue")
        .read("src/Reports.Api/Controllers/ExportController.cs", "[HttpGet(\"ledger\")]\npublic async Task<IActionResult> GetLedger([FromQuery] DateOnly from, [FromQuery] DateOnly to, CancellationToken ct)\n{\n    var rows = await _ledger.QueryAsync(from, to, ct);\n    var buffer = new MemoryStream();\n    await LedgerExport.WriteAsync(rows, buffer, ct);\n    buffer.Position = 0;\n    return File(buffer, \"text/csv\", \"ledger.csv\");\n}")
        .edit("src/Reports.Api/Controllers/ExportController.cs", "    var rows = await _ledger.QueryAsync(from, to, ct);\n    var buffer = new MemoryStream();\n    await LedgerExport.WriteAsync(rows, buffer, ct);\n    buffer.Position = 0;\n    return File(buffer, \"text/csv\", \"ledger.csv\");", "    Response.ContentType = \"text/csv\";\n    Response.Headers.ContentDisposition = \"attachment; filename=ledger.csv\";\n    await using var stream = Response.BodyWriterAsync();\n    await LedgerExport.WriteAsync(_ledger.StreamAsync(from, to, ct), stream, ct);\n    return new EmptyResult();")
        .bash("dotnet build Reports.sln -warnaserror", "  Determining projects to restore...\n  All projects are up-to-date for restore.\n/src/src/Reports.Api/Controllers/ExportController.cs(48,31): error CS1061: 'HttpResponse' does not contain a definition for 'BodyWriterAsync' and no accessible extension method 'BodyWriterAsync' accepting a first argument of type 'HttpResponse' could be found (are you missing a using directive or an assembly reference?) [/src/src/Reports.Api/Reports.Api.csproj]\n\nBuild FAILED.\n\n    0 Warning(s)\n    1 Error(s)\n\nCommand exited with code 1")
        .assistant("There is no `BodyWriterAsync`; `Response.Body` is the stream to write to. `LedgerExport.WriteAsync` takes a `Stream`, so I'll pass `Response.Body` rather than wrap `BodyWriter` in a `PipeWriter` adapter.")
        .edit("src/Reports.Api/Controllers/ExportController.cs", "    await using var stream = Response.BodyWriterAsync();\n    await LedgerExport.WriteAsync(_ledger.StreamAsync(from, to, ct), stream, ct);", "    await LedgerExport.WriteAsync(_ledger.StreamAsync(from, to, ct), Response.Body, ct);")
        .bash("dotnet build Reports.sln -warnaserror", "  Reports.Api -> /src/src/Reports.Api/bin/Debug/net8.0/Reports.Api.dll\n  Reports.Api.Tests -> /src/tests/Reports.Api.Tests/bin/Debug/net8.0/Reports.Api.Tests.dll\n\nBuild succeeded.\n    0 Warning(s)\n    0 Error(s)")
        .bash("dotnet test tests/Reports.Api.Tests", "  Determining projects to restore...\nStarting test execution, please wait...\nA total of 1 test files matched the specified pattern.\n\nPassed!  - Failed:     0, Passed:    37, Skipped:     0, Total:    37, Duration: 2 s - Reports.Api.Tests.dll (net8.0)")
        .read("docs/export-columns.md", "| # | Column | Format |\n|---|---|---|\n| 1 | booking_date | yyyy-MM-dd |\n| 2 | account | text |\n| 3 | cost_center | text |\n| 4 | amount | decimal, 2 places |\n| 5 | currency | ISO 4217 |")
        .write("tests/Reports.Api.Tests/Export/HeaderTests.cs", "public class HeaderTests\n{\n    [Fact]\n    public async Task HeaderMatchesDocumentedColumnOrder()\n    {\n        var csv = await ExportFixture.WriteAsync(Array.Empty<LedgerRow>());\n        Assert.Equal(\"booking_date,account,cost_center,amount,currency\", csv.Split('\\n')[0].TrimEnd('\\r'));\n    }\n}\n")
        .bash("dotnet test tests/Reports.Api.Tests", "Passed!  - Failed:     0, Passed:    38, Skipped:     0, Total:    38, Duration: 2 s - Reports.Api.Tests.dll (net8.0)")
        .bash("git add -A && git commit -m \"Stream the ledger export; header order test\"", "[feat/csvhelper-export c7e41d9] Stream the ledger export; header order test\n 2 files changed, 17 insertions(+), 6 deletions(-)\n create mode 100644 tests/Reports.Api.Tests/Export/HeaderTests.cs")
        .user("PR description can wait till tomorrow. More urgent: finance says amounts come out as 1234,50 when the server runs with de-DE. Fix that")
        .read("src/Reports.Api/Export/LedgerRowMap.cs", "public sealed class LedgerRowMap : ClassMap<LedgerRow>\n{\n    public LedgerRowMap()\n    {\n        Map(r => r.BookingDate).Name(\"booking_date\").TypeConverterOption.Format(\"yyyy-MM-dd\");\n        Map(r => r.Account).Name(\"account\");\n        Map(r => r.CostCenter).Name(\"cost_center\");\n        Map(r => r.Amount).Name(\"amount\").TypeConverterOption.Format(\"0.00\");\n        Map(r => r.Currency).Name(\"currency\");\n    }\n}")
        .bash("grep -n \"CsvConfiguration\" -r src/", "src/Reports.Api/Export/LedgerExport.cs:14:        var config = new CsvConfiguration(CultureInfo.CurrentCulture) { HasHeaderRecord = true };")
        .assistant("The writer is configured with `CultureInfo.CurrentCulture`, so under de-DE the decimal separator is a comma, against the decision to write with the invariant culture. I'll switch `LedgerExport` to `CultureInfo.InvariantCulture` and add a test that runs the export under de-DE.")
        .edit("src/Reports.Api/Export/LedgerExport.cs", "new CsvConfiguration(CultureInfo.CurrentCulture)", "new CsvConfiguration(CultureInfo.InvariantCulture)")
        .write("tests/Reports.Api.Tests/Export/CultureTests.cs", "public class CultureTests\n{\n    [Fact]\n    public async Task AmountsUseAPointUnderGermanCulture()\n    {\n        using var _ = new CultureScope(\"de-DE\");\n        var csv = await ExportFixture.WriteAsync(new[] { ExportFixture.Row(amount: 1234.5m) });\n        Assert.Contains(\",1234.50,\", csv);\n    }\n}\n")
        .bash("dotnet test tests/Reports.Api.Tests", "Passed!  - Failed:     0, Passed:    39, Skipped:     0, Total:    39, Duration: 2 s - Reports.Api.Tests.dll (net8.0)")
        .bash("git commit -am \"Ledger export: invariant culture for amounts\" && git push", "[feat/csvhelper-export 0b58d3e] Ledger export: invariant culture for amounts\n 2 files changed, 12 insertions(+), 1 deletion(-)\nTo github.com:acme/reports.git\n   5e1a7f2..0b58d3e  feat/csvhelper-export -> feat/csvhelper-export")
        .assistant("Fixed: the export now writes `1234.50` regardless of the server culture (`CultureInfo.InvariantCulture` in `LedgerExport`), with a de-DE test; 39 tests pass. Committed `0b58d3e` and pushed `feat/csvhelper-export`. The PR #231 description is still to update, as you said, tomorrow.")
        .build();
    Case {
        name: "dotnet export update, ctxkit earlier summary (held out, 5th set)",
        messages,
        previous: Some(previous.to_owned()),
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("constraint: stay on net8.0", &["net8.0"]),
            fact("constraint: keep the column order", &["column order"]),
            fact("decision: a ClassMap", &["LedgerRowMap"]),
            fact("decision: ISO dates", &["yyyy-MM-dd", "ISO 8601"]),
            fact("CsvHelper version", &["33.0.1"]),
            fact("branch", &["feat/csvhelper-export"]),
            fact("PR", &["#231"]),
            fact("still open: update the PR description", &["PR description"]),
            fact("streaming done in the controller", &["ExportController"]),
            fact(
                "the compiler error on the way",
                &["CS1061", "BodyWriterAsync"],
            ),
            fact("test command", &["dotnet test tests/Reports.Api.Tests"]),
            fact("header test added", &["HeaderTests", "export-columns.md"]),
            fact("first commit", &["c7e41d9"]),
            fact("second commit", &["0b58d3e"]),
            fact(
                "de-DE amounts fixed with the invariant culture",
                &["de-DE", "InvariantCulture"],
            ),
        ],
    }
}

/// A Python data pipeline: a request wrapped in injected reminder text, a checker whose first line
/// is only a count, a benchmark printed as a table, and a backfill that fails on one day at the end.
fn python_dedupe_pipeline() -> Case {
    let messages = SessionBuilder::new()
        .user("<system-reminder>\nThe user opened the file pipeline/transform/dedupe.py in the IDE. This may or may not be related to the current task.\n</system-reminder>\nthe dedupe stage takes 3 minutes on a day of events, it's a python loop over rows. make it fast. Rows are duplicates when customer_id and event_ts match; keep the one with the latest ingested_at. Don't change the output schema of the parquet files, the Athena tables downstream read them.")
        .read("pipeline/transform/dedupe.py", "def dedupe(table: pa.Table, keys: list[str] | None = None) -> pa.Table:\n    keys = keys or [\"customer_id\", \"event_ts\"]\n    best: dict[tuple, dict] = {}\n    for row in table.to_pylist():\n        k = tuple(row[c] for c in keys)\n        if k not in best or row[\"ingested_at\"] > best[k][\"ingested_at\"]:\n            best[k] = row\n    return pa.Table.from_pylist(list(best.values()), schema=table.schema)")
        .bash("rg -n \"dedupe\\(\" pipeline tests", "pipeline/run.py:44:    events = dedupe(events)\ntests/transform/test_dedupe.py:9:    out = dedupe(sample_table())\ntests/transform/test_dedupe.py:21:    out = dedupe(sample_table(), keys=[\"customer_id\"])")
        .read("pipeline/io/parquet_sink.py", "import pyarrow as pa\nimport pyarrow.compute as pc\nimport pyarrow.parquet as pq\n\nSCHEMA: pa.Schema | None = None\n\ndef write(table: pa.Table, path: str) -> None:\n    pq.write_table(table.select(SCHEMA.names), path)")
        .assistant("I'll do it in Arrow: sort by `ingested_at` descending, then `Table.group_by(keys, use_threads=False).aggregate` taking the first row index per key, and `take` those rows. That stays columnar, keeps the schema as it is, and avoids pulling in pandas or polars.")
        .edit("pipeline/transform/dedupe.py", "    best: dict[tuple, dict] = {}\n    for row in table.to_pylist():\n        k = tuple(row[c] for c in keys)\n        if k not in best or row[\"ingested_at\"] > best[k][\"ingested_at\"]:\n            best[k] = row\n    return pa.Table.from_pylist(list(best.values()), schema=table.schema)", "    ordered = table.sort_by([(\"ingested_at\", \"descending\")])\n    ordered = ordered.append_column(\"_row\", pa.array(range(ordered.num_rows)))\n    first = ordered.group_by(merge_keys(keys), use_threads=False).aggregate([(\"_row\", \"min\")])\n    return ordered.take(first[\"_row_min\"]).drop_columns([\"_row\"])")
        .bash("./scripts/check.sh", "Found 3 errors\n--- mypy ---\npipeline/transform/dedupe.py:88: error: Argument 1 to \"merge_keys\" has incompatible type \"list[str] | None\"; expected \"list[str]\"  [arg-type]\npipeline/io/parquet_sink.py:41: error: Item \"None\" of \"Schema | None\" has no attribute \"names\"  [union-attr]\nFound 2 errors in 2 files (checked 41 source files)\n--- ruff ---\npipeline/io/parquet_sink.py:2:8: F401 [*] `pyarrow.compute` imported but unused\nFound 1 error.\n[*] 1 fixable with the `--fix` option.\n\nCommand exited with code 1")
        .assistant("Three findings. `merge_keys` gets the parameter instead of the defaulted `keys`; the other two are in `parquet_sink.py` and predate this change, but `check.sh` gates CI, so I'll fix them: assert the schema was loaded, and drop the unused `pyarrow.compute` import.")
        .edit("pipeline/transform/dedupe.py", "    keys = keys or [\"customer_id\", \"event_ts\"]", "    key_columns: list[str] = keys or [\"customer_id\", \"event_ts\"]")
        .failed_edit("pipeline/transform/dedupe.py", "group_by(merge_keys(keys),use_threads=False)")
        .edit("pipeline/transform/dedupe.py", "group_by(merge_keys(keys), use_threads=False)", "group_by(merge_keys(key_columns), use_threads=False)")
        .edit("pipeline/io/parquet_sink.py", "import pyarrow.compute as pc\n", "")
        .edit("pipeline/io/parquet_sink.py", "    pq.write_table(table.select(SCHEMA.names), path)", "    if SCHEMA is None:\n        raise RuntimeError(\"parquet_sink.SCHEMA not loaded; call load_schema() first\")\n    pq.write_table(table.select(SCHEMA.names), path)")
        .bash("./scripts/check.sh", "--- mypy ---\nSuccess: no issues found in 41 source files\n--- ruff ---\nAll checks passed!")
        .bash("pytest tests/transform -q", "..........                                                               [100%]\n10 passed in 0.84s")
        .user("numbers?")
        .bash("python scripts/bench_stages.py --day 2026-11-19", "events: 12,400,318 rows (day 2026-11-19)\n\n| stage   | before (s) | after (s) |\n|---------|-----------:|----------:|\n| read    |       41.2 |      40.8 |\n| dedupe  |      188.5 |      63.1 |\n| enrich  |       95.0 |      94.6 |\n| write   |       52.0 |      51.7 |\n| total   |      376.7 |     250.2 |\n\nrows out: 11,902,554 (before) / 11,902,554 (after)")
        .assistant("Dedupe went from 188.5 s to 63.1 s on the 2026-11-19 day (12.4M events); the whole run from 376.7 s to 250.2 s. Both versions keep the same 11,902,554 rows.")
        .user("<system-reminder>\nThe TodoWrite tool hasn't been used recently. If you're working on tasks that would benefit from tracking progress, consider using the TodoWrite tool.\n</system-reminder>\nnice. backfill 2026-11-01 to 2026-11-20 with the new code, but only into the staging bucket s3://acme-events-staging, never the prod one")
        .bash("python -m pipeline.backfill --from 2026-11-01 --to 2026-11-20 --bucket s3://acme-events-staging", "2026-11-01 ok 11,204,881 rows 241.0s\n2026-11-02 ok 10,988,120 rows 236.4s\n2026-11-03 ok 12,011,774 rows 255.9s\n2026-11-04 ok 12,150,002 rows 258.2s\n2026-11-05 ok 11,873,410 rows 249.7s\n2026-11-06 ok 11,640,988 rows 246.1s\n2026-11-07 ok 9,802,311 rows 214.3s\n2026-11-08 ok 9,511,090 rows 209.8s\n2026-11-09 ok 11,977,420 rows 252.0s\n2026-11-10 ok 12,230,566 rows 259.4s\n2026-11-11 ok 12,101,873 rows 256.8s\n2026-11-12 ok 12,044,209 rows 255.1s\n2026-11-13 ok 11,996,004 rows 253.3s\nTraceback (most recent call last):\n  File \"/app/pipeline/backfill.py\", line 61, in <module>\n    main()\n  File \"/app/pipeline/backfill.py\", line 55, in main\n    run_day(day, bucket=args.bucket)\n  File \"/app/pipeline/io/reader.py\", line 33, in read_day\n    return pa.concat_tables(parts)\n  File \"pyarrow/table.pxi\", line 5962, in pyarrow.lib.concat_tables\npyarrow.lib.ArrowInvalid: Schema at index 3 was different: \ncustomer_id: int64\nevent_ts: timestamp[ms]\nvs\ncustomer_id: string\nevent_ts: timestamp[ms]\n\nCommand exited with code 1")
        .assistant("The backfill stopped at 2026-11-14: one of that day's raw files (part index 3) has `customer_id` as a string instead of int64, so `pa.concat_tables` in `pipeline/io/reader.py` refuses it. Days 2026-11-01 to 2026-11-13 are written to staging. This is in the raw input, not the dedupe change; I'll look at which source wrote that part next.")
        .build();
    Case {
        name: "python dedupe pipeline (system reminders, checker, bench table; held out, 5th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "constraint: output parquet schema unchanged",
                &["output schema", "athena"],
            ),
            fact(
                "constraint: staging bucket only, never prod",
                &["acme-events-staging"],
            ),
            fact("dedupe file", &["pipeline/transform/dedupe.py"]),
            fact("dedupe rule: latest ingested_at", &["ingested_at"]),
            fact("decision: Arrow group_by", &["group_by"]),
            fact("check command", &["scripts/check.sh"]),
            fact(
                "type error in the sink",
                &["parquet_sink.py:41", "union-attr"],
            ),
            fact("type error in dedupe", &["dedupe.py:88", "arg-type"]),
            fact("unused import", &["F401", "pyarrow.compute"]),
            fact("test command", &["pytest tests/transform"]),
            fact("benchmark command", &["bench_stages"]),
            fact("dedupe time after", &["63.1"]),
            fact("whole run before/after", &["250.2", "376.7"]),
            fact("backfill command", &["pipeline.backfill"]),
            fact(
                "last error",
                &["Schema at index 3 was different", "ArrowInvalid"],
            ),
            fact("failing day", &["2026-11-14"]),
        ],
    }
}

/// A branch summary of an abandoned Nix flake for CI: builds, a native-module failure worked around,
/// cold and warm CI times against the Docker baseline, and the user's reason to drop it.
fn nix_flake_branch() -> Case {
    let messages = SessionBuilder::new()
        .user("experiment on a branch: replace the Docker-based CI build of the web app with a nix flake. Goal is reproducible builds and, ideally, CI faster than the current 6m05s docker job. Pin nixpkgs to nixos-24.05.")
        .bash("git checkout -b exp/nix-flake", "Switched to a new branch 'exp/nix-flake'")
        .read(".github/workflows/ci.yml", "jobs:\n  build:\n    runs-on: ubuntu-22.04\n    steps:\n      - uses: actions/checkout@v4\n      - run: docker build -t web:ci .\n      - run: docker run --rm web:ci npm test")
        .read("package.json", "{\n  \"name\": \"web\",\n  \"engines\": { \"node\": \">=20 <21\" },\n  \"dependencies\": { \"next\": \"14.2.5\", \"sharp\": \"0.33.4\" }\n}")
        .assistant("I'll use `buildNpmPackage` from nixpkgs with `nodejs_20` rather than node2nix, so the lockfile stays the only source of dependency versions; `npmDepsHash` pins the fetched tarballs.")
        .write("flake.nix", "{\n  inputs.nixpkgs.url = \"github:NixOS/nixpkgs/nixos-24.05\";\n  outputs = { self, nixpkgs }: let pkgs = nixpkgs.legacyPackages.x86_64-linux; in {\n    packages.x86_64-linux.app = pkgs.buildNpmPackage {\n      pname = \"web\"; version = \"0.0.0\"; src = ./.;\n      nodejs = pkgs.nodejs_20;\n      npmDepsHash = pkgs.lib.fakeHash;\n    };\n  };\n}\n")
        .bash("nix build .#app -L", "error: hash mismatch in fixed-output derivation '/nix/store/9q3k…-web-0.0.0-npm-deps.drv':\n         specified: sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n            got:    sha256-Vf2r1kX0t8sO9xYy2c8m0qH3z4M1l7bqv8oXo9cJt0E=\n\nCommand exited with code 1")
        .edit("flake.nix", "npmDepsHash = pkgs.lib.fakeHash;", "npmDepsHash = \"sha256-Vf2r1kX0t8sO9xYy2c8m0qH3z4M1l7bqv8oXo9cJt0E=\";")
        .bash("nix build .#app -L", "web> > web@0.0.0 build\nweb> > next build\nweb> Error: Could not load the \"sharp\" module using the linux-x64 runtime\nweb> Possible solutions:\nweb> - Ensure optional dependencies can be installed\nerror: builder for '/nix/store/m2x8…-web-0.0.0.drv' failed with exit code 1\n\nCommand exited with code 1")
        .assistant("sharp's prebuilt libvips binary expects a glibc loader at the FHS path. I'll add `autoPatchelfHook` with `vips` and `stdenv.cc.cc.lib` as inputs rather than build libvips from source.")
        .edit("flake.nix", "      nodejs = pkgs.nodejs_20;", "      nodejs = pkgs.nodejs_20;\n      nativeBuildInputs = [ pkgs.autoPatchelfHook ];\n      buildInputs = [ pkgs.vips pkgs.stdenv.cc.cc.lib ];")
        .bash("nix build .#app -L && nix path-info -Sh ./result", "web> Compiled successfully\n/nix/store/1k0w…-web-0.0.0\t   1.9 GiB")
        .bash("docker image ls web:ci --format '{{.Size}}'", "740MB")
        .edit(".github/workflows/ci.yml", "      - run: docker build -t web:ci .\n      - run: docker run --rm web:ci npm test", "      - uses: cachix/install-nix-action@v27\n      - run: nix build .#app -L\n      - run: nix develop -c npm test")
        .bash("git commit -am \"CI: build with the nix flake\" && git push -u origin exp/nix-flake", "[exp/nix-flake 8d21f60] CI: build with the nix flake\n 2 files changed, 21 insertions(+), 2 deletions(-)\nbranch 'exp/nix-flake' set up to track 'origin/exp/nix-flake'.")
        .bash("gh run list --branch exp/nix-flake --limit 2 --json conclusion,displayTitle,startedAt,updatedAt --jq '.[] | [.conclusion, .displayTitle, .startedAt, .updatedAt] | @tsv'", "success\tCI: build with the nix flake (rerun)\t2026-11-26T11:02:10Z\t2026-11-26T11:05:50Z\nsuccess\tCI: build with the nix flake\t2026-11-26T10:41:03Z\t2026-11-26T10:55:23Z")
        .assistant("Measured on CI: the cold run took 14m20s (the Docker job: 6m05s); a rerun on the same runner with the store already populated took 3m40s, but GitHub runners start empty, so every real run is cold unless we add a binary cache (Cachix or an S3 substituter). The closure is 1.9 GiB against a 740 MB Docker image, mostly the `vips` closure and GCC's lib.")
        .user("so it's more than twice as slow and 2.5x bigger unless we pay for a binary cache. not worth it now, drop the branch; we'll revisit once we have a binary cache")
        .build();
    Case {
        name: "branch summary (Nix flake, abandoned; held out, 5th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::Branch,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("what was tried: a nix flake", &["flake.nix", "nix flake"]),
            fact("branch", &["exp/nix-flake"]),
            fact("nixpkgs pin", &["nixos-24.05"]),
            fact("approach: buildNpmPackage", &["buildNpmPackage"]),
            fact("build command", &["nix build .#app"]),
            fact("workflow file", &[".github/workflows/ci.yml"]),
            fact("the sharp failure", &["sharp"]),
            fact("its fix", &["autoPatchelfHook"]),
            fact("baseline docker CI time", &["6m05", "6m 05", "6 min 05"]),
            fact("cold nix CI time", &["14m20", "14m 20", "14 min 20"]),
            fact("warm nix CI time", &["3m40", "3m 40", "3 min 40"]),
            fact("closure size", &["1.9 GiB", "1.9G"]),
            fact("docker image size", &["740MB", "740 MB"]),
            fact("commit", &["8d21f60"]),
            fact(
                "abandoned by the user",
                &["abandon", "drop the branch", "not worth"],
            ),
            fact("revisit with a binary cache", &["binary cache"]),
        ],
    }
}
