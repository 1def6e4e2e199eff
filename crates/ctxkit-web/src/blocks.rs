//! A message as the page shows it: a list of display blocks (text, thinking, tool call, tool
//! result, image, JSON), every string redacted and clipped, thinking left out on request, images
//! kept only when they are a known image type in plain base64 and within the page's budget.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use serde_json::{Map, Value, json};

use ctxkit_session::FreeModels;

use crate::markdown;
use crate::redact::Redactor;
use crate::tool_calls;

/// How strings and images go into the page.
#[derive(Debug)]
pub(crate) struct Renderer<'a> {
    pub redactor: &'a Redactor,
    /// Characters kept of one text block.
    pub clip_chars: usize,
    pub no_thinking: bool,
    /// Bytes of images the page may still hold.
    pub image_budget: Cell<usize>,
    /// Models whose replies at $0 are free.
    pub free_models: &'a FreeModels,
    /// The language of each file a `read` call asked for, by call id: its result is coloured so.
    pub read_languages: RefCell<HashMap<String, String>>,
    /// The messages views sent instead of their entries, as shown, by their JSON: a pruned
    /// result or a summary is sent alike in many views and is rendered once.
    pub sent_shown: RefCell<HashMap<String, Map<String, Value>>>,
}

/// Image types a page shows (others are named, not shown: an `image/svg+xml` could carry script).
const SHOWN_IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

