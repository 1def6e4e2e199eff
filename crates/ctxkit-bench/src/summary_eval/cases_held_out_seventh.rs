//! The seventh held-out set, written on 2026-11-26 before any summary of it was read, by someone who
//! had not read the summarizer's code and had not run `summary-eval`; `docs/summaries.md` (which
//! describes the rules in prose) was read to learn how the evaluation scores. The fact lists say
//! what an engineer taking over each session must know, not what a summarizer is expected to find.
//! Reported apart as the 7th set.

use ctxkit_compaction::SummaryPurpose;
use ctxkit_protocol::AgentMessage;
use serde_json::{Value, json};

use super::{Case, SessionBuilder, fact, parallel_turn};

pub(super) fn cases() -> Vec<Case> {
    vec![
        spring_shipment_events(),
        grpc_deadline_update(),
        django_german_fees(),
        postgres_partitioning_branch(),
    ]
}

/// One assistant turn that calls several tools at once, then their results in call order, as an
/// agent records parallel calls. `prefix` keeps the ids apart from the builder's.
fn parallel(prefix: &str, calls: &[(&str, Value, &str)]) -> Vec<AgentMessage> {
    parallel_turn(|index| format!("{prefix}_{index}"), "", calls)
}

const GRADLE_BUILD: &str = "plugins {\n    id(\"org.springframework.boot\") version \"3.3.5\"\n    id(\"io.spring.dependency-management\") version \"1.1.6\"\n    id(\"org.jlleitschuh.gradle.ktlint\") version \"12.1.1\"\n    kotlin(\"jvm\") version \"1.9.25\"\n    kotlin(\"plugin.spring\") version \"1.9.25\"\n    kotlin(\"plugin.jpa\") version \"1.9.25\"\n}\n\njava { toolchain { languageVersion = JavaLanguageVersion.of(21) } }\n\ndependencies {\n    implementation(\"org.springframework.boot:spring-boot-starter-web\")\n    implementation(\"org.springframework.boot:spring-boot-starter-data-jpa\")\n    implementation(\"org.springframework.boot:spring-boot-starter-validation\")\n    implementation(\"com.fasterxml.jackson.module:jackson-module-kotlin\")\n    implementation(\"org.flywaydb:flyway-core\")\n    implementation(\"org.flywaydb:flyway-database-postgresql\")\n    runtimeOnly(\"org.postgresql:postgresql\")\n    testImplementation(\"org.springframework.boot:spring-boot-starter-test\")\n    testImplementation(\"org.testcontainers:postgresql:1.20.3\")\n    testImplementation(\"com.ninja-squad:springmockk:4.0.2\")\n}\n\ntasks.withType<Test> { useJUnitPlatform() }";

const GRADLE_TEST_FAILED: &str = "> Task :api:compileKotlin\n> Task :api:compileTestKotlin\n> Task :api:test\n\nShipmentEventsControllerTest > returns 404 for an unknown shipment() PASSED\n\nShipmentEventsControllerTest > returns events newest first() FAILED\n    java.lang.AssertionError: JSON path \"$[0].occurredAt\" expected:<2026-03-01T09:30:00Z> but was:<2026-03-01T10:30:00+01:00>\n        at org.springframework.test.util.AssertionErrors.fail(AssertionErrors.java:59)\n        at org.springframework.test.util.AssertionErrors.assertEquals(AssertionErrors.java:122)\n        at org.springframework.test.util.JsonPathExpectationsHelper.assertValue(JsonPathExpectationsHelper.java:123)\n        at org.springframework.test.web.servlet.result.JsonPathResultMatchers.lambda$value$2(JsonPathResultMatchers.java:111)\n        at org.springframework.test.web.servlet.MockMvcKt.andExpect(MockMvc.kt:42)\n        at com.northwind.fleet.shipment.ShipmentEventsControllerTest.returns events newest first(ShipmentEventsControllerTest.kt:58)\n\n3 tests completed, 1 failed\n\n> Task :api:test FAILED\n\nFAILURE: Build failed with an exception.\n\n* What went wrong:\nExecution failed for task ':api:test'.\n> There were failing tests. See the report at: file:///home/dev/fleet/api/build/reports/tests/test/index.html\n\nBUILD FAILED in 41s\n5 actionable tasks: 3 executed, 2 up-to-date\n\nCommand exited with code 1";

