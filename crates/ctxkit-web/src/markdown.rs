//! A message's markdown as the page draws it: a tree of a few element kinds, which the script
//! builds with `createElement` and text nodes, never as HTML. So nothing a message holds can become
//! markup: raw HTML in it is shown as the text it is, a link goes only to `http`, `https` or
//! `mailto` (another target is written out beside the link's words), and an image is a link to its
//! address, never fetched. A bare web address in text is a link too (GitHub's rule: trailing
//! punctuation and an unmatched closing parenthesis are not part of it); a table cell carries its
//! column's alignment; a footnote's reference is a `sup` and its definition a `footnote` node.
//!
//! A node is a JSON string (text) or an array: its tag, an optional object of attributes, then its
//! children. A code block is `["pre", {"lang": …}, …]` whose children are strings and, in a
//! language `ctxkit-highlight` knows, `[token, text]` pairs ([`token_code`]).

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde_json::{Map, Value, json};

use ctxkit_highlight::SyntaxToken;

/// Elements nested deeper than this are drawn flat: their children join their parent's. (The
/// tree stays shallow for whatever recursion reads it: serde's, the script's.)
const MAX_DEPTH: usize = 16;

/// The letter the page's style knows a syntax token by (`.hl-k` …).
pub(crate) fn token_code(token: SyntaxToken) -> &'static str {
    match token {
        SyntaxToken::Comment => "c",
        SyntaxToken::Keyword => "k",
        SyntaxToken::Function => "f",
        SyntaxToken::Variable => "v",
        SyntaxToken::String => "s",
        SyntaxToken::Number => "n",
        SyntaxToken::Type => "t",
        SyntaxToken::Operator => "o",
        SyntaxToken::Punctuation => "p",
        SyntaxToken::Inserted => "i",
        SyntaxToken::Deleted => "d",
    }
}

/// `text`'s markdown as the page's nodes (the top-level blocks).
pub(crate) fn tree(text: &str) -> Value {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let mut builder = Builder {
        stack: vec![Open::default()],
        ..Builder::default()
    };
    for event in Parser::new_ext(text, options) {
        builder.event(event);
    }
    builder.finish()
}

/// `text` as its markdown reads, escapes and entities decoded (`ghp\_…` is `ghp_…`), with every
/// link's and image's address after its words: the words a redaction of the text must see.
pub(crate) fn plain_text(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    for event in Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_FOOTNOTES) {
        match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                plain.push_str(&dest_url);
                plain.push(' ');
            }
            Event::Text(piece)
            | Event::Code(piece)
            | Event::Html(piece)
            | Event::InlineHtml(piece)
            | Event::InlineMath(piece)
            | Event::DisplayMath(piece)
            | Event::FootnoteReference(piece) => plain.push_str(&piece),
            Event::SoftBreak | Event::HardBreak => plain.push('\n'),
            Event::End(TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::Item) => {
                plain.push('\n');
            }
            Event::Start(_) | Event::End(_) | Event::Rule | Event::TaskListMarker(_) => {}
        }
    }
    // The last paragraph's end is no line of the text.
    plain.truncate(plain.trim_end_matches('\n').len());
    plain
}

/// An element being built: its tag (`None`: drawn flat, its content written straight into the
/// element drawn around it), attributes, children.
#[derive(Default)]
struct Open {
    tag: Option<&'static str>,
    attributes: Map<String, Value>,
    children: Vec<Value>,
    /// A link's address the page does not follow, written after its words.
    unfollowed: Option<String>,
    /// A code block's language and text, highlighted when it closes.
    code: Option<(String, String)>,
}

#[derive(Default)]
struct Builder {
    /// The root (the top-level blocks) first; each open element after it.
    stack: Vec<Open>,
    /// The places in `stack` of the open elements that were given a tag, innermost last: the
    /// last receives the content (a flat element's too, so closing one moves nothing, and
    /// thousands of flat quotes cost no more than one). Its length is the tree's depth.
    drawn: Vec<usize>,
    in_table_head: bool,
    /// The alignment of each column of the table being read, and the next cell's column.
    alignments: Vec<Alignment>,
    column: usize,
    /// Links (and images) open around the text: a web address in their words is not linked again.
    in_links: usize,
}

