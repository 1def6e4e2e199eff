//! The fourth held-out set, written on 2026-11-26 before any summary of it was read, by a helper
//! who had not read the summarizer's code (only `docs/summaries.md`, which describes what the
//! summary holds and how the evaluation scores it). Each fact list was written as the engineer
//! taking over the session would list what they must know. Reported apart ("4th set").
//!
//! Four shapes the earlier sets lack: a long C++/CMake session over four requests, an update of a
//! model-written checkpoint on a .NET backport, a Kotlin Android session with parallel tool calls,
//! a long lint log and agent wrapper text, and an abandoned dbt/BigQuery branch.

use ctxkit_compaction::SummaryPurpose;
use ctxkit_protocol::AgentMessage;
use serde_json::{Value, json};

use super::{Case, SessionBuilder, fact};

pub(super) fn cases() -> Vec<Case> {
    vec![
        cpp_ingest(),
        dotnet_backport_update(),
        android_parallel(),
        dbt_branch(),
    ]
}

/// One assistant turn making several tool calls at once (with an optional text before them), then
/// their results in the same order, as an agent records parallel calls. `batch` keeps the call ids
/// apart from the builder's.
fn parallel(batch: &str, text: &str, calls: &[(&str, Value, &str)]) -> Vec<AgentMessage> {
    let ids: Vec<String> = (0..calls.len())
        .map(|index| format!("toolu_{batch}_{index}"))
        .collect();
    let mut content = Vec::new();
    if !text.is_empty() {
        content.push(json!({"type": "text", "text": text}));
    }
    for ((name, arguments, _), id) in calls.iter().zip(&ids) {
        content.push(json!({"type": "toolCall", "id": id, "name": name, "arguments": arguments}));
    }
    let mut values =
        vec![json!({"role": "assistant", "content": content, "stopReason": "toolUse"})];
    for ((name, _, result), id) in calls.iter().zip(&ids) {
        values.push(json!({
            "role": "toolResult",
            "toolCallId": id,
            "toolName": name,
            "content": [{"type": "text", "text": result}],
            "isError": result.contains("Command exited with code")
        }));
    }
    values
        .into_iter()
        .filter_map(|value| serde_json::from_value(value).ok())
        .collect()
}