/// A Kotlin/Spring Boot service over three requests: an endpoint (the sort order changed once by the
/// user, a test failure fixed after a wrong attempt), a commit and PR on a feature branch, and a
/// cache whose compile still fails when the span ends.
fn spring_shipment_events() -> Case {
    let mut messages = SessionBuilder::new()
        .user("hey, in the fleet repo (api module) we need GET /api/v2/shipments/{id}/events returning the tracking events of a shipment, newest first. the entity is already there (ShipmentEvent). two rules for this repo while you work: never edit a Flyway migration that's already been applied (V1..V14 are on prod), schema changes always go in a new file. and use ./gradlew, not whatever gradle is on the path — and run ./gradlew ktlintCheck before any commit, CI rejects otherwise")
        .thinking("Look at the module layout first, then the entity and the existing controller.")
        .bash("ls api/src/main/kotlin/com/northwind/fleet/ api/src/main/resources/db/migration/", "api/src/main/kotlin/com/northwind/fleet/:\nFleetApplication.kt\nconfig\ndriver\nshipment\nvehicle\n\napi/src/main/resources/db/migration/:\nV1__init.sql\nV2__vehicles.sql\nV3__drivers.sql\nV4__shipments.sql\nV5__shipment_status_enum.sql\nV6__driver_licences.sql\nV7__vehicle_capacity.sql\nV8__shipment_events.sql\nV9__event_location.sql\nV10__drop_legacy_tracking.sql\nV11__shipment_reference_unique.sql\nV12__driver_shift.sql\nV13__vehicle_depot.sql\nV14__shipment_event_source.sql")
        .bash("git status && git log --oneline -3", "On branch develop\nYour branch is up to date with 'origin/develop'.\n\nnothing to commit, working tree clean\n1e0b7c2 Merge pull request #411 from northwind/feature/driver-shifts\n88af310 driver: shift overlap validation\n5d1c4e9 vehicle: depot assignment")
        .build();
    messages.extend(parallel(
        "call_ship_a",
        &[
            ("read", json!({"path": "api/src/main/kotlin/com/northwind/fleet/shipment/ShipmentEvent.kt"}), "@Entity\n@Table(name = \"shipment_events\")\nclass ShipmentEvent(\n    @Id @GeneratedValue(strategy = GenerationType.IDENTITY)\n    val id: Long? = null,\n    @Column(name = \"shipment_id\", nullable = false)\n    val shipmentId: Long,\n    @Enumerated(EnumType.STRING)\n    val type: ShipmentEventType,\n    @Column(name = \"occurred_at\", nullable = false)\n    val occurredAt: OffsetDateTime,\n    val location: String?,\n    @Enumerated(EnumType.STRING)\n    val source: EventSource,\n)"),
            ("read", json!({"path": "api/src/main/kotlin/com/northwind/fleet/shipment/ShipmentController.kt"}), "@RestController\n@RequestMapping(\"/api/v2/shipments\")\nclass ShipmentController(\n    private val shipments: ShipmentService,\n) {\n    @GetMapping(\"/{id}\")\n    fun get(@PathVariable id: Long): ShipmentDto = shipments.get(id).toDto()\n\n    @PostMapping\n    @ResponseStatus(HttpStatus.CREATED)\n    fun create(@Valid @RequestBody request: CreateShipmentRequest): ShipmentDto = shipments.create(request).toDto()\n}"),
            ("bash", json!({"command": "grep -rn \"ShipmentEventRepository\" api/src --include=*.kt"}), "api/src/main/kotlin/com/northwind/fleet/shipment/ShipmentEventRepository.kt:5:interface ShipmentEventRepository : JpaRepository<ShipmentEvent, Long> {\napi/src/main/kotlin/com/northwind/fleet/shipment/ShipmentService.kt:14:    private val events: ShipmentEventRepository,"),
        ],
    ));
    messages.extend(
        SessionBuilder::new()
            .read("api/build.gradle.kts", GRADLE_BUILD)
            .read("api/src/main/resources/db/migration/V8__shipment_events.sql", "CREATE TABLE shipment_events (\n    id BIGSERIAL PRIMARY KEY,\n    shipment_id BIGINT NOT NULL REFERENCES shipments(id),\n    type VARCHAR(32) NOT NULL,\n    occurred_at TIMESTAMPTZ NOT NULL\n);")
            .assistant("There is no index on `shipment_events(shipment_id, occurred_at)`, and V8 is applied, so I'll add it as `V15__shipment_events_shipment_occurred_idx.sql` rather than touching V8. The endpoint goes on the existing `ShipmentController`; the repository gets a derived query.")
            .edit("api/src/main/kotlin/com/northwind/fleet/shipment/ShipmentEventRepository.kt", "interface ShipmentEventRepository : JpaRepository<ShipmentEvent, Long> {", "interface ShipmentEventRepository : JpaRepository<ShipmentEvent, Long> {\n    fun findByShipmentIdOrderByOccurredAtDesc(shipmentId: Long): List<ShipmentEvent>")
            .edit("api/src/main/kotlin/com/northwind/fleet/shipment/ShipmentService.kt", "    fun get(id: Long): Shipment =", "    fun events(id: Long): List<ShipmentEvent> {\n        get(id)\n        return events.findByShipmentIdOrderByOccurredAtDesc(id)\n    }\n\n    fun get(id: Long): Shipment =")
            .edit("api/src/main/kotlin/com/northwind/fleet/shipment/ShipmentController.kt", "    @PostMapping", "    @GetMapping(\"/{id}/events\")\n    fun events(@PathVariable id: Long): List<ShipmentEventDto> = shipments.events(id).map { it.toDto() }\n\n    @PostMapping")
            .write("api/src/main/kotlin/com/northwind/fleet/shipment/ShipmentEventDto.kt", "data class ShipmentEventDto(\n    val type: ShipmentEventType,\n    val occurredAt: OffsetDateTime,\n    val location: String?,\n)\n\nfun ShipmentEvent.toDto() = ShipmentEventDto(type, occurredAt, location)\n")
            .write("api/src/main/resources/db/migration/V15__shipment_events_shipment_occurred_idx.sql", "CREATE INDEX shipment_events_shipment_occurred_idx\n    ON shipment_events (shipment_id, occurred_at);\n")
            .write("api/src/test/kotlin/com/northwind/fleet/shipment/ShipmentEventsControllerTest.kt", "@WebMvcTest(ShipmentController::class)\nclass ShipmentEventsControllerTest(@Autowired val mvc: MockMvc) {\n    @MockkBean lateinit var shipments: ShipmentService\n    // returns events newest first, returns 404 for an unknown shipment, returns an empty list\n}\n")
            .bash("./gradlew :api:test --tests '*ShipmentEventsControllerTest*'", GRADLE_TEST_FAILED)
            .assistant("The events are stored with a +01:00 offset and Jackson writes the `OffsetDateTime` as it is. I'll set `spring.jackson.time-zone: UTC` so everything is written in UTC.")
            .edit("api/src/main/resources/application.yml", "spring:\n  jackson:\n    default-property-inclusion: non_null", "spring:\n  jackson:\n    default-property-inclusion: non_null\n    time-zone: UTC")
            .bash("./gradlew :api:test --tests '*ShipmentEventsControllerTest*'", "> Task :api:test\n\nShipmentEventsControllerTest > returns events newest first() FAILED\n    java.lang.AssertionError: JSON path \"$[0].occurredAt\" expected:<2026-03-01T09:30:00Z> but was:<2026-03-01T10:30:00+01:00>\n        at org.springframework.test.util.AssertionErrors.fail(AssertionErrors.java:59)\n\n3 tests completed, 1 failed\n\nBUILD FAILED in 37s\n\nCommand exited with code 1")
            .thinking("time-zone only applies to java.util.Date and to deserialization; OffsetDateTime keeps its own offset when written. Convert to Instant in the DTO instead and undo the yml change.")
            .assistant("That setting doesn't affect `OffsetDateTime` on output, so I reverted it. The DTO now exposes `occurredAt` as an `Instant` (`occurredAt.toInstant()`), which Jackson always writes in UTC with `Z`.")
            .edit("api/src/main/resources/application.yml", "    default-property-inclusion: non_null\n    time-zone: UTC", "    default-property-inclusion: non_null")
            .edit("api/src/main/kotlin/com/northwind/fleet/shipment/ShipmentEventDto.kt", "    val occurredAt: OffsetDateTime,", "    val occurredAt: Instant,")
            .edit("api/src/main/kotlin/com/northwind/fleet/shipment/ShipmentEventDto.kt", "ShipmentEventDto(type, occurredAt, location)", "ShipmentEventDto(type, occurredAt.toInstant(), location)")
            .bash("./gradlew :api:test --tests '*ShipmentEventsControllerTest*'", "> Task :api:compileKotlin\n> Task :api:test\n\nShipmentEventsControllerTest > returns events newest first() PASSED\nShipmentEventsControllerTest > returns 404 for an unknown shipment() PASSED\nShipmentEventsControllerTest > returns an empty list() PASSED\n\nBUILD SUCCESSFUL in 39s\n5 actionable tasks: 2 executed, 3 up-to-date")
            .assistant("Done: `GET /api/v2/shipments/{id}/events` returns the events newest first with UTC timestamps; the three controller tests pass.")
            .user("hmm wait, talked to the mobile folks — they render a timeline top to bottom, so they want oldest first after all. sorry. flip it to ascending")
            .edit("api/src/main/kotlin/com/northwind/fleet/shipment/ShipmentEventRepository.kt", "findByShipmentIdOrderByOccurredAtDesc", "findByShipmentIdOrderByOccurredAtAsc")
            .edit("api/src/main/kotlin/com/northwind/fleet/shipment/ShipmentService.kt", "events.findByShipmentIdOrderByOccurredAtDesc(id)", "events.findByShipmentIdOrderByOccurredAtAsc(id)")
            .failed_edit("api/src/test/kotlin/com/northwind/fleet/shipment/ShipmentEventsControllerTest.kt", "fun `returns events newest first`()")
            .read("api/src/test/kotlin/com/northwind/fleet/shipment/ShipmentEventsControllerTest.kt", "@WebMvcTest(ShipmentController::class)\nclass ShipmentEventsControllerTest(@Autowired val mvc: MockMvc) {\n    @MockkBean lateinit var shipments: ShipmentService\n\n    @Test\n    fun `returns events newest first` () {\n        every { shipments.events(7) } returns listOf(event(\"2026-03-01T10:30:00+01:00\"), event(\"2026-02-28T18:00:00Z\"))\n        mvc.get(\"/api/v2/shipments/7/events\").andExpect {\n            jsonPath(\"$[0].occurredAt\") { value(\"2026-03-01T09:30:00Z\") }\n        }\n    }\n}")
            .edit("api/src/test/kotlin/com/northwind/fleet/shipment/ShipmentEventsControllerTest.kt", "fun `returns events newest first` () {\n        every { shipments.events(7) } returns listOf(event(\"2026-03-01T10:30:00+01:00\"), event(\"2026-02-28T18:00:00Z\"))", "fun `returns events oldest first` () {\n        every { shipments.events(7) } returns listOf(event(\"2026-02-28T18:00:00Z\"), event(\"2026-03-01T10:30:00+01:00\"))")
            .edit("api/src/test/kotlin/com/northwind/fleet/shipment/ShipmentEventsControllerTest.kt", "value(\"2026-03-01T09:30:00Z\")", "value(\"2026-02-28T18:00:00Z\")")
            .bash("./gradlew :api:test", "> Task :api:test\n\nDriverShiftServiceTest > rejects overlapping shifts() PASSED\nShipmentControllerTest > creates a shipment() PASSED\nShipmentEventsControllerTest > returns events oldest first() PASSED\nShipmentEventsControllerTest > returns 404 for an unknown shipment() PASSED\nShipmentEventsControllerTest > returns an empty list() PASSED\nVehicleRepositoryTest > finds vehicles by depot() PASSED\n\n64 tests completed, 0 failed\n\nBUILD SUCCESSFUL in 1m 52s\n6 actionable tasks: 2 executed, 4 up-to-date")
            .assistant("Flipped to oldest first (`findByShipmentIdOrderByOccurredAtAsc`); the whole `:api:test` suite passes (64 tests).")
            .user("great. put it on a feature branch, commit and open a PR against develop")
            .bash("./gradlew ktlintCheck", "> Task :api:ktlintMainSourceSetCheck FAILED\n/home/dev/fleet/api/src/main/kotlin/com/northwind/fleet/shipment/ShipmentEventDto.kt:9:1 Needless blank line(s) (standard:no-consecutive-blank-lines)\n\nFAILURE: Build failed with an exception.\n\nBUILD FAILED in 6s\n\nCommand exited with code 1")
            .bash("./gradlew ktlintFormat && ./gradlew ktlintCheck", "> Task :api:ktlintMainSourceSetFormat\n> Task :api:ktlintCheck\n\nBUILD SUCCESSFUL in 9s")
            .bash("git checkout -b feature/shipment-events-endpoint && git add -A && git commit -m \"shipment: GET /api/v2/shipments/{id}/events, oldest first\" && git push -u origin feature/shipment-events-endpoint", "Switched to a new branch 'feature/shipment-events-endpoint'\n[feature/shipment-events-endpoint b7e41d0] shipment: GET /api/v2/shipments/{id}/events, oldest first\n 7 files changed, 96 insertions(+), 1 deletion(-)\n create mode 100644 api/src/main/kotlin/com/northwind/fleet/shipment/ShipmentEventDto.kt\n create mode 100644 api/src/main/resources/db/migration/V15__shipment_events_shipment_occurred_idx.sql\n create mode 100644 api/src/test/kotlin/com/northwind/fleet/shipment/ShipmentEventsControllerTest.kt\nEnumerating objects: 31, done.\nCounting objects: 100% (31/31), done.\nWriting objects: 100% (19/19), 3.87 KiB | 3.87 MiB/s, done.\nremote:\nremote: Create a pull request for 'feature/shipment-events-endpoint' on GitHub by visiting:\nremote:      https://github.com/northwind/fleet/pull/new/feature/shipment-events-endpoint\nremote:\nTo github.com:northwind/fleet.git\n * [new branch]      feature/shipment-events-endpoint -> feature/shipment-events-endpoint\nbranch 'feature/shipment-events-endpoint' set up to track 'origin/feature/shipment-events-endpoint'.")
            .bash("gh pr create --base develop --title \"Shipment events endpoint\" --body \"GET /api/v2/shipments/{id}/events, oldest first, UTC timestamps. New index in V15.\"", "https://github.com/northwind/fleet/pull/418")
            .assistant("Committed `b7e41d0` on `feature/shipment-events-endpoint` and opened PR #418 against `develop`.")
            .user("next thing: that endpoint will get hammered by the mobile app polling. cache the events per shipment with Caffeine, 30s TTL, and evict the shipment's entry when a new event is recorded")
            .bash("./gradlew :api:dependencies --configuration runtimeClasspath | grep -i -E \"caffeine|cache\"", "(no output)")
            .assistant("Caffeine isn't on the classpath yet. I'll add `com.github.ben-manes.caffeine:caffeine:3.1.8`, a `CacheConfig` with a `CaffeineCacheManager` (`expireAfterWrite(30s)`), `@Cacheable(\"shipmentEvents\")` on `ShipmentService.events` and `@CacheEvict` on `recordEvent`.")
            .edit("api/build.gradle.kts", "    implementation(\"org.flywaydb:flyway-core\")", "    implementation(\"com.github.ben-manes.caffeine:caffeine:3.1.8\")\n    implementation(\"org.flywaydb:flyway-core\")")
            .write("api/src/main/kotlin/com/northwind/fleet/config/CacheConfig.kt", "@Configuration\n@EnableCaching\nclass CacheConfig {\n    @Bean\n    fun cacheManager(): CacheManager =\n        CaffeineCacheManager(\"shipmentEvents\").apply {\n            setCaffeine(Caffeine.newBuilder().expireAfterWrite(Duration.ofSeconds(30)))\n        }\n}\n")
            .edit("api/src/main/kotlin/com/northwind/fleet/shipment/ShipmentService.kt", "    fun events(id: Long): List<ShipmentEvent> {", "    @Cacheable(\"shipmentEvents\")\n    fun events(id: Long): List<ShipmentEvent> {")
            .edit("api/src/main/kotlin/com/northwind/fleet/shipment/ShipmentService.kt", "    fun recordEvent(", "    @CacheEvict(\"shipmentEvents\", key = \"#shipmentId\")\n    fun recordEvent(")
            .bash("./gradlew :api:compileKotlin", "> Task :api:compileKotlin FAILED\ne: file:///home/dev/fleet/api/src/main/kotlin/com/northwind/fleet/config/CacheConfig.kt:12:9 Unresolved reference 'CaffeineCacheManager'.\ne: file:///home/dev/fleet/api/src/main/kotlin/com/northwind/fleet/config/CacheConfig.kt:3:2 Unresolved reference 'EnableCaching'.\n\nFAILURE: Build failed with an exception.\n\n* What went wrong:\nExecution failed for task ':api:compileKotlin'.\n> A failure occurred while executing org.jetbrains.kotlin.compilerRunner.GradleCompilerRunnerWithWorkers$GradleKotlinCompilerWorkAction\n   > Compilation error. See log for more details\n\nBUILD FAILED in 14s\n\nCommand exited with code 1")
            .thinking("CaffeineCacheManager lives in spring-context-support, which comes with spring-boot-starter-cache. Need that starter as well.")
            .build(),
    );
    Case {
        name: "spring boot shipment events (held out, 7th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "constraint: never edit an applied Flyway migration",
                &[
                    "already been applied",
                    "already applied",
                    "applied migration",
                    "V1..V14",
                ],
            ),
            fact(
                "constraint: ktlintCheck before any commit",
                &["ktlintCheck"],
            ),
            fact("the endpoint", &["/shipments/{id}/events"]),
            fact("controller", &["ShipmentController"]),
            fact(
                "user changed the order to oldest first",
                &["oldest first", "OrderByOccurredAtAsc", "ascending"],
            ),
            fact(
                "test command",
                &["./gradlew :api:test", "gradlew :api:test"],
            ),
            fact(
                "the test failure: timestamp written with its offset",
                &["10:30:00+01:00"],
            ),
            fact(
                "wrong attempt (reverted): spring.jackson.time-zone",
                &["time-zone"],
            ),
            fact("the fix: the DTO exposes an Instant", &["Instant"]),
            fact("new migration V15", &["V15__"]),
            fact("feature branch", &["feature/shipment-events-endpoint"]),
            fact("commit", &["b7e41d0"]),
            fact("PR number", &["#418", "pull/418", "PR 418"]),
            fact("open request: Caffeine cache", &["Caffeine"]),
            fact(
                "cache TTL 30s",
                &["30s", "30 s", "30 seconds", "ofSeconds(30)"],
            ),
            fact(
                "last error: compile fails",
                &[
                    "Unresolved reference 'CaffeineCacheManager'",
                    "Unresolved reference",
                ],
            ),
        ],
    }
}

