//! The third held-out set, written on 2026-11-26 after the first two sets' summaries had been read
//! and before the rules changed again; their summaries were not read before those rules were
//! settled. Reported apart from the other held-out sessions.

use ctxkit_compaction::SummaryPurpose;
use serde_json::json;

use super::{Case, SessionBuilder, fact};

pub(super) fn cases() -> Vec<Case> {
    vec![rails_jobs(), helm_update(), go_cli_wrappers()]
}

/// A Rails app over three requests: job retries (fixed and committed), a client timeout, and a PR
/// whose creation is still pending when the span ends.
fn rails_jobs() -> Case {
    let messages = SessionBuilder::new()
        .user("InvoiceSyncJob gives up after the first failure. Make it retry 5 times with backoff. Don't add new gems, we use what's in the Gemfile.")
        .read("app/jobs/invoice_sync_job.rb", "class InvoiceSyncJob\n  include Sidekiq::Job\n  def perform(invoice_id)\n    BillingClient.sync(invoice_id)\n  end\nend")
        .assistant("The job uses plain `Sidekiq::Job`, so I'll set `sidekiq_options retry: 5` instead of adding ActiveJob's `retry_on`.")
        .edit("app/jobs/invoice_sync_job.rb", "include Sidekiq::Job", "include Sidekiq::Job\n  sidekiq_options retry: 5")
        .bash("bundle exec rspec spec/jobs/invoice_sync_job_spec.rb", "Failures:\n  1) InvoiceSyncJob retries with backoff\n     NoMethodError: undefined method `retry_on' for InvoiceSyncJob:Class\n\n3 examples, 1 failure\n\nCommand exited with code 1")
        .assistant("The spec still calls `retry_on`, from an older draft; it should check `sidekiq_options`.")
        .edit("spec/jobs/invoice_sync_job_spec.rb", "expect(described_class).to respond_to(:retry_on)", "expect(described_class.get_sidekiq_options['retry']).to eq(5)")
        .bash("bundle exec rspec spec/jobs/invoice_sync_job_spec.rb", "3 examples, 0 failures")
        .bash("git checkout -b fix/invoice-sync-retries && git commit -am \"InvoiceSyncJob: retry 5 times\"", "Switched to a new branch 'fix/invoice-sync-retries'\n[fix/invoice-sync-retries a41c9e02] InvoiceSyncJob: retry 5 times\n 2 files changed, 2 insertions(+), 1 deletion(-)")
        .user("staging logs show Faraday::TimeoutError after 30s from the billing API. bump the timeout to 60s, only for this client")
        .read("config/initializers/billing_client.rb", "BillingClient.connection = Faraday.new(url: ENV.fetch('BILLING_URL')) do |f|\n  f.options.timeout = 30\nend")
        .edit("config/initializers/billing_client.rb", "f.options.timeout = 30", "f.options.timeout = 60")
        .bash("bin/rails runner 'puts BillingClient.connection.options.timeout'", "60")
        .assistant("The billing client's timeout is 60s now; other Faraday clients keep their defaults.")
        .user("open a PR for both and link issue #912")
        .tool("bash", json!({"command": "gh pr create --fill --body 'Fixes #912'"}), None)
        .build();
    Case {
        name: "rails jobs (held out, 3rd set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("constraint: no new gems", &["new gems"]),
            fact("job file", &["app/jobs/invoice_sync_job.rb"]),
            fact(
                "spec command",
                &["bundle exec rspec spec/jobs/invoice_sync_job_spec.rb"],
            ),
            fact("the failure", &["retry_on"]),
            fact("branch", &["fix/invoice-sync-retries"]),
            fact("commit", &["a41c9e02"]),
            fact("timeout error", &["Faraday::TimeoutError"]),
            fact("new timeout 60s", &["60s", "timeout = 60"]),
            fact("client file", &["config/initializers/billing_client.rb"]),
            fact("issue", &["#912"]),
            fact("pending PR creation", &["gh pr create"]),
        ],
    }
}