/// A C++17/CMake telemetry daemon over four requests: a ring-buffer fix (a C++20 first attempt
/// that does not build, then a fix, a test, a commit), a version bump, a benchmark against the
/// last release, and a batching request not yet answered. Many reads and greps that do not matter.
fn cpp_ingest() -> Case {
    let messages = SessionBuilder::new()
        .user("fluxd drops the newest sample when the ring buffer in src/ingest/ring_buffer.cpp wraps around. Fix it and add a regression test. Two rules for this repo: never edit the generated protobuf files under gen/ (they are regenerated from the schema repo and CI diffs them), and stay on C++17, the ARM cross toolchain has no C++20. Build with `cmake --build build -j2`, test with `ctest --test-dir build --output-on-failure`.")
        .bash("ls src/ingest", "CMakeLists.txt\nparser.cpp\nparser.hpp\nring_buffer.cpp\nring_buffer.hpp\nsample.hpp")
        .read("src/ingest/ring_buffer.hpp", "class RingBuffer {\npublic:\n  explicit RingBuffer(std::size_t capacity);\n  void push(const Sample& sample);\n  std::vector<Sample> drain();\nprivate:\n  std::vector<Sample> slots_;\n  std::size_t head_ = 0;\n  std::size_t size_ = 0;\n};")
        .read("src/ingest/ring_buffer.cpp", "void RingBuffer::push(const Sample& sample) {\n  head_ = (head_ + 1) % slots_.size();\n  slots_[head_] = sample;\n  size_ = std::min(size_ + 1, slots_.size());\n}\n\nstd::vector<Sample> RingBuffer::drain() {\n  std::vector<Sample> out;\n  std::size_t start = (head_ + slots_.size() - size_) % slots_.size();\n  for (std::size_t i = 0; i < size_; ++i) out.push_back(slots_[(start + i) % slots_.size()]);\n  size_ = 0;\n  return out;\n}")
        .bash("grep -rn \"RingBuffer\" src --include=*.cpp", "src/ingest/ring_buffer.cpp:12:void RingBuffer::push(const Sample& sample) {\nsrc/ingest/ring_buffer.cpp:19:std::vector<Sample> RingBuffer::drain() {\nsrc/ingest/pipeline.cpp:31:  RingBuffer buffer_{kSampleCapacity};\nsrc/main.cpp:44:  // the RingBuffer is drained every flush interval")
        .read("src/ingest/pipeline.cpp", "Pipeline::Pipeline(const Config& config)\n    : config_(config), parser_(config.schema) {}\n\nvoid Pipeline::OnSample(const Sample& sample) {\n  buffer_.push(sample);\n  if (clock_.Elapsed() > config_.flush_interval) Flush();\n}")
        .bash("ls gen/proto/fluxd/v1", "metrics.grpc.pb.cc\nmetrics.grpc.pb.h\nmetrics.pb.cc\nmetrics.pb.h")
        .read("CMakeLists.txt", "cmake_minimum_required(VERSION 3.20)\nproject(fluxd VERSION 2.4.0 LANGUAGES CXX)\nset(CMAKE_CXX_STANDARD 17)\nset(CMAKE_CXX_STANDARD_REQUIRED ON)\nadd_subdirectory(gen)\nadd_subdirectory(src)\nadd_subdirectory(tests)\nadd_subdirectory(bench)")
        .thinking("push advances head_ before writing, so the slot drain starts from is one past the oldest; with a full buffer the newest value lands where drain expects the oldest.")
        .assistant("`push` advances `head_` before it writes, so once the buffer is full `drain` starts one slot late and the newest sample is lost. I'll write at `head_` first and advance it afterwards, and make `drain` copy the two contiguous halves.")
        .edit("src/ingest/ring_buffer.cpp", "  head_ = (head_ + 1) % slots_.size();\n  slots_[head_] = sample;", "  slots_[head_] = sample;\n  head_ = (head_ + 1) % slots_.size();")
        .edit("src/ingest/ring_buffer.cpp", "  for (std::size_t i = 0; i < size_; ++i) out.push_back(slots_[(start + i) % slots_.size()]);", "  std::size_t first_len = std::min(size_, slots_.size() - start);\n  std::span<const Sample> first(slots_.data() + start, first_len);\n  std::span<const Sample> second(slots_.data(), size_ - first_len);\n  out.insert(out.end(), first.begin(), first.end());\n  out.insert(out.end(), second.begin(), second.end());")
        .bash("cmake --build build -j2", "[12/40] Building CXX object src/ingest/CMakeFiles/ingest.dir/ring_buffer.cpp.o\nFAILED: src/ingest/CMakeFiles/ingest.dir/ring_buffer.cpp.o\n/home/dev/fluxd/src/ingest/ring_buffer.cpp:48:8: error: 'span' in namespace 'std' does not name a template type\n   48 |   std::span<const Sample> first(slots_.data() + start, first_len);\n      |        ^~~~\n/home/dev/fluxd/src/ingest/ring_buffer.cpp:48:3: note: 'std::span' is only available from C++20 onwards\nninja: build stopped: subcommand failed.\n\nCommand exited with code 1")
        .assistant("`std::span` is C++20 and the project builds with `-std=c++17`, so that was the wrong tool here. I'll copy the two halves with iterator ranges instead.")
        .edit("src/ingest/ring_buffer.cpp", "  std::span<const Sample> first(slots_.data() + start, first_len);\n  std::span<const Sample> second(slots_.data(), size_ - first_len);\n  out.insert(out.end(), first.begin(), first.end());\n  out.insert(out.end(), second.begin(), second.end());", "  auto begin = slots_.begin() + static_cast<std::ptrdiff_t>(start);\n  out.insert(out.end(), begin, begin + static_cast<std::ptrdiff_t>(first_len));\n  out.insert(out.end(), slots_.begin(), slots_.begin() + static_cast<std::ptrdiff_t>(size_ - first_len));")
        .bash("cmake --build build -j2", "[40/40] Linking CXX executable fluxd")
        .write("tests/ingest/ring_buffer_test.cpp", "#include <gtest/gtest.h>\n#include \"ingest/ring_buffer.hpp\"\n\nTEST(RingBuffer, KeepsNewestSampleOnWrap) {\n  RingBuffer buffer(3);\n  for (int value = 1; value <= 4; ++value) buffer.push(Sample{value});\n  EXPECT_EQ(Values(buffer.drain()), (std::vector<int>{2, 3, 4}));\n}\n")
        .read("tests/CMakeLists.txt", "add_executable(fluxd_tests\n  ingest/parser_test.cpp\n  export/otlp_exporter_test.cpp\n)\ntarget_link_libraries(fluxd_tests PRIVATE ingest export GTest::gtest_main)\ngtest_discover_tests(fluxd_tests)")
        .edit("tests/CMakeLists.txt", "  ingest/parser_test.cpp\n", "  ingest/parser_test.cpp\n  ingest/ring_buffer_test.cpp\n")
        .bash("cmake --build build -j2 && ctest --test-dir build --output-on-failure", "[44/44] Linking CXX executable tests/fluxd_tests\nTest project /home/dev/fluxd/build\n      Start  1: Parser.ParsesGauge\n 1/38 Test  #1: Parser.ParsesGauge ...............   Passed    0.01 sec\n...\n38/38 Test #38: RingBuffer.KeepsNewestSampleOnWrap   Passed    0.01 sec\n\n100% tests passed, 0 tests failed out of 38\n\nTotal Test time (real) =   4.21 sec")
        .bash("git status --short", " M src/ingest/ring_buffer.cpp\n M tests/CMakeLists.txt\n?? tests/ingest/ring_buffer_test.cpp\n?? build-arm/")
        .bash("git checkout -b fix/ring-buffer-wrap && git add src/ingest/ring_buffer.cpp tests/CMakeLists.txt tests/ingest/ring_buffer_test.cpp && git commit -m \"ingest: keep the newest sample when the ring buffer wraps\"", "Switched to a new branch 'fix/ring-buffer-wrap'\n[fix/ring-buffer-wrap 5e8f21c3] ingest: keep the newest sample when the ring buffer wraps\n 3 files changed, 41 insertions(+), 9 deletions(-)\n create mode 100644 tests/ingest/ring_buffer_test.cpp")
        .assistant("Fixed and committed as 5e8f21c3 on `fix/ring-buffer-wrap`: `push` writes before it advances, `drain` copies two contiguous ranges, and the new `RingBuffer.KeepsNewestSampleOnWrap` test passes with the other 37.")
        .user("ok")
        .user("bump the version to 2.4.1 and add a CHANGELOG entry, same branch")
        .bash("grep -rn \"2\\.4\\.0\" --include=CMakeLists.txt --include=*.md --include=*.json .", "./CMakeLists.txt:2:project(fluxd VERSION 2.4.0 LANGUAGES CXX)\n./CHANGELOG.md:3:## 2.4.0 - 2026-11-02\n./packaging/vcpkg.json:3:  \"version-string\": \"2.4.0\",\n./docs/install.md:12:curl -LO https://dl.example.com/fluxd/2.4.0/fluxd-linux-arm64.tar.gz")
        .edit("CMakeLists.txt", "project(fluxd VERSION 2.4.0 LANGUAGES CXX)", "project(fluxd VERSION 2.4.1 LANGUAGES CXX)")
        .edit("packaging/vcpkg.json", "\"version-string\": \"2.4.0\"", "\"version-string\": \"2.4.1\"")
        .edit("CHANGELOG.md", "## 2.4.0 - 2026-11-02", "## 2.4.1 - 2026-11-26\n- Ingest: the newest sample is no longer dropped when the ring buffer wraps.\n\n## 2.4.0 - 2026-11-02")
        .bash("cmake --build build -j2 && ./build/fluxd --version", "[3/3] Linking CXX executable fluxd\nfluxd 2.4.1 (git 5e8f21c3)")
        .bash("git commit -am \"Release 2.4.1\"", "[fix/ring-buffer-wrap 9a0c4d71] Release 2.4.1\n 3 files changed, 5 insertions(+), 2 deletions(-)")
        .assistant("Version is 2.4.1 in `CMakeLists.txt` and `packaging/vcpkg.json`, with a CHANGELOG entry; committed as 9a0c4d71. I left `docs/install.md` pointing at 2.4.0 since that release exists and 2.4.1 is not published yet.")
        .user("run the ingest benchmark and compare with 2.4.0, I don't want the fix to cost throughput. baseline numbers are in bench/baseline-2.4.0.json")
        .read("bench/baseline-2.4.0.json", "{\"benchmarks\": [{\"name\": \"BM_RingBufferPush/4096_mean\", \"real_time\": 809.3, \"time_unit\": \"ns\"}, {\"name\": \"BM_RingBufferDrain/4096_mean\", \"real_time\": 15120.0, \"time_unit\": \"ns\"}]}")
        .bash("ls build/bench", "CMakeFiles\ncmake_install.cmake\ningest_bench\nparser_bench")
        .bash("./build/bench/ingest_bench --benchmark_filter=RingBuffer --benchmark_repetitions=5 --benchmark_report_aggregates_only=true", "Running ./build/bench/ingest_bench\nRun on (2 X 2900 MHz CPU s)\n------------------------------------------------------------------------\nBenchmark                              Time             CPU   Iterations\n------------------------------------------------------------------------\nBM_RingBufferPush/4096_mean          812 ns          811 ns            5\nBM_RingBufferPush/4096_stddev       6.10 ns         6.02 ns            5\nBM_RingBufferDrain/4096_mean       11840 ns        11835 ns            5\nBM_RingBufferDrain/4096_stddev       142 ns          140 ns            5")
        .assistant("No regression: push is 812 ns against 809 ns for 2.4.0, inside the 6 ns standard deviation, and drain got faster (11.8 µs against 15.1 µs) because it now copies two contiguous ranges.")
        .user("nice. next one: src/export/otlp_exporter.cpp sends everything in one request and the collector rejects the big ones with RESOURCE_EXHAUSTED. Split exports into batches of at most 512 spans.")
        .read("src/export/otlp_exporter.cpp", "Status OtlpExporter::Export(const std::vector<Span>& spans) {\n  ExportTraceServiceRequest request;\n  for (const auto& span : spans) *request.add_resource_spans() = ToProto(span);\n  grpc::ClientContext context;\n  ExportTraceServiceResponse response;\n  return stub_->Export(&context, request, &response);\n}")
        .bash("grep -rn \"export_\" src/config/config.hpp", "src/config/config.hpp:22:  std::chrono::seconds export_interval{10};\nsrc/config/config.hpp:23:  std::string export_endpoint = \"localhost:4317\";")
        .build();
    Case {
        name: "c++ cmake ingest, long (held out, 4th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "constraint: never edit the generated protobuf files under gen/",
                &["generated protobuf", "under gen/"],
            ),
            fact("constraint: stay on C++17", &["C++17"]),
            fact("bug file", &["src/ingest/ring_buffer.cpp"]),
            fact(
                "wrong first attempt: std::span does not build (C++20)",
                &["std::span", "'span' in namespace 'std'"],
            ),
            fact("build command", &["cmake --build build"]),
            fact("test command", &["ctest --test-dir build"]),
            fact(
                "regression test file",
                &["tests/ingest/ring_buffer_test.cpp"],
            ),
            fact("branch", &["fix/ring-buffer-wrap"]),
            fact("fix commit", &["5e8f21c3"]),
            fact("version bumped to 2.4.1", &["2.4.1"]),
            fact("release commit", &["9a0c4d71"]),
            fact("benchmark binary", &["ingest_bench"]),
            fact(
                "benchmark: 812 ns against 809 ns, no regression",
                &["812", "no regression"],
            ),
            fact("latest request: batches of at most 512 spans", &["512"]),
            fact("exporter file", &["src/export/otlp_exporter.cpp"]),
            fact("the collector's error", &["RESOURCE_EXHAUSTED"]),
        ],
    }
}