const GRPC_PREVIOUS: &str = "_Extractive summary written offline by ctxkit (no model was used)._\n\n## Goal\n- Add a server-streaming `ListInvoices` RPC to `billing.v1.BillingService`\n- **Latest:** Propagate the caller's deadline: every downstream call made by `ListInvoices` must respect the incoming context\n\n## Constraints & Preferences\n- Never change the field numbers of existing messages in `proto/billing/v1/billing.proto`; only add new fields\n- Run `buf lint` and `buf breaking --against '.git#branch=main'` before every commit\n\n## Progress\n### Done\n- [x] Edited `proto/billing/v1/billing.proto` (2×)\n- [x] `buf generate`: passed\n- [x] Wrote `internal/server/list_invoices.go`\n- [x] Committed `9c2e4af` on `feat/list-invoices-stream`: billing: ListInvoices server streaming\n\n### In Progress\n- [ ] Pass the stream's context to `ledger.Client.FetchPage` in `internal/server/list_invoices.go` (it uses `context.Background()` today)\n\n### Blocked\n- (none)\n\n## Key Decisions\n- Stream pages of 100 invoices per message rather than one message per invoice\n- Generate code with `buf generate` instead of raw `protoc` invocations\n\n## Next Steps\n1. Add a test with a 50ms client deadline in `internal/server/list_invoices_test.go`\n2. Run `go test -race ./internal/server/...`\n\n## Critical Context\n- Branch: `feat/list-invoices-stream`\n- Build/test/run commands: `buf generate`, `go test -race ./internal/server/...`, `buf lint`\n- Files: `gen/billing/v1/billing.pb.go`, `internal/ledger/client.go`";

