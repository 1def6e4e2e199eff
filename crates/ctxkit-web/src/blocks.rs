//! A message as the page shows it: a list of display blocks (text, thinking, tool call, tool
//! result, image, JSON), every string redacted and clipped, thinking left out on request, images
//! kept only when they are a known image type in plain base64 and within the page's budget.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

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
    pub sent_shown: RefCell<HashMap<String, Rc<SentShown>>>,
}

/// A message a view sent, as the page shows it, and that as JSON text.
#[derive(Debug, PartialEq)]
pub(crate) struct SentShown {
    pub shown: Map<String, Value>,
    pub text: String,
}

/// The words a drawn markdown tree shows, joined: its strings but the tags and attributes.
fn tree_text(tree: &Value) -> String {
    let mut text = String::new();
    let mut pending = vec![tree];
    while let Some(value) = pending.pop() {
        match value {
            Value::String(piece) => text.push_str(piece),
            Value::Array(items) => {
                let children = match items.first() {
                    Some(Value::String(_)) => &items[1..],
                    Some(_) | None => &items[..],
                };
                pending.extend(children.iter().rev());
            }
            Value::Object(_) | Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    text
}

impl Renderer<'_> {
    /// A text field of a block: `t` (clipped) and `n` (the full length, when clipped).
    fn text_into(&self, block: &mut Map<String, Value>, text: &str) {
        let markdown = matches!(
            block.get("k").and_then(Value::as_str),
            Some("text" | "summary")
        );
        let (shown, full) = if markdown {
            self.redactor.clip_markdown(text, self.clip_chars)
        } else {
            self.redactor.clip(text, self.clip_chars)
        };
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
        self.text_block("json", &self.redactor.clean_json(value, false))
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
                // The headline is all a `read` shows: it keeps what a block's text keeps.
                let head = self.redactor.clip(&drawn.head, self.clip_chars).0;
                shown.insert("head".to_owned(), json!(head));
                self.text_into(&mut shown, &drawn.body);
                if let Some(language) = drawn.language {
                    colour(&mut shown, &language);
                }
            }
            None => {
                let arguments = self.redactor.clean_json(&arguments, true);
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
            let mut tree = markdown::tree(text);
            // Escapes and entities are decoded in the tree: `ghp\_…` or `&#58;` may join a key
            // the text's redaction could not see, and formatting splits one into pieces no
            // redaction of a piece sees (`ghp_**…**`). The text itself is then shown as its
            // markdown reads, redacted: the tree's rows and the search show it; a key split by
            // formatting is shown without the formatting (QA 2026-12-07: `ghp\_…` was redacted
            // in the card and shown whole there, and `ghp_**…**` drawn whole).
            let redacted_piece = self.redact_strings(&mut tree);
            let joined = tree_text(&tree);
            let split_key = self.redactor.clean(&joined) != joined;
            let decoded = (redacted_piece || split_key)
                .then(|| self.redactor.clean(&markdown::plain_text(text)));
            let text = decoded.as_deref().unwrap_or(text);
            let plain = [json!(["p", text])];
            let tree = if split_key || tree.as_array().is_some_and(|nodes| *nodes == plain) {
                json!(1)
            } else {
                tree
            };
            if let Some(block) = block.as_object_mut() {
                if let Some(decoded) = decoded {
                    block.insert("t".to_owned(), Value::String(decoded));
                }
                block.insert("md".to_owned(), tree);
            }
        }
    }

    /// The text of blocks shown as plain text (a tool result, a command's output, an extension's
    /// message), kept with its escapes by [`Self::text_into`], redacted as its markdown reads
    /// when that hides a key (QA 2026-12-07: `ghp\_…` in a tool result stayed on the page).
    fn redact_hidden_keys(&self, blocks: &mut [Value]) {
        for block in blocks {
            let Some(Value::String(text)) = block.get_mut("t") else {
                continue;
            };
            if let std::borrow::Cow::Owned(decoded) = self.redactor.markdown_source(text) {
                *text = self.redactor.clean(&decoded);
            }
        }
    }

    /// Every string of `tree` (its text and its attributes) through the redactor; whether any
    /// was redacted.
    fn redact_strings(&self, tree: &mut Value) -> bool {
        let mut pending = vec![tree];
        let mut redacted = false;
        while let Some(value) = pending.pop() {
            match value {
                Value::String(text) => {
                    let clean = self.redactor.clean(text);
                    if clean != *text {
                        *text = clean;
                        redacted = true;
                    }
                }
                Value::Array(items) => pending.extend(items.iter_mut()),
                Value::Object(fields) => pending.extend(fields.values_mut()),
                Value::Null | Value::Bool(_) | Value::Number(_) => {}
            }
        }
        redacted
    }

    /// A system message's blocks (Pi 0.87 and 1.6 keep the prompt in the transcript): its
    /// content's text, then each section in order (`sec`, its name; `removed` when a later message
    /// drops it), each a `system` block, and its tools as one `tools` block (`add`: name,
    /// description `t`, parameters `[name, type, required, description]`; `rm`: names removed).
    /// The page shows them as Pi's export does: the prompt's text, then its tools.
    fn system_blocks(&self, message: &Value) -> Vec<Value> {
        let mut blocks: Vec<Value> = self
            .content(message.get("content"))
            .into_iter()
            .filter(|block| block.get("t").and_then(Value::as_str) != Some(""))
            .map(|mut block| {
                if let Some(object) = block.as_object_mut()
                    && object.get("k").and_then(Value::as_str) == Some("text")
                {
                    object.insert("k".to_owned(), json!("system"));
                }
                block
            })
            .collect();
        if let Some(Value::Object(sections)) = message.get("sections") {
            for (name, value) in sections {
                let mut block = match value {
                    Value::Null => json!({"k": "system", "removed": true}),
                    Value::String(text) => self.text_block("system", text),
                    other @ (Value::Bool(_)
                    | Value::Number(_)
                    | Value::Array(_)
                    | Value::Object(_)) => {
                        self.text_block("system", &self.redactor.clean_json(other, false))
                    }
                };
                if let Some(object) = block.as_object_mut() {
                    object.insert("sec".to_owned(), json!(self.short(name)));
                }
                blocks.push(block);
            }
        }
        let tools = |field: &str| -> Vec<&Value> {
            message
                .get(field)
                .and_then(Value::as_array)
                .map(|tools| tools.iter().collect())
                .unwrap_or_default()
        };
        let (added, removed) = (tools("toolsAdded"), tools("toolsRemoved"));
        if !added.is_empty() || !removed.is_empty() {
            let name_of =
                |tool: &Value| self.short(tool.get("name").and_then(Value::as_str).unwrap_or(""));
            let added: Vec<Value> = added
                .into_iter()
                .map(|tool| self.tool_declared(tool))
                .collect();
            let removed: Vec<String> = removed.into_iter().map(name_of).collect();
            blocks.push(json!({"k": "tools", "add": added, "rm": removed}));
        }
        blocks
    }

    /// One tool a system message declares: its name, description (`t`) and parameters, each
    /// `[name, type, required, description]`.
    fn tool_declared(&self, tool: &Value) -> Value {
        fn text_of(value: Option<&Value>) -> &str {
            value.and_then(Value::as_str).unwrap_or("")
        }
        let required: Vec<&str> = tool
            .pointer("/parameters/required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let parameters: Vec<Value> = tool
            .pointer("/parameters/properties")
            .and_then(Value::as_object)
            .map(|properties| {
                properties
                    .iter()
                    .map(|(name, property)| {
                        let kind = match property.get("type") {
                            Some(Value::String(kind)) => kind.clone(),
                            Some(other) => self.redactor.clean_json(other, false),
                            None => "any".to_owned(),
                        };
                        json!([
                            self.short(name),
                            self.short(&kind),
                            required.contains(&name.as_str()),
                            self.redactor
                                .clip(text_of(property.get("description")), 2000)
                                .0
                        ])
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut shown = Map::new();
        shown.insert(
            "name".to_owned(),
            json!(self.short(text_of(tool.get("name")))),
        );
        self.text_into(&mut shown, text_of(tool.get("description")));
        shown.insert("params".to_owned(), Value::Array(parameters));
        Value::Object(shown)
    }

    /// A `read` result's text blocks coloured in the file's language ([`colour`]).
    fn colour_read_result(&self, call_id: Option<&str>, blocks: &mut [Value]) {
        let languages = self.read_languages.borrow();
        let Some(language) = call_id.and_then(|id| languages.get(id)) else {
            return;
        };
        for block in blocks {
            // Its text, not an image's note or a block kept as JSON.
            let text = block.get("k").and_then(Value::as_str) == Some("text");
            if let (Some(block), true) = (block.as_object_mut(), text) {
                colour(block, language);
            }
        }
    }

    /// An image block: its data, under the type its bytes say (whatever its label), when it is a
    /// PNG, JPEG, GIF or WebP image in base64 and fits the budget; else a note saying why not.
    fn image(&self, mime: &str, data: &str) -> Value {
        match image::shown_image(data) {
            image::ImageShown::Drawn { mime, data } => {
                let budget = self.image_budget.get();
                if data.len() <= budget {
                    self.image_budget.set(budget - data.len());
                    json!({"k": "image", "mime": mime, "data": data})
                } else {
                    let reason = "not embedded: over the page's image budget";
                    image::image_note(mime.to_owned(), data.len(), reason)
                }
            }
            image::ImageShown::Refused(reason) => {
                image::image_note(self.short(mime), data.len(), reason)
            }
        }
    }

    /// [`Renderer::message`] of a message a view sent (`json`, its JSON text), rendered once for
    /// all the views that sent it (and its images counted once against the page's budget).
    pub fn sent_message(&self, json: &str) -> Rc<SentShown> {
        if let Some(shown) = self.sent_shown.borrow().get(json) {
            return Rc::clone(shown);
        }
        let message: Value = serde_json::from_str(json).unwrap_or(Value::Null);
        let shown = self.message(&message);
        let text = Value::Object(shown.clone()).to_string();
        let shown = Rc::new(SentShown { shown, text });
        self.sent_shown
            .borrow_mut()
            .insert(json.to_owned(), Rc::clone(&shown));
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
            "system" => self.system_blocks(message),
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
        } else {
            self.redact_hidden_keys(&mut blocks);
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

mod image;

#[cfg(test)]
mod tests;
