// The compactions, usage and search panels.
  // ---- compactions ----
  function renderCompactions() {
    const box = document.getElementById("compactions");
    box.replaceChildren();
    if (!D.compactions.length) { box.append(el("p", "note", "No compaction in this session.")); return; }
    D.compactions.forEach((c, k) => box.append(compactionCard(c, k)));
  }
  function entryList(indices, cls) {
    const list = el("div", cls);
    let shown = 0;
    const more = el("button", "small", "");
    function add() {
      const next = indices.slice(shown, shown + 300);
      for (const i of next) {
        const item = el("div", "item", el("span", "who", who(entry(i)) + " "), line(entry(i)));
        item.dataset.entry = String(i);
        item.addEventListener("click", () => { select(i, true); showTab("conversation"); showEntryPane(); });
        more.before(item);
      }
      shown += next.length;
      more.textContent = "show " + Math.min(300, indices.length - shown) + " more";
      more.style.display = shown < indices.length ? "" : "none";
    }
    more.addEventListener("click", add);
    list.append(more);
    add();
    return list;
  }
  function compactionCard(c, k) {
    const e = entry(c.e);
    const covered = el("details", "covered", el("summary", null, "Replaced " + counted(c.covered.length, "entry", "entries") + " in the model's context; they stay in the session (expand)"));
    covered.addEventListener("toggle", () => { if (covered.open && !covered.querySelector(".covered-list")) covered.append(entryList(c.covered, "covered-list")); }, { once: false });
    const kept = el("details", "kept", el("summary", null, "Kept verbatim: " + counted(c.kept.length, "entry", "entries")));
    kept.addEventListener("toggle", () => { if (kept.open && !kept.querySelector(".kept-list")) kept.append(entryList(c.kept, "kept-list")); });
    const files = el("div", "files");
    if (c.readFiles.length) files.append(el("div", null, "read: " + c.readFiles.join(", ")));
    if (c.modifiedFiles.length) files.append(el("div", null, "modified: " + c.modifiedFiles.join(", ")));
    if (!c.readFiles.length && !c.modifiedFiles.length) files.append(el("div", null, "no file lists recorded"));
    const summarizer = c.fromHook ? "a hook" : (c.summarizer || "not recorded (Pi or an imported summary)");
    const card = el("div", "card compaction-card",
      el("div", "head", el("b", null, "Compaction " + (k + 1)), jump(c.e), el("span", null, e.ts),
        c.undoneBy !== null && c.undoneBy !== undefined ? el("span", "badge warn", "undone by ", jump(c.undoneBy)) : null),
      el("div", "compaction-panel",
        el("div", null,
          // Two counts of two kinds, said as such: the entry's recorded count (the provider's,
          // the whole request) and ctxkit's estimate of the messages alone after it.
          el("div", "tokens-change", "before " + fmt(c.tokensBefore) + " tokens (as recorded) · after ~" + fmt(c.tokensAfter) + " tokens of messages (estimated)"),
          el("div", "note", "summarizer: " + summarizer +
            " · next: " + counted(c.next.requests, "request") + (c.next.firstUsage ? ", the first carried " + fmt(c.next.firstUsage) + " tokens (provider)" : "")),
          covered, kept, el("h3", null, "Files"), files),
        el("div", null, el("h3", null, "Summary"), summaryShown(c))));
    card.id = "compaction-" + k;
    card.dataset.entry = String(c.e);
    return card;
  }

  // ---- usage ----
  function renderUsage() {
    const box = document.getElementById("usage");
    const t = D.totals.usage;
    const rows = [["input", t[0]], ["output", t[1]], ["cache read", t[2]], ["cache write", t[3]]];
    const table = el("table", "totals", el("tr", null, el("th", null, "total over " + counted(D.totals.requests, "model call") + " (all branches)"), el("th", null, "tokens")));
    for (const [name, v] of rows) table.append(el("tr", null, el("td", null, name), el("td", null, fmt(v))));
    table.append(el("tr", null, el("td", null, "cost"), el("td", null, totalCost(D.totals))));
    const turns = el("table", "turns", el("tr", null, ...["turn (user message)", "requests", "input", "output", "cache read", "cache write", "cost"].map((h) => el("th", null, h))));
    const list = D.timeline.turns;
    for (const turn of list.slice(0, 2000)) {
      const u = turn.usage;
      const first = el("td", null, jump(turn.e, line(entry(turn.e)).slice(0, 60) || entry(turn.e).id));
      turns.append(el("tr", null, first, el("td", null, fmt(turn.requests)), el("td", null, fmt(u[0])), el("td", null, fmt(u[1])), el("td", null, fmt(u[2])), el("td", null, fmt(u[3])), el("td", null, turn.costUnknown === turn.requests ? "–" : money(u[5]))));
    }
    box.replaceChildren(el("h2", null, "Usage and cost"), table, el("h2", null, "Per turn on the current path (" + fmt(list.length) + ")"), turns);
    if (list.length > 2000) box.append(el("p", "note", "first 2000 turns shown"));
  }

  // A compaction's summary as its entry draws it (its markdown), else as text.
  function summaryShown(c) {
    const block = ((entry(c.e) || {}).blocks || [])[0];
    return block && hasMarkdown(block) ? markdownBlock(block) : el("pre", "summary", c.summary);
  }

  // ---- search ----
  // A character's case fold for search: its upper case's lower case (ß and SS, σ and ς alike),
  // and İ as i, so `izmit` finds `İzmit` (its lower case is i and a combining dot).
  function foldChar(c) { return c === "\u0130" ? "i" : c.toUpperCase().toLowerCase(); }
  // `s` case-folded, with where each of its UTF-16 units came from in `s`: `start[k]` and
  // `end[k]` bound the character of `s` that folded unit k is part of. A fold may be longer or
  // shorter than its character, so an offset in the fold is not one in `s`.
  function folded(s) {
    let text = "";
    const start = [], end = [];
    for (let i = 0; i < s.length;) {
      const c = String.fromCodePoint(s.codePointAt(i));
      const f = foldChar(c);
      for (let k = 0; k < f.length; k++) { start.push(i); end.push(i + c.length); }
      text += f;
      i += c.length;
    }
    return { text, start, end };
  }
  // Where the case-folded `q` is in `s`, as `[from, to]` offsets of `s` itself, or null.
  function findFolded(s, q) {
    const hay = folded(s);
    const at = hay.text.indexOf(q);
    return at < 0 || !q ? null : [hay.start[at], hay.end[at + q.length - 1]];
  }
  // `at` moved off the second half of a surrogate pair (an emoji) to the pair's start.
  function atCharacter(s, at) {
    const unit = s.charCodeAt(at);
    return at > 0 && unit >= 0xdc00 && unit <= 0xdfff ? at - 1 : at;
  }
  function search(query) {
    const box = document.getElementById("results");
    if (!query) { box.className = ""; box.replaceChildren(); return; }
    const q = folded(query).text;
    const hits = [];
    // Text the page clipped is not here to search: the note says so when the session has any
    // (QA 2026-12-07: a word at the end of a clipped entry gave "0 entries match", unexplained).
    let clipped = 0;
    for (const e of D.entries) for (const b of e.blocks || []) if (b.n) clipped++;
    for (let i = 0; i < D.entries.length && hits.length < 500; i++) {
      const e = D.entries[i];
      // The ids the page shows (an entry's, a tool call's, the call a result answers) are found
      // too: searching an id `ctxkit tree` printed found nothing.
      const ids = [e.id, e.toolCallId].concat((e.blocks || []).map((b) => b.k === "tool" ? b.id : null));
      const id = ids.find((s) => typeof s === "string" && findFolded(s, q));
      if (id) { hits.push([i, id, findFolded(id, q)]); continue; }
      for (const b of e.blocks || []) {
        const s = (b.t || "") + (b.name ? " " + b.name : "") + (b.head ? " " + b.head : "");
        const found = findFolded(s, q);
        if (found) { hits.push([i, s, found]); break; }
      }
    }
    box.className = "on";
    const matched = hits.length === 1 ? "1 entry matches" : fmt(hits.length) + (hits.length === 500 ? "+" : "") + " entries match";
    const unsearched = clipped ? " (the clipped part of " + counted(clipped, "block") + " is not in this page to search)" : "";
    box.replaceChildren(el("div", "note", matched + unsearched));
    for (const [i, s, [at, to]] of hits) {
      // Up to 40 characters before the hit, from the start of a word (a tester's snippet began
      // "ppear to be"), with an ellipsis when the text went on before it; never half an emoji.
      let from = atCharacter(s, Math.max(0, at - 40));
      const until = atCharacter(s, to + 80);
      if (from > 0) {
        const space = s.slice(from, at).search(/\s/);
        from = space >= 0 ? from + space + 1 : from;
      }
      const before = (from > 0 ? "…" : "") + visible(s.slice(from, at)).replace(/\s+/g, " ");
      const item = el("div", "item search-hit", el("span", "who", who(entry(i)) + " "),
        before, el("mark", null, s.slice(at, to)), visible(s.slice(to, until)).replace(/\s+/g, " "));
      item.addEventListener("click", () => { select(i, true); showTab("conversation"); showEntryPane(); });
      box.append(item);
    }
    showTab("conversation");
    // On a narrow screen the results are in the tree's pane (QA 2026-12-07: drawn in the hidden
    // pane, 0 × 0 px, while the page stayed on the raw entries).
    if (NARROW.matches) showPane("tree");
  }