/// An update of a model-written checkpoint on a .NET library: the earlier summary holds the
/// decisions and the original PR; the new span finishes its open item (the backport PR) and starts
/// another (CSV delimiter on main), which ends on a failing test.
fn dotnet_backport_update() -> Case {
    let previous = "## Goal\nBackport the currency-rounding fix (PR #1287) to the 2.3 line and cut 2.3.4; afterwards, the InvoiceExporter CSV change the user mentioned.\n\n## Constraints & Preferences\n- Backports target `upstream/release-2.3`, never main\n- No public API changes in a patch release: `PublicAPI.Shipped.txt` must not change\n- Keep netstandard2.0 support\n- Release notes date entries as `2026/11/20` (the team's format)\n\n## Progress\n### Done\n- [x] Cherry-picked `4c1d9e2` (the merge of PR #1287 on main) onto `backport/2.3-rounding` as `b81f07c5`\n- [x] `dotnet test tests/Acme.Billing.Tests` passes on netstandard2.0 and net8.0 (412 tests)\n\n### In Progress\n- [ ] Open the backport PR against `upstream/release-2.3`, with 2.3.4 release notes in `docs/release-notes/2.3.md`\n\n### Blocked\n- n/a\n\n## Key Decisions\n- **Banker's rounding**: `MidpointRounding.ToEven`, matching 2.4, instead of `AwayFromZero` (agreed with @mkowalski on PR #1287)\n- **Cherry-pick, not merge**: keeps the history of release-2.3 linear\n\n## Next Steps\n1. Release notes and/or changelog entry for 2.3.4, dated 2026/11/20\n2. Open the backport PR\n3. Then the InvoiceExporter CSV change\n\n## Critical Context\n- Original fix merged to main on 2026/11/18 as PR #1287\n- Tests: `dotnet test tests/Acme.Billing.Tests -f net8.0`";
    let messages = SessionBuilder::new()
        .user("continue")
        .read("docs/release-notes/2.3.md", "# Acme.Billing 2.3 release notes\n\n## 2.3.3 — 2026/10/30\n- Fix: `InvoiceNumber.Parse` accepts lowercase prefixes (#1241)\n")
        .edit("docs/release-notes/2.3.md", "## 2.3.3 — 2026/10/30", "## 2.3.4 — 2026/11/20\n- Fix: currency amounts round half to even, as in 2.4 (#1287)\n\n## 2.3.3 — 2026/10/30")
        .edit("src/Acme.Billing/Acme.Billing.csproj", "<VersionPrefix>2.3.3</VersionPrefix>", "<VersionPrefix>2.3.4</VersionPrefix>")
        .bash("dotnet test tests/Acme.Billing.Tests -f net8.0", "Passed!  - Failed:     0, Passed:   412, Skipped:     0, Total:   412, Duration: 6 s - Acme.Billing.Tests.dll (net8.0)")
        .bash("git commit -am \"2.3.4 release notes and version\" && git push origin backport/2.3-rounding", "[backport/2.3-rounding 2f6b8a0e] 2.3.4 release notes and version\n 2 files changed, 4 insertions(+), 1 deletion(-)\nTo github.com:lhoang/billing.git\n   b81f07c5..2f6b8a0e  backport/2.3-rounding -> backport/2.3-rounding")
        .bash("gh pr create --repo acme/billing --base release-2.3 --head lhoang:backport/2.3-rounding --title \"[2.3] Round currency amounts half to even (backport of #1287)\" --body \"Backport of #1287 for 2.3.4. API changes: n/a\"", "https://github.com/acme/billing/pull/1302")
        .assistant("Opened the backport as PR #1302 against `release-2.3`, with the 2.3.4 release notes dated 2026/11/20 and the version prefix bumped; the net8.0 tests pass (412).")
        .user("good. now the InvoiceExporter change: CSV export must quote fields that contain the delimiter, and the delimiter should be configurable (comma and/or semicolon, German customers open these in Excel). That one goes to main, not the release branch, so it can add API.")
        .bash("git switch main && git pull --ff-only upstream main && git switch -c feat/csv-delimiter", "Switched to branch 'main'\nUpdating 91ac3e4..d03f5b7\nFast-forward\n 14 files changed, 380 insertions(+), 92 deletions(-)\nSwitched to a new branch 'feat/csv-delimiter'")
        .bash("grep -rn \"Join(','\" src/Acme.Billing/Export", "src/Acme.Billing/Export/InvoiceExporter.cs:41:            writer.Write(string.Join(',', fields));")
        .read("src/Acme.Billing/Export/InvoiceExporter.cs", "public sealed class InvoiceExporter\n{\n    public void Write(TextWriter writer, IEnumerable<Invoice> invoices)\n    {\n        foreach (var invoice in invoices)\n        {\n            var fields = Columns(invoice).Select(Quote);\n            writer.Write(string.Join(',', fields));\n            writer.Write(\"\\r\\n\");\n        }\n    }\n\n    private static string Quote(string field) =>\n        field.Contains(',') ? $\"\\\"{field.Replace(\"\\\"\", \"\\\"\\\"\")}\\\"\" : field;\n}")
        .assistant("I'll add a `CsvOptions` record with a `Delimiter` (default `,`) passed to the constructor, rather than a static setting, so one process can write both formats.")
        .write("src/Acme.Billing/Export/CsvOptions.cs", "namespace Acme.Billing.Export;\n\npublic sealed record CsvOptions(char Delimiter = ',');\n")
        .edit("src/Acme.Billing/Export/InvoiceExporter.cs", "writer.Write(string.Join(',', fields));", "writer.Write(string.Join(_options.Delimiter, fields));")
        .bash("dotnet build src/Acme.Billing -c Release", "src/Acme.Billing/Export/CsvOptions.cs(3,22): error RS0016: Symbol 'Acme.Billing.Export.CsvOptions' is not part of the declared public API [src/Acme.Billing/Acme.Billing.csproj::TargetFramework=netstandard2.0]\nsrc/Acme.Billing/Export/CsvOptions.cs(3,33): error RS0016: Symbol 'Acme.Billing.Export.CsvOptions.Delimiter.get' is not part of the declared public API [src/Acme.Billing/Acme.Billing.csproj::TargetFramework=netstandard2.0]\n\nBuild FAILED.\n    0 Warning(s)\n    2 Error(s)\n\nCommand exited with code 1")
        .assistant("The public API analyzer wants the new type declared; on main new API goes into `PublicAPI.Unshipped.txt`, and `PublicAPI.Shipped.txt` stays as it is.")
        .edit("src/Acme.Billing/PublicAPI.Unshipped.txt", "#nullable enable\n", "#nullable enable\nAcme.Billing.Export.CsvOptions\nAcme.Billing.Export.CsvOptions.CsvOptions(char Delimiter = ',') -> void\nAcme.Billing.Export.CsvOptions.Delimiter.get -> char\nAcme.Billing.Export.InvoiceExporter.InvoiceExporter(Acme.Billing.Export.CsvOptions? options = null) -> void\n")
        .bash("dotnet build src/Acme.Billing -c Release", "Build succeeded.\n    0 Warning(s)\n    0 Error(s)")
        .write("tests/Acme.Billing.Tests/Export/InvoiceExporterTests.cs", "public class InvoiceExporterTests\n{\n    [Fact]\n    public void Exports_quote_fields_containing_the_delimiter()\n    {\n        var csv = Export(new CsvOptions(';'), Invoice(\"INV-7\", \"Müller; Sohn\", 12.50m));\n        Assert.Equal(\"INV-7;\\\"Müller; Sohn\\\";12,50\", csv.TrimEnd());\n    }\n}\n")
        .bash("dotnet test tests/Acme.Billing.Tests -f net8.0 --filter InvoiceExporterTests", "  Failed Acme.Billing.Tests.Export.InvoiceExporterTests.Exports_quote_fields_containing_the_delimiter [18 ms]\n  Error Message:\n   Assert.Equal() Failure: Strings differ\n                ↓ (pos 6)\nExpected: \"INV-7;\\\"Müller; Sohn\\\";12,50\"\nActual:   \"INV-7;Müller; Sohn;12,50\"\n\nFailed!  - Failed:     1, Passed:     6, Skipped:     0, Total:     7, Duration: 1 s - Acme.Billing.Tests.dll (net8.0)\n\nCommand exited with code 1")
        .assistant("`Quote` still only looks for commas, so with `;` as the delimiter the field is not quoted. Next I'll make it check the configured delimiter, quotes and line breaks.")
        .build();
    Case {
        name: ".net backport, model-written earlier summary (held out, 4th set)",
        messages,
        previous: Some(previous.to_owned()),
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "earlier goal: backport the currency-rounding fix to 2.3",
                &["currency-rounding", "currency rounding", "rounding fix"],
            ),
            fact("original PR", &["#1287", "pull/1287"]),
            fact("backport target ref", &["release-2.3"]),
            fact(
                "earlier constraint: no public API change in a patch release",
                &["PublicAPI.Shipped.txt", "No public API change"],
            ),
            fact(
                "earlier constraint: keep netstandard2.0",
                &["netstandard2.0"],
            ),
            fact(
                "earlier decision: banker's rounding (ToEven)",
                &["ToEven", "banker's rounding", "half to even"],
            ),
            fact("earlier decision: cherry-pick, not merge", &["cherry-pick"]),
            fact("backport branch", &["backport/2.3-rounding"]),
            fact("release version", &["2.3.4"]),
            fact("release notes date (team's format)", &["2026/11/20"]),
            fact(
                "earlier open item now done: backport PR opened",
                &["#1302", "pull/1302"],
            ),
            fact(
                "new task: InvoiceExporter quoting and configurable delimiter",
                &["InvoiceExporter"],
            ),
            fact(
                "new work goes to main (may add API), on its own branch",
                &["feat/csv-delimiter"],
            ),
            fact(
                "build error on the way and its fix",
                &["RS0016", "PublicAPI.Unshipped.txt"],
            ),
            fact(
                "current failing test",
                &["Exports_quote_fields_containing_the_delimiter"],
            ),
            fact("test command", &["dotnet test tests/Acme.Billing.Tests"]),
        ],
    }
}

