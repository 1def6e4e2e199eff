// A message's markdown and a read file's colours, built as elements and text nodes, never HTML.
// The tree comes in the data (`src/markdown.rs`: a node is a string or [tag, {attributes}?,
// ...children]); only the tags listed here are made, any other draws its children alone, and a
// link goes only to http, https or mailto.
  const MD_TAGS = new Set(["p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote",
    "code", "em", "strong", "del", "a", "hr", "br", "table", "tr", "th", "td", "sup"]);
  const MD_ALIGN = new Set(["left", "center", "right"]);
  // A syntax token's letter by its number in a read result's runs (SyntaxToken::ALL's order).
  const HL = ["", "c", "k", "f", "v", "s", "n", "t", "o", "p", "i", "d"];
  const MD_MAX_DEPTH = 40;

  function isAttributes(value) { return value !== null && typeof value === "object" && !Array.isArray(value); }
  function mdChildren(parent, children, depth) {
    for (const child of children) {
      const node = mdNode(child, depth + 1);
      if (node) parent.append(node);
    }
    return parent;
  }
  // A run of 200 characters or more without a blank wraps only `anywhere`, and kerned (the page's
  // font kerns "AA") Chromium shaped the rest of it again at each line: a 50,000-character word
  // took 31 s to lay out (QA). Such runs are drawn unkerned (`.md .long`); other text is as it was.
  function mdText(s) {
    const parts = s.split(/(\S{200,})/);
    if (parts.length === 1) return text(s);
    const out = document.createDocumentFragment();
    parts.forEach((part, i) => { if (part) out.append(i % 2 ? el("span", "long", part) : text(part)); });
    return out;
  }
  function mdNode(node, depth) {
    if (typeof node === "string") return mdText(node);
    if (!Array.isArray(node) || depth > MD_MAX_DEPTH) return null;
    const [tag, ...rest] = node;
    const attributes = isAttributes(rest[0]) ? rest.shift() : {};
    if (tag === "pre") return codeBlock(attributes.lang, rest);
    // A footnote's definition: its name, then its blocks.
    if (tag === "footnote") return mdChildren(el("div", "footnote", el("sup", null, String(attributes.name))), rest, depth);
    if (!MD_TAGS.has(tag)) return mdChildren(document.createDocumentFragment(), rest, depth);
    const made = document.createElement(tag);
    if (tag === "a" && typeof attributes.href === "string" && /^(https?:\/\/|mailto:)/i.test(attributes.href)) {
      made.href = attributes.href;
      made.rel = "noopener noreferrer";
      made.target = "_blank";
    }
    if (tag === "ol" && Number.isSafeInteger(attributes.start)) made.start = attributes.start;
    if ((tag === "th" || tag === "td") && MD_ALIGN.has(attributes.align)) made.className = "align-" + attributes.align;
    return mdChildren(made, rest, depth);
  }
  // A fenced block: its pieces, strings and [letter, text] pairs of a known language.
  function codeBlock(lang, pieces) {
    const pre = el("pre", "code");
    if (typeof lang === "string" && lang) pre.dataset.lang = lang;
    for (const piece of pieces) {
      if (typeof piece === "string") pre.append(text(piece));
      else if (Array.isArray(piece) && HL.indexOf(piece[0]) > 0) pre.append(el("span", "hl-" + piece[0], String(piece[1])));
    }
    return pre;
  }
  // `md` is the text's tree, or 1 for one paragraph of the whole text (not carried twice).
  function hasMarkdown(b) {
    return Array.isArray(b.md) || b.md === 1;
  }
  function markdownBlock(b) {
    const tree = b.md === 1 ? [["p", String(b.t || "")]] : b.md;
    return el("div", "md" + (b.k === "summary" ? " summary" : ""), mdChildren(document.createDocumentFragment(), tree, 0), clipNote(b));
  }
  // A block's text in its language's colours (a read file, a written one, a command, the
  // replacements of an edit): `hl` is [length, token, ...] over the text.
  function colouredText(b) {
    const pre = el("pre", "code");
    pre.dataset.lang = String(b.lang || "");
    const t = b.t || "";
    let at = 0;
    for (let i = 0; i + 1 < b.hl.length && at < t.length; i += 2) {
      const piece = t.slice(at, at + b.hl[i]);
      at += b.hl[i];
      const letter = HL[b.hl[i + 1]];
      pre.append(letter ? el("span", "hl-" + letter, piece) : text(piece));
    }
    if (at < t.length) pre.append(text(t.slice(at)));
    return pre;
  }