/// An update of an earlier summary in ctxkit's format on a Helm chart: the open item finished, an
/// error on the way, a second request done.
fn helm_update() -> Case {
    let previous = "_Extractive summary written offline by ctxkit (no model was used)._\n\n## Goal\n- **Latest:** Add health probes to the api chart\n\n## Constraints & Preferences\n- Never change the production values file (`charts/api/values-prod.yaml`)\n\n## Progress\n### Done\n- [x] Edited `charts/api/values.yaml`\n\n### In Progress\n- [ ] Add a readiness probe on `/readyz` to `charts/api/templates/deployment.yaml`\n\n### Blocked\n- (none)\n\n## Key Decisions\n- Probes read their paths from values, defaults in `values.yaml`\n\n## Next Steps\n1. Run `helm lint charts/api`\n\n## Critical Context\n- Branch: `feat/probes`";
    let messages = SessionBuilder::new()
        .user("continue")
        .edit("charts/api/templates/deployment.yaml", "          ports:", "          readinessProbe:\n            httpGet:\n              path: {{ .Values.probes.readiness.path }}\n              port: http\n            initialDelaySeconds: \"{{ .Values.probes.readiness.delay }}\"\n          ports:")
        .bash("helm lint charts/api", "==> Linting charts/api\n1 chart(s) linted, 0 chart(s) failed")
        .bash("helm template charts/api | kubeconform -strict -summary", "stdin - Deployment api is invalid: problem validating schema. Check JSON formatting: jsonschema: '/spec/template/spec/containers/0/readinessProbe/initialDelaySeconds' does not validate: expected integer, but got string\nSummary: 4 resources found parsing stdin - Valid: 3, Invalid: 1\n\nCommand exited with code 1")
        .assistant("The quotes make `initialDelaySeconds` a string; I'll drop them rather than cast in the template.")
        .edit("charts/api/templates/deployment.yaml", "initialDelaySeconds: \"{{ .Values.probes.readiness.delay }}\"", "initialDelaySeconds: {{ .Values.probes.readiness.delay }}")
        .bash("helm template charts/api | kubeconform -strict -summary", "Summary: 4 resources found parsing stdin - Valid: 4, Invalid: 0")
        .user("also add a liveness probe on /livez with failureThreshold 5")
        .edit("charts/api/templates/deployment.yaml", "          ports:", "          livenessProbe:\n            httpGet:\n              path: /livez\n              port: http\n            failureThreshold: 5\n          ports:")
        .bash("helm template charts/api | kubeconform -strict -summary", "Summary: 4 resources found parsing stdin - Valid: 4, Invalid: 0")
        .assistant("Added the liveness probe on `/livez` with `failureThreshold: 5`; lint and kubeconform pass.")
        .build();
    Case {
        name: "helm update, ctxkit earlier summary (held out, 3rd set)",
        messages,
        previous: Some(previous.to_owned()),
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "constraint: production values untouched",
                &["values-prod.yaml"],
            ),
            fact("readiness probe done", &["readiness"]),
            fact("template file", &["charts/api/templates/deployment.yaml"]),
            fact("lint command", &["helm lint charts/api"]),
            fact("validation command", &["kubeconform"]),
            fact("error on the way", &["initialDelaySeconds"]),
            fact("branch", &["feat/probes"]),
            fact("liveness path", &["/livez"]),
            fact("failure threshold", &["failureThreshold"]),
        ],
    }
}

/// A Go CLI as Claude Code records it: wrapper text, a pasted panic, a fix the user rejects as
/// incomplete, a test failing at the end.
fn go_cli_wrappers() -> Case {
    let messages = SessionBuilder::new()
        .user("<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>")
        .user("the `ship deploy` command panics when the config has no regions. fix it in cmd/deploy.go. Keep Go 1.21 compatibility, no range-over-func from 1.22.")
        .user("panic: runtime error: index out of range [0] with length 0\n\ngoroutine 1 [running]:\nmain.deployCmd.func1(...)\n\t/src/cmd/deploy.go:57 +0x1a4")
        .read("cmd/deploy.go", "func deploy(cfg Config) error {\n\tregion := cfg.Regions[0]\n\treturn push(region)\n}")
        .assistant("`cfg.Regions[0]` is read without a check. I'll return an error `no regions configured` instead of defaulting to us-east-1.")
        .edit("cmd/deploy.go", "region := cfg.Regions[0]", "if len(cfg.Regions) == 0 {\n\t\treturn errors.New(\"no regions configured\")\n\t}\n\tregion := cfg.Regions[0]")
        .bash("go test ./cmd/...", "ok  \tgithub.com/acme/ship/cmd\t0.42s")
        .bash("go vet ./...", "")
        .assistant("Fixed: `ship deploy` now returns `no regions configured`; go test and go vet pass.")
        .user("you didn't even add a test. add a table test for empty and nil regions")
        .write("cmd/deploy_test.go", "func TestDeployWithoutRegions(t *testing.T) {\n\tfor _, regions := range [][]string{nil, {}} {}\n}\n")
        .bash("go test ./cmd/...", "--- FAIL: TestDeployWithoutRegions (0.00s)\n    deploy_test.go:31: got error <nil>, want \"no regions configured\"\nFAIL\n\nCommand exited with code 1")
        .build();
    Case {
        name: "go cli (Claude Code wrappers, paste; held out, 3rd set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("file", &["cmd/deploy.go"]),
            fact("the panic", &["index out of range"]),
            fact("constraint: Go 1.21", &["1.21"]),
            fact("the error it returns", &["no regions configured"]),
            fact("test command", &["go test ./cmd/..."]),
            fact("latest: table test", &["table test"]),
            fact("test file", &["cmd/deploy_test.go"]),
            fact("last failure", &["got error <nil>"]),
            fact("vet command", &["go vet ./..."]),
        ],
    }
}