/// Android lint's text report: the one error sits among the warnings; the last line only counts.
const LINT_LOG: &str = r#"> Task :app:lintDebug
Scanning app (Phase 1): ...................................
Scanning app (Phase 2): ...........
app/src/main/res/layout/activity_main.xml:24: Warning: Hardcoded string "Sync now", should use @string resource [HardcodedText]
app/src/main/res/layout/fragment_editor.xml:61: Warning: Missing contentDescription attribute on image [ContentDescription]
app/src/main/java/com/acme/notes/ui/EditorFragment.kt:88: Warning: Use of LayoutInflater.inflate(null) in a fragment [InflateParams]
app/src/main/java/com/acme/notes/data/NoteDao.kt:17: Warning: Use KTX extension function SharedPreferences.edit instead? [UseKtx]
app/src/main/java/com/acme/notes/sync/SyncWorker.kt:42: Error: Call requires API level 26 (current min is 24): java.time.LocalDate#now [NewApi]
        val today = LocalDate.now()
                              ~~~
app/src/main/res/values/colors.xml:9: Warning: The resource R.color.accent_dark appears to be unused [UnusedResources]
app/src/main/res/values/strings.xml:31: Warning: The resource R.string.legacy_banner appears to be unused [UnusedResources]
app/build.gradle.kts:52: Warning: A newer version of androidx.work:work-runtime-ktx than 2.8.1 is available: 2.9.1 [GradleDependency]
app/src/main/AndroidManifest.xml:14: Warning: Not targeting the latest versions of Android; compatibility modes apply [OldTargetApi]
app/src/main/res/drawable/ic_sync.xml:3: Warning: Very long vector path (1021 characters), which is bad for performance [VectorPath]
Wrote HTML report to file:///home/dev/notes/app/build/reports/lint-results-debug.html
Lint found errors in the project; aborting build.
1 errors, 9 warnings

