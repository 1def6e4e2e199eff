//! The folders of the skills ctxkit offered the model are readable by its tools without a
//! question, wherever they lie (ctxkit's home, a package installed from a local folder, a `skills`
//! entry of the user's settings); a skills folder an untrusted project names outside itself is not
//! loaded, and stays as closed as any place outside the project.

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::Run;

fn call(id: usize, path_argument: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": format!("resp_{id}"), "object": "response", "status": "completed", "model": "gpt-5-mini",
        "output": [{"type": "function_call", "id": format!("fc_{id}"), "call_id": format!("call_{id}"),
                    "name": "read", "status": "completed",
                    "arguments": json!({"path": path_argument}).to_string()}],
        "usage": {"input_tokens": 9, "output_tokens": 8, "total_tokens": 17}}))
}

/// A Responses API that asks to `read` each of `paths` in turn, then answers `all good`.
async fn reading_server(paths: &[String]) -> MockServer {
    let server = MockServer::start().await;
    for (index, path_argument) in paths.iter().enumerate() {
        Mock::given(method("POST"))
            .and(path("/v1/responses"))
            .respond_with(call(index + 1, path_argument))
            .up_to_n_times(1)
            .with_priority(1 + u8::try_from(index).unwrap())
            .mount(&server)
            .await;
    }
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "resp_last", "object": "response", "status": "completed", "model": "gpt-5-mini",
            "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": "all good", "annotations": []}]}],
            "usage": {"input_tokens": 9, "output_tokens": 2, "total_tokens": 11}})))
        .with_priority(100)
        .mount(&server)
        .await;
    server
}

/// `ctxkit chat -p MESSAGE` in `project` against `server`.
fn print_chat(run: &Run, server: &MockServer, project: &std::path::Path, message: &str) -> String {
    let base = format!("{}/v1", server.uri());
    let home = run.home.path().display().to_string();
    let variables = [
        ("OPENAI_API_KEY", "sk-oai-test-SKILLS42"),
        ("OPENAI_BASE_URL", base.as_str()),
        ("HOME", home.as_str()),
    ];
    let args = [
        "chat",
        "--model",
        "openai/gpt-5-mini",
        "--no-session",
        "-p",
        message,
    ];
    tokio::task::block_in_place(|| run.ctxkit_piped_in(project, &args, &variables, ""))
}

/// The text of the last request the model was sent.
async fn last_request(server: &MockServer) -> String {
    let requests = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&requests.last().unwrap().body).unwrap();
    body.to_string()
}

fn write_skill(folder: &std::path::Path, name: &str, body: &str) {
    std::fs::create_dir_all(folder).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: How to {name} this app.\n---\n{body}\n"),
    )
    .unwrap();
}

/// QA r105 (3): `ctxkit install ~/mypkgs/pkg` offered the package's skill, but the model's `read` of
/// its `SKILL.md` (and of a file the skill names relative to it) was refused in print mode and
/// asked about in the chat. Both are read now, without a question.
#[tokio::test(flavor = "multi_thread")]
async fn a_skill_of_a_package_installed_from_a_local_folder_is_read() {
    let run = Run::new();
    let outside = tempfile::tempdir().unwrap();
    let package = outside.path().join("mypkgs/pkg");
    let deploy = package.join("skills/deploy");
    write_skill(
        &deploy,
        "deploy",
        "Run DEPLOY-SKILL-BODY, then see steps.md.",
    );
    std::fs::write(deploy.join("steps.md"), "DEPLOY-STEPS-TEXT\n").unwrap();
    std::fs::write(
        package.join("package.json"),
        r#"{"name":"pkg","version":"1.0.0","pi":{"skills":["./skills"]}}"#,
    )
    .unwrap();
    let installed = run.ctxkit(&["install", package.to_str().unwrap()]);
    assert!(installed.starts_with("exit: 0"), "{installed}");
    let project = run.home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let paths = ["SKILL.md", "steps.md"].map(|name| deploy.join(name).display().to_string());
    let server = reading_server(&paths).await;
    let output = print_chat(&run, &server, &project, "deploy the app");
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    assert!(!output.contains("nobody can be asked"), "{output}");
    let request = last_request(&server).await;
    assert!(request.contains("DEPLOY-SKILL-BODY"), "{request}");
    assert!(request.contains("DEPLOY-STEPS-TEXT"), "{request}");
}

/// The boundary of docs/security.md holds: an untrusted project's `skills` entry naming a folder
/// outside the project is held back, so the folder is neither offered nor readable without a
/// question (print mode asks nobody: the read is refused).
#[tokio::test(flavor = "multi_thread")]
async fn an_untrusted_projects_skills_folder_outside_it_stays_unreadable() {
    let run = Run::new();
    let outside = tempfile::tempdir().unwrap();
    let planted = outside.path().join("planted-skills");
    write_skill(&planted.join("leak"), "leak", "PLANTED-SKILL-BODY");
    let project = run.home.path().join("project");
    std::fs::create_dir_all(project.join(".ctxkit")).unwrap();
    std::fs::write(
        project.join(".ctxkit/settings.json"),
        json!({"skills": [planted.display().to_string()]}).to_string(),
    )
    .unwrap();
    let skill = planted.join("leak/SKILL.md").display().to_string();
    let server = reading_server(std::slice::from_ref(&skill)).await;
    let output = print_chat(&run, &server, &project, "use the skill");
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    assert!(output.contains("nobody can be asked"), "{output}");
    let request = last_request(&server).await;
    assert!(!request.contains("PLANTED-SKILL-BODY"), "{request}");
    assert!(!request.contains("<name>leak</name>"), "{request}");
}
