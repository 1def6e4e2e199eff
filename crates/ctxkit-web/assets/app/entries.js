// Content blocks and entry cards, and the session file's problems.
  // ---- blocks ----
  function clipNote(b) {
    return b.n ? el("div", "clip", "clipped in this page: " + fmt(chars(b.t)) + " of " + counted(b.n, "character")) : null;
  }
  function renderBlock(b) {
    if (hasMarkdown(b)) return markdownBlock(b);
    if (Array.isArray(b.hl) && b.k !== "tool") return el("div", null, colouredText(b), clipNote(b));
    switch (b.k) {
      case "thinking": {
        if (b.omitted) return el("div", "note", "[thinking left out of this page]");
        const d = el("details", "thinking", el("summary", null, "Thinking (" + counted(b.n || chars(b.t), "character") + ")"), el("pre", null, b.t), clipNote(b));
        return d;
      }
      case "tool": {
        // A known tool's call: its headline, and its body ($ command, written content, the
        // replacements) coloured; any other call: its arguments' JSON.
        const known = typeof b.head === "string";
        const body = !known ? el("pre", null, b.t) : !b.t ? null : Array.isArray(b.hl) ? colouredText(b) : el("pre", null, b.t);
        if (body && known && b.lang === "sh") body.prepend(text("$ "));
        const d = el("details", "tool", el("summary", null, "tool call ", el("b", null, b.name), known && b.head ? el("span", "tool-head", " " + b.head) : null, " ", el("span", "note", b.id)), body, clipNote(b));
        d.open = true;
        return d;
      }
      case "image": {
        // The page's Rust decided from the image's bytes, set its type and took the blanks out of
        // its base64; here only its four types are drawn, never another data: URL.
        const ok = /^image\/(png|jpeg|gif|webp)$/.test(b.mime || "") && typeof b.data === "string";
        if (!ok) return el("div", "note", "[image " + (b.mime || "") + ", " + fmt(b.bytes) + " bytes: " + (b.t || "not shown") + "]");
        const img = el("img", "shot");
        img.alt = "image from the session";
        img.src = "data:" + b.mime + ";base64," + b.data;
        return img;
      }
      case "diff": {
        const lines = (b.t || "").split("\n").map((line) => el("span", line[0] === "-" ? "del" : line[0] === "+" ? "add" : null, line + "\n"));
        return el("div", null, el("pre", "diff", ...lines), clipNote(b));
      }
      case "json": return el("div", null, el("pre", "note", b.t), clipNote(b));
      case "bash": return el("div", null, el("pre", null, "$ " + b.t), clipNote(b));
      default: return el("div", null, el("pre", null, b.t || ""), clipNote(b));
    }
  }
  // ---- system messages (Pi 0.87, 1.6: the prompt and tools kept in the transcript) ----
  // Whether the system entry `i` starts the prompt on its branch (no system message nor a
  // compaction that replays one before it): its text is the prompt, a later one's an update.
  function leadingSystem(i) {
    let p = entry(i).p;
    for (let steps = 0; p !== null && p !== undefined && steps < D.entries.length; steps++) {
      const e = entry(p);
      if (!e) return true;
      if ((e.ty === "message" && e.role === "system") || (e.ty === "compaction" && e.sys)) return false;
      p = e.p;
    }
    return true;
  }
  // A long text folded to its first lines, as Pi's export shows a prompt: open when short.
  function foldedText(title, t, clipped) {
    const lines = t.split("\n").length;
    const d = el("details", "system-prompt", el("summary", null, el("b", null, title), lines > 10 ? el("span", "note", " " + counted(lines, "line")) : null), el("pre", null, t), clipped);
    d.open = lines <= 10;
    return d;
  }
  function toolsList(title, tools) {
    if (!tools || !tools.length) return null;
    const items = el("ul", "tools-list");
    for (const t of tools) {
      const head = [el("b", null, t.name), t.t ? " – " + t.t : null];
      if (!t.params || !t.params.length) { items.append(el("li", null, ...head)); continue; }
      const params = el("ul", null);
      for (const [name, type, required, desc] of t.params) {
        params.append(el("li", null, el("code", null, name), " ", el("span", "note", type + (required ? " · required" : " · optional")), desc ? " – " + desc : null));
      }
      items.append(el("li", null, el("details", null, el("summary", null, ...head), params)));
    }
    const d = el("details", "tools", el("summary", null, el("b", null, title), el("span", "note", " " + counted(tools.length, "tool"))), items);
    d.open = tools.length <= 12;
    return d;
  }
  // The prompt's text as Pi's export shows it: for the first system message its content and
  // sections joined (removed sections left out), for a later one what each section became.
  function systemBody(blocks, leading) {
    const parts = [], changes = [], clipped = [];
    let tools = null;
    for (const b of blocks) {
      if (b.k === "tools") { tools = b; continue; }
      if (b.k !== "system") continue;
      if (b.n) clipped.push(clipNote(b));
      if (b.sec === undefined) { if (b.t) { parts.push(b.t); changes.push("instructions"); } continue; }
      changes.push(b.removed ? "-" + b.sec : b.sec);
      if (leading) { if (!b.removed && b.t) parts.push(b.t); }
      else parts.push(b.removed ? "Removed system prompt section \"" + b.sec + "\"." : "Updated system prompt section \"" + b.sec + "\":\n\n" + (b.t || ""));
    }
    if (tools && !leading) {
      const moved = (tools.add || []).map((t) => "+" + t.name).concat((tools.rm || []).map((name) => "-" + name));
      if (moved.length) changes.push("tools " + moved.join(" "));
    }
    const out = el("div", "system");
    const t = parts.join("\n\n");
    if (t) out.append(foldedText(leading ? "System Prompt" : "System Prompt Update" + (changes.length ? ": " + changes.join(", ") : ""), t, el("div", null, ...clipped)));
    if (tools) {
      out.append(toolsList(leading ? "Available Tools" : "Tools Added", tools.add));
      if (tools.rm && tools.rm.length) out.append(el("div", "note", "Tools removed: " + tools.rm.join(", ")));
    }
    if (!out.childNodes.length) out.append(el("div", "note", "(an empty system message)"));
    return out;
  }
  // `leading`: a system message's place (see `leadingSystem`); other messages ignore it.
  function entryBody(e, leading) {
    const body = el("div", "body");
    if (e.errorMessage) body.append(el("div", "err", "error: " + e.errorMessage));
    if (e.role === "system") body.append(systemBody(e.blocks || [], leading !== false));
    else for (const b of e.blocks || []) body.append(renderBlock(b));
    const u = usageLine(e.usage);
    if (u) body.append(el("div", "note", u));
    return body;
  }
  // Where a branch summary's originals are: the branch it left behind stays in the session, and
  // the model reads it back with `recall`, except a span the user removed (`forget`).
  function leftBehindNote(e) {
    const from = e.fromId ? indexOfId(e.fromId) : -1;
    const text = (e.blocks && e.blocks[0] && e.blocks[0].t) || "";
    const forgotten = text.startsWith("A span of this conversation was removed on request.");
    return el("div", "note left-behind", "Summarizes the branch left at ",
      from >= 0 ? jump(from) : (e.fromId || "the start"),
      forgotten ? "; its entries stay in the session, kept from the model (removed on request)."
        : "; its entries stay in the session, and the model can read them back with recall.");
  }
  function jump(i, label) {
    const a = el("a", null, label || entry(i).id);
    a.addEventListener("click", (ev) => { ev.preventDefault(); select(i, true); showTab("conversation"); showEntryPane(); });
    return a;
  }
  function entryCard(i, extraClass) {
    const e = entry(i);
    const head = el("div", "head", el("b", null, who(e)), jump(i),
      e.toolName ? el("span", null, e.toolName) : null,
      e.model ? el("span", null, e.model) : null,
      e.isError ? el("span", "badge bad", "error") : null,
      e.label ? el("span", "badge label", e.label) : null,
      i === D.leaf ? el("span", "badge", "leaf") : null,
      el("span", null, e.ts));
    if (e.ty === "compaction") head.append(el("span", "badge bad", "compaction · " + fmt(e.tokensBefore) + " tokens before"));
    const body = entryBody(e, e.role === "system" && leadingSystem(i));
    if (e.ty === "branch_summary") body.prepend(leftBehindNote(e));
    for (const p of problemsAt(i)) {
      head.append(el("span", "badge bad damaged", "damaged"));
      body.prepend(el("div", "err", "file line " + fmt(p.line) + ": " + p.text));
    }
    const card = el("div", "card " + e.ty + " " + (e.role || "") + (extraClass ? " " + extraClass : ""), head, body);
    card.dataset.entry = String(i);
    return card;
  }

  // ---- the session file's problems (what `ctxkit check` reports; lines and kinds, no content) ----
  let byEntry = new Map(); // entry index -> its damage problems
  function problemsAt(i) { return byEntry.get(i) || []; }
  // While the view follows a file, its last line is cut off for the moment an agent writes it:
  // that alone is shown only when it is still there a few seconds on, in the same data (QA
  // 2026-12-07: "This session file is damaged" flashed on every append).
  let tornTimer = null;
  function renderProblems() {
    clearTimeout(tornTimer);
    const list = D.problems || [];
    if (D.live && list.length && list.every((p) => p.kind === "tornLastLine")) {
      const data = D;
      tornTimer = setTimeout(() => { if (D === data) drawProblems(list); }, 3000);
      drawProblems([]);
      return;
    }
    drawProblems(list);
  }
  function drawProblems(list) {
    byEntry = new Map();
    for (const p of list) {
      if (!p.damage || p.e === undefined) continue;
      if (!byEntry.has(p.e)) byEntry.set(p.e, []);
      byEntry.get(p.e).push(p);
    }
    const box = document.getElementById("damage");
    box.replaceChildren();
    box.className = list.length ? "on" : "";
    if (!list.length) return;
    const damaged = list.some((p) => p.damage);
    const count = D.problemCount || list.length;
    box.append(el("b", null, damaged ? "This session file is damaged: " : "Notes on this session file: "),
      fmt(count) + (count === 1 ? " problem" : " problems") +
      (damaged ? ". What the skipped lines held is not on this page; the tree and what the model saw are built from what could be read. `ctxkit check` lists every problem." : "."));
    const items = el("ul", null);
    for (const p of list.slice(0, 5)) items.append(problemItem(p));
    box.append(items);
    if (list.length > 5) {
      const rest = el("details", null, el("summary", null, "the other " + fmt(count - 5)));
      const more = el("ul", null);
      for (const p of list.slice(5)) more.append(problemItem(p));
      if (count > list.length) more.append(el("li", null, fmt(count - list.length) + " more: `ctxkit check` lists them"));
      rest.append(more);
      box.append(rest);
    }
  }
  function problemItem(p) {
    return el("li", p.damage ? null : "note", "line " + fmt(p.line) + (p.e !== undefined ? " (" : ""),
      p.e !== undefined ? jump(p.e) : null, p.e !== undefined ? ")" : "", ": " + p.text);
  }

