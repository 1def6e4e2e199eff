// ctxkit's session page. Every string from the session is inserted as text (text nodes,
// textContent); no HTML is ever built from session data, no URL from it is followed.
"use strict";
(function () {
  const ROW = 22;
  let D = null; // the page data
  let selected = -1;
  let following = true; // the selection follows the leaf (live view)
  let onPath = new Set();
  let orderPos = []; // entry index -> position in D.order
  const contextCache = new Map();
  const params = new URLSearchParams(location.search);
  const token = params.get("token");

  // ---- helpers ----
  function el(tag, cls, ...children) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(typeof child === "string" || typeof child === "number" ? text(String(child)) : child);
    }
    return node;
  }
  // The characters a screen would act on instead of showing: the list the CLI escapes too, sent
  // in the data (`unsafeCharacters`, ctxkit_protocol::UNSAFE_TO_SHOW) as [first, last] code
  // points. C0 controls (terminal escapes) and DEL show as their pictures (␛), the others (C1
  // controls, bidirectional marks, overrides and isolates) as \uXXXX, so nothing is reordered.
  let unsafeCharacters = null;
  function hex4(code) { return code.toString(16).padStart(4, "0"); }
  function unsafePattern(ranges) {
    const items = ranges.map(([first, last]) => "\\u" + hex4(first) + (last > first ? "-\\u" + hex4(last) : ""));
    return new RegExp("[" + items.join("") + "]", "g");
  }
  function shownAs(c) {
    const code = c.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    return code === 0x7f ? "\u2421" : "\\u" + hex4(code);
  }
  function visible(s) { return String(s).replace(unsafeCharacters, shownAs); }
  function text(s) { return document.createTextNode(visible(s)); }
  function fmt(n) { return n === null || n === undefined ? "–" : Number(n).toLocaleString("en-US"); }
  function money(n) { return "$" + (Number(n) || 0).toFixed(4); }
  // The cost of usage totals: "unknown" when no request records one (an imported Claude Code
  // session has tokens, not prices), the known part and how many lack one when some do.
  function totalCost(t) {
    if (!t.requests) return "–";
    if (t.costUnknown === t.requests) return "unknown";
    return money(t.usage[5]) + (t.costUnknown ? " (+ " + counted(t.costUnknown, "request") + " without a cost)" : "");
  }
  // "1 request", "2 requests".
  function counted(n, word, plural) { return fmt(n) + " " + (n === 1 ? word : plural || word + "s"); }
  // Characters (code points), the unit the page's data counts in; `length` counts UTF-16 units.
  function chars(s) { let n = 0; for (const _ of s) n++; return n; }
  // A column's heading: its words styled as headings, the entry id as written (ids are not upper-cased).
  function heading(words, id, rest) { return el("h2", null, words, el("span", "id", id), rest || null); }
  function entry(i) { return D.entries[i]; }
  function firstText(e) {
    for (const b of e.blocks || []) {
      if (b.k === "text" || b.k === "summary" || b.k === "bash") return b.t;
      if (b.k === "tool") return b.name + "(" + b.t + ")";
    }
    for (const b of e.blocks || []) if (b.t) return b.t;
    return "";
  }
  function who(e) {
    if (e.ty === "message") return { toolResult: "result", bashExecution: "bash", compactionSummary: "summary", branchSummary: "branch" }[e.role] || e.role;
    return { compaction: "compaction", branch_summary: "branch sum", model_change: "model", thinking_level_change: "thinking", custom_message: "custom msg", session_info: "name", context_edit: "edit" }[e.ty] || e.ty;
  }
  function line(e) { return visible(firstText(e)).replace(/\s+/g, " ").slice(0, 200); }
  function usageLine(u) {
    if (!u) return null;
    return "in " + fmt(u[0]) + " · out " + fmt(u[1]) + " · cache read " + fmt(u[2]) +
      " · cache write " + fmt(u[3]) + " · context " + fmt(u[4]) + (u[5] ? " · " + money(u[5]) : "");
  }

  // ---- blocks ----
  function clipNote(b) {
    return b.n ? el("div", "clip", "clipped in this page: " + fmt(chars(b.t)) + " of " + counted(b.n, "character")) : null;
  }
  function renderBlock(b) {
    switch (b.k) {
      case "thinking": {
        if (b.omitted) return el("div", "note", "[thinking left out of this page]");
        const d = el("details", "thinking", el("summary", null, "Thinking (" + counted(b.n || chars(b.t), "character") + ")"), el("pre", null, b.t), clipNote(b));
        return d;
      }
      case "tool": {
        const d = el("details", "tool", el("summary", null, "tool call ", el("b", null, b.name), " ", el("span", "note", b.id)), el("pre", null, b.t), clipNote(b));
        d.open = true;
        return d;
      }
      case "image": {
        const ok = /^image\/(png|jpeg|gif|webp)$/.test(b.mime || "") && typeof b.data === "string" && /^[A-Za-z0-9+/=]+$/.test(b.data);
        if (!ok) return el("div", "note", "[image " + (b.mime || "") + ", " + fmt(b.bytes) + " bytes: " + (b.t || "not shown") + "]");
        const img = el("img", "shot");
        img.alt = "image from the session";
        img.src = "data:" + b.mime + ";base64," + b.data;
        return img;
      }
      case "json": return el("div", null, el("pre", "note", b.t), clipNote(b));
      case "bash": return el("div", null, el("pre", null, "$ " + b.t), clipNote(b));
      default: return el("div", null, el("pre", null, b.t || ""), clipNote(b));
    }
  }
  function entryBody(e) {
    const body = el("div", "body");
    if (e.errorMessage) body.append(el("div", "err", "error: " + e.errorMessage));
    for (const b of e.blocks || []) body.append(renderBlock(b));
    const u = usageLine(e.usage);
    if (u) body.append(el("div", "note", u));
    return body;
  }
  function jump(i, label) {
    const a = el("a", null, label || entry(i).id);
    a.addEventListener("click", (ev) => { ev.preventDefault(); select(i, true); showTab("conversation"); });
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
    const body = entryBody(e);
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
  function renderProblems() {
    byEntry = new Map();
    const list = D.problems || [];
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
        node.addEventListener("click", () => select(tree.list[pos][0], false));
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
    node.style.paddingLeft = (8 + Math.min(indent, 12) * 12) + "px";
    node.replaceChildren(el("span", "who", who(e)), text(line(e) || "(" + e.ty + ")"));
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
  function renderContext(i) {
    const box = document.getElementById("context");
    box.replaceChildren(heading("What the model saw at ", entry(i).id));
    for (const p of pathTo(i).flatMap(problemsAt)) {
      box.append(el("div", "err damage-here", "The session file is damaged on this path: at ", jump(p.e),
        " (file line " + fmt(p.line) + "): " + p.text + ". What the model saw here is built from what could be read."));
    }
    const ctx = D.contexts[String(i)] || contextCache.get(i);
    if (ctx) { box.append(contextView(ctx)); return; }
    if (D.contextsOnDemand && token) {
      box.append(el("div", "note", "building the context…"));
      fetch("/api/context?token=" + encodeURIComponent(token) + "&id=" + encodeURIComponent(entry(i).id))
        .then((r) => r.ok ? r.json() : r.json().catch(() => ({})).then((e) => Promise.reject(new Error(e.error || "HTTP " + r.status))))
        .then((c) => { contextCache.set(i, c); if (selected === i) renderContext(i); })
        .catch((err) => { box.append(el("div", "err", "cannot build the context: " + err.message)); });
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
    let shown = m.msg || e;
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
    card.append(entryBody(shown));
    if (m.changed || m.thinkingDropped) {
      const full = el("button", "small", pruned ? "show the full result (as stored)" : "show the entry as stored");
      full.addEventListener("click", () => { full.replaceWith(el("div", "full-text", el("div", "note", "as stored:"), entryBody(e))); });
      card.append(full);
    }
    return card;
  }

  // ---- selection, deep links ----
  function select(i, reveal) {
    if (i === null || i === undefined || i < 0 || i >= D.entries.length) return;
    selected = i;
    following = i === D.leaf;
    onPath = new Set(pathTo(i));
    if (location.hash !== "#" + entry(i).id) history.replaceState(null, "", "#" + encodeURIComponent(entry(i).id));
    renderRaw(i);
    renderContext(i);
    if (reveal !== false) revealRow(i); else drawTree();
    drawChartSelection();
  }
  function indexOfId(id) {
    for (let i = 0; i < D.entries.length; i++) if (D.entries[i].id === id) return i;
    return -1;
  }
  function fromHash() {
    const id = decodeURIComponent(location.hash.slice(1));
    if (!id) return false;
    const i = indexOfId(id);
    if (i >= 0) { select(i, true); return true; }
    return false;
  }

  // ---- chart ----
  const COLORS = { compaction: "#dc2626", overflow: "#ea580c", branchSummary: "#7c3aed", modelChange: "#2563eb", cacheRead: "#16a34a" };
  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    for (const k in attrs) node.setAttribute(k, String(attrs[k]));
    return node;
  }
  let chartGeom = null;
  function drawChart() {
    const box = document.getElementById("chart-strip");
    const t = D.timeline;
    const points = t.points;
    const W = Math.max(600, box.clientWidth - 24), H = 150, L = 54, B = 18, T = 8;
    const root = svg("svg", { viewBox: "0 0 " + W + " " + H, id: "chart", role: "img" });
    root.append(svg("title", {}));
    root.firstChild.textContent = "Context size per request";
    const max = Math.max(1, ...points.map((p) => Math.max(p.est || 0, p.usage || 0)));
    const n = Math.max(1, points.length - 1);
    const x = (k) => L + (W - L - 8) * (points.length <= 1 ? 0.5 : k / n);
    const y = (v) => T + (H - T - B) * (1 - v / max);
    chartGeom = { x, points, W, H, L, root };
    if (!points.length) {
      const empty = svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle", "font-size": 12, fill: "#888", class: "chart-empty" });
      empty.textContent = "No request on the current path";
      root.append(empty);
    }
    for (const f of points.length ? [0, 0.5, 1] : []) {
      root.append(svg("line", { x1: L, x2: W - 8, y1: y(max * f), y2: y(max * f), stroke: "#8884", "stroke-width": 1 }));
      const label = svg("text", { x: L - 6, y: y(max * f) + 4, "text-anchor": "end", "font-size": 10, fill: "#888" });
      label.textContent = fmt(Math.round(max * f));
      root.append(label);
    }
    const step = Math.max(1, Math.floor(points.length / 1500));
    function series(field, color, dash) {
      let d = "";
      let last = null;
      let vertices = 0;
      for (let k = 0; k < points.length; k += step) {
        const v = points[k][field];
        if (v === null || v === undefined) continue;
        last = [x(k), y(v)];
        vertices++;
        d += (d ? " L" : "M") + last[0].toFixed(1) + " " + last[1].toFixed(1);
      }
      // One value is a point, not a line: drawn as a dot.
      if (vertices === 1) root.append(svg("circle", { cx: last[0], cy: last[1], r: 3.5, fill: color, class: "series-" + field + " dot" }));
      else if (d) root.append(svg("path", { d, fill: "none", stroke: color, "stroke-width": 1.6, "stroke-dasharray": dash || "", class: "series-" + field }));
    }
    series("usage", "#2563eb");
    series("est", "#9ca3af", "4 3");
    const counts = {};
    let cacheShown = 0;
    for (const m of t.markers) {
      counts[m.kind] = (counts[m.kind] || 0) + 1;
      const at = Math.min(m.at, points.length - 1);
      const cx = x(Math.max(0, at));
      const g = svg("g", { class: "marker", "data-kind": m.kind, "data-entry": m.e });
      const title = svg("title", {});
      title.textContent = visible(m.kind + " at " + entry(m.e).id);
      g.append(title);
      if (m.kind === "cacheRead") {
        if (cacheShown++ % step !== 0) continue;
        g.append(svg("rect", { x: cx - 0.75, y: H - B + 3, width: 1.5, height: 6, fill: COLORS.cacheRead }));
      } else if (m.kind === "overflow") {
        g.append(svg("path", { d: "M" + (cx - 4) + " " + (T + 2) + " l8 8 m0 -8 l-8 8", stroke: COLORS.overflow, "stroke-width": 2 }));
      } else {
        g.append(svg("line", { x1: cx, x2: cx, y1: T, y2: H - B, stroke: COLORS[m.kind] || "#888", "stroke-width": m.kind === "compaction" ? 2 : 1.2, "stroke-dasharray": m.kind === "compaction" ? "" : "3 2" }));
      }
      g.addEventListener("click", (ev) => { ev.stopPropagation(); select(m.e, true); });
      g.style.cursor = "pointer";
      root.append(g);
    }
    root.addEventListener("click", (ev) => {
      if (!points.length) return;
      const r = root.getBoundingClientRect();
      const vx = (ev.clientX - r.left) * W / r.width;
      const k = Math.round((vx - L) / Math.max(1, W - L - 8) * n);
      const p = points[Math.max(0, Math.min(points.length - 1, k))];
      if (p) select(p.e, true);
    });
    // Where the selection is along the requests (with one request there is no "along").
    if (points.length > 1) root.append(svg("line", { id: "chart-sel", x1: -10, x2: -10, y1: T, y2: H - B, stroke: "#111", "stroke-opacity": 0.35, "stroke-width": 3 }));
    const legend = el("div", "legend",
      el("span", null, el("i", null), "provider usage (context per request)"),
      el("span", null, el("i", null), "estimate (chars/4)"));
    legend.children[0].firstChild.style.background = "#2563eb";
    legend.children[1].firstChild.style.background = "#9ca3af";
    for (const kind of ["compaction", "overflow", "branchSummary", "modelChange", "cacheRead"]) {
      const item = el("span", "legend-" + kind, el("i", null), kind.replace(/([A-Z])/g, " $1").toLowerCase() + " (" + (counts[kind] || 0) + ")");
      item.firstChild.style.background = COLORS[kind];
      legend.append(item);
    }
    legend.append(el("span", null, counted(points.length, "request") + " on the current path"));
    box.replaceChildren(root, legend);
    drawChartSelection();
  }
  function drawChartSelection() {
    if (!chartGeom) return;
    const line = document.getElementById("chart-sel");
    if (!line) return;
    let k = -1;
    const pts = chartGeom.points;
    for (let j = 0; j < pts.length; j++) { if (onPath.has(pts[j].e)) k = j; }
    const cx = k >= 0 ? chartGeom.x(k) : -10;
    line.setAttribute("x1", cx); line.setAttribute("x2", cx);
  }

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
        item.addEventListener("click", () => { select(i, true); showTab("conversation"); });
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
    const saved = c.tokensBefore ? Math.round(100 * (1 - c.tokensAfter / c.tokensBefore)) : 0;
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
          el("div", "tokens-change", fmt(c.tokensBefore) + " → " + fmt(c.tokensAfter) + " tokens"),
          el("div", "note", (saved >= 0 ? "−" + saved : "+" + (-saved)) + "% · summarizer: " + summarizer +
            " · next: " + counted(c.next.requests, "request") + (c.next.firstUsage ? ", the first carried " + fmt(c.next.firstUsage) + " tokens (provider)" : "")),
          covered, kept, el("h3", null, "Files"), files),
        el("div", null, el("h3", null, "Summary"), el("pre", "summary", c.summary))));
    card.id = "compaction-" + k;
    card.dataset.entry = String(c.e);
    return card;
  }

  // ---- usage ----
  function renderUsage() {
    const box = document.getElementById("usage");
    const t = D.totals.usage;
    const rows = [["input", t[0]], ["output", t[1]], ["cache read", t[2]], ["cache write", t[3]]];
    const table = el("table", "totals", el("tr", null, el("th", null, "total over " + counted(D.totals.requests, "request") + " (all branches)"), el("th", null, "tokens")));
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

  // ---- search ----
  function search(query) {
    const box = document.getElementById("results");
    if (!query) { box.className = ""; box.replaceChildren(); return; }
    const q = query.toLowerCase();
    const hits = [];
    for (let i = 0; i < D.entries.length && hits.length < 500; i++) {
      const e = D.entries[i];
      for (const b of e.blocks || []) {
        const s = (b.t || "") + (b.name ? " " + b.name : "");
        const at = s.toLowerCase().indexOf(q);
        if (at >= 0) { hits.push([i, s, at]); break; }
      }
    }
    box.className = "on";
    box.replaceChildren(el("div", "note", hits.length === 1 ? "1 entry matches" : fmt(hits.length) + (hits.length === 500 ? "+" : "") + " entries match"));
    for (const [i, s, at] of hits) {
      const from = Math.max(0, at - 40);
      const item = el("div", "item search-hit", el("span", "who", who(entry(i)) + " "),
        visible(s.slice(from, at)).replace(/\s+/g, " "), el("mark", null, s.slice(at, at + query.length)), visible(s.slice(at + query.length, at + query.length + 80)).replace(/\s+/g, " "));
      item.addEventListener("click", () => { select(i, true); showTab("conversation"); });
      box.append(item);
    }
    showTab("conversation");
  }

  // ---- tabs, keys ----
  function showTab(name) {
    for (const v of document.querySelectorAll(".view")) v.classList.toggle("on", v.id === "view-" + name);
    for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("on", b.dataset.tab === name);
    if (name === "conversation") drawTree();
  }
  function move(delta) {
    const pos = orderPos[selected] === undefined ? 0 : orderPos[selected] + delta;
    const clamped = Math.max(0, Math.min(D.order.length - 1, pos));
    if (D.order[clamped]) select(D.order[clamped][0], true);
  }
  function keys(ev) {
    if (ev.target instanceof HTMLInputElement) {
      if (ev.key === "Escape") { ev.target.value = ""; search(""); ev.target.blur(); }
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const k = ev.key;
    if (k === "j" || k === "ArrowDown") move(1);
    else if (k === "k" || k === "ArrowUp") move(-1);
    else if (k === "PageDown") move(20);
    else if (k === "PageUp") move(-20);
    else if (k === "g" || k === "Home") move(-1e9);
    else if (k === "G" || k === "End") move(1e9);
    else if (k === "l") select(D.leaf, true);
    else if (k === "/") document.getElementById("search").focus();
    else if (k === "c") showTab("compactions");
    else if (k === "t") showTab("conversation");
    else if (k === "u") showTab("usage");
    else if (k === "]" || k === "[") {
      const list = D.compactions.map((c) => c.e);
      const next = k === "]" ? list.find((e) => (orderPos[e] || 0) > (orderPos[selected] || 0)) : list.filter((e) => (orderPos[e] || 0) < (orderPos[selected] || 0)).pop();
      if (next !== undefined) select(next, true);
    } else return;
    ev.preventDefault();
  }

  // ---- layout and start ----
  function layout() {
    const app = document.getElementById("app");
    const tabs = document.getElementById("tabs");
    tabs.replaceChildren();
    for (const [name, label] of [["conversation", "Conversation"], ["compactions", "Compactions (" + D.compactions.length + ")"], ["usage", "Usage"]]) {
      const b = el("button", null, label);
      b.dataset.tab = name;
      b.addEventListener("click", () => showTab(name));
      tabs.append(b);
    }
    tree.box = el("div", null);
    tree.box.id = "tree";
    tree.spacer = el("div", "spacer");
    tree.box.append(tree.spacer);
    tree.box.addEventListener("scroll", drawTree, { passive: true });
    const results = el("div", null); results.id = "results";
    const treeTitle = el("h2", null); treeTitle.id = "tree-title";
    const left = el("div", "col left", treeTitle, results, tree.box);
    const raw = el("div", "col"); raw.id = "raw";
    const ctx = el("div", "col"); ctx.id = "context";
    const strip = el("div", null); strip.id = "chart-strip";
    const conv = el("section", "view", strip, el("div", "cols", left, raw, ctx)); conv.id = "view-conversation";
    const comps = el("section", "view", el("div", "scroll", el("div", null))); comps.id = "view-compactions";
    comps.firstChild.firstChild.id = "compactions";
    const usage = el("section", "view", el("div", "scroll", el("div", null))); usage.id = "view-usage";
    usage.firstChild.firstChild.id = "usage";
    const damage = el("div", null); damage.id = "damage";
    app.replaceChildren(damage, conv, comps, usage);
  }
  function status() {
    const s = D.session;
    const parts = [counted(D.entries.length, "entry", "entries"), counted(D.compactions.length, "compaction")];
    if (D.totals.requests > D.totals.costUnknown) parts.push("total " + totalCost(D.totals));
    if (s.importedFrom) parts.push("imported from " + s.importedFrom);
    if (D.live) parts.push("live" + (following ? " · following the leaf" : ""));
    document.getElementById("status").textContent = visible(parts.join(" · "));
    document.getElementById("title").textContent = visible(s.name || D.title);
    document.getElementById("tree-title").textContent = "Tree (" + counted(D.entries.length, "entry", "entries") + ")";
  }
  function render(initial) {
    const previous = selected;
    renderProblems();
    buildTree();
    drawChart();
    renderCompactions();
    renderUsage();
    status();
    const leaf = D.leaf === null ? 0 : D.leaf;
    if (initial) { if (!fromHash()) select(leaf, true); }
    else if (following || previous < 0 || previous >= D.entries.length) select(leaf, true);
    else select(previous, false);
    status();
  }
  function poll() {
    if (!D.live || !token) return;
    const q = "?token=" + encodeURIComponent(token);
    setInterval(() => {
      fetch("/api/version" + q).then((r) => r.json()).then((v) => {
        if (v.version === D.live.version) return;
        return fetch("/api/data" + q).then((r) => r.json()).then((data) => {
          const wasFollowing = following || selected === D.leaf;
          D = data; contextCache.clear();
          following = wasFollowing;
          render(false);
        });
      }).catch(() => { document.getElementById("status").textContent = "live · the server is not answering"; });
    }, 1000);
  }
  function start() {
    const node = document.getElementById("session-data");
    D = JSON.parse(node.textContent);
    unsafeCharacters = unsafePattern(D.unsafeCharacters);
    layout();
    document.getElementById("search").addEventListener("keydown", (ev) => { if (ev.key === "Enter") search(ev.target.value); });
    document.addEventListener("keydown", keys);
    window.addEventListener("hashchange", fromHash);
    window.addEventListener("resize", () => { drawChart(); drawTree(); });
    showTab("conversation");
    render(true);
    document.body.dataset.ready = "true";
    poll();
  }
  start();
})();