const BUF_LINT_VERBOSE: &str = "buf: lint: using config file buf.yaml (version v2)\nbuf: lint: module proto: 4 files\nbuf: lint: checking rule DIRECTORY_SAME_PACKAGE\nbuf: lint: checking rule ENUM_FIRST_VALUE_ZERO\nbuf: lint: checking rule ENUM_NO_ALLOW_ALIAS\nbuf: lint: checking rule ENUM_VALUE_PREFIX\nbuf: lint: checking rule ENUM_ZERO_VALUE_SUFFIX\nbuf: lint: checking rule FIELD_LOWER_SNAKE_CASE\nbuf: lint: checking rule FILE_LOWER_SNAKE_CASE\nbuf: lint: checking rule IMPORT_NO_PUBLIC\nbuf: lint: checking rule PACKAGE_DIRECTORY_MATCH\nbuf: lint: checking rule PACKAGE_VERSION_SUFFIX\nbuf: lint: checking rule RPC_REQUEST_RESPONSE_UNIQUE\nbuf: lint: checking rule RPC_REQUEST_STANDARD_NAME\nbuf: lint: checking rule RPC_RESPONSE_STANDARD_NAME\nbuf: lint: checking rule SERVICE_SUFFIX\nbuf: lint: 0 issues";

/// An update of an earlier ctxkit summary on a Go gRPC service: the open item (context passed to
/// the ledger client) is finished, a new test failure is met and fixed with a new decision, a commit
/// is made, and the user holds the PR back.
fn grpc_deadline_update() -> Case {
    let mut messages = SessionBuilder::new()
        .user("continue where you left off")
        .build();
    messages.extend(parallel(
        "call_grpc_a",
        &[
            ("read", json!({"path": "internal/server/list_invoices.go"}), "func (s *Server) ListInvoices(req *billingv1.ListInvoicesRequest, stream billingv1.BillingService_ListInvoicesServer) error {\n\tcursor := req.GetPageToken()\n\tfor {\n\t\tpage, next, err := s.ledger.FetchPage(context.Background(), req.GetAccountId(), cursor, pageSize)\n\t\tif err != nil {\n\t\t\treturn fmt.Errorf(\"fetch page: %w\", err)\n\t\t}\n\t\tif err := stream.Send(&billingv1.ListInvoicesResponse{Invoices: page}); err != nil {\n\t\t\treturn err\n\t\t}\n\t\tif next == \"\" {\n\t\t\treturn nil\n\t\t}\n\t\tcursor = next\n\t}\n}"),
            ("read", json!({"path": "internal/ledger/client.go"}), "// FetchPage returns one page of invoices and the next cursor (empty at the end).\nfunc (c *Client) FetchPage(ctx context.Context, accountID, cursor string, size int) ([]*billingv1.Invoice, string, error) {\n\treq, err := http.NewRequestWithContext(ctx, http.MethodGet, c.pageURL(accountID, cursor, size), nil)\n\tif err != nil {\n\t\treturn nil, \"\", err\n\t}\n\tresp, err := c.http.Do(req)\n\tif err != nil {\n\t\treturn nil, \"\", fmt.Errorf(\"ledger: %w\", err)\n\t}\n\tdefer resp.Body.Close()\n\treturn decodePage(resp.Body)\n}"),
            ("bash", json!({"command": "git log --oneline -3 && git status --short"}), "9c2e4af billing: ListInvoices server streaming\n41d7e0b proto: add Invoice.due_date (field 9)\nb20c6aa Merge pull request #87 from acme/chore/buf-v2\n"),
        ],
    ));
    messages.extend(
        SessionBuilder::new()
            .edit("internal/server/list_invoices.go", "s.ledger.FetchPage(context.Background(), req.GetAccountId(), cursor, pageSize)", "s.ledger.FetchPage(stream.Context(), req.GetAccountId(), cursor, pageSize)")
            .bash("go build ./... && go vet ./internal/...", "(no output)")
            .write("internal/server/list_invoices_test.go", "func TestListInvoices_DeadlineExceeded(t *testing.T) {\n\tledger := newSlowLedger(200 * time.Millisecond)\n\tclient := startServer(t, ledger)\n\tctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)\n\tdefer cancel()\n\tstream, err := client.ListInvoices(ctx, &billingv1.ListInvoicesRequest{AccountId: \"acc_1\"})\n\trequire.NoError(t, err)\n\t_, err = stream.Recv()\n\tif got := status.Code(err); got != codes.DeadlineExceeded {\n\t\tt.Fatalf(\"got code %v, want DeadlineExceeded\", got)\n\t}\n\tif !ledger.sawCancel() {\n\t\tt.Fatal(\"ledger call was not cancelled\")\n\t}\n}\n")
            .bash("go test -race ./internal/server/...", "--- FAIL: TestListInvoices_DeadlineExceeded (0.21s)\n    list_invoices_test.go:48: got code Unknown, want DeadlineExceeded\nFAIL\nFAIL\tgithub.com/acme/billing/internal/server\t1.384s\nFAIL\n\nCommand exited with code 1")
            .thinking("The ledger call is cancelled now (no 'not cancelled' failure), but the handler returns fmt.Errorf(\"fetch page: %w\") which grpc turns into codes.Unknown. Convert context errors to a status.")
            .bash("grep -rn \"status.Error\\|FromContextError\" internal/ | head -20", "internal/server/get_invoice.go:31:\t\treturn nil, status.Error(codes.NotFound, \"invoice not found\")\ninternal/server/get_invoice.go:44:\t\treturn nil, status.Errorf(codes.Internal, \"ledger: %v\", err)")
            .assistant("The ledger call is cancelled now; the test fails because the handler wraps the error with `fmt.Errorf`, which gRPC reports as `Unknown`. I'll convert context errors with `status.FromContextError(err).Err()` rather than matching `context.DeadlineExceeded` and `context.Canceled` by hand, so a cancelled client gets `Canceled` too; other ledger errors become `codes.Unavailable`.")
            .edit("internal/server/list_invoices.go", "\t\tif err != nil {\n\t\t\treturn fmt.Errorf(\"fetch page: %w\", err)\n\t\t}", "\t\tif err != nil {\n\t\t\tif ctxErr := stream.Context().Err(); ctxErr != nil {\n\t\t\t\treturn status.FromContextError(ctxErr).Err()\n\t\t\t}\n\t\t\treturn status.Errorf(codes.Unavailable, \"ledger: %v\", err)\n\t\t}")
            .bash("go test -race ./internal/server/...", "ok  \tgithub.com/acme/billing/internal/server\t1.912s")
            .bash("buf lint -v", BUF_LINT_VERBOSE)
            .bash("buf breaking --against '.git#branch=main'", "(no output)")
            .bash("git commit -am \"server: propagate the stream deadline to the ledger in ListInvoices\"", "[feat/list-invoices-stream e58b1f3] server: propagate the stream deadline to the ledger in ListInvoices\n 2 files changed, 41 insertions(+), 2 deletions(-)\n create mode 100644 internal/server/list_invoices_test.go")
            .assistant("Committed `e58b1f3`: `ListInvoices` passes the stream context to `FetchPage`; a deadline or cancel comes back as `DeadlineExceeded`/`Canceled`. `go test -race` passes, `buf lint` and `buf breaking` are clean. Shall I push and open the PR?")
            .user("push yes, but don't open the PR yet — the ledger team releases ledger-client v0.9.0 on Monday with the retry fix, we bump to that first and then open it")
            .bash("git push -u origin feat/list-invoices-stream", "Enumerating objects: 17, done.\nCounting objects: 100% (17/17), done.\nWriting objects: 100% (10/10), 2.21 KiB | 2.21 MiB/s, done.\nTo github.com:acme/billing.git\n * [new branch]      feat/list-invoices-stream -> feat/list-invoices-stream\nbranch 'feat/list-invoices-stream' set up to track 'origin/feat/list-invoices-stream'.")
            .assistant("Pushed `feat/list-invoices-stream`. The PR waits until `ledger-client` v0.9.0 is out and bumped in `go.mod`.")
            .build(),
    );
    Case {
        name: "go grpc deadline, ctxkit earlier summary (held out, 7th set)",
        messages,
        previous: Some(GRPC_PREVIOUS.to_owned()),
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "earlier constraint: never renumber proto fields",
                &["field numbers"],
            ),
            fact(
                "earlier constraint: buf breaking before commit",
                &["buf breaking"],
            ),
            fact("the RPC", &["ListInvoices"]),
            fact("branch", &["feat/list-invoices-stream"]),
            fact("earlier commit", &["9c2e4af"]),
            fact(
                "earlier decision: pages of 100",
                &["pages of 100", "100 invoices"],
            ),
            fact(
                "finished: stream context passed to FetchPage",
                &["FetchPage", "stream.Context()"],
            ),
            fact("handler file", &["internal/server/list_invoices.go"]),
            fact(
                "deadline test",
                &["TestListInvoices_DeadlineExceeded", "list_invoices_test.go"],
            ),
            fact("the new failure", &["got code Unknown", "codes.Unknown"]),
            fact(
                "new decision: status.FromContextError",
                &["FromContextError"],
            ),
            fact(
                "test command",
                &[
                    "go test -race ./internal/server/...",
                    "go test ./internal/server/...",
                ],
            ),
            fact("new commit", &["e58b1f3"]),
            fact("PR held until ledger-client v0.9.0", &["v0.9.0", "0.9.0"]),
        ],
    }
}

