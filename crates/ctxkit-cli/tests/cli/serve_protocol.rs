//! `ctxkit serve --stdio` and the JSON-RPC 2.0 envelope, line by line as a client writes it:
//! batches, requests that are not valid (refused, never run), ids echoed exactly.

use serde_json::{Value, json};

use crate::serve::Server;

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