impl Builder {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(end) => self.end(end),
            Event::Text(text) => self.text(&text),
            Event::Code(code) => self.push(json!(["code", code.as_ref()])),
            Event::Html(html) | Event::InlineHtml(html) => self.text(&html),
            Event::InlineMath(math) | Event::DisplayMath(math) => self.text(&math),
            Event::FootnoteReference(name) => self.push(json!(["sup", name.as_ref()])),
            Event::SoftBreak => self.text("\n"),
            Event::HardBreak => self.push(json!(["br"])),
            Event::Rule => self.push(json!(["hr"])),
            Event::TaskListMarker(done) => self.text(if done { "☑ " } else { "☐ " }),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        let mut open = Open::default();
        let name = match tag {
            Tag::Paragraph => Some("p"),
            Tag::Heading { level, .. } => Some(heading(level)),
            Tag::BlockQuote(_) => Some("blockquote"),
            Tag::CodeBlock(kind) => {
                let language = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_owned()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                open.code = Some((language, String::new()));
                Some("pre")
            }
            Tag::HtmlBlock => Some("pre"),
            Tag::List(Some(first)) => {
                open.attributes.insert("start".to_owned(), json!(first));
                Some("ol")
            }
            Tag::List(None) => Some("ul"),
            Tag::Item => Some("li"),
            Tag::Table(alignments) => {
                self.alignments = alignments;
                Some("table")
            }
            Tag::TableHead => {
                self.in_table_head = true;
                self.column = 0;
                Some("tr")
            }
            Tag::TableRow => {
                self.column = 0;
                Some("tr")
            }
            Tag::TableCell => {
                if let Some(align) = self
                    .alignments
                    .get(self.column)
                    .and_then(|a| align_name(*a))
                {
                    open.attributes.insert("align".to_owned(), json!(align));
                }
                self.column += 1;
                Some(if self.in_table_head { "th" } else { "td" })
            }
            Tag::Emphasis => Some("em"),
            Tag::Strong => Some("strong"),
            Tag::Strikethrough => Some("del"),
            Tag::Link { dest_url, .. } => {
                self.in_links += 1;
                self.link(&mut open, &dest_url)
            }
            Tag::Image { dest_url, .. } => {
                self.text("image: ");
                self.in_links += 1;
                self.link(&mut open, &dest_url)
            }
            Tag::FootnoteDefinition(name) => {
                open.attributes
                    .insert("name".to_owned(), json!(name.as_ref()));
                Some("footnote")
            }
            Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::Superscript
            | Tag::Subscript
            | Tag::MetadataBlock(_) => None,
        };
        if name.is_some() && self.drawn.len() < MAX_DEPTH {
            open.tag = name;
            self.drawn.push(self.stack.len());
        } else if let Some(Value::String(address)) = open.attributes.remove("href") {
            // A link drawn flat keeps its address, written after its words.
            open.unfollowed = Some(address);
        }
        self.stack.push(open);
    }

    /// A link's tag when its address is one the page follows, else `None` (its words are drawn
    /// plain and the address written after them).
    fn link(&self, open: &mut Open, address: &str) -> Option<&'static str> {
        if followed(address) {
            open.attributes.insert("href".to_owned(), json!(address));
            Some("a")
        } else {
            open.unfollowed = (!address.is_empty()).then(|| address.to_owned());
            None
        }
    }

    fn end(&mut self, end: TagEnd) {
        if end == TagEnd::TableHead {
            self.in_table_head = false;
        }
        let closes_link = matches!(end, TagEnd::Link | TagEnd::Image);
        if self.stack.len() <= 1 {
            return;
        }
        let Some(mut open) = self.stack.pop() else {
            return;
        };
        if let Some((language, code)) = open.code.take() {
            open.children = match open.tag {
                Some(_) => code_pieces(&code, &language),
                None => vec![json!(code)],
            };
            if !language.is_empty() {
                open.attributes.insert("lang".to_owned(), json!(language));
            }
        }
        // Its text is whole once it closes (the parser hands it over in pieces).
        if open.tag.is_some_and(|tag| tag != "pre") && self.in_links == 0 {
            open.children = linked_addresses(std::mem::take(&mut open.children));
        }
        if closes_link {
            self.in_links = self.in_links.saturating_sub(1);
        }
        match open.tag {
            Some(tag) => {
                if let Some(address) = open.unfollowed.take() {
                    push_text(&mut open.children, &format!(" ({address})"));
                }
                self.drawn.pop();
                let mut node = vec![json!(tag)];
                if !open.attributes.is_empty() {
                    node.push(Value::Object(open.attributes));
                }
                node.extend(open.children);
                self.push(Value::Array(node));
            }
            // Its content is already in the element around it; a code block's text and an
            // address not followed go there now.
            None => {
                for child in open.children {
                    if let Value::String(text) = &child {
                        self.text(text);
                    } else {
                        self.push(child);
                    }
                }
                if let Some(address) = open.unfollowed.take() {
                    self.text(&format!(" ({address})"));
                }
            }
        }
    }

    fn text(&mut self, text: &str) {
        if let Some(Open {
            code: Some((_, code)),
            ..
        }) = self.stack.last_mut()
        {
            code.push_str(text);
        } else if let Some(open) = self.receiver() {
            push_text(&mut open.children, text);
        }
    }

    fn push(&mut self, node: Value) {
        if let Some(open) = self.receiver() {
            open.children.push(node);
        }
    }

    /// The innermost element drawn (or the root): flat elements' content goes to it.
    fn receiver(&mut self) -> Option<&mut Open> {
        let place = self.drawn.last().copied().unwrap_or(0);
        self.stack.get_mut(place)
    }

    fn finish(mut self) -> Value {
        // (The parser closes what it opens; anything left open joins the root.)
        self.drawn.clear();
        while self.stack.len() > 1 {
            let Some(open) = self.stack.pop() else { break };
            for child in open.children {
                self.push(child);
            }
        }
        Value::Array(
            self.stack
                .pop()
                .map(|root| root.children)
                .unwrap_or_default(),
        )
    }
}

