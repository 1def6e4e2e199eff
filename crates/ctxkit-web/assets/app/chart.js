// The token chart (SVG).
  // ---- chart ----
  const COLORS = { compaction: "#dc2626", overflow: "#ea580c", branchSummary: "#7c3aed", modelChange: "#2563eb", cacheRead: "#16a34a" };
  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    for (const k in attrs) node.setAttribute(k, String(attrs[k]));
    return node;
  }
  let chartGeom = null;
  // The y axis's ticks, from 0 to at least `largest` in at most four steps of 1, 2, 2.5 or 5
  // times a power of ten (whole tokens): halves and tops of the largest value fell
  // on 500,005 and 1,000,010.
  function yTicks(largest) {
    const power = Math.max(1, 10 ** Math.floor(Math.log10(largest / 4)));
    const step = [1, 2, 2.5, 5, 10].map((factor) => factor * power)
      .find((candidate) => Number.isInteger(candidate) && candidate * 4 >= largest);
    const ticks = [];
    for (let value = 0; ticks.length === 0 || ticks[ticks.length - 1] < largest; value += step) ticks.push(value);
    return ticks;
  }
  // The width of the widest label at the axis's 10px, in the page's font.
  function labelWidth(labels, box) {
    const context = document.createElement("canvas").getContext("2d");
    if (!context) return 6 * Math.max(...labels.map((label) => label.length));
    context.font = "10px " + getComputedStyle(box).fontFamily;
    return Math.max(...labels.map((label) => context.measureText(label).width));
  }
  function drawChart() {
    const box = document.getElementById("chart-strip");
    const t = D.timeline;
    const points = t.points;
    const largest = points.reduce((most, p) => Math.max(most, p.est || 0, p.usage || 0), 1);
    const ticks = yTicks(largest);
    const max = ticks[ticks.length - 1];
    const tickLabels = ticks.map(fmt);
    // The axis as wide as its widest label (a fixed 54 cut the first digit of "1,000,010").
    const W = Math.max(600, box.clientWidth - 24), H = 150, B = 18, T = 8;
    const L = Math.max(54, Math.ceil(labelWidth(tickLabels, box)) + 12);
    const root = svg("svg", { viewBox: "0 0 " + W + " " + H, id: "chart", role: "img" });
    root.append(svg("title", {}));
    root.firstChild.textContent = "Context size per request";
    const n = Math.max(1, points.length - 1);
    const x = (k) => L + (W - L - 8) * (points.length <= 1 ? 0.5 : k / n);
    const y = (v) => T + (H - T - B) * (1 - v / max);
    chartGeom = { x, points, W, H, L, root };
    if (!points.length) {
      const empty = svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle", "font-size": 12, fill: "#888", class: "chart-empty" });
      empty.textContent = "No request on the current path";
      root.append(empty);
    }
    for (const [k, value] of (points.length ? ticks : []).entries()) {
      root.append(svg("line", { x1: L, x2: W - 8, y1: y(value), y2: y(value), stroke: "#8884", "stroke-width": 1 }));
      const label = svg("text", { x: L - 6, y: y(value) + 4, "text-anchor": "end", "font-size": 10, fill: "#888" });
      label.textContent = tickLabels[k];
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

