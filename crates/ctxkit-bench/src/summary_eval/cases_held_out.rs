//! Held-out sessions: written with their facts after the summarizer's rules were settled on the
//! other cases, and not used to change them since. Their numbers are reported apart.

use ctxkit_compaction::SummaryPurpose;
use serde_json::json;

use super::{Case, SessionBuilder, fact};

pub(super) fn cases() -> Vec<Case> {
    vec![node_api(), infra_update()]
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