Command exited with code 1"#;

/// A Kotlin Android app as Claude Code records it: `/cost` wrapper text, a system reminder around
/// the real request (with a pasted crash), parallel tool calls, a long lint log, a wrong fix the
/// user blows up at, a commit and PR, and an instrumented test run still pending.
fn android_parallel() -> Case {
    let mut messages = SessionBuilder::new()
        .user("<command-name>/cost</command-name>\n<command-message>cost</command-message>\n<command-args></command-args>")
        .user("<local-command-stdout>Total cost:            $0.84\nTotal duration (API):  3m 12.4s\nTotal duration (wall): 41m 5.0s</local-command-stdout>")
        .user("<system-reminder>\nThe user opened the file app/src/main/java/com/acme/notes/sync/SyncWorker.kt in the IDE. This may or may not be related to the current task.\n</system-reminder>\nPlay Console shows the nightly sync crashing on Android 7 devices:\n\njava.lang.NoClassDefFoundError: Failed resolution of: Ljava/time/LocalDate;\n    at com.acme.notes.sync.SyncWorker.doWork(SyncWorker.kt:42)\n    at androidx.work.CoroutineWorker$startWork$1.invokeSuspend(CoroutineWorker.kt:68)\n\nFix it, and get ./gradlew :app:lintDebug green. We keep minSdk at 24, don't raise it, and no core library desugaring (the release team vetoed it after it broke the R8 build).")
        .build();
    messages.extend(parallel(
        "a",
        "Reading the worker and the Gradle config, and looking for other java.time uses.",
        &[
            ("read", json!({"path": "app/build.gradle.kts"}), "android {\n    namespace = \"com.acme.notes\"\n    compileSdk = 34\n    defaultConfig {\n        minSdk = 24\n        targetSdk = 34\n        versionCode = 187\n        versionName = \"3.8.2\"\n    }\n    lint { abortOnError = true }\n}"),
            ("read", json!({"path": "app/src/main/java/com/acme/notes/sync/SyncWorker.kt"}), "class SyncWorker(context: Context, params: WorkerParameters) : CoroutineWorker(context, params) {\n    override suspend fun doWork(): Result {\n        val today = LocalDate.now()\n        val due = repository.notesDueOn(today.toString())\n        due.forEach { notifier.remind(it) }\n        return Result.success()\n    }\n}"),
            ("bash", json!({"command": "grep -rn \"java.time\" app/src/main"}), "app/src/main/java/com/acme/notes/sync/SyncWorker.kt:5:import java.time.LocalDate\napp/src/main/java/com/acme/notes/ui/NoteFormatter.kt:8:import java.time.format.DateTimeFormatter"),
        ],
    ));
    messages.extend(
        SessionBuilder::new()
            .bash("./gradlew :app:lintDebug", LINT_LOG)
            .read("app/src/main/java/com/acme/notes/ui/NoteFormatter.kt", "fun formatDue(millis: Long): String =\n    if (Build.VERSION.SDK_INT >= 26) DateTimeFormatter.ISO_LOCAL_DATE.format(Instant.ofEpochMilli(millis).atZone(ZoneId.systemDefault()))\n    else SimpleDateFormat(\"yyyy-MM-dd\", Locale.US).format(Date(millis))")
            .assistant("Lint's one error is `NewApi` at SyncWorker.kt:42: `LocalDate.now()` needs API 26 and minSdk is 24; the rest are warnings. NoteFormatter already guards its java.time use with an SDK check. Since desugaring is ruled out, I'll build the date with `java.util.Calendar` in SyncWorker instead of adding ThreeTenABP.")
            .edit("app/src/main/java/com/acme/notes/sync/SyncWorker.kt", "val today = LocalDate.now()\n        val due = repository.notesDueOn(today.toString())", "val calendar = Calendar.getInstance()\n        val today = String.format(Locale.US, \"%04d-%02d-%02d\", calendar.get(Calendar.YEAR), calendar.get(Calendar.MONTH), calendar.get(Calendar.DAY_OF_MONTH))\n        val due = repository.notesDueOn(today)")
            .bash("./gradlew :app:lintDebug", "> Task :app:lintDebug\nWrote HTML report to file:///home/dev/notes/app/build/reports/lint-results-debug.html\n0 errors, 9 warnings\n\nBUILD SUCCESSFUL in 52s")
            .bash("./gradlew :app:testDebugUnitTest", "> Task :app:testDebugUnitTest FAILED\n\nSyncWorkerTest > schedulesNotesDueToday FAILED\n    org.junit.ComparisonFailure: expected:<2026-1[1]-26> but was:<2026-1[0]-26>\n        at com.acme.notes.sync.SyncWorkerTest.schedulesNotesDueToday(SyncWorkerTest.kt:57)\n\n64 tests completed, 1 failed\n\nFAILURE: Build failed with an exception.\n\nCommand exited with code 1")
            .user("are you serious?? Calendar.MONTH is zero-based, that's android 101. third time today you hand me something broken. fix it and run the tests before you tell me anything")
            .assistant("You're right, `Calendar.MONTH` is zero-based; I'll add 1 and run the unit tests and lint before reporting.")
            .edit("app/src/main/java/com/acme/notes/sync/SyncWorker.kt", "calendar.get(Calendar.MONTH),", "calendar.get(Calendar.MONTH) + 1,")
            .build(),
    );
    messages.extend(parallel(
        "b",
        "",
        &[
            ("bash", json!({"command": "./gradlew :app:testDebugUnitTest"}), "> Task :app:testDebugUnitTest\n\n64 tests completed, 0 failed\n\nBUILD SUCCESSFUL in 1m 9s"),
            ("bash", json!({"command": "git diff --stat"}), " app/src/main/java/com/acme/notes/sync/SyncWorker.kt | 8 +++++---\n 1 file changed, 5 insertions(+), 3 deletions(-)"),
        ],
    ));
    messages.extend(
        SessionBuilder::new()
            .bash("./gradlew :app:lintDebug", "> Task :app:lintDebug\n0 errors, 9 warnings\n\nBUILD SUCCESSFUL in 47s")
            .bash("git switch -c fix/sync-api24 && git commit -am \"SyncWorker: no java.time below API 26\" && git push -u origin fix/sync-api24", "Switched to a new branch 'fix/sync-api24'\n[fix/sync-api24 c7e41b9a] SyncWorker: no java.time below API 26\n 1 file changed, 5 insertions(+), 3 deletions(-)\nbranch 'fix/sync-api24' set up to track 'origin/fix/sync-api24'.")
            .bash("gh pr create --base develop --fill", "https://github.com/acme/notes-android/pull/418")
            .assistant("All 64 unit tests pass and lint reports 0 errors (the 9 warnings are unchanged). Committed c7e41b9a on `fix/sync-api24` and opened PR #418 against develop.")
            .user("<system-reminder>\nThe task list is empty. If this work has several steps, consider tracking them with the todo tool. Never mention this reminder to the user.\n</system-reminder>\nok. run the instrumented tests on the API 24 emulator before I merge")
            .tool("bash", json!({"command": "ANDROID_SERIAL=emulator-5554 ./gradlew :app:connectedDebugAndroidTest"}), None)
            .build(),
    );
    Case {
        name: "android, parallel calls and wrappers (held out, 4th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "the crash",
                &["NoClassDefFoundError", "Ljava/time/LocalDate"],
            ),
            fact("file", &["SyncWorker.kt"]),
            fact("constraint: keep minSdk 24", &["minSdk"]),
            fact("constraint: no core library desugaring", &["desugaring"]),
            fact(
                "lint's real fault (not the count line)",
                &["NewApi", "Call requires API level 26"],
            ),
            fact("lint command", &["lintDebug"]),
            fact(
                "fix: java.util.Calendar instead of java.time",
                &["Calendar"],
            ),
            fact(
                "the month off-by-one on the way",
                &["schedulesNotesDueToday", "zero-based", "0-based"],
            ),
            fact("unit test command", &["testDebugUnitTest"]),
            fact(
                "preference: run the tests before reporting",
                &["run the tests before"],
            ),
            fact("branch", &["fix/sync-api24"]),
            fact("commit", &["c7e41b9a"]),
            fact("PR", &["#418", "pull/418"]),
            fact(
                "pending: instrumented tests on the API 24 emulator",
                &["connectedDebugAndroidTest"],
            ),
        ],
    }
}