const PIP_FREEZE: &str = "asgiref==3.8.1\nDjango==4.2.16\ndjango-environ==0.11.2\ndjango-import-export==3.3.9\ndjangorestframework==3.15.2\ngunicorn==22.0.0\npsycopg==3.2.3\npsycopg-binary==3.2.3\nsqlparse==0.5.1\ntablib==3.5.0\ntyping_extensions==4.12.2\nwhitenoise==6.7.0";

const SHOWMIGRATIONS: &str = "mitglieder\n [X] 0001_initial\n [X] 0002_mitglied_telefon\n [X] 0003_mitgliedschaft\n [X] 0004_mitgliedschaft_tarif\n [X] 0005_tarif_preis_decimal\n [X] 0006_mitglied_iban\n [X] 0007_remove_mitglied_fax\n [X] 0008_mitgliedschaft_gekuendigt_am\n [X] 0009_tarif_ermaessigt\n [X] 0010_mitglied_email_unique\n [X] 0011_abteilung\n [X] 0012_mitgliedschaft_abteilung\n [X] 0013_alter_mitglied_options\nveranstaltungen\n [X] 0001_initial\n [X] 0002_veranstaltung_ort\n [X] 0003_anmeldung_bezahlt";

const DJANGO_TYPEERROR: &str = "Traceback (most recent call last):\n  File \"/home/jana/verein/manage.py\", line 22, in <module>\n    main()\n  File \"/home/jana/verein/manage.py\", line 18, in main\n    execute_from_command_line(sys.argv)\n  File \"/home/jana/verein/.venv/lib/python3.11/site-packages/django/core/management/__init__.py\", line 442, in execute_from_command_line\n    utility.execute()\n  File \"/home/jana/verein/.venv/lib/python3.11/site-packages/django/core/management/__init__.py\", line 416, in execute\n    django.setup()\n  File \"/home/jana/verein/.venv/lib/python3.11/site-packages/django/apps/registry.py\", line 116, in populate\n    app_config.import_models()\n  File \"/home/jana/verein/mitglieder/models.py\", line 61, in Mitgliedschaft\n    beitrag_faellig_am = models.DateField(db_default=Now())\n  File \"/home/jana/verein/.venv/lib/python3.11/site-packages/django/db/models/fields/__init__.py\", line 1202, in __init__\n    super().__init__(verbose_name, name, **kwargs)\nTypeError: Field.__init__() got an unexpected keyword argument 'db_default'\n\nCommand exited with code 1";

