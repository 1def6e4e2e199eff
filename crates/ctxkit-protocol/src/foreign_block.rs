//! Anthropic content blocks v3 has no block for (a PDF the user attached as a `document`, a tool
//! search's `tool_reference`, a block type added later), as an import stores them: a text block
//! saying what the block was, the block itself kept beside the text under [`ANTHROPIC_BLOCK_FIELD`].
//! Every reader of v3 (Pi 1.6.0 among them) then reads a valid text block, and a request to an
//! Anthropic model can send the document itself back ([`anthropic_document`]). Pure: no I/O.

use serde_json::Value;

use crate::{ContentBlock, JsonObject};

/// The field of a text block that keeps the Anthropic block the text stands for.
pub const ANTHROPIC_BLOCK_FIELD: &str = "anthropicBlock";

/// The text that stands for a block v3 has no block for: `[document: application/pdf, 13 bytes]`,
/// `[document: https://…]`, `[tool reference: ExitPlanMode]`, or `[<type> block]`.
#[must_use]
pub fn foreign_block_text(block: &JsonObject) -> String {
    match text_at(block, "type") {
        Some("document") => {
            let title = text_at(block, "title")
                .map(|title| format!(" \"{title}\""))
                .unwrap_or_default();
            let source = block
                .get("source")
                .and_then(Value::as_object)
                .map(document_source)
                .unwrap_or_else(|| "no source".to_owned());
            format!("[document{title}: {source}]")
        }
        Some("tool_reference") => format!(
            "[tool reference: {}]",
            text_at(block, "tool_name").unwrap_or("unnamed")
        ),
        Some(other) => format!("[{other} block]"),
        None => "[untyped block]".to_owned(),
    }
}

fn text_at<'a>(object: &'a JsonObject, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str)
}

/// A document's source in a few words: its media type and size, or where it is.
fn document_source(source: &JsonObject) -> String {
    let text_at = |key: &str| text_at(source, key);
    let media_type = text_at("media_type");
    match (text_at("type"), text_at("data")) {
        (Some("base64"), Some(data)) => format!(
            "{}, {} bytes",
            media_type.unwrap_or("application/octet-stream"),
            base64_decoded_length(data)
        ),
        (Some("text"), Some(data)) => format!(
            "{}, {} characters",
            media_type.unwrap_or("text/plain"),
            data.chars().count()
        ),
        _ => text_at("url")
            .or_else(|| text_at("file_id"))
            .or(media_type)
            .or_else(|| text_at("type"))
            .unwrap_or("unknown source")
            .to_owned(),
    }
}

/// How many bytes base64 `data` decodes to (whitespace and padding not counted).
fn base64_decoded_length(data: &str) -> usize {
    let symbols = data
        .bytes()
        .filter(|byte| !byte.is_ascii_whitespace() && *byte != b'=')
        .count();
    symbols * 3 / 4
}

/// The Anthropic `document` block a content block stands for: the block kept beside an
/// imported placeholder text, or a `document` block an older import kept as it was.
#[must_use]
pub fn anthropic_document(block: &ContentBlock) -> Option<&JsonObject> {
    let document = match block {
        ContentBlock::Text(text) => text
            .extra
            .get(ANTHROPIC_BLOCK_FIELD)
            .and_then(Value::as_object)?,
        ContentBlock::Unknown(object) => object,
        ContentBlock::Image(_) | ContentBlock::Thinking(_) | ContentBlock::ToolCall(_) => {
            return None;
        }
    };
    (document.get("type").and_then(Value::as_str) == Some("document")).then_some(document)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn each_block_is_named_by_what_it_holds() {
        let cases = [
            (
                json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQKJdPr6eEK"}}),
                "[document: application/pdf, 15 bytes]",
            ),
            (
                json!({"type": "document", "title": "Manual", "source": {"type": "url", "url": "https://example.com/a.pdf"}}),
                "[document \"Manual\": https://example.com/a.pdf]",
            ),
            (
                json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "héllo"}}),
                "[document: text/plain, 5 characters]",
            ),
            (json!({"type": "document"}), "[document: no source]"),
            (
                json!({"type": "tool_reference", "tool_name": "ExitPlanMode"}),
                "[tool reference: ExitPlanMode]",
            ),
            (
                json!({"type": "web_fetch_tool_result"}),
                "[web_fetch_tool_result block]",
            ),
            (json!({"kind": "x"}), "[untyped block]"),
        ];
        for (block, text) in cases {
            assert_eq!(foreign_block_text(&object(block)), text);
        }
    }

    #[test]
    fn a_document_is_found_beside_its_text_or_as_an_older_import_kept_it() {
        let document = object(json!({"type": "document", "source": {"type": "base64"}}));
        let mut extra = JsonObject::new();
        extra.insert(
            ANTHROPIC_BLOCK_FIELD.to_owned(),
            Value::Object(document.clone()),
        );
        let placeholder = ContentBlock::Text(crate::TextContent {
            text: "[document]".to_owned(),
            extra,
        });
        assert_eq!(anthropic_document(&placeholder), Some(&document));
        assert_eq!(
            anthropic_document(&ContentBlock::Unknown(document.clone())),
            Some(&document)
        );
        let search = object(json!({"type": "server_tool_use"}));
        let mut extra = JsonObject::new();
        extra.insert(ANTHROPIC_BLOCK_FIELD.to_owned(), Value::Object(search));
        let web_search = ContentBlock::Text(crate::TextContent {
            text: "[web search]".to_owned(),
            extra,
        });
        assert_eq!(anthropic_document(&web_search), None);
        assert_eq!(anthropic_document(&ContentBlock::text("plain")), None);
    }
}