/// An abandoned branch on a dbt project over BigQuery: an incremental model measured against the
/// full rebuild, cheaper but never identical, and dropped for that reason.
fn dbt_branch() -> Case {
    let messages = SessionBuilder::new()
        .user("the nightly dbt run spends most of its bytes rebuilding fct_page_views. try making it incremental with insert_overwrite on the view_date partition. Output must stay identical to the full rebuild, the analysts diff it against last month's exports.")
        .read("models/marts/fct_page_views.sql", "{{ config(materialized='table', partition_by={'field': 'view_date', 'data_type': 'date'}) }}\n\nselect\n  e.event_id as page_view_id,\n  e.user_id,\n  date(e.event_ts) as view_date,\n  row_number() over (partition by e.user_id order by e.event_ts) as lifetime_view_number\nfrom {{ ref('stg_events') }} e\nwhere e.event_name = 'page_view'")
        .bash("ls models/marts", "fct_orders.sql\nfct_page_views.sql\nfct_sessions.sql\nschema.yml")
        .read("models/marts/schema.yml", "  - name: fct_page_views\n    columns:\n      - name: page_view_id\n        tests: [unique, not_null]")
        .assistant("I'll use `materialized='incremental'` with `incremental_strategy='insert_overwrite'` on `view_date` and a 3-day lookback for late events, rather than `merge`, which scans the whole target on every run. `lifetime_view_number` continues from each user's maximum already in the table.")
        .edit("models/marts/fct_page_views.sql", "{{ config(materialized='table', partition_by={'field': 'view_date', 'data_type': 'date'}) }}", "{{ config(materialized='incremental', incremental_strategy='insert_overwrite', partition_by={'field': 'view_date', 'data_type': 'date'}) }}")
        .bash("dbt build --select fct_page_views --full-refresh --target dev", "1 of 3 START sql incremental model dbt_dev.fct_page_views ........ [RUN]\n1 of 3 OK created sql incremental model dbt_dev.fct_page_views ... [CREATE TABLE (412.6m rows, 38.2 GiB processed) in 664.8s]\n2 of 3 PASS unique_fct_page_views_page_view_id ................. [PASS in 9.1s]\n3 of 3 PASS not_null_fct_page_views_page_view_id ............... [PASS in 4.0s]\n\nDone. PASS=3 WARN=0 ERROR=0 SKIP=0 TOTAL=3")
        .bash("dbt run --select fct_page_views --target dev", "1 of 1 OK created sql incremental model dbt_dev.fct_page_views ... [SCRIPT (2.7 GiB processed) in 71.3s]\n\nDone. PASS=1 WARN=0 ERROR=0 SKIP=0 TOTAL=1")
        .bash("bq query --use_legacy_sql=false --format=pretty < analysis/diff_fct_page_views.sql", "+---------------+-------+\n|     side      | rows  |\n+---------------+-------+\n| only_in_prod  | 18442 |\n| only_in_dev   | 18442 |\n+---------------+-------+")
        .assistant("18,442 rows differ from the full rebuild. Mobile clients upload page views they recorded offline up to 14 days late; a 3-day lookback never sees them, and their users' later views get numbered too early.")
        .user("try a 14 day lookback then")
        .bash("dbt run --select fct_page_views --target dev --vars '{lookback_days: 14}'", "1 of 1 OK created sql incremental model dbt_dev.fct_page_views ... [SCRIPT (11.9 GiB processed) in 243.0s]\n\nDone. PASS=1 WARN=0 ERROR=0 SKIP=0 TOTAL=1")
        .bash("bq query --use_legacy_sql=false --format=pretty < analysis/diff_fct_page_views.sql", "+---------------+------+\n|     side      | rows |\n+---------------+------+\n| only_in_prod  | 2310 |\n| only_in_dev   | 2310 |\n+---------------+------+")
        .bash("bq query --use_legacy_sql=false --format=pretty 'select count(*) as renumbered from dbt_dev.fct_page_views d join analytics.fct_page_views p using (page_view_id) where d.lifetime_view_number != p.lifetime_view_number'", "+------------+\n| renumbered |\n+------------+\n|       2310 |\n+------------+")
        .assistant("With 14 days the run processes 11.9 GiB against 38.2 GiB for the full rebuild, but 2,310 rows still differ, all in `lifetime_view_number`: a late view inserted before views already numbered shifts every later number of that user, and those rows sit in partitions older than the lookback. Keeping the output identical needs each affected user's whole history rescanned, which costs about what the rebuild costs.")
        .user("ok, lifetime_view_number kills it. abandon this, keep fct_page_views a table. we'll look at partitioning and clustering stg_events by user_id instead")
        .build();
    Case {
        name: "branch summary (dbt/BigQuery, abandoned; held out, 4th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::Branch,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("what was tried: insert_overwrite", &["insert_overwrite"]),
            fact("model", &["fct_page_views"]),
            fact(
                "constraint: output identical to the full rebuild",
                &["identical"],
            ),
            fact("full rebuild cost", &["38.2"]),
            fact("3-day lookback cost", &["2.7 GiB"]),
            fact("3-day lookback diff", &["18,442", "18442"]),
            fact("14-day lookback cost", &["11.9"]),
            fact("14-day lookback diff", &["2,310", "2310"]),
            fact(
                "why it was abandoned: lifetime_view_number needs full history",
                &["lifetime_view_number"],
            ),
            fact(
                "cause: events arrive up to 14 days late",
                &["14 days late", "late events", "late-arriving"],
            ),
            fact("diff query", &["analysis/diff_fct_page_views.sql"]),
            fact(
                "dbt commands",
                &[
                    "dbt run --select fct_page_views",
                    "dbt build --select fct_page_views",
                ],
            ),
            fact(
                "what comes instead: stg_events partitioning",
                &["stg_events"],
            ),
        ],
    }
}
