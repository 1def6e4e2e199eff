//! `ctxkit serve --stdio` and the JSON-RPC 2.0 envelope, line by line as a client writes it:
//! batches, requests that are not valid (refused, never run), ids echoed exactly, and parameters
//! checked by name with errors that name the field.

use serde_json::{Value, json};

use crate::serve::{Server, reply, user};

/// The one line `line` is answered with, parsed.
fn answer(server: &mut Server, line: &str) -> Value {
    let lines = server.exchange(line);
    assert_eq!(lines.len(), 1, "one answer to {line}: {lines:?}");
    serde_json::from_str(&lines[0]).unwrap()
}

/// Whether a session is open (nothing the refused requests asked for ran).
fn session_open(server: &mut Server) -> bool {
    server
        .call("session.info", Value::Null)
        .get("result")
        .is_some()
}

#[test]
fn serve_answers_a_batch_with_one_array_in_the_batchs_order() {
    let home = tempfile::tempdir().unwrap();
    let mut server = Server::start(home.path());
    // Run in order: the view sees the message appended before it in the same batch.
    let batch = json!([
        {"jsonrpc": "2.0", "id": 10, "method": "session.create",
         "params": {"cwd": home.path(), "in_memory": true}},
        {"jsonrpc": "2.0", "id": 11, "method": "message.append",
         "params": {"message": {"role": "user", "content": "batched", "timestamp": 1}}},
        {"jsonrpc": "2.0", "method": "initialize"},
        {"jsonrpc": "2.0", "id": "init", "method": "initialize"},
        5,
        {"jsonrpc": "2.0", "id": 12, "method": "view.get"},
    ]);
    let answers = answer(&mut server, &batch.to_string());
    let answers = answers
        .as_array()
        .expect("a batch is answered with an array");
    let ids: Vec<&Value> = answers.iter().map(|entry| &entry["id"]).collect();
    // The notification has no entry; the member that is not a request has its error in place.
    assert_eq!(
        ids,
        [
            &json!(10),
            &json!(11),
            &json!("init"),
            &Value::Null,
            &json!(12)
        ]
    );
    assert!(
        answers[0]["result"]["session_id"].is_string(),
        "{answers:?}"
    );
    assert_eq!(answers[2]["result"]["server"], "ctxkit");
    assert_eq!(answers[3]["error"]["code"], -32600);
    assert_eq!(
        answers[4]["result"]["messages"][0]["content"], "batched",
        "{answers:?}"
    );

    let empty = answer(&mut server, "[]");
    assert_eq!(empty["error"]["code"], -32600, "{empty}");
    assert!(
        empty["error"]["message"]
            .as_str()
            .unwrap()
            .contains("empty batch")
    );
    assert_eq!(empty["id"], Value::Null);
    let one = answer(&mut server, "[1]");
    assert_eq!(one[0]["error"]["code"], -32600, "{one}");
    assert_eq!(one.as_array().unwrap().len(), 1);
    // A batch of notifications only is answered with nothing.
    let notifications =
        r#"[{"jsonrpc":"2.0","method":"initialize"},{"jsonrpc":"2.0","method":"session.info"}]"#;
    assert_eq!(server.exchange(notifications), Vec::<String>::new());
}