/// Adds text to a list of children, joined to a string that ends it.
fn push_text(children: &mut Vec<Value>, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(Value::String(last)) = children.last_mut() {
        last.push_str(text);
    } else {
        children.push(json!(text));
    }
}

fn heading(level: HeadingLevel) -> &'static str {
    match level {
        HeadingLevel::H1 => "h1",
        HeadingLevel::H2 => "h2",
        HeadingLevel::H3 => "h3",
        HeadingLevel::H4 => "h4",
        HeadingLevel::H5 => "h5",
        HeadingLevel::H6 => "h6",
    }
}

fn align_name(alignment: Alignment) -> Option<&'static str> {
    match alignment {
        Alignment::None => None,
        Alignment::Left => Some("left"),
        Alignment::Center => Some("center"),
        Alignment::Right => Some("right"),
    }
}

/// `children` with each web address in their text made a link (`https://…`, `http://…`, as GitHub
/// finds them in text: not after a letter or digit, not its trailing punctuation, nor a closing
/// parenthesis it does not open).
fn linked_addresses(children: Vec<Value>) -> Vec<Value> {
    let mut linked = Vec::with_capacity(children.len());
    for child in children {
        let Value::String(text) = child else {
            linked.push(child);
            continue;
        };
        let mut rest = text.as_str();
        while let Some((start, end)) = next_address(rest) {
            push_text(&mut linked, &rest[..start]);
            let address = &rest[start..end];
            linked.push(json!(["a", {"href": address}, address]));
            rest = &rest[end..];
        }
        push_text(&mut linked, rest);
    }
    linked
}

