// Tabs, keys, layout, the live view's polling, and the start.
  // ---- tabs, keys ----
  function showTab(name) {
    for (const v of document.querySelectorAll(".view")) v.classList.toggle("on", v.id === "view-" + name);
    for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("on", b.dataset.tab === name);
    if (name === "conversation") drawTree();
  }
  // Under 760 px the conversation's three columns are panes, one shown at a time (a phone had
  // three columns of 240, 68 and 68 px, words broken letter by letter).
  const NARROW = window.matchMedia("(max-width: 760px)");
  function showPane(name) {
    document.querySelector("#view-conversation .cols").dataset.pane = name;
    for (const b of document.querySelectorAll("#panes button")) b.classList.toggle("on", b.dataset.pane === name);
    if (name === "tree") drawTree();
  }
  // An entry chosen from a list (the tree, a link, a search hit): on a narrow screen its card.
  function showEntryPane() { if (NARROW.matches) showPane("raw"); }
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
    // The keys that scroll belong to what has the focus: they move the tree's selection only in
    // the tree (or with nothing focused); in a reading pane they scroll it (they were taken by
    // the tree wherever the focus was, so only Space scrolled a pane).
    const focus = document.activeElement;
    const inTree = !focus || focus === document.body || tree.box.contains(focus);
    const scrolling = /^(Arrow(Up|Down)|Page(Up|Down)|Home|End)$/.test(k);
    if (scrolling && !inTree) return;
    if (k === "Enter" && focus === tree.box) { showEntryPane(); ev.preventDefault(); return; }
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
    for (const [name, label] of [["conversation", "Conversation"], ["compactions", "Compactions"], ["usage", "Usage"]]) {
      const b = el("button", null, label);
      b.dataset.tab = name;
      b.id = "tab-" + name;
      b.addEventListener("click", () => showTab(name));
      tabs.append(b);
    }
    tree.box = el("div", null);
    tree.box.id = "tree";
    // Reached with Tab like the panes; its rows are a list box's options, the selected one
    // named by `aria-activedescendant` (the rows are drawn as they scroll into view).
    tree.box.tabIndex = 0;
    tree.box.setAttribute("role", "listbox");
    tree.box.setAttribute("aria-label", "Entries of the session (arrows, Page Up/Down, Home/End move)");
    tree.spacer = el("div", "spacer");
    tree.box.append(tree.spacer);
    tree.box.addEventListener("scroll", drawTree, { passive: true });
    const results = el("div", null); results.id = "results";
    const treeTitle = el("h2", null); treeTitle.id = "tree-title";
    const left = el("div", "col left", treeTitle, results, tree.box);
    const raw = el("div", "col"); raw.id = "raw";
    const ctx = el("div", "col"); ctx.id = "context";
    const strip = el("div", null); strip.id = "chart-strip";
    const panes = el("nav", null); panes.id = "panes";
    for (const [name, label] of [["tree", "Tree"], ["raw", "Raw entries"], ["context", "What the model saw"]]) {
      const b = el("button", null, label);
      b.dataset.pane = name;
      b.addEventListener("click", () => showPane(name));
      panes.append(b);
    }
    const conv = el("section", "view", strip, panes, el("div", "cols", left, raw, ctx)); conv.id = "view-conversation";
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
    if (D.live) parts.push("live" + (liveProblem ? " · " + liveProblem : following ? " · following the leaf" : ""));
    // Whole on hover: a narrow header cuts the line short (the server's reason comes last).
    const line = document.getElementById("status");
    line.textContent = line.title = visible(parts.join(" · "));
    document.getElementById("title").textContent = visible(s.name || D.title);
    // The tab's title follows the header (a rename in `view` kept the old one until a reload).
    document.title = visible(s.name || D.title) + " — ctxkit";
    document.getElementById("tree-title").textContent = "Tree (" + counted(D.entries.length, "entry", "entries") + ")";
    // The counts follow the session as it grows (a tester's live view said "Compactions (1)"
    // beside "2 compactions").
    document.getElementById("tab-compactions").textContent = "Compactions (" + D.compactions.length + ")";
  }
  // `place`: the selected entry's `placeKey` under the data before this one (live view).
  function render(initial, place) {
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
    else if (place !== null && place === placeKey(previous)) stayAt(previous);
    else select(previous, false);
    status();
  }
  // The live view asks for the file's version, and for the data when the version changed. The
  // next question is asked a second after the last answer, never on a timer: on a session of
  // 100,000 entries the data took 8.6 s to build, and a question every second kept eight
  // requests of 55 MB in flight.
  const POLL_MS = 1000;
  // Why the page does not show the file as it is now (the server's words: the file is gone,
  // empty, unreadable), or null. Meanwhile the page keeps the data it read last: an error
  // taken as the data broke every later poll, and the page never came back.
  let liveProblem = null;
  function poll() {
    if (!D.live || !token) return;
    const q = "?token=" + encodeURIComponent(token);
    const next = () => setTimeout(check, POLL_MS);
    let failedVersion = null; // a version the server could not read: asked again once it changes
    function check() {
      fetch("/api/version" + q).then(answerOf).then((v) => {
        if (v.version === D.live.version) return settled(null);
        if (v.version === failedVersion) return;
        return fetch("/api/data" + q).then(answerOf).then((data) => {
          const wasFollowing = following || selected === D.leaf;
          // Someone reading an older entry keeps their place while the agent appends: the
          // panels were drawn anew on every append (scrolled back, blocks closed, the context
          // fetched again).
          const place = wasFollowing ? null : placeKey(selected);
          D = data;
          keepValidContexts();
          following = wasFollowing;
          liveProblem = null;
          render(false, place);
        }, (error) => {
          if (error.fromServer) failedVersion = v.version;
          return Promise.reject(error);
        });
      }).catch((error) => settled(error.fromServer ? error.message : "the server is not answering"))
        .finally(next);
    }
    next();
  }
  function settled(problem) {
    if (problem === liveProblem) return;
    liveProblem = problem;
    status();
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
    showPane("raw");
    render(true);
    document.body.dataset.ready = "true";
    poll();
  }
  start();