#[test]
fn serve_refuses_requests_that_are_not_json_rpc_2_0_without_running_them() {
    let home = tempfile::tempdir().unwrap();
    let mut server = Server::start(home.path());
    let create = |envelope: &str| {
        format!(
            r#"{{{envelope}"method":"session.create","params":{{"cwd":"/p","in_memory":true}}}}"#
        )
    };
    for id in [r#"{"a":1}"#, "[1]", "true"] {
        let refused = answer(
            &mut server,
            &create(&format!(r#""jsonrpc":"2.0","id":{id},"#)),
        );
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        assert_eq!(
            refused["id"],
            Value::Null,
            "an unreadable id is answered as null"
        );
        assert!(!session_open(&mut server), "a request with id {id} ran");
    }
    for version in [r#""jsonrpc":"1.0","#, ""] {
        let refused = answer(&mut server, &create(&format!(r#"{version}"id":7,"#)));
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        assert_eq!(refused["error"]["message"], r#"`jsonrpc` must be "2.0""#);
        assert_eq!(refused["id"], 7);
        assert!(!session_open(&mut server), "a request with {version:?} ran");
    }
    for method in ["initialize", "view.get"] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":8,"method":"{method}","params":"x"}}"#);
        let refused = answer(&mut server, &line);
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        assert_eq!(refused["id"], 8);
    }
    // Parameters are by name: an array is a request, but not parameters a method takes.
    let positional = answer(
        &mut server,
        r#"{"jsonrpc":"2.0","id":9,"method":"session.create","params":["/p"]}"#,
    );
    assert_eq!(positional["error"]["code"], -32602, "{positional}");
    // `null` params, as many clients send for none, are none.
    let init = server.call("initialize", Value::Null);
    assert_eq!(init["result"]["server"], "ctxkit", "{init}");
}

#[test]
fn serve_echoes_every_id_exactly_as_written() {
    let home = tempfile::tempdir().unwrap();
    let mut server = Server::start(home.path());
    for id in [
        "12345678901234567890123",
        "18446744073709551616",
        "-9223372036854775809",
        "9007199254740993",
        "1.0",
        "1e2",
        r#""\u00e9t\u00e9""#,
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize"}}"#);
        let lines = server.exchange(&line);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"#)),
            "{id} came back as {}",
            lines[0]
        );
    }
}

fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn serve_refuses_unknown_and_missing_params_naming_the_field() {
    let home = tempfile::tempdir().unwrap();
    let mut server = Server::start(home.path());
    let misspelt = server.call(
        "session.create",
        json!({"cwd": home.path(), "in_memroy": true}),
    );
    assert_eq!(misspelt["error"]["code"], -32602, "{misspelt}");
    let message = misspelt["error"]["message"].as_str().unwrap();
    assert!(message.contains("unknown field `in_memroy`"), "{message}");
    assert!(
        !files_under(home.path())
            .iter()
            .any(|path| path.extension().is_some_and(|ext| ext == "jsonl")),
        "no session was created"
    );
    let mistyped = server.call("session.create", json!({"cwd": 5}));
    assert_eq!(
        mistyped["error"]["message"],
        "invalid params: `cwd`: invalid type: integer `5`, expected a string"
    );
    server.call(
        "session.create",
        json!({"cwd": home.path(), "in_memory": true}),
    );
    let window = json!({"model": {"provider": "a", "id": "b", "context_window": "200000"}});
    let nested = server.call("model.set", window);
    let message = nested["error"]["message"].as_str().unwrap();
    assert!(message.contains("`model.context_window`"), "{message}");
    assert!(message.contains("a non-negative integer"), "{message}");
    let not_an_object = server.call("model.set", json!({"model": "b"}));
    let message = not_an_object["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("invalid params: `model`:"), "{message}");
    let position = server.call("fork", json!({"entry_id": "x", "position": 5}));
    let message = position["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("invalid params: `position`:"),
        "{message}"
    );
    for text in [
        nested.to_string(),
        not_an_object.to_string(),
        position.to_string(),
    ] {
        for rust in ["struct", "enum ", "u64", "Params", "Position", "Model "] {
            assert!(!text.contains(rust), "{rust} in {text}");
        }
    }
    // `model` is required; `null` clears it.
    let missing = server.call("model.set", json!({}));
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert_eq!(
        missing["error"]["message"],
        "invalid params: missing field `model`"
    );
    assert_eq!(
        server.call("model.set", json!({"model": null}))["result"],
        json!({})
    );
    let unasked = server.call("check.before_prompt", json!({"x": 1}));
    assert_eq!(unasked["error"]["code"], -32602, "{unasked}");
    let assistant = server.call(
        "message.append",
        json!({"message": {"role": "assistant", "timestamp": 1}}),
    );
    let message = assistant["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("an `assistant` message needs"),
        "{message}"
    );
}

#[test]
fn serve_reads_a_context_window_of_0_as_unknown() {
    let home = tempfile::tempdir().unwrap();
    let mut server = Server::start(home.path());
    server.call(
        "session.create",
        json!({"cwd": home.path(), "in_memory": true}),
    );
    let model = json!({"model": {"provider": "a", "id": "b", "context_window": 0}});
    assert_eq!(server.call("model.set", model)["result"], json!({}));
    server.call("message.append", json!({"message": user("hi")}));
    server.call(
        "message.append",
        json!({"message": reply("hello", 900_000)}),
    );
    assert_eq!(
        server.call("context.usage", Value::Null)["result"],
        Value::Null
    );
    let check = server.call("check.before_prompt", Value::Null);
    assert_eq!(
        check["result"]["decision"], "skip_unknown_window",
        "{check}"
    );
}
