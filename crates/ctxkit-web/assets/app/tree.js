// The tree as a virtual list, the path to an entry and the model's view of it, selection and deep
// links.
  // ---- tree (virtual list) ----
  const tree = { box: null, spacer: null, rows: new Map(), list: [] };
  // A tall list would exceed what Chromium paints (rows 400,000 px down were blank, 100,000 px
  // down painted, in headless Chromium 156): the
  // scrollable height is capped and the scroll position maps proportionally onto the rows.
  const MAX_HEIGHT = 100000;
  function treeHeight() { return Math.min(tree.list.length * ROW, MAX_HEIGHT); }
  function scaled() { return tree.list.length * ROW > MAX_HEIGHT; }
  // The (fractional) row at the top of the view.
  function topRow() {
    const visible = tree.box.clientHeight / ROW;
    if (!scaled()) return tree.box.scrollTop / ROW;
    const range = Math.max(1, treeHeight() - tree.box.clientHeight);
    return (tree.box.scrollTop / range) * Math.max(0, tree.list.length - visible);
  }
  function buildTree() {
    tree.list = D.order;
    orderPos = new Array(D.entries.length);
    tree.list.forEach((pair, pos) => { orderPos[pair[0]] = pos; });
    tree.spacer.style.height = treeHeight() + "px";
    tree.rows.forEach((node) => node.remove());
    tree.rows.clear();
    drawTree();
  }
  function drawTree() {
    const top = topRow();
    const first = Math.max(0, Math.floor(top) - 10);
    const last = Math.min(tree.list.length, Math.ceil(top + tree.box.clientHeight / ROW) + 10);
    for (const [pos, node] of tree.rows) {
      if (pos < first || pos >= last) { node.remove(); tree.rows.delete(pos); }
    }
    for (let pos = first; pos < last; pos++) {
      let node = tree.rows.get(pos);
      if (!node) {
        node = el("div", "row");
        node.addEventListener("click", () => { select(tree.list[pos][0], false); showEntryPane(); });
        tree.spacer.append(node);
        tree.rows.set(pos, node);
      }
      node.style.top = Math.round(tree.box.scrollTop + (pos - top) * ROW) + "px";
      paintRow(node, pos);
    }
  }
  function paintRow(node, pos) {
    const [i, indent] = tree.list[pos];
    const e = entry(i);
    node.className = "row" + (i === selected ? " sel" : "") + (onPath.has(i) ? "" : " off") + (i === D.leaf ? " leaf" : "");
    node.dataset.entry = String(i);
    node.id = "row-" + i;
    node.setAttribute("role", "option");
    node.setAttribute("aria-selected", i === selected ? "true" : "false");
    if (i === selected) tree.box.setAttribute("aria-activedescendant", node.id);
    node.style.paddingLeft = (8 + Math.min(indent, 12) * 12) + "px";
    // A long role (a custom message's, an unknown entry type) is cut to its column, whole on hover.
    const role = el("span", "who", who(e));
    role.title = who(e);
    node.replaceChildren(role, text(line(e) || "(" + e.ty + ")"));
    if (e.label) node.append(el("span", "badge label", e.label));
    if (e.ty === "compaction") node.append(el("span", "badge bad", fmt(e.tokensBefore) + "→"));
    if (problemsAt(i).length) node.append(el("span", "badge bad damaged", "damaged"));
  }
  function revealRow(i) {
    const pos = orderPos[i];
    if (pos === undefined) return;
    const top = topRow();
    const visible = tree.box.clientHeight / ROW;
    if (pos < top || pos > top + visible - 1) {
      const wanted = Math.max(0, pos - visible / 2);
      if (!scaled()) tree.box.scrollTop = wanted * ROW;
      else tree.box.scrollTop = wanted / Math.max(1, tree.list.length - visible) * Math.max(1, treeHeight() - tree.box.clientHeight);
    }
    drawTree();
  }

  // ---- the path (raw entries) and the model's view ----
  function pathTo(i) {
    const path = [];
    let at = i;
    let guard = 0;
    while (at !== null && at !== undefined && at >= 0 && guard++ < 5000000) { path.push(at); at = entry(at).p; }
    return path.reverse();
  }
  // The path to `i` as indices and ids: the same key under two versions of the data means the
  // same entries lead to `i`, so the model saw the same there.
  function pathKey(i) { return pathTo(i).map((p) => p + ":" + entry(p).id).join(" "); }
  function cachedContext(i) {
    const cached = contextCache.get(i);
    return cached && cached.path === pathKey(i) ? cached.context : null;
  }
  // After new data came: the contexts whose path changed (or whose entry is gone) are let go.
  function keepValidContexts() {
    for (const [i, cached] of contextCache) if (i >= D.entries.length || cached.path !== pathKey(i)) contextCache.delete(i);
  }
  // What the raw entries and the model's view at `i` are drawn from: the path's entries as the
  // data has them, which is the leaf, and where the file is damaged. Equal under two versions of
  // the data, the panels need not be drawn again (nor lose their scroll and opened blocks).
  function placeKey(i) {
    if (i < 0 || i >= D.entries.length) return null;
    return JSON.stringify(pathTo(i).map((p) => [p, entry(p), p === D.leaf, problemsAt(p)]));
  }
  function renderRaw(i) {
    const box = document.getElementById("raw");
    const path = pathTo(i);
    let shownFrom = Math.max(0, path.length - 60);
    box.replaceChildren(heading("Raw entries: the path to ", entry(i).id, " (" + fmt(path.length) + ")"));
    const list = el("div", null);
    const more = el("button", "small", "show 200 earlier");
    function fill() {
      list.replaceChildren();
      for (const p of path.slice(shownFrom)) list.append(entryCard(p, p === i ? "sel" : ""));
      more.style.display = shownFrom > 0 ? "" : "none";
    }
    more.addEventListener("click", () => { shownFrom = Math.max(0, shownFrom - 200); fill(); });
    box.append(el("div", "note", more), list);
    fill();
    const card = list.querySelector(".card.sel");
    if (card) card.scrollIntoView({ block: "nearest" });
  }
  function nearestPrecomputed(i) {
    const path = pathTo(i);
    for (let k = path.length - 1; k >= 0; k--) if (D.contexts[String(path[k])]) return path[k];
    return null;
  }
  // The context being fetched ({ i, controller }): choosing another entry cancels it, so the
  // server builds only the one the reader stopped at (stepping through 16 entries of a large
  // imported session had the server build all 16).
  let contextAsked = null;
  function renderContext(i) {
    const box = document.getElementById("context");
    box.replaceChildren(heading("What the model saw at ", entry(i).id));
    // An imported session's agent sent its own context: this is ctxkit's view of the same entries
    // (QA 2026-12-07: "39 results pruned" beside a chart showing the agent sent everything).
    const from = D.session.importedFrom;
    if (from) box.append(el("div", "note", "Imported from " + from + ": this is what ctxkit would send from here, with its transforms; " + from + " built its own request (the chart's usage counts what it sent)."));
    for (const p of pathTo(i).flatMap(problemsAt)) {
      box.append(el("div", "err damage-here", "The session file is damaged on this path: at ", jump(p.e),
        " (file line " + fmt(p.line) + "): " + p.text + ". What the model saw here is built from what could be read."));
    }
    const ctx = D.contexts[String(i)] || cachedContext(i);
    if (ctx) { box.append(contextView(ctx)); return; }
    if (D.contextsOnDemand && token) {
      box.append(el("div", "note", "building the context…"));
      if (contextAsked && contextAsked.i === i) return; // its answer draws it
      if (contextAsked) contextAsked.controller.abort();
      const asked = { i: i, controller: new AbortController() };
      contextAsked = asked;
      const answered = () => { if (contextAsked === asked) contextAsked = null; };
      const path = pathKey(i);
      fetch("/api/context?token=" + encodeURIComponent(token) + "&id=" + encodeURIComponent(entry(i).id), { signal: asked.controller.signal })
        .then(answerOf)
        .then((c) => { answered(); contextCache.set(i, { context: c, path: path }); if (selected === i) renderContext(i); })
        .catch((err) => {
          answered();
          if (err.name !== "AbortError" && selected === i) box.append(el("div", "err", "cannot build the context: " + err.message));
        });
      return;
    }
    const near = nearestPrecomputed(i);
    box.append(el("div", "note", "This export carries the contexts of " + fmt(Object.keys(D.contexts).length) +
      " chosen entries (tips, compactions, and requests spread along the path" +
      (D.contextsMaxMessages ? ", none of more than " + fmt(D.contextsMaxMessages) + " messages" : "") +
      "); `ctxkit view` or `ctxkit context --leaf " + entry(i).id + "` builds any other."));
    if (near !== null) box.append(el("div", "note", "Nearest earlier entry with its context: ", jump(near)));
  }
  function contextView(ctx) {
    const r = ctx.report;
    const wrap = el("div", null);
    wrap.append(el("div", "note ctx-report",
      counted(ctx.messages.length, "message") + " · estimate " + fmt(r.tokensBefore) + " → " + fmt(r.tokensAfter) +
      " tokens after the transforms · " + r.toolResultsPruned + " results pruned · " +
      (r.toolCallsCut ? "calls cut in " + r.toolCallsCut + (r.toolCallsCut === 1 ? " reply · " : " replies · ") : "") + r.thinkingBlocksDropped +
      " thinking blocks dropped · " + r.messagesDroppedByWindow + " dropped by the window" +
      (ctx.model ? " · model " + ctx.model : "") + " · thinking " + ctx.thinkingLevel));
    const list = el("div", "ctx-list");
    let limit = 300;
    const start = Math.max(0, ctx.messages.length - limit);
    if (start > 0) {
      const earlier = el("button", "small", "show the " + (start === 1 ? "earlier message" : fmt(start) + " earlier messages"));
      earlier.addEventListener("click", () => { earlier.remove(); for (const m of ctx.messages.slice(0, start).reverse()) list.prepend(contextMessage(m)); });
      wrap.append(el("div", "note", earlier));
    }
    for (const m of ctx.messages.slice(start)) list.append(contextMessage(m));
    wrap.append(list);
    return wrap;
  }
  function contextMessage(m) {
    const e = entry(m.e);
    // A large message sent in place of the entry is kept once in the page (`sentMessages`).
    let shown = m.msg || (m.msgRef !== undefined ? (D.sentMessages || [])[m.msgRef] : null) || e;
    if (m.thinkingDropped) shown = Object.assign({}, e, { blocks: (e.blocks || []).filter((b) => b.k !== "thinking") });
    const badges = [];
    if (m.kind === "compactionSummary") badges.push(el("span", "badge bad", "compaction summary"));
    if (m.kind === "branchSummary") badges.push(el("span", "badge sum", "branch summary"));
    if (m.kind === "compactionSystem") badges.push(el("span", "badge", "replayed system state"));
    if (m.edit !== undefined) badges.push(el("span", "badge warn", "edited by " + entry(m.edit).id));
    if (m.dropped) badges.push(el("span", "badge warn", "not sent: dropped by the transforms"));
    const pruned = m.changed && (shown.blocks || []).some((b) => /ctxkit:\/\/tool-result\//.test(b.t || ""));
    if (pruned) badges.push(el("span", "badge warn", "pruned"));
    else if (m.changed) badges.push(el("span", "badge warn", "changed by the transforms"));
    if (m.thinkingDropped) badges.push(el("span", "badge warn", "thinking dropped"));
    const card = el("div", "card ctx-msg " + (m.kind === "stored" ? (shown.role || e.ty) : m.kind) + (m.dropped ? " dropped" : ""),
      el("div", "head", el("b", null, shown.role || who(e)), jump(m.e), shown.toolName ? el("span", null, shown.toolName) : null, ...badges));
    card.dataset.entry = String(m.e);
    card.dataset.kind = m.kind;
    const leading = m.kind === "compactionSystem" || (shown.role === "system" && leadingSystem(m.e));
    card.append(entryBody(shown, leading));
    if (m.changed || m.thinkingDropped) {
      const full = el("button", "small", pruned ? "show the full result (as stored)" : "show the entry as stored");
      full.addEventListener("click", () => { full.replaceWith(el("div", "full-text", el("div", "note", "as stored:"), entryBody(e, leading))); });
      card.append(full);
    }
    return card;
  }

  // ---- selection, deep links ----
  function select(i, reveal) {
    if (i === null || i === undefined || i < 0 || i >= D.entries.length) return;
    selected = i;
    const wasFollowing = following;
    following = i === D.leaf;
    // The live status says whether the page follows the leaf (it kept saying so until the next
    // append, QA 2026-12-07).
    if (D.live && wasFollowing !== following) status();
    onPath = new Set(pathTo(i));
    if (location.hash !== "#" + entry(i).id) history.replaceState(null, "", "#" + encodeURIComponent(entry(i).id));
    renderRaw(i);
    renderContext(i);
    if (reveal !== false) revealRow(i); else drawTree();
    drawChartSelection();
  }
  // The live view's new data leaves the reader at `i`, whose panels show what they showed: they
  // stay as the reader left them (scrolled, blocks opened), and only the tree and the chart follow.
  function stayAt(i) {
    selected = i;
    following = false;
    onPath = new Set(pathTo(i));
    drawTree();
    drawChartSelection();
  }
  function indexOfId(id) {
    for (let i = 0; i < D.entries.length; i++) if (D.entries[i].id === id) return i;
    return -1;
  }
  // The entry the URL's fragment names. A malformed one (`#%E0%A4%A`, a percent escape cut short)
  // names nothing: decodeURIComponent throws on it, which blanked the page as it started.
  function idFromHash() {
    try { return decodeURIComponent(location.hash.slice(1)); } catch (_) { return ""; }
  }
  function fromHash() {
    const id = idFromHash();
    if (!id) return false;
    const i = indexOfId(id);
    if (i >= 0) { select(i, true); return true; }
    return false;
  }