/// A Django app, the user writing German (tool output English): a version constraint the assistant
/// first breaks (the error names it), a data migration, a commit, then an admin filter.
fn django_german_fees() -> Case {
    let mut messages = SessionBuilder::new()
        .user("Hallo! Im Vereinsportal brauchen wir bei der Mitgliedschaft ein Fälligkeitsdatum für den Jahresbeitrag, Feldname `beitrag_faellig_am`. Für alle bestehenden Mitgliedschaften soll es der 31.03. des laufenden Jahres sein. Wichtig: wir bleiben auf Django 4.2 LTS, bitte nichts benutzen, was es erst ab Django 5 gibt. Und keine neuen Pakete in requirements.txt, der Hoster installiert nur, was da drin steht.")
        .bash("pip freeze | grep -v '^-e'", PIP_FREEZE)
        .bash("python manage.py showmigrations mitglieder veranstaltungen", SHOWMIGRATIONS)
        .build();
    messages.extend(parallel(
        "call_verein_a",
        &[
            ("read", json!({"path": "mitglieder/models.py"}), "class Mitgliedschaft(models.Model):\n    mitglied = models.ForeignKey(Mitglied, on_delete=models.CASCADE, related_name=\"mitgliedschaften\")\n    tarif = models.ForeignKey(Tarif, on_delete=models.PROTECT)\n    abteilung = models.ForeignKey(Abteilung, null=True, blank=True, on_delete=models.SET_NULL)\n    beginn = models.DateField()\n    gekuendigt_am = models.DateField(null=True, blank=True)\n\n    class Meta:\n        verbose_name_plural = \"Mitgliedschaften\"\n        ordering = [\"-beginn\"]"),
            ("read", json!({"path": "mitglieder/admin.py"}), "@admin.register(Mitgliedschaft)\nclass MitgliedschaftAdmin(admin.ModelAdmin):\n    list_display = (\"mitglied\", \"tarif\", \"abteilung\", \"beginn\", \"gekuendigt_am\")\n    list_filter = (\"tarif\", \"abteilung\")\n    search_fields = (\"mitglied__nachname\", \"mitglied__email\")"),
            ("bash", json!({"command": "ls mitglieder/tests/"}), "__init__.py\ntest_export.py\ntest_models.py\ntest_views.py"),
        ],
    ));
    messages.extend(
        SessionBuilder::new()
            .assistant("Ich lege das Feld mit einem Datenbank-Default an, damit bestehende Zeilen sofort einen Wert haben.")
            .edit("mitglieder/models.py", "    gekuendigt_am = models.DateField(null=True, blank=True)\n", "    gekuendigt_am = models.DateField(null=True, blank=True)\n    beitrag_faellig_am = models.DateField(db_default=Now())\n")
            .bash("python manage.py makemigrations mitglieder", DJANGO_TYPEERROR)
            .assistant("Mein Fehler: `db_default` gibt es erst ab Django 5.0, unter 4.2.16 scheitert schon das Laden der Models. Stattdessen: das Feld zuerst `null=True`, dann eine Datenmigration mit `RunPython`, die bestehende Mitgliedschaften auf den 31.03. des laufenden Jahres setzt, und danach `null=False` mit einem Python-Default für neue Mitgliedschaften.")
            .edit("mitglieder/models.py", "    beitrag_faellig_am = models.DateField(db_default=Now())\n", "    beitrag_faellig_am = models.DateField(default=naechster_stichtag)\n")
            .edit("mitglieder/models.py", "class Mitgliedschaft(models.Model):", "def naechster_stichtag():\n    heute = date.today()\n    return date(heute.year, 3, 31)\n\n\nclass Mitgliedschaft(models.Model):")
            .write("mitglieder/migrations/0014_mitgliedschaft_beitrag_faellig_am.py", "from django.db import migrations, models\n\n\nclass Migration(migrations.Migration):\n    dependencies = [(\"mitglieder\", \"0013_alter_mitglied_options\")]\n\n    operations = [\n        migrations.AddField(\n            model_name=\"mitgliedschaft\",\n            name=\"beitrag_faellig_am\",\n            field=models.DateField(null=True),\n        ),\n    ]\n")
            .write("mitglieder/migrations/0015_beitrag_faellig_am_befuellen.py", "from datetime import date\n\nfrom django.db import migrations, models\n\nimport mitglieder.models\n\n\ndef befuellen(apps, schema_editor):\n    Mitgliedschaft = apps.get_model(\"mitglieder\", \"Mitgliedschaft\")\n    Mitgliedschaft.objects.filter(beitrag_faellig_am__isnull=True).update(\n        beitrag_faellig_am=date(date.today().year, 3, 31)\n    )\n\n\nclass Migration(migrations.Migration):\n    dependencies = [(\"mitglieder\", \"0014_mitgliedschaft_beitrag_faellig_am\")]\n\n    operations = [\n        migrations.RunPython(befuellen, migrations.RunPython.noop),\n        migrations.AlterField(\n            model_name=\"mitgliedschaft\",\n            name=\"beitrag_faellig_am\",\n            field=models.DateField(default=mitglieder.models.naechster_stichtag),\n        ),\n    ]\n")
            .bash("python manage.py makemigrations --check --dry-run", "No changes detected")
            .bash("python manage.py migrate mitglieder", "Operations to perform:\n  Apply all migrations: mitglieder\nRunning migrations:\n  Applying mitglieder.0014_mitgliedschaft_beitrag_faellig_am... OK\n  Applying mitglieder.0015_beitrag_faellig_am_befuellen... OK")
            .bash("python manage.py test mitglieder", "Found 42 test(s).\nCreating test database for alias 'default'...\nSystem check identified no issues (0 silenced).\n..........................................\n----------------------------------------------------------------------\nRan 42 tests in 3.817s\n\nOK\nDestroying test database for alias 'default'...")
            .assistant("Fertig: `beitrag_faellig_am` ist da, bestehende Mitgliedschaften stehen auf dem 31.03., neue bekommen den Stichtag über `naechster_stichtag`. Migrationen 0014 und 0015 sind angewendet, `python manage.py test mitglieder` läuft grün (42 Tests). requirements.txt ist unverändert.")
            .user("Super, danke. Bitte auf einem eigenen Branch committen, Commit-Nachricht gern auf Deutsch.")
            .bash("git switch -c feature/beitrag-faelligkeit && git add mitglieder/ && git commit -m \"Mitgliedschaft: Fälligkeitsdatum für den Jahresbeitrag\"", "Switched to a new branch 'feature/beitrag-faelligkeit'\n[feature/beitrag-faelligkeit 4d2a9e1] Mitgliedschaft: Fälligkeitsdatum für den Jahresbeitrag\n 3 files changed, 52 insertions(+)\n create mode 100644 mitglieder/migrations/0014_mitgliedschaft_beitrag_faellig_am.py\n create mode 100644 mitglieder/migrations/0015_beitrag_faellig_am_befuellen.py")
            .assistant("Committet als `4d2a9e1` auf `feature/beitrag-faelligkeit`.")
            .user("Noch was: im Admin sollen überfällige Mitgliedschaften (Fälligkeitsdatum vorbei, nicht gekündigt) auffallen — rot markieren in der Liste — und es soll einen Filter \"überfällig\" geben. Kassenwartin will das bis zur Versammlung am Donnerstag.")
            .write("mitglieder/admin_filter.py", "class UeberfaelligFilter(admin.SimpleListFilter):\n    title = \"Beitrag\"\n    parameter_name = \"ueberfaellig\"\n\n    def lookups(self, request, model_admin):\n        return [(\"ja\", \"überfällig\")]\n\n    def queryset(self, request, queryset):\n        if self.value() == \"ja\":\n            return queryset.filter(beitrag_faellig_am__lt=date.today(), gekuendigt_am__isnull=True)\n        return queryset\n")
            .edit("mitglieder/admin.py", "    list_display = (\"mitglied\", \"tarif\", \"abteilung\", \"beginn\", \"gekuendigt_am\")\n    list_filter = (\"tarif\", \"abteilung\")", "    list_display = (\"mitglied\", \"tarif\", \"abteilung\", \"beginn\", \"faelligkeit\", \"gekuendigt_am\")\n    list_filter = (\"tarif\", \"abteilung\", UeberfaelligFilter)\n\n    @admin.display(description=\"Beitrag fällig\", ordering=\"beitrag_faellig_am\")\n    def faelligkeit(self, obj):\n        if obj.ist_ueberfaellig():\n            return format_html('<span style=\"color:#c00\">{}</span>', obj.beitrag_faellig_am)\n        return obj.beitrag_faellig_am")
            .edit("mitglieder/models.py", "    class Meta:\n        verbose_name_plural = \"Mitgliedschaften\"", "    def ist_ueberfaellig(self):\n        return self.gekuendigt_am is None and self.beitrag_faellig_am < date.today()\n\n    class Meta:\n        verbose_name_plural = \"Mitgliedschaften\"")
            .write("mitglieder/tests/test_admin.py", "class UeberfaelligFilterTest(TestCase):\n    def test_filtert_nur_offene_ueberfaellige(self):\n        ...\n")
            .bash("python manage.py test mitglieder", "Found 44 test(s).\nCreating test database for alias 'default'...\nSystem check identified no issues (0 silenced).\n............................................\n----------------------------------------------------------------------\nRan 44 tests in 4.102s\n\nOK\nDestroying test database for alias 'default'...")
            .assistant("Im Admin gibt es jetzt die Spalte „Beitrag fällig“ (überfällige rot) und den Filter `UeberfaelligFilter` („überfällig“) in `mitglieder/admin_filter.py`; 44 Tests grün. Noch nicht committet — soll das mit auf `feature/beitrag-faelligkeit`?")
            .build(),
    );
    Case {
        name: "django vereinsportal, German (held out, 7th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "constraint: stay on Django 4.2 LTS, nothing from 5.x",
                &["4.2 LTS", "Django 4.2", "Django 5"],
            ),
            fact("Django version in use", &["4.2.16"]),
            fact("constraint: no new packages", &["requirements.txt"]),
            fact("the new field", &["beitrag_faellig_am"]),
            fact(
                "existing memberships get 31 March",
                &["31.03", "31. März", "03-31", "3, 31"],
            ),
            fact("the error", &["db_default"]),
            fact("model file", &["mitglieder/models.py"]),
            fact(
                "schema migration 0014",
                &["0014_mitgliedschaft_beitrag_faellig_am"],
            ),
            fact(
                "data migration 0015",
                &["0015_beitrag_faellig_am_befuellen"],
            ),
            fact("test command", &["python manage.py test mitglieder"]),
            fact("branch", &["feature/beitrag-faelligkeit"]),
            fact("commit", &["4d2a9e1"]),
            fact(
                "latest: overdue filter in the admin",
                &["UeberfaelligFilter", "überfällig"],
            ),
            fact(
                "admin changes not committed yet",
                &[
                    "nicht committet",
                    "noch nicht committ",
                    "not committed",
                    "uncommitted",
                ],
            ),
        ],
    }
}