/// Where the first web address in `text` starts and ends.
fn next_address(text: &str) -> Option<(usize, usize)> {
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find("http") {
        let start = from + found;
        from = start + 4;
        let after_word = text[..start]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric);
        let scheme = ["https://", "http://"]
            .into_iter()
            .find(|scheme| lower[start..].starts_with(scheme));
        let (Some(scheme), false) = (scheme, after_word) else {
            continue;
        };
        let length = text[start..]
            .find(|c: char| c.is_whitespace() || c.is_control() || c == '<' || c == '>')
            .unwrap_or(text.len() - start);
        let address = trimmed_address(&text[start..start + length]);
        if address.len() > scheme.len() {
            return Some((start, start + address.len()));
        }
    }
    None
}

/// An address without what follows it in a sentence: trailing punctuation, and closing
/// parentheses beyond those it opens.
fn trimmed_address(mut address: &str) -> &str {
    // Counted once: an address ending in thousands of parentheses is trimmed in linear time.
    let opened = address.matches('(').count();
    let mut closed = address.matches(')').count();
    while let Some(last) = address.chars().next_back() {
        let unmatched = last == ')' && closed > opened;
        if !unmatched && !"?!.,:;*_~'\"".contains(last) {
            break;
        }
        if last == ')' {
            closed -= 1;
        }
        address = &address[..address.len() - last.len_utf8()];
    }
    address
}

/// Whether the page links to `address`: the web and mail only (no `javascript:`, no `file:`, no
/// address relative to where the page was saved).
fn followed(address: &str) -> bool {
    let lower = address.trim_start().to_ascii_lowercase();
    ["http://", "https://", "mailto:"]
        .iter()
        .any(|scheme| lower.starts_with(scheme))
        && !address.chars().any(char::is_control)
}

/// A code block's children: `[token, text]` pairs and plain strings in a language ctxkit
/// highlights, else its text.
pub(crate) fn code_pieces(code: &str, language: &str) -> Vec<Value> {
    let code = code.strip_suffix('\n').unwrap_or(code);
    let Some(lines) = ctxkit_highlight::highlight(code, language) else {
        return vec![json!(code)];
    };
    let mut children = Vec::new();
    for (number, line) in lines.iter().enumerate() {
        if number > 0 {
            push_text(&mut children, "\n");
        }
        for piece in line {
            match piece.token {
                Some(token) => children.push(json!([token_code(token), piece.text])),
                None => push_text(&mut children, piece.text),
            }
        }
    }
    children
}

/// `code`'s runs as `[length, token, length, token …]`: lengths in UTF-16 units (as the page's
/// script slices a string), token 0 for plain text, else one more than its place in
/// [`SyntaxToken::ALL`]; `None` in a language ctxkit does not highlight. The runs cover the
/// whole text, its line ends too.
pub(crate) fn runs(code: &str, language: &str) -> Option<Vec<u32>> {
    let lines = ctxkit_highlight::highlight(code, language)?;
    let mut runs: Vec<u32> = Vec::new();
    let mut add = |length: usize, token: u32| {
        if length == 0 {
            return;
        }
        let length = u32::try_from(length).unwrap_or(u32::MAX);
        match runs.as_mut_slice() {
            [.., last_length, last_token] if *last_token == token => *last_length += length,
            _ => runs.extend([length, token]),
        }
    };
    for (number, (line, source)) in lines.iter().zip(code.split('\n')).enumerate() {
        if number > 0 {
            add(1, 0);
        }
        for piece in line {
            let token = piece.token.map_or(0, token_number);
            add(piece.text.encode_utf16().count(), token);
        }
        if source.ends_with('\r') {
            add(1, 0);
        }
    }
    Some(runs)
}

/// One more than `token`'s place in [`SyntaxToken::ALL`] (0 is plain text).
fn token_number(token: SyntaxToken) -> u32 {
    let place = SyntaxToken::ALL.iter().position(|each| *each == token);
    place.map_or(0, |place| u32::try_from(place + 1).unwrap_or(0))
}

#[cfg(test)]
mod tests;