impl Renderer<'_> {
    /// A text field of a block: `t` (clipped) and `n` (the full length, when clipped).
    fn text_into(&self, block: &mut Map<String, Value>, text: &str) {
        let (shown, full) = self.redactor.clip(text, self.clip_chars);
        block.insert("t".to_owned(), Value::String(shown));
        if let Some(full) = full {
            block.insert("n".to_owned(), json!(full));
        }
    }

    fn text_block(&self, kind: &str, text: &str) -> Value {
        let mut block = Map::new();
        block.insert("k".to_owned(), json!(kind));
        self.text_into(&mut block, text);
        Value::Object(block)
    }

    /// A short string (a name, a model): redacted, at most 200 characters.
    pub fn short(&self, text: &str) -> String {
        self.redactor.clip(text, 200).0
    }

    /// The blocks of a message's `content` (a string or a list of blocks).
    pub fn content(&self, content: Option<&Value>) -> Vec<Value> {
        match content {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(text)) => vec![self.text_block("text", text)],
            Some(Value::Array(blocks)) => blocks.iter().map(|block| self.block(block)).collect(),
            Some(other) => vec![self.json_block(other)],
        }
    }

    fn json_block(&self, value: &Value) -> Value {
        self.text_block("json", &value.to_string())
    }

    fn block(&self, block: &Value) -> Value {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let text_of = |field: &str| block.get(field).and_then(Value::as_str).unwrap_or("");
        match kind {
            "text" => self.text_block("text", text_of("text")),
            "thinking" if self.no_thinking => json!({"k": "thinking", "t": "", "omitted": true}),
            "thinking" => {
                let redacted = block.get("redacted").and_then(Value::as_bool) == Some(true);
                let mut shown = self.text_block("thinking", text_of("thinking"));
                if redacted && let Some(object) = shown.as_object_mut() {
                    object.insert("t".to_owned(), json!("[encrypted thinking]"));
                }
                shown
            }
            "toolCall" => self.tool_call(block),
            "image" => self.image(text_of("mimeType"), text_of("data")),
            _ => self.json_block(block),
        }
    }

    /// A tool call: a known tool's as [`tool_calls::shown_call`] draws it (`head`, its body in
    /// `t`, coloured when it has a language), any other as its arguments' JSON.
    fn tool_call(&self, call: &Value) -> Value {
        self.note_read_language(call);
        let text_of = |field: &str| call.get(field).and_then(Value::as_str).unwrap_or("");
        let arguments = call.get("arguments").cloned().unwrap_or(Value::Null);
        let mut shown = Map::new();
        shown.insert("k".to_owned(), json!("tool"));
        shown.insert("name".to_owned(), json!(self.short(text_of("name"))));
        shown.insert("id".to_owned(), json!(self.short(text_of("id"))));
        match tool_calls::shown_call(text_of("name"), &arguments) {
            Some(drawn) => {
                shown.insert("head".to_owned(), json!(self.short(&drawn.head)));
                self.text_into(&mut shown, &drawn.body);
                if let Some(language) = drawn.language {
                    colour(&mut shown, &language);
                }
            }
            None => {
                let arguments = serde_json::to_string_pretty(&arguments).unwrap_or_default();
                self.text_into(&mut shown, &arguments);
            }
        }
        Value::Object(shown)
    }

    /// Notes the language of the file a `read` call (Pi's `read`, Claude Code's `Read`) asks for.
    fn note_read_language(&self, call: &Value) {
        let name = call.get("name").and_then(Value::as_str).unwrap_or("");
        let (Some(id), true) = (
            call.get("id").and_then(Value::as_str),
            name == "read" || name == "Read",
        ) else {
            return;
        };
        let path = ["path", "file_path"].iter().find_map(|field| {
            call.pointer(&format!("/arguments/{field}"))
                .and_then(Value::as_str)
        });
        if let Some(language) = path.and_then(ctxkit_highlight::language_of_path) {
            self.read_languages
                .borrow_mut()
                .insert(id.to_owned(), language);
        }
    }

    /// Each text block's markdown, as the page draws it (`md`, beside its text `t`): `1` when it
    /// is one paragraph of the whole text, which the page draws from `t` (most questions and short
    /// replies; the tree would carry the text twice).
    pub fn markdown(&self, blocks: &mut [Value]) {
        for block in blocks {
            let kind = block.get("k").and_then(Value::as_str);
            if !matches!(kind, Some("text" | "summary")) {
                continue;
            }
            let text = block.get("t").and_then(Value::as_str).unwrap_or("");
            let tree = markdown::tree(text);
            let plain = [json!(["p", text])];
            let tree = if tree.as_array().is_some_and(|nodes| *nodes == plain) {
                json!(1)
            } else {
                tree
            };
            if let Some(block) = block.as_object_mut() {
                block.insert("md".to_owned(), tree);
            }
        }
    }

    /// A `read` result's text blocks coloured in the file's language ([`colour`]).
    fn colour_read_result(&self, call_id: Option<&str>, blocks: &mut [Value]) {
        let languages = self.read_languages.borrow();
        let Some(language) = call_id.and_then(|id| languages.get(id)) else {
            return;
        };
        for block in blocks {
            if let Some(block) = block.as_object_mut() {
                colour(block, language);
            }
        }
    }

    /// An image block: its data when it is a shown type, plain base64, and fits the budget.
    fn image(&self, mime: &str, data: &str) -> Value {
        let plain_base64 = data
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'='));
        let budget = self.image_budget.get();
        let mime_shown = SHOWN_IMAGE_TYPES.contains(&mime);
        if mime_shown && plain_base64 && !data.is_empty() && data.len() <= budget {
            self.image_budget.set(budget - data.len());
            json!({"k": "image", "mime": mime, "data": data})
        } else {
            let reason = if mime_shown && plain_base64 {
                "not embedded: over the page's image budget"
            } else {
                "not shown: not a PNG, JPEG, GIF or WebP image in base64"
            };
            json!({"k": "image", "mime": self.short(mime), "bytes": data.len(), "t": reason})
        }
    }

    /// [`Renderer::message`] of a message a view sent, rendered once for all the views that sent
    /// it (and its images counted once against the page's budget).
    pub fn sent_message(&self, message: &Value) -> Map<String, Value> {
        let key = message.to_string();
        if let Some(shown) = self.sent_shown.borrow().get(&key) {
            return shown.clone();
        }
        let shown = self.message(message);
        self.sent_shown.borrow_mut().insert(key, shown.clone());
        shown
    }

    /// The display blocks of one message (any role), with its role-specific fields.
    pub fn message(&self, message: &Value) -> Map<String, Value> {
        let mut shown = Map::new();
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        shown.insert("role".to_owned(), json!(self.short(role)));
        let text = |field: &str| message.get(field).and_then(Value::as_str);
        let mut blocks = match role {
            "bashExecution" => {
                let command = text("command").unwrap_or("");
                let output = text("output").unwrap_or("");
                vec![
                    self.text_block("bash", command),
                    self.text_block("text", output),
                ]
            }
            "compactionSummary" | "branchSummary" => {
                vec![self.text_block("summary", text("summary").unwrap_or(""))]
            }
            "toolResult" => {
                let mut blocks = self.content(message.get("content"));
                self.colour_read_result(text("toolCallId"), &mut blocks);
                // The change an edit made (Pi 1.6's and ctxkit's `details.diff`).
                let diff = message.pointer("/details/diff").and_then(Value::as_str);
                if let Some(diff) = diff.filter(|diff| !diff.is_empty()) {
                    blocks.push(self.text_block("diff", diff));
                }
                blocks
            }
            _ => self.content(message.get("content")),
        };
        if matches!(
            role,
            "user" | "assistant" | "compactionSummary" | "branchSummary"
        ) {
            self.markdown(&mut blocks);
        }
        shown.insert("blocks".to_owned(), Value::Array(blocks));
        for field in [
            "toolName",
            "toolCallId",
            "provider",
            "model",
            "stopReason",
            "customType",
        ] {
            if let Some(value) = text(field) {
                shown.insert(field.to_owned(), json!(self.short(value)));
            }
        }
        if let Some(error) = text("errorMessage") {
            shown.insert(
                "errorMessage".to_owned(),
                json!(self.redactor.clip(error, 2000).0),
            );
        }
        if message.get("isError").and_then(Value::as_bool) == Some(true) {
            shown.insert("isError".to_owned(), json!(true));
        }
        if let Some(usage) = usage_of(message, self.free_models) {
            shown.insert("usage".to_owned(), usage);
        }
        shown
    }
}

