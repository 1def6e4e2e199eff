//! The one-pass read of an entry line's facts against the `Value` read it replaced.

#[test]
fn the_one_pass_reads_what_the_value_read() {
    let lines = [
        r#"{"type":"message","id":"a","parentId":"b","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"fix"},{"type":"image"},7,{"text":"x"},{"type":"text","text":"it"}]}}"#,
        r#"{"type":"message","id":"a","message":{"content":"before the role","role":"user","timestamp":1700000000000}}"#,
        r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"timestamp":1.5}}"#,
        r#"{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"out"}],"timestamp":17}}"#,
        r#"{"type":"message","message":{"role":"assistant","content":"x","role":"user"}}"#,
        r#"{"type":"message","message":{"role":"user","timestamp":18446744073709551615}}"#,
        r#"{"type":"message","message":[1,{"role":"user"}]}"#,
        r#"{"type":"message","message":"text"}"#,
        r#"{"type":"message","message":{"role":"user","content":{"text":"x"}}}"#,
        r#"{"type":"message","message":{"role":"user","content":"<environment_context>x</environment_context>"}}"#,
        r#"{"type":"session_info","name":"one","name":"two","id":5,"parentId":null}"#,
        r#"{"type":"session_info","name":{"a":[1,2]}}"#,
        r#"{"type":"x","type":"y","timestamp":"not a time","message":{"role":"user","content":"no"}}"#,
        r#"{"type":"a\u0062","i\u0064":"esc\"aped"}"#,
        r#"{"type":"message","message":{"role":"user","content":"\ud83d cut"}}"#,
        r#"{"type":"message","message":{"role":"toolResult","content":"\ud83d cut"}}"#,
        r#"{"type":7}"#,
        r#"{"type":"a","type":null}"#,
        r#"{"type":"message","message":{"role":"user","content":"x"}} trailing"#,
        r#"{"type":"message","message":{"role":"toolResult","content":[1,}}"#,
        r#"[1]"#,
        r#""text""#,
        r#"{"id":"a"}"#,
        "",
        // Decimal, exponent and negative-zero message times: not whole numbers to a `Value`.
        r#"{"type":"message","message":{"role":"user","content":"t","timestamp":"1700000000000.0"}}"#,
        r#"{"type":"message","message":{"role":"user","content":"t","timestamp":1700000000000.0}}"#,
        r#"{"type":"message","message":{"role":"assistant","timestamp":1700000000000.5}}"#,
        r#"{"type":"message","message":{"role":"user","timestamp":17e11}}"#,
        r#"{"type":"message","message":{"role":"user","timestamp":-0}}"#,
        r#"{"type":"message","message":{"role":"user","timestamp":-1700000000000}}"#,
        // Malformed content: numbers, objects, nulls where text is expected.
        r#"{"type":"message","message":{"role":"user","content":5}}"#,
        r#"{"type":"message","message":{"role":"user","content":null}}"#,
        r#"{"type":"message","message":{"role":"user","content":[null,5,"x",[{"type":"text","text":"in"}],{"type":"text","text":null},{"type":"text","text":{"a":1}},{"type":["text"],"text":"y"},{"type":"text","text":7}]}}"#,
        r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"a","text":5}]}}"#,
        r#"{"type":"message","message":{"role":"user","content":[]}}"#,
        r#"{"type":"message","message":{"role":null,"content":"x"}}"#,
        r#"{"type":"message","message":{"role":5,"timestamp":3}}"#,
        r#"{"type":"message","message":null}"#,
        r#"{"type":"message","id":null,"parentId":7,"timestamp":5,"message":{"role":"user","content":"x"}}"#,
        r#"{"type":"session_info","name":null}"#,
        // Duplicate keys: the last value counts.
        r#"{"type":"message","message":{"role":"user","content":"first"},"message":{"role":"assistant","content":"second","timestamp":4}}"#,
        r#"{"type":"message","message":{"role":"user","content":"first","content":"second","timestamp":1,"timestamp":2.0}}"#,
        r#"{"type":"message","message":{"role":"toolResult","content":"late","role":"user"}}"#,
        r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","timestamp":"no","message":{"role":"user"}}"#,
        // Escapes in keys and values.
        r#"{"type":"m\u0065ssage","message":{"r\u006fle":"us\u0065r","content":[{"type":"t\u0065xt","text":"tab\there \"q\" \\ \u00e9 \ud83d\ude00"}]}}"#,
        r#"{"type":"message","message":{"role":"user","content":"\ud83d"},"name":"\udc00"}"#,
        r#"{"type":"session_info","name":"a\/b\u0000c"}"#,
        // Whitespace between the tokens, and after the object.
        " { \"type\" : \"message\" , \"message\" : { \"role\" : \"user\" , \"content\" : \" x \" } } \r",
        // Not JSON as a whole.
        r#"{"type":"message","message":{"role":"user","content":"x"}"#,
        r#"{"type":"message","message":{"role":"user","content":"x"}}}"#,
        r#"{"type":"message","message":{"role":"user","content":01}}"#,
        r#"{"type":"message","message":{"role":"user","content":"x"},}"#,
    ];
    let nested = |depth: usize| format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    let deep: Vec<String> = [120, 125, 126, 127, 128, 129, 200, 100_000]
        .into_iter()
        .flat_map(|depth| {
            [
                format!(
                    r#"{{"type":"message","message":{{"role":"user","content":{}}}}}"#,
                    nested(depth)
                ),
                format!(
                    r#"{{"type":"message","message":{{"role":"toolResult","content":{}}}}}"#,
                    nested(depth)
                ),
                format!(r#"{{"type":"x","other":{}}}"#, nested(depth)),
                format!(r#"{{"type":"x","name":{{"a":{}}}}}"#, nested(depth)),
            ]
        })
        .collect();
    for line in lines.into_iter().chain(deep.iter().map(String::as_str)) {
        // A line the `Value` reads is read by the one pass, not handed back to the `Value`.
        if crate::lines::entry_facts_of_value(line).is_ok() {
            assert!(ctxkit_session::entry_line_facts(line).is_ok(), "{line}");
        }
        assert_eq!(
            crate::lines::entry_facts(line),
            crate::lines::entry_facts_of_value(line),
            "{line}"
        );
    }
}

#[test]
fn an_entry_line_is_not_built_as_a_value() {
    let output = "x".repeat(100_000);
    let lines = [
        format!(
            r#"{{"type":"message","id":"t","message":{{"role":"toolResult","content":[{{"type":"text","text":"{output}"}}]}}}}"#
        ),
        r#"{"type":"message","id":"u","message":{"role":"user","content":"fix it"}}"#.to_owned(),
        r#"{"type":"session_info","id":"n","name":"parser"}"#.to_owned(),
    ];
    let before = crate::lines::VALUE_READS.with(std::cell::Cell::get);
    for line in &lines {
        assert!(crate::lines::entry_facts(line).is_ok());
    }
    // Before, each line was read whole into a `serde_json::Value` (a 1 MiB output too).
    assert_eq!(crate::lines::VALUE_READS.with(std::cell::Cell::get), before);
}
