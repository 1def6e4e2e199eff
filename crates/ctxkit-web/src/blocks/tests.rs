use super::*;

static NO_FREE_MODELS: FreeModels = FreeModels::NONE;

fn renderer(redactor: &Redactor) -> Renderer<'_> {
    Renderer {
        redactor,
        clip_chars: 10,
        no_thinking: true,
        image_budget: Cell::new(100),
        free_models: &NO_FREE_MODELS,
        read_languages: RefCell::default(),
        sent_shown: RefCell::default(),
    }
}

#[test]
fn thinking_is_left_out_and_long_text_clipped_with_its_length() {
    let redactor = Redactor::new(Vec::new(), &[]).unwrap();
    let shown = renderer(&redactor).message(&json!({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "secret plan"},
        {"type": "text", "text": "0123456789abcdef"}]}));
    assert_eq!(
        shown["blocks"][0],
        json!({"k": "thinking", "t": "", "omitted": true})
    );
    assert_eq!(
        shown["blocks"][1],
        json!({"k": "text", "t": "0123456789", "n": 16, "md": 1})
    );
}

/// A text that is one paragraph of itself is marked `1` (the page draws it from `t`); any
/// other markdown, a second paragraph or space around the paragraph keeps its tree.
#[test]
fn one_plain_paragraph_is_not_carried_twice() {
    let redactor = Redactor::new(Vec::new(), &[]).unwrap();
    let renderer = Renderer {
        clip_chars: 1000,
        ..renderer(&redactor)
    };
    let md = |text: &str| {
        renderer.message(&json!({"role": "user", "content": text}))["blocks"][0]["md"].clone()
    };
    assert_eq!(md("Fix the failing test, please."), json!(1));
    assert_eq!(md("use *this*"), json!([["p", "use ", ["em", "this"]]]));
    assert_eq!(
        md("two\nlines"),
        json!(1),
        "a soft break is drawn as the text's newline"
    );
    assert_ne!(md("two\n\nparagraphs"), json!(1));
    assert_ne!(md("ends with a newline\n"), json!(1));
    assert_ne!(md("a &amp; b"), json!(1));
}

/// A reply's and a question's text carry their markdown; a tool's output is shown as it
/// came, and a `read` result is coloured in its file's language (Pi's `path`, Claude Code's
/// `file_path`), found by its call's id.
#[test]
fn replies_are_markdown_and_a_read_file_is_coloured_by_its_path() {
    let redactor = Redactor::new(Vec::new(), &[]).unwrap();
    let renderer = Renderer {
        clip_chars: 1000,
        ..renderer(&redactor)
    };
    let question = renderer.message(&json!({"role": "user", "content": "**why**"}));
    assert_eq!(
        question["blocks"][0]["md"],
        json!([["p", ["strong", "why"]]])
    );
    let call = renderer.message(&json!({"role": "assistant", "content": [
        {"type": "text", "text": "Reading."},
        {"type": "toolCall", "id": "r1", "name": "read", "arguments": {"path": "src/a.rs"}},
        {"type": "toolCall", "id": "r2", "name": "Read", "arguments": {"file_path": "b.py"}},
        {"type": "toolCall", "id": "r3", "name": "read", "arguments": {"path": "notes.txt"}}]}));
    assert!(
        call["blocks"][1].get("md").is_none(),
        "a call is not markdown"
    );
    let result = |id: &str, text: &str| {
        renderer.message(
            &json!({"role": "toolResult", "toolCallId": id, "toolName": "read",
            "content": [{"type": "text", "text": text}]}),
        )
    };
    let rust = result("r1", "fn main() {}\n**not bold**");
    assert_eq!(rust["blocks"][0]["lang"], "rs");
    assert_eq!(rust["blocks"][0]["hl"][1], 2, "`fn`, a keyword");
    assert!(
        rust["blocks"][0].get("md").is_none(),
        "a result is not markdown"
    );
    assert_eq!(result("r2", "def f(): pass")["blocks"][0]["lang"], "py");
    for (id, text) in [("r3", "plain words"), ("unknown", "fn main() {}")] {
        let shown = result(id, text);
        assert!(shown["blocks"][0].get("hl").is_none(), "{id}");
    }
}

#[test]
fn an_edit_result_shows_its_diff_redacted() {
    let redactor = Redactor::new(vec!["sk-diff-key".to_owned()], &[]).unwrap();
    let renderer = Renderer {
        clip_chars: 1000,
        ..renderer(&redactor)
    };
    let shown = renderer.message(&json!({"role": "toolResult", "toolName": "edit",
        "content": [{"type": "text", "text": "Edited a.txt"}],
        "details": {"diff": " 1 KEY=sk-diff-key\n-2 a\n+2 b", "firstChangedLine": 2}}));
    assert_eq!(
        shown["blocks"][1],
        json!({"k": "diff", "t": " 1 KEY=<redacted>\n-2 a\n+2 b"})
    );
    let plain = renderer.message(&json!({"role": "toolResult", "content": "x",
        "details": {"diff": 3}}));
    assert_eq!(plain["blocks"].as_array().unwrap().len(), 1);
}