/// A block's text (`t`) coloured in `language`: `lang`, and `hl`, the runs of its text as
/// `[length, token, …]` ([`markdown::runs`]); nothing when the language is not one ctxkit colours.
fn colour(block: &mut Map<String, Value>, language: &str) {
    let Some(text) = block.get("t").and_then(Value::as_str) else {
        return;
    };
    if let Some(runs) = markdown::runs(text, language) {
        block.insert("lang".to_owned(), json!(language));
        block.insert("hl".to_owned(), json!(runs));
    }
}

/// A message's usage in the page's short form: `[input, output, cacheRead, cacheWrite, total,
/// cost]`, the cost `null` when its price is unknown, by the rule `ctxkit info` follows
/// ([`FreeModels::price_unknown`]): the message records no cost (an imported Claude Code reply:
/// its tokens are known, its price is not), or $0 for tokens it used by a model not declared free
/// (a model ctxkit and Pi know no price for is recorded at $0); `None` when it reports nothing.
pub(crate) fn usage_of(message: &Value, free: &FreeModels) -> Option<Value> {
    let usage = message.get("usage")?;
    let field = |name: &str| message.get(name).and_then(Value::as_str);
    let number = |field: &str| usage.get(field).and_then(Value::as_u64).unwrap_or(0);
    let input = number("input");
    let output = number("output");
    let cache_read = number("cacheRead");
    let cache_write = number("cacheWrite");
    let total = match number("totalTokens") {
        0 => {
            ctxkit_protocol::Usage::from_parts(input, output, cache_read, cache_write).total_tokens
        }
        total => total,
    };
    let recorded = usage
        .get("cost")
        .and_then(|cost| cost.get("total"))
        .and_then(Value::as_f64);
    let cost = recorded
        .filter(|_| !free.price_unknown(recorded, total, field("provider"), field("model")));
    (total > 0 || cost.is_some_and(|cost| cost > 0.0))
        .then(|| json!([input, output, cache_read, cache_write, total, cost]))
}

#[cfg(test)]
mod tests {
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
        let first = renderer.sent_message(&sent);
        assert_eq!(first["blocks"][0]["data"], "iVBORw0KGgo=", "{first:?}");
        assert_eq!(renderer.image_budget.get(), 100 - "iVBORw0KGgo=".len());
        for _ in 0..3 {
            assert_eq!(renderer.sent_message(&sent), first);
        }
        assert_eq!(renderer.image_budget.get(), 100 - "iVBORw0KGgo=".len());
        // Another message is rendered on its own.
        let other = json!({"role": "user", "content": "another"});
        assert_eq!(renderer.sent_message(&other), renderer.message(&other));
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
}