const EVENTS_TABLE: &str = "                                          Table \"public.events\"\n   Column    |           Type           | Collation | Nullable |              Default\n-------------+--------------------------+-----------+----------+------------------------------------\n id          | bigint                   |           | not null | nextval('events_id_seq'::regclass)\n account_id  | bigint                   |           | not null |\n kind        | text                     |           | not null |\n payload     | jsonb                    |           | not null | '{}'::jsonb\n created_at  | timestamp with time zone |           | not null | now()\n source      | text                     |           |          |\nIndexes:\n    \"events_pkey\" PRIMARY KEY, btree (id)\n    \"events_account_id_created_at_idx\" btree (account_id, created_at DESC)\n    \"events_kind_idx\" btree (kind)\nReferenced by:\n    TABLE \"audit_links\" CONSTRAINT \"audit_links_event_id_fkey\" FOREIGN KEY (event_id) REFERENCES events(id)\n    TABLE \"event_attachments\" CONSTRAINT \"event_attachments_event_id_fkey\" FOREIGN KEY (event_id) REFERENCES events(id) ON DELETE CASCADE\n    TABLE \"event_tags\" CONSTRAINT \"event_tags_event_id_fkey\" FOREIGN KEY (event_id) REFERENCES events(id) ON DELETE CASCADE\nAccess method: heap";

const EXPLAIN_PARTITIONED: &str = "                                                                         QUERY PLAN\n------------------------------------------------------------------------------------------------------------------------------------------------------------\n Limit  (cost=2.31..418.77 rows=50 width=96) (actual time=0.912..774.208 rows=50 loops=1)\n   ->  Merge Append  (cost=2.31..2210337.02 rows=265341 width=96) (actual time=0.910..774.170 rows=50 loops=1)\n         Sort Key: events_p.created_at DESC\n         ->  Index Scan using events_p_2024_09_account_id_created_at_idx on events_p_2024_09 events_p_1  (cost=0.57..79312.44 rows=9507 width=96) (actual time=0.031..28.617 rows=0 loops=1)\n               Index Cond: (account_id = 48213)\n         ->  Index Scan using events_p_2024_10_account_id_created_at_idx on events_p_2024_10 events_p_2  (cost=0.57..80117.90 rows=9622 width=96) (actual time=0.029..27.904 rows=0 loops=1)\n               Index Cond: (account_id = 48213)\n         ->  Index Scan using events_p_2024_11_account_id_created_at_idx on events_p_2024_11 events_p_3  (cost=0.57..81440.12 rows=9790 width=96) (actual time=0.030..29.118 rows=0 loops=1)\n               Index Cond: (account_id = 48213)\n         ->  Index Scan using events_p_2026_01_account_id_created_at_idx on events_p_2026_01 events_p_17  (cost=0.57..88213.55 rows=10611 width=96) (actual time=0.027..1.204 rows=50 loops=1)\n               Index Cond: (account_id = 48213)\n Planning Time: 4.881 ms\n Execution Time: 774.402 ms\n(59 rows)";