/// A written file's key is redacted before the content is coloured: the colour runs cover
/// the redacted text, and the key is nowhere in the call.
#[test]
fn a_written_key_is_redacted_before_its_colours() {
    let redactor = Redactor::new(vec!["sk-write-key".to_owned()], &[]).unwrap();
    let renderer = Renderer {
        clip_chars: 1000,
        ..renderer(&redactor)
    };
    let shown = renderer.message(&json!({"role": "assistant", "content": [
        {"type": "toolCall", "id": "w1", "name": "write",
         "arguments": {"path": "sk-write-key/a.py", "content": "KEY = \"sk-write-key\"\n"}}]}));
    let call = &shown["blocks"][0];
    assert!(!call.to_string().contains("sk-write-key"), "{call}");
    assert_eq!(call["head"], "<redacted>/a.py (1 line)");
    let text = call["t"].as_str().unwrap();
    let covered: u64 = call["hl"]
        .as_array()
        .unwrap()
        .iter()
        .step_by(2)
        .map(|run| run.as_u64().unwrap())
        .sum();
    assert_eq!(covered as usize, text.encode_utf16().count(), "{text}");
}

#[test]
fn only_raster_images_in_plain_base64_are_embedded() {
    let redactor = Redactor::new(Vec::new(), &[]).unwrap();
    let renderer = renderer(&redactor);
    let shown = renderer.content(Some(&json!([
        {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
        {"type": "image", "mimeType": "image/svg+xml", "data": "PHN2Zz4="},
        {"type": "image", "mimeType": "image/png", "data": "x\"><script>"}])));
    assert_eq!(shown[0]["data"], "iVBORw0KGgo=");
    assert!(shown[1].get("data").is_none());
    assert!(shown[2].get("data").is_none());
}

/// A message many views sent is rendered once: every view shows the same thing, and its image
/// is counted once against the page's budget (rendered again it would have found the budget
/// spent and been left out of the later views).
#[test]
fn a_message_sent_in_many_views_is_rendered_once() {
    let redactor = Redactor::new(Vec::new(), &[]).unwrap();
    let renderer = renderer(&redactor);
    let sent = json!({"role": "toolResult", "toolCallId": "c1", "toolName": "read",
        "content": [{"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
                    {"type": "text", "text": "KEY=sk-ant-api03-secretsecretsecret"}]});
    let first = renderer.sent_message(&sent.to_string());
    assert_eq!(
        first.shown["blocks"][0]["data"], "iVBORw0KGgo=",
        "{first:?}"
    );
    assert_eq!(first.text, Value::Object(first.shown.clone()).to_string());
    assert_eq!(renderer.image_budget.get(), 100 - "iVBORw0KGgo=".len());
    for _ in 0..3 {
        assert_eq!(renderer.sent_message(&sent.to_string()), first);
    }
    assert_eq!(renderer.image_budget.get(), 100 - "iVBORw0KGgo=".len());
    // Another message is rendered on its own.
    let other = json!({"role": "user", "content": "another"});
    assert_eq!(
        renderer.sent_message(&other.to_string()).shown,
        renderer.message(&other)
    );
}

/// A reply recorded at $0 for the tokens it used (a model of unknown price) shows its cost as
/// unknown, not as free; a priced reply keeps its price.
#[test]
fn a_reply_at_zero_dollars_for_its_tokens_has_an_unknown_cost() {
    let none = FreeModels::default();
    let zero = json!({"usage": {"input": 1200, "output": 300, "cacheRead": 0, "cacheWrite": 0,
                      "totalTokens": 1500, "cost": {"total": 0}}});
    assert_eq!(usage_of(&zero, &none).unwrap()[5], Value::Null);
    let priced = json!({"usage": {"input": 1200, "output": 300, "cost": {"total": 0.25}}});
    assert_eq!(usage_of(&priced, &none).unwrap()[5], json!(0.25));
}

/// A reply at $0 of a model declared free (`cost` all zero) shows $0, not an unknown cost.
#[test]
fn a_reply_of_a_free_model_costs_zero() {
    let free = FreeModels::new([("ollama".to_owned(), "qwen3".to_owned())]);
    let reply = json!({"provider": "ollama", "model": "qwen3", "usage": {"input": 1200,
                       "output": 300, "totalTokens": 1500, "cost": {"total": 0}}});
    assert_eq!(usage_of(&reply, &free).unwrap()[5], json!(0.0));
    let other = json!({"provider": "ollama", "model": "llama", "usage": {"input": 1200,
                       "output": 300, "totalTokens": 1500, "cost": {"total": 0}}});
    assert_eq!(usage_of(&other, &free).unwrap()[5], Value::Null);
}

/// Adversarial review: markdown decodes escapes and entities, so a key written `ghp\_…` (a
/// model escaping `_` in prose) or with `&#58;`/`&#45;` in a link's address or a fence's
/// language passed the text's redaction and came out whole in the tree.
#[test]
fn a_key_hidden_by_markdown_escapes_is_redacted_in_the_tree() {
    let redactor = Redactor::new(Vec::new(), &[]).unwrap();
    let renderer = Renderer {
        clip_chars: 1000,
        ..renderer(&redactor)
    };
    let shown = renderer.message(&json!({"role": "assistant", "content": [{"type": "text",
        "text": "token ghp\\_abcdefghijklmnopqrstuvwxyz1234\n\n\
                 [repo](https://me&#58;hunter2pass@example.com/x)\n\n\
                 ```sk&#45;ant-api03-abcdefghijklmnopqrstuv\ncode\n```"}]}));
    let tree = shown["blocks"][0]["md"].to_string();
    for key in [
        "ghp_abcdefghijklmnopqrstuvwxyz1234",
        "hunter2pass",
        "sk-ant-api03-abcdefghijklmnopqrstuv",
    ] {
        assert!(!tree.contains(key), "{key} in {tree}");
    }
    assert!(
        tree.contains(r#"["a",{"href":"https://"#),
        "the link stays a link: {tree}"
    );
}

/// Adversarial review: a `read` call's headline is all it shows; a long path is kept as a
/// block's text is (it was cut at 200 characters, with no note).
#[test]
fn a_read_of_a_long_path_keeps_the_whole_path() {
    let redactor = Redactor::new(Vec::new(), &[]).unwrap();
    let renderer = Renderer {
        clip_chars: 1000,
        ..renderer(&redactor)
    };
    let path = format!(
        "/repo/{}/the-file-that-was-read.rs",
        "node_modules/pkg".repeat(14)
    );
    assert!(path.chars().count() > 200);
    let shown = renderer.message(&json!({"role": "assistant", "content": [
        {"type": "toolCall", "id": "r1", "name": "read", "arguments": {"path": path}}]}));
    let call = shown["blocks"][0].to_string();
    assert!(call.contains("the-file-that-was-read.rs"), "{call}");
}

/// Adversarial review: only a `read` result's text is coloured in the file's language; an
/// image the page does not embed (an SVG read from `logo.svg`) keeps its note.
#[test]
fn an_image_in_a_read_result_is_not_coloured_as_code() {
    let redactor = Redactor::new(Vec::new(), &[]).unwrap();
    let renderer = Renderer {
        clip_chars: 1000,
        ..renderer(&redactor)
    };
    renderer.message(&json!({"role": "assistant", "content": [
        {"type": "toolCall", "id": "r1", "name": "read", "arguments": {"path": "logo.svg"}}]}));
    let result = renderer.message(&json!({"role": "toolResult", "toolCallId": "r1",
        "content": [{"type": "image", "mimeType": "image/svg+xml", "data": "PHN2Zz4="},
                    {"type": "text", "text": "<svg></svg>"}]}));
    let image = &result["blocks"][0];
    assert_eq!(image["k"], "image");
    assert!(image.get("hl").is_none(), "{image}");
    assert!(result["blocks"][1].get("hl").is_some(), "{result:?}");
}

/// Pi 1.6's system message keeps its prompt in `sections` (its `content` empty) and its tools in
/// `toolsAdded`: the page carries each section's text in order and the tools, redacted; a later
/// message's removed section and tools are named. (The card was empty.)
#[test]
fn a_system_message_shows_its_sections_and_tools() {
    let redactor = Redactor::new(Vec::new(), &[]).unwrap();
    let renderer = Renderer {
        clip_chars: 1000,
        ..renderer(&redactor)
    };
    let shown = renderer.message(&json!({"role": "system", "content": "",
        "sections": {"preamble": "You are a coding assistant.", "rules": "<rules>\n- be brief\n</rules>",
                     "cwd": null},
        "toolsAdded": [{"name": "read", "description": "Read file contents", "parameters":
            {"type": "object", "required": ["path"], "properties": {
                "path": {"type": "string", "description": "File to read"},
                "limit": {"type": "number"}}}},
            {"name": "bash", "description": "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"}],
        "toolsRemoved": [{"name": "write"}], "timestamp": 1}));
    assert_eq!(
        shown["blocks"],
        json!([
            {"k": "system", "sec": "preamble", "t": "You are a coding assistant."},
            {"k": "system", "sec": "rules", "t": "<rules>\n- be brief\n</rules>"},
            {"k": "system", "sec": "cwd", "removed": true},
            {"k": "tools", "add": [
                {"name": "read", "t": "Read file contents", "params": [
                    ["path", "string", true, "File to read"], ["limit", "number", false, ""]]},
                {"name": "bash", "t": "key <redacted>", "params": []}],
             "rm": ["write"]}
        ])
    );
    let with_content = renderer.message(&json!({"role": "system", "content": "be brief"}));
    assert_eq!(
        with_content["blocks"],
        json!([{"k": "system", "t": "be brief"}])
    );
}
