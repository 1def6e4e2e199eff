// The page data, the state shared by every part of the script, and the helpers that turn session
// strings into text (never HTML).
  const ROW = 22;
  let D = null; // the page data
  let selected = -1;
  let following = true; // the selection follows the leaf (live view)
  let onPath = new Set();
  let orderPos = []; // entry index -> position in D.order
  // The contexts fetched from the view, by entry: { context, path } with the path (`pathKey`) it
  // was built on. A context stays good while its path is the same (an agent appending to another
  // branch, or after it, changes nothing on it), and is fetched again only once the path changed.
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
  // controls, bidirectional marks, overrides and isolates) as \uXXXX, so nothing is reordered. A
  // carriage return that ends a line (Windows' CRLF) is the line's end, not shown.
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
  function visible(s) { return String(s).replace(/\r\n/g, "\n").replace(unsafeCharacters, shownAs); }
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
      if (b.k === "tool") return typeof b.head === "string" ? b.name + " " + (b.head || b.t) : b.name + "(" + b.t + ")";
    }
    for (const b of e.blocks || []) if (b.t) return b.t;
    return "";
  }
  function who(e) {
    if (e.ty === "message") return { toolResult: "result", bashExecution: "bash", compactionSummary: "summary", branchSummary: "branch" }[e.role] || e.role;
    return { compaction: "compaction", branch_summary: "branch sum", model_change: "model", thinking_level_change: "thinking", custom_message: "custom msg", session_info: "name", context_edit: "edit" }[e.ty] || e.ty;
  }
  // The JSON of a view's answer, or a rejection with the server's own words when it could not
  // answer (a 500 whose body says `{"error": "cannot open …"}`), marked `fromServer`.
  function answerOf(r) {
    if (r.ok) return r.json();
    return r.json().catch(() => ({})).then((body) => {
      const error = new Error(body.error || "HTTP " + r.status);
      error.fromServer = true;
      return Promise.reject(error);
    });
  }
  function line(e) { return visible(firstText(e)).replace(/\s+/g, " ").slice(0, 200); }
  function usageLine(u) {
    if (!u) return null;
    return "in " + fmt(u[0]) + " · out " + fmt(u[1]) + " · cache read " + fmt(u[2]) +
      " · cache write " + fmt(u[3]) + " · context " + fmt(u[4]) + (u[5] ? " · " + money(u[5]) : "");
  }