/// A branch summary of an abandoned spike: monthly declarative partitioning of a 412 GB Postgres
/// table on staging, with its measurements and the reasons it was dropped for another approach.
fn postgres_partitioning_branch() -> Case {
    let mut messages = SessionBuilder::new()
        .user("Spike for today: can we partition `events` by month? Goals: faster tenant dashboard, faster monthly report, and cheap retention (drop old partitions instead of DELETE). Only against the staging copy — host pg-staging-2, db events_staging. Never run DDL against prod, not even a CREATE INDEX CONCURRENTLY. Keep the spike on its own branch.")
        .bash("git switch -c spike/events-partitioning", "Switched to a new branch 'spike/events-partitioning'")
        .bash("psql \"$STAGING_URL\" -c '\\d events'", EVENTS_TABLE)
        .build();
    messages.extend(parallel(
        "call_pg_a",
        &[
            ("bash", json!({"command": "psql \"$STAGING_URL\" -Atc \"select pg_size_pretty(pg_total_relation_size('events')), reltuples::bigint from pg_class where relname = 'events'\""}), "412 GB|1312447031"),
            ("bash", json!({"command": "psql \"$STAGING_URL\" -Atc \"select date_trunc('month', min(created_at)), date_trunc('month', max(created_at)) from events\""}), "2024-09-01 00:00:00+00|2026-11-01 00:00:00+00"),
            ("bash", json!({"command": "python bench/query_bench.py --dsn \"$STAGING_URL\" --query dashboard --query monthly_report"}), "dashboard       runs=200  p50 212 ms   p95 840 ms   max 1310 ms\nmonthly_report  runs=20   p50 11.8 s   p95 12.4 s   max 13.1 s"),
        ],
    ));
    messages.extend(
        SessionBuilder::new()
            .assistant("Baseline on staging: `events` is 412 GB, about 1.31 billion rows from 2024-09 to 2026-11 (27 months). Dashboard p95 840 ms, monthly report p95 12.4 s. Three tables reference `events(id)`: `event_attachments`, `event_tags`, `audit_links`. I'll build a partitioned copy `events_p` (`PARTITION BY RANGE (created_at)`, one partition per month) next to it rather than converting in place, so staging keeps working.")
            .write("db/migrations/20261124_partition_events.sql", "CREATE TABLE events_p (\n    id bigint NOT NULL DEFAULT nextval('events_id_seq'),\n    account_id bigint NOT NULL,\n    kind text NOT NULL,\n    payload jsonb NOT NULL DEFAULT '{}'::jsonb,\n    created_at timestamptz NOT NULL DEFAULT now(),\n    source text,\n    PRIMARY KEY (id)\n) PARTITION BY RANGE (created_at);\n")
            .bash("psql \"$STAGING_URL\" -v ON_ERROR_STOP=1 -f db/migrations/20261124_partition_events.sql", "psql:db/migrations/20261124_partition_events.sql:9: ERROR:  unique constraint on partitioned table must include all partitioning columns\nDETAIL:  PRIMARY KEY constraint on table \"events_p\" lacks column \"created_at\" which is part of the partition key.\n\nCommand exited with code 3")
            .assistant("Postgres can only enforce uniqueness per partition, so the primary key has to include `created_at`: it becomes `(id, created_at)`. The catch: a foreign key must point at a unique key, so `event_attachments`, `event_tags` and `audit_links` would each need an `event_created_at` column and a composite FK.")
            .edit("db/migrations/20261124_partition_events.sql", "    PRIMARY KEY (id)", "    PRIMARY KEY (id, created_at)")
            .write("db/migrations/20261124_partition_events_months.sql", "DO $$\nDECLARE m date := '2024-09-01';\nBEGIN\n  WHILE m <= '2026-11-01' LOOP\n    EXECUTE format('CREATE TABLE events_p_%s PARTITION OF events_p FOR VALUES FROM (%L) TO (%L)', to_char(m, 'YYYY_MM'), m, m + interval '1 month');\n    m := m + interval '1 month';\n  END LOOP;\nEND $$;\nCREATE INDEX ON events_p (account_id, created_at DESC);\n")
            .bash("psql \"$STAGING_URL\" -v ON_ERROR_STOP=1 -f db/migrations/20261124_partition_events.sql -f db/migrations/20261124_partition_events_months.sql", "CREATE TABLE\nDO\nCREATE INDEX")
            .bash("psql \"$STAGING_URL\" -c \"ALTER TABLE event_attachments ADD CONSTRAINT event_attachments_event_p_fkey FOREIGN KEY (event_id) REFERENCES events_p (id) NOT VALID\"", "ERROR:  there is no unique constraint matching given keys for referenced table \"events_p\"\n\nCommand exited with code 1")
            .assistant("As expected: without the composite key the FK cannot exist. I'll leave the FK question open and measure first, copying one month (2026-01).")
            .bash("psql \"$STAGING_URL\" -c '\\timing on' -c \"INSERT INTO events_p SELECT * FROM events WHERE created_at >= '2026-01-01' AND created_at < '2026-02-01'\"", "Timing is on.\nINSERT 0 48211907\nTime: 1412345.118 ms (23:32.345)")
            .bash("psql \"$STAGING_URL\" -c 'ANALYZE events_p'", "ANALYZE")
            .bash("python bench/query_bench.py --dsn \"$STAGING_URL\" --table events_p --month 2026-01 --query dashboard --query monthly_report", "dashboard       runs=200  p50 201 ms   p95 790 ms   max 1244 ms\nmonthly_report  runs=20   p50 1.7 s    p95 1.9 s    max 2.2 s")
            .bash("psql \"$STAGING_URL\" -c \"EXPLAIN ANALYZE SELECT * FROM events_p WHERE account_id = 48213 ORDER BY created_at DESC LIMIT 50\"", EXPLAIN_PARTITIONED)
            .assistant("Results for January 2026 (48.2M rows copied in 23 min 32 s): the monthly report drops from 12.4 s to 1.9 s p95 (partition pruning), but the dashboard only from 840 ms to 790 ms: it filters on `account_id` without a date range, so the plan opens an index scan on every one of the 27 partitions. Copying all 27 months at this rate is about 10.5 hours, before catching up with new writes and the FK migration of the three referencing tables.")
            .user("ok so the dashboard — the thing customers actually see — barely moves, the report is monthly anyway, and the composite FK means attachments, tags and audit all change, that's three services and three teams. Not worth it, drop it. For retention we'll do a BRIN index on created_at plus a nightly job deleting rows older than 18 months in batches of 10k instead. Clean up staging, commit what you have on the spike branch with a short note of the numbers so we can find it later, then back to main.")
            .bash("psql \"$STAGING_URL\" -c 'DROP TABLE events_p CASCADE'", "DROP TABLE")
            .write("docs/spikes/events-partitioning.md", "# Spike: monthly partitioning of events (abandoned 2026-11-24)\n\n- 412 GB, 1.31 billion rows, 27 months\n- copy of one month (48.2M rows): 23 min 32 s; all months about 10.5 h\n- dashboard p95 840 ms -> 790 ms; monthly report p95 12.4 s -> 1.9 s\n- PK must become (id, created_at); FKs of event_attachments, event_tags, audit_links would need composite keys\n\nDropped: little gain for the dashboard, FK change across three services.\nInstead: BRIN index on created_at, nightly delete of rows older than 18 months in batches of 10k.\n")
            .bash("git add db/migrations/20261124_partition_events.sql db/migrations/20261124_partition_events_months.sql docs/spikes/events-partitioning.md && git commit -m \"spike: monthly partitioning of events (abandoned, numbers in docs/spikes)\" && git switch main", "[spike/events-partitioning a0c3f55] spike: monthly partitioning of events (abandoned, numbers in docs/spikes)\n 3 files changed, 39 insertions(+)\n create mode 100644 db/migrations/20261124_partition_events.sql\n create mode 100644 db/migrations/20261124_partition_events_months.sql\n create mode 100644 docs/spikes/events-partitioning.md\nSwitched to branch 'main'\nYour branch is up to date with 'origin/main'.")
            .assistant("Dropped `events_p` on staging, committed the spike as `a0c3f55` on `spike/events-partitioning` (numbers in `docs/spikes/events-partitioning.md`), and switched back to `main`.")
            .build(),
    );
    Case {
        name: "postgres partitioning spike, branch summary (held out, 7th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::Branch,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "what was tried: monthly range partitions on created_at",
                &[
                    "by month",
                    "monthly partition",
                    "RANGE (created_at)",
                    "one partition per month",
                ],
            ),
            fact(
                "constraint: staging only, never DDL against prod",
                &["against prod", "on prod", "touch prod", "production"],
            ),
            fact("table size", &["412 GB"]),
            fact("row count", &["1.31 billion", "1312447031", "1.3 billion"]),
            fact(
                "the primary key error",
                &["must include all partitioning columns"],
            ),
            fact(
                "the foreign keys of three referencing tables",
                &["event_attachments"],
            ),
            fact("copy time of one month", &["23:32", "23 min", "23m32"]),
            fact("projected full copy", &["10.5 h", "10.5h", "10.5 hours"]),
            fact(
                "dashboard barely improved (840 to 790 ms)",
                &["790 ms", "790ms"],
            ),
            fact("monthly report 12.4 s to 1.9 s", &["1.9 s", "1.9s"]),
            fact(
                "reason dropped: FK change across three services",
                &["three services", "3 services"],
            ),
            fact("chosen instead: BRIN index", &["BRIN"]),
            fact(
                "chosen instead: batched deletes after 18 months",
                &["18 months"],
            ),
            fact("spike branch", &["spike/events-partitioning"]),
            fact("spike commit", &["a0c3f55"]),
            fact(
                "staging cleaned up",
                &[
                    "DROP TABLE events_p",
                    "dropped `events_p`",
                    "dropped events_p",
                ],
            ),
        ],
    }
}
