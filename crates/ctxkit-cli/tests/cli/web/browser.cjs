// Drives headless Chromium (playwright-core, from CTXKIT_BROWSER_TOOLS) over a session page and
// checks what a person would see. Usage: node browser.cjs export|view|measure URL SCREENSHOT_DIR
// (`measure`: time to the first painted page and a screenshot, for docs/benchmarks.md).
// Expectations come as JSON in EXPECT. Exits non-zero with a message on the first failure.
"use strict";
const path = require("path");
const tools = process.env.CTXKIT_BROWSER_TOOLS;
const { chromium } = require(path.join(tools, "node_modules", "playwright-core"));
const [mode, url, shots] = process.argv.slice(2);
const expect = JSON.parse(process.env.EXPECT || "{}");

function check(condition, message) {
  if (!condition) throw new Error("check failed: " + message);
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
  const problems = [];
  // Chromium logs each failed response itself; a check that makes the server fail says which.
  const expectedFailure = expect.failedResponses ? new RegExp(expect.failedResponses) : null;
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    if (expectedFailure && message.text().startsWith("Failed to load resource") && expectedFailure.test(message.text())) return;
    problems.push("console: " + message.text());
  });
  page.on("pageerror", (error) => problems.push("page error: " + error.message));
  page.on("dialog", (dialog) => { problems.push("a dialog opened: " + dialog.message()); dialog.dismiss(); });
  page.on("request", (request) => {
    const target = request.url();
    if (!target.startsWith("file:") && !target.startsWith("data:") && !target.startsWith("http://127.0.0.1")) problems.push("network request: " + target);
  });
  const started = Date.now();
  await page.goto(url);
  await page.waitForSelector("body[data-ready=true]", { timeout: 30000 });
  console.log("first paint (ready) after " + (Date.now() - started) + " ms");
  try {
    if (mode === "export") await exported(page);
    else if (mode === "view") await live(page);
    else if (mode === "spoof") await spoof(page);
    else if (mode === "damaged") await damaged(page);
    else if (mode === "cosmetics") await cosmetics(page);
    else if (mode === "markdown") await markdown(page);
    else if (mode === "fragment") await fragment(page);
    else if (mode === "inflight") await inflight(page);
    else if (mode === "recover") await recover(page);
    else if (mode === "chart") await chart(page);
    else if (mode === "keepplace") await keepPlace(page);
    else if (mode === "torn") await torn(page);
    else if (mode === "imported") await imported(page);
    else if (mode === "narrow") await narrow(page);
    else if (mode === "longword") await longWord(page);
    else if (mode === "stepping") await stepping(page);
    else if (mode === "systemkeys") await systemKeys(page);
    else await measure(page);
  } finally {
    await browser.close();
  }
  check(problems.length === 0, problems.join("; "));
  console.log("OK");
}

async function exported(page) {
  const markers = async (kind) => page.locator('#chart .marker[data-kind="' + kind + '"]').count();
  check(await markers("compaction") === 2, "two compaction markers on the chart, found " + await markers("compaction"));
  for (const kind of ["overflow", "branchSummary", "modelChange", "cacheRead"]) check(await markers(kind) >= 1, "a " + kind + " marker");
  check(await page.locator("#tree .row.leaf").count() === 1, "the leaf marked in the tree");
  await page.keyboard.press("g");
  check(await page.locator("#tree .row .badge.label", { hasText: "start" }).count() === 1, "the label shown");
  await page.keyboard.press("l");
  // The context at the leaf: the second compaction's summary, pruned results, full text on demand.
  const context = page.locator("#context");
  check(await context.locator('.ctx-msg[data-kind="compactionSummary"]').count() === 1, "the compaction summary in the model's view");
  check(await context.locator(".ctx-msg", { hasText: "c08..c12 green" }).count() === 1, "the second summary at the leaf");
  const pruned = context.locator(".ctx-msg .badge", { hasText: "pruned" });
  check(await pruned.count() >= 1, "a pruned result in the model's view");
  await context.locator("button", { hasText: "show the full result" }).first().click();
  check(await context.locator(".full-text", { hasText: "line 119 of" }).count() === 1, "the pruned result's full text on demand");
  await page.screenshot({ path: path.join(shots, "export-conversation.png") });
  // A chosen entry before the second compaction: its context holds the first summary.
  await page.evaluate((id) => { location.hash = "#" + id; }, expect.beforeSecond);
  await page.waitForFunction((id) => document.querySelector("#context h2").textContent.includes(id), expect.beforeSecond);
  check(await context.locator(".ctx-msg", { hasText: "ran c01..c07" }).count() === 1, "the first summary in the context before the second compaction");
  check(await context.locator(".ctx-msg", { hasText: "c08..c12 green" }).count() === 0, "no second summary before it");
  // Keyboard: k moves the selection up the tree.
  const before = await page.locator("#tree .row.sel").getAttribute("data-entry");
  await page.keyboard.press("k");
  check(await page.locator("#tree .row.sel").getAttribute("data-entry") !== before, "k moves the selection");
  // Hostile text renders as text.
  await page.evaluate(() => { location.hash = "#e003"; });
  await page.waitForFunction(() => document.querySelector("#raw .card.sel") !== null);
  const raw = await page.locator("#raw .card.sel .md").first().textContent();
  check(raw.includes("<script>alert(1)</script>") && raw.includes("click (javascript:alert(3))") && raw.includes("<b> &") && raw.includes("\u241b[31m"), "hostile text shown as text: " + raw);
  check(await page.locator("#raw .card.sel .md :is(b, img, script, a)").count() === 0, "no element from the question's markup");
  check(await page.evaluate(() => document.scripts.length) === 2, "no script element from the session");
  check(await page.locator("img[src=x], a[href^=javascript]").count() === 0, "no element from the session's markup");
  await page.evaluate(() => { location.hash = "#e006"; });
  await page.waitForFunction(() => document.querySelector("#raw .card.sel img.shot") !== null);
  check(await page.evaluate(() => document.querySelector("#raw .card.sel img.shot").naturalWidth) === 1, "the image shown");
  // Search.
  await page.fill("#search", "needle-word");
  await page.press("#search", "Enter");
  check(await page.locator("#results .search-hit").count() >= 1, "search finds the needle");
  // Any case, in any script, and the mark on the text found (QA r107: each İ before the hit, whose
  // lower case is longer, moved the mark a character on, and `izmit` did not find `İzmit`).
  for (const [query, marked] of [["hatası", "hatası"], ["izmit", "İzmit"], ["İZMİR", "İzmir"]]) {
    await page.fill("#search", query);
    await page.press("#search", "Enter");
    const marks = await page.locator("#results .search-hit mark").allTextContents();
    check(marks.length === 1 && marks[0] === marked, "search " + query + " marks " + JSON.stringify(marks));
  }
  // A hit deep in a long text: its snippet starts at a word, after an ellipsis (it began
  // "ppear to be" for a tester).
  await page.fill("#search", "line 9 of c05");
  await page.press("#search", "Enter");
  const snippet = await page.locator("#results .search-hit").first().evaluate((hit) => hit.childNodes[1].textContent);
  check(/^…(line|\d+|of|c05:|ok) /.test(snippet), "the snippet starts at a word: " + JSON.stringify(snippet));
  // A branch summary says where the branch it left behind is.
  await page.evaluate((id) => { location.hash = "#" + id; }, expect.branchSummary);
  await page.waitForFunction(() => document.querySelector("#raw .card.sel.branch_summary") !== null);
  const leftBehind = await page.locator("#raw .card.sel .left-behind").innerText();
  check(leftBehind.includes("stay in the session") && leftBehind.includes("recall"), "the branch summary says its branch stays: " + leftBehind);
  // The compactions beside what they replaced.
  await page.click('#tabs button[data-tab="compactions"]');
  const cards = page.locator(".compaction-card");
  check(await cards.count() === 2, "two compaction cards");
  const change = await cards.first().locator(".tokens-change").textContent();
  check(/^before 30,000 tokens \(as recorded\) · after ~[0-9,]+ tokens of messages \(estimated\)$/.test(change), "before and after on the first card, each saying what it counts: " + change);
  const coveredLabel = await cards.first().locator("details.covered > summary").innerText();
  check(coveredLabel.includes("they stay in the session"), "the page says the replaced entries stay: " + coveredLabel);
  await cards.first().locator("details.covered > summary").click();
  await cards.first().locator(".covered-list .item").first().waitFor({ timeout: 5000 });
  const covered = await cards.first().locator(".covered-list .item").count();
  check(covered === expect.coveredByFirst, "covered entries listed: " + covered + " of " + expect.coveredByFirst);
  check((await cards.first().textContent()).includes("src/lexer.rs"), "modified files listed");
  check((await cards.nth(1).textContent()).includes("anthropic/claude-haiku-4-5"), "the summarizer named");
  check(await cards.first().locator(".md.summary h2", { hasText: "Goal" }).count() === 1, "the summary's markdown drawn");
  await page.screenshot({ path: path.join(shots, "export-compactions.png") });
  console.log("screenshots: " + path.join(shots, "export-conversation.png") + " " + path.join(shots, "export-compactions.png"));
}

// Characters a browser would act on (reorder a line, or a C1 control): none may reach the screen
// as such; each shows as \uXXXX (a C0 control as its picture).
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

async function spoof(page) {
  const title = await page.title();
  check(!UNSAFE.test(title) && title.includes("report\\u202etxt.exe"), "the tab's title shows the override: " + JSON.stringify(title));
  const shown = await page.evaluate(() => document.body.innerText);
  const found = shown.match(UNSAFE);
  check(found === null, "an unsafe character on the page: U+" + (found ? found[0].charCodeAt(0).toString(16) : ""));
  const header = await page.locator("#title").textContent();
  check(header.includes("report\\u202etxt.exe"), "the header shows the override: " + header);
  const label = await page.locator("#tree .row .badge.label").first().textContent();
  check(label === "ok\\u202eKo", "the label shows the override: " + label);
  check(shown.includes("claude\\u2066-evil"), "the model id's isolate is shown, not obeyed");
  check(shown.includes("hello \\u009b31m world \\u200f!"), "the C1 control and the mark are shown");
  // Windows' line ends are line ends; a lone carriage return is shown as its picture.
  check(shown.includes("crlf one\ncrlf two\u240dback"), "a CRLF ends a line, a lone CR is shown: " + JSON.stringify(shown.split("crlf one").slice(1).map((s) => s.slice(0, 25))));
  const removed = await page.locator("pre.diff .del").allTextContents();
  const added = await page.locator("pre.diff .add").allTextContents();
  check(removed.length >= 1 && removed.every((line) => line === "-2 <img src=x onerror=alert(1)>\n"), "the edit's removed line, as text: " + JSON.stringify(removed));
  check(added.length >= 1 && added.every((line) => line === "+2 </script>\\u202e\n"), "the edit's added line, as text: " + JSON.stringify(added));
  // A narrow window: the tabs stay on one line inside the header (they wrapped below it when a
  // long name and the status took the room); the name and the status give way instead.
  await page.setViewportSize({ width: 900, height: 950 });
  const tabs = await page.locator("#tabs").boundingBox();
  const top = await page.locator("#top").boundingBox();
  const button = await page.locator("#tabs button").first().boundingBox();
  check(tabs.height <= button.height + 2, "the tabs on one line: " + tabs.height + " px high, a tab " + button.height);
  check(tabs.y + tabs.height <= top.y + top.height, "the tabs inside the header");
  await page.setViewportSize({ width: 1500, height: 950 });
  await page.screenshot({ path: path.join(shots, "spoof.png") });
  console.log("screenshots: " + path.join(shots, "spoof.png"));
}

// A session file with a cut line: the page says so at the top, on the entry whose parent was lost,
// and in what the model saw on the path through it.
async function damaged(page) {
  const notice = page.locator("#damage");
  check(await notice.isVisible(), "a notice at the top");
  const said = await notice.innerText();
  check(said.includes("This session file is damaged: 2 problems") && said.includes("line 3: not valid JSON"), "the notice names the problems: " + said);
  const cut = await page.evaluate((id) => JSON.parse(document.getElementById("session-data").textContent).entries.findIndex((e) => e.id === id), expect.cut);
  await page.evaluate((id) => { location.hash = "#" + id; }, expect.cut);
  await until(page, () => document.querySelector("#raw .card.sel .badge.damaged") !== null, 10000);
  check(await page.locator('#tree .row[data-entry="' + cut + '"] .badge.damaged').count() === 1, "the tree marks the entry whose parent was lost");
  await page.keyboard.press("l");
  await until(page, () => document.querySelector("#context .damage-here") !== null, 10000);
  const here = await page.locator("#context .damage-here").innerText();
  check(here.includes("file line 4") && here.includes(expect.cut), "what the model saw says where the file is damaged: " + here);
  check(!(await page.evaluate(() => document.body.innerText)).includes(expect.secret), "nothing of the cut line is shown");
  const shot = path.join(shots, "damaged-" + (page.url().startsWith("http") ? "view" : "export") + ".png");
  await page.screenshot({ path: shot });
  console.log("screenshots: " + shot);
}

// A session of one request whose reply records tokens but no price (as an imported Claude Code
// session), with a long text of astral characters and lower-case ids.
async function cosmetics(page) {
  const status = await page.locator("#status").innerText();
  check(!status.includes("$") && status.includes("2 entries · 0 compactions"), "no price where none is known: " + status);
  const legend = await page.locator(".legend").innerText();
  check(legend.includes("1 request on the current path"), "one request, singular: " + legend);
  check(await page.locator("#chart circle.series-usage").count() === 1, "one request is a dot");
  check(await page.locator("#chart-sel").count() === 0, "no selection line along one request");
  const heading = await page.locator("#raw h2").innerText();
  check(heading.includes(expect.leaf), "the id as written in the heading: " + heading);
  const context = await page.locator("#context h2").innerText();
  check(context.includes(expect.leaf), "the id as written in the context's heading: " + context);
  const clip = await page.locator("#raw .clip").first().innerText();
  check(clip === "clipped in this page: 50,000 of 60,000 characters", "one unit in the clipping note: " + clip);
  // A search says the clipped text was not searched (QA 2026-12-07: "0 entries match" alone).
  await page.fill("#search", "no-such-word-anywhere");
  await page.press("#search", "Enter");
  const note = await page.locator("#results .note").innerText();
  check(note === "0 entries match (the clipped part of 1 block is not in this page to search)", "the search says what it could not search: " + note);
  await page.press("#search", "Escape");
  await page.screenshot({ path: path.join(shots, "cosmetics.png") });
  await page.click('#tabs button[data-tab="usage"]');
  const cost = await page.locator("table.totals tr:last-child td:last-child").innerText();
  check(cost === "unknown", "the total cost is unknown: " + cost);
  const over = await page.locator("table.totals th").first().innerText();
  check(over.includes("1 model call (all branches)"), "singular in the totals: " + over);
  await page.screenshot({ path: path.join(shots, "cosmetics-usage.png") });
  console.log("screenshots: " + path.join(shots, "cosmetics.png") + " " + path.join(shots, "cosmetics-usage.png"));
}

// A reply's markdown drawn, its code and a read file coloured, nothing in it made into markup.
async function markdown(page) {
  const reply = page.locator('#raw .card[data-entry="1"] .md');
  check(await reply.locator("h2", { hasText: "Plan" }).count() === 1, "the reply's heading");
  check(await reply.locator("ol > li").count() === 2, "its numbered list");
  check(await reply.locator("li code", { hasText: "src/main.rs" }).count() === 1, "inline code");
  check(await reply.locator("table th").count() === 2 && await reply.locator("table td").count() === 2, "its table");
  const links = await reply.locator("a").evaluateAll((as) => as.map((a) => [a.getAttribute("href"), a.rel, a.textContent]));
  check(JSON.stringify(links) === JSON.stringify([["https://example.com/docs", "noopener noreferrer", "the docs"], ["https://example.com/chart.png", "noopener noreferrer", "a chart"],
    ["https://example.com/bare", "noopener noreferrer", "https://example.com/bare"]]), "only the web links are links, a bare address too: " + JSON.stringify(links));
  const aligned = await reply.locator("table td").evaluateAll((cells) => cells.map((cell) => getComputedStyle(cell).textAlign));
  check(JSON.stringify(aligned) === JSON.stringify(["left", "right"]), "the columns aligned as the table says: " + JSON.stringify(aligned));
  check(await reply.locator("p sup").textContent() === "n" && (await reply.locator(".footnote").textContent()) === "nThe note.", "the footnote's mark and its note");
  const words = await reply.textContent();
  check(words.includes("this (javascript:alert(4))") && words.includes("image: a chart"), "the other link and the image written out: " + words);
  check(words.includes("<img src=x onerror=alert(5)>") && words.includes("<script>alert(6)</script>"), "raw HTML as text");
  check(await page.locator(".md img, .md script").count() === 0 && await page.evaluate(() => document.scripts.length) === 2, "no image or script from the markdown");
  const keyword = reply.locator('pre.code[data-lang="rust"] .hl-k', { hasText: "fn" });
  check(await keyword.count() === 1, "the code block's keyword coloured");
  const colours = await reply.locator("pre.code").evaluate((pre) => [getComputedStyle(pre.querySelector(".hl-k")).color, getComputedStyle(pre.querySelector(".hl-c")).color, getComputedStyle(pre).color]);
  check(new Set(colours).size === 3, "keyword, comment and text in three colours: " + colours);
  const read = page.locator('#raw .card[data-entry="2"] pre.code[data-lang="rs"]');
  check(await read.locator(".hl-k", { hasText: "use" }).count() === 1 && await read.locator(".hl-f", { hasText: "println" }).count() === 1, "the read file coloured as Rust");
  check((await read.textContent()).includes('println!("**not bold**");'), "the read file's text as it is");
  check(await page.locator('#raw .card[data-entry="2"] strong').count() === 0, "a tool's output is not markdown");
  check(await page.locator('#raw .card[data-entry="3"] .md.summary h2', { hasText: "Goal" }).count() === 1, "the summary's markdown");
  check(await page.locator('#raw .card[data-entry="4"] .md > p').textContent() === "Thanks. Now run the tests, please.", "a plain question drawn as its paragraph");
  // Known tools' calls as Pi draws them; a call with an argument the page does not know as JSON.
  const heads = await page.locator('#raw .card[data-entry="1"] .tool > summary').allTextContents();
  check(heads[0].includes("read src/main.rs") && heads[1].includes("write src/new.py (2 lines)") && heads[2].includes("edit src/main.rs (1 replacement)"), "the calls' headlines: " + JSON.stringify(heads));
  const tools = page.locator('#raw .card[data-entry="1"] .tool');
  check(await tools.nth(1).locator('pre.code[data-lang="py"] .hl-k', { hasText: "def" }).count() === 1, "the written file coloured as Python");
  check(await tools.nth(2).locator(".hl-d").textContent() === "-let a = 1;" && await tools.nth(2).locator(".hl-i").textContent() === "+let a = 2;", "the replacement as removed and added lines");
  check(await tools.nth(3).locator("pre").textContent() === "$ cargo test --quiet", "the command after $");
  check((await tools.nth(4).locator("pre").textContent()).includes('"cwd": "/tmp"'), "an unknown argument keeps the call as JSON");
  await page.screenshot({ path: path.join(shots, "markdown.png") });
  console.log("screenshot: " + path.join(shots, "markdown.png"));
}

// Opened with a malformed percent escape in the fragment (`#%E0%A4%A`): the page shows the leaf
// as without a fragment, and a later bad fragment changes nothing; a good one still selects.
async function fragment(page) {
  const heading = await page.locator("#context > h2").innerText();
  check(heading.includes(expect.leaf), "the leaf selected: " + heading);
  await page.evaluate(() => { location.hash = "#%ZZ%"; });
  await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200)));
  check((await page.locator("#context > h2").innerText()).includes(expect.leaf), "a bad fragment changes nothing");
  await page.evaluate((id) => { location.hash = "#" + id; }, expect.other);
  await until(page, (id) => document.querySelector("#context > h2").textContent.includes(id), 10000, expect.other);
}

// A Pi 1.6 session: the system prompt's text and tools shown in both panes; keys act on the pane
// that has the focus (PageDown/arrows/End scroll a reading pane; the tree, reached with Tab, moves
// its selection with them).
async function systemKeys(page) {
  await page.keyboard.press("g");
  const raw = page.locator("#raw .card.sel");
  check(await raw.locator("details.system-prompt", { hasText: "PREAMBLE_MARKER" }).count() === 1, "the system prompt in the raw card");
  check(await raw.locator("summary", { hasText: "System Prompt" }).count() === 1, "titled as Pi titles it");
  check(await raw.locator("details.tools", { hasText: "Available Tools" }).count() === 1, "the tools listed");
  check(await raw.locator(".tools-list", { hasText: "Read file contents" }).count() === 1, "the tool's description");
  await page.keyboard.press("l");
  const context = page.locator("#context");
  check(await context.locator(".ctx-msg.system details.system-prompt", { hasText: "RULES_MARKER" }).count() === 1, "the system prompt in what the model saw");
  const selected = () => page.locator("#tree .row.sel").getAttribute("data-entry");
  const leaf = await selected();
  // The pane itself, or (its system card has folds) the first fold in it.
  let focused = false;
  for (let step = 0; step < 60 && !focused; step++) {
    await page.keyboard.press("Tab");
    focused = await page.evaluate(() => document.getElementById("context").contains(document.activeElement));
  }
  check(focused, "Tab reaches the model's view");
  const top = () => page.evaluate(() => document.getElementById("context").scrollTop);
  // Each scroll is waited for up to 5 s (a fixed 200 ms is short for a loaded machine).
  const scrolled = (beyond) => settles(page, (at) => document.getElementById("context").scrollTop > at, 5000, beyond);
  await page.keyboard.press("PageDown");
  await page.keyboard.press("ArrowDown");
  await scrolled(0);
  const paged = await top();
  check(paged > 0, "PageDown and ArrowDown scroll the focused pane: scrollTop " + paged);
  await page.keyboard.press("End");
  await scrolled(paged);
  check(await top() > paged, "End scrolls it to its end");
  check(await selected() === leaf, "the tree's selection stays");
  await page.locator("#tree").focus();
  check(await page.evaluate(() => document.activeElement.id) === "tree", "the tree takes the focus");
  check(await page.evaluate(() => document.getElementById("tree").tabIndex) === 0, "the tree is in the Tab order");
  await page.keyboard.press("ArrowUp");
  check(await selected() !== leaf, "ArrowUp in the tree moves its selection");
  check(await page.evaluate(() => { const t = document.getElementById("tree"); return document.getElementById(t.getAttribute("aria-activedescendant")).classList.contains("sel"); }), "the selected row is the tree's active option");
  // Search finds an entry by the id the page shows.
  await page.fill("#search", "A17");
  await page.press("#search", "Enter");
  check(await page.locator("#results .search-hit").count() === 1, "search finds the entry a17 by its id");
  await page.locator("#results .search-hit").first().click();
  check(await page.locator("#raw .card.sel").getAttribute("data-entry") !== null && (await page.locator("#raw .card.sel .head").innerText()).includes("a17"), "the hit opens it");
}

async function measure(page) {
  const paint = await page.evaluate(() => {
    const entries = performance.getEntriesByType("paint").map((entry) => entry.name + " " + Math.round(entry.startTime) + " ms");
    const nav = performance.getEntriesByType("navigation")[0];
    return entries.join(", ") + "; DOM content loaded " + Math.round(nav.domContentLoadedEventEnd) + " ms";
  });
  console.log("paint: " + paint + "; rows in the DOM: " + await page.locator("#tree .row").count());
  const started = Date.now();
  await page.keyboard.press("g");
  await page.waitForFunction(() => document.querySelector("#tree .row.sel") !== null);
  console.log("jump to the first entry: " + (Date.now() - started) + " ms");
  await page.keyboard.press("l");
  await page.screenshot({ path: path.join(shots, "measure-conversation.png") });
  await page.click('#tabs button[data-tab="compactions"]');
  await page.screenshot({ path: path.join(shots, "measure-compactions.png") });
  console.log("screenshots: " + path.join(shots, "measure-conversation.png") + " " + path.join(shots, "measure-compactions.png"));
}

async function until(page, predicate, timeout, argument) {
  const deadline = Date.now() + timeout;
  while (!(await page.evaluate(predicate, argument))) {
    if (Date.now() > deadline) throw new Error("timed out waiting for " + predicate.toString());
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// Whether `predicate` holds within `timeout` ms (`until` without the error: the check after it
// says what failed).
async function settles(page, predicate, timeout, argument) {
  try { await until(page, predicate, timeout, argument); return true; } catch (_) { return false; }
}

async function live(page) {
  const rows = await page.evaluate(() => JSON.parse(document.getElementById("session-data").textContent).entries.length);
  console.log("READY " + rows);
  await page.waitForSelector("#tree .row >> text=appended-live-marker", { timeout: 30000 });
  // The selection followed the leaf; its context comes from the server on demand.
  // Polled from outside the page: `waitForFunction` polls with `eval` inside it once the first
  // check fails, which the page's CSP forbids.
  await until(page, () => document.querySelector("#context .ctx-msg:last-child") !== null &&
    document.querySelector("#context").textContent.includes("appended-live-reply"), 30000);
  const status = await page.locator("#status").textContent();
  check(status.includes("live"), "the status says live: " + status);
  // A compaction made after the turn: the tab counts it as the status line does.
  if (expect.compacts) await compactionCounted(page);
  await page.screenshot({ path: path.join(shots, "view-live.png") });
  console.log("screenshots: " + path.join(shots, "view-live.png"));
}

async function compactionCounted(page) {
  const opened = await page.evaluate(() => JSON.parse(document.getElementById("session-data").textContent).compactions.length);
  const counted = "Compactions (" + (opened + 1) + ")";
  await until(page, (label) => document.getElementById("tab-compactions").textContent === label, 30000, counted);
  check((await page.locator("#status").textContent()).includes((opened + 1) + " compactions"), "the status counts it too");
}

// The context-size chart of a session past a million tokens: its y-axis labels whole inside the
// chart (the first digit of "1,000,010" was cut off) on round values (ticks fell on 500,005 and
// 1,000,010), the top one above the largest value.
async function chart(page) {
  const labels = await page.evaluate(() => [...document.querySelectorAll('#chart text[text-anchor="end"]')]
    .map((label) => ({ text: label.textContent, left: label.getBBox().x })));
  const texts = JSON.stringify(labels.map((label) => label.text));
  check(labels.length >= 3, "labels on the y axis: " + texts);
  for (const label of labels) check(label.left >= 0, "the label " + label.text + " inside the chart, its left at " + label.left);
  const values = labels.map((label) => Number(label.text.replace(/,/g, "")));
  const step = values[1] - values[0];
  const power = 10 ** Math.floor(Math.log10(step));
  check([1, 2, 2.5, 5].some((factor) => step === factor * power), "a round step: " + texts);
  check(values.every((value, k) => value === k * step), "ticks from 0, a step apart: " + texts);
  check(values[values.length - 1] >= expect.largest, "the top tick at least " + expect.largest + ": " + texts);
  await page.screenshot({ path: path.join(shots, "chart-million.png") });
}

function sleep(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); }

// The view's polling while every answer is slow (on a session of 100,000 entries the data took
// 8.6 s to build and the page asked again every second, eight requests in flight): at most one
// request of each polled endpoint in flight, and the appended turn still shown.
async function inflight(page) {
  const open = { "/api/version": 0, "/api/data": 0 };
  const most = { "/api/version": 0, "/api/data": 0 };
  const endpoint = (request) => new URL(request.url()).pathname;
  page.on("request", (request) => {
    const name = endpoint(request);
    if (name in open) most[name] = Math.max(most[name], ++open[name]);
  });
  const ended = (request) => { const name = endpoint(request); if (name in open) open[name]--; };
  page.on("requestfinished", ended);
  page.on("requestfailed", ended);
  await page.route((url) => url.pathname === "/api/version", async (route) => { await sleep(1500); await route.continue(); });
  await page.route((url) => url.pathname === "/api/data", async (route) => { await sleep(3500); await route.continue(); });
  console.log("READY");
  await page.waitForSelector("#tree .row >> text=appended-live-marker", { timeout: 30000 });
  await sleep(2500);
  check(most["/api/version"] === 1 && most["/api/data"] === 1, "at most one request of each in flight: " + JSON.stringify(most));
}

// The watched file gone for a while, then emptied for a while (expect.steps, one each): the page
// keeps the data it shows, its status says what the server says, and once the file is back the
// turn appended meanwhile shows. (The page took the server's error as its data, and every later
// poll threw: "the server is not answering" for good.)
async function recover(page) {
  const rows = () => page.evaluate(() => document.getElementById("tree-title").textContent);
  for (const [index, step] of expect.steps.entries()) {
    const before = await rows();
    console.log("BREAK " + index);
    await until(page, (says) => document.getElementById("status").textContent.includes(says), 15000, step.says);
    check(await rows() === before, "the last data kept: " + before + " → " + await rows());
    check(await page.locator("#tree .row").count() > 0, "the tree still drawn");
    check((await page.locator("#status").getAttribute("title")).includes(step.says), "the whole reason on hover");
    await page.screenshot({ path: path.join(shots, "view-file-problem-" + index + ".png") });
    console.log("RESTORE " + index);
    await page.waitForSelector("#tree .row >> text=" + step.marker, { timeout: 15000 });
    const status = await page.locator("#status").textContent();
    check(status.includes("live") && !status.includes(step.says), "the status back to normal: " + status);
  }
}

// A reader of an older entry (expect.older), not following the leaf, scrolls both panels and opens
// the thinking blocks; the agent appends a turn. The panels jumped back (the raw entries to the
// selected card, the context to its top), every block closed, and the context was fetched again.
// Now all stay as the reader left them; a reader who follows the leaf (l) still follows it.
async function keepPlace(page) {
  const asked = [];
  page.on("request", (request) => {
    const target = new URL(request.url());
    if (target.pathname === "/api/context") asked.push(target.searchParams.get("id"));
  });
  await page.evaluate((id) => { location.hash = "#" + id; }, expect.older);
  await until(page, () => document.querySelector("#context .ctx-msg") !== null, 15000);
  const place = () => page.evaluate(() => ({
    raw: document.getElementById("raw").scrollTop,
    context: document.getElementById("context").scrollTop,
    opened: document.querySelectorAll("details.thinking[open]").length,
    heading: document.querySelector("#context > h2").textContent,
  }));
  await page.evaluate(() => {
    document.getElementById("raw").scrollTop = 300;
    document.getElementById("context").scrollTop = 200;
    for (const block of document.querySelectorAll("details.thinking")) block.open = true;
  });
  const before = await place();
  check(before.raw > 0 && before.context > 0 && before.opened > 0, "scrolled, blocks opened: " + JSON.stringify(before));
  const reading = await page.locator("#status").innerText();
  check(reading.includes("live") && !reading.includes("following the leaf"), "the status of a reader of an older entry: " + reading);
  const fetched = asked.length;
  console.log("APPEND kept-place-marker");
  await page.waitForSelector("#tree .row >> text=kept-place-marker", { timeout: 30000 });
  await sleep(300);
  const after = await place();
  check(JSON.stringify(after) === JSON.stringify(before), "the place kept: " + JSON.stringify(before) + " → " + JSON.stringify(after));
  check(asked.length === fetched, "the context not fetched again: " + JSON.stringify(asked.slice(fetched)));
  await page.keyboard.press("l");
  check(await settles(page, () => document.getElementById("status").textContent.includes("following the leaf"), 5000), "the status follows the leaf again");
  console.log("APPEND followed-marker");
  await until(page, () => {
    const card = document.querySelector("#raw .card.sel");
    return card !== null && card.textContent.includes("followed-marker reply");
  }, 30000);
}

// An agent's append caught half written (TEAR: the file ends in part of a line), then finished
// (MEND). The page said "This session file is damaged" at every such moment; now a cut-off last
// line alone is shown only when it is still there seconds later, and goes once the line is whole.
async function torn(page) {
  await until(page, () => document.querySelector("#tree .row") !== null, 15000);
  let answers = 0;
  page.on("response", (response) => { if (new URL(response.url()).pathname === "/api/data") answers++; });
  const shown = () => page.evaluate(() => document.getElementById("damage").className === "on");
  console.log("TEAR");
  const deadline = Date.now() + 15000;
  while (answers === 0 && Date.now() < deadline) await sleep(100);
  check(answers > 0, "the page read the file again");
  await sleep(300);
  check(!(await shown()), "a line being written is not called damage at once");
  check(await settles(page, () => document.getElementById("damage").textContent.includes("cut off"), 10000), "a cut-off line still there seconds later is shown");
  console.log("MEND");
  await page.waitForSelector("#tree .row >> text=mended-marker", { timeout: 30000 });
  check(await settles(page, () => document.getElementById("damage").className !== "on", 5000), "the note goes once the line is whole");
}

// An imported session's context panel says whose view it is: ctxkit's, not what the agent sent.
async function imported(page) {
  await until(page, () => document.querySelector("#context h2") !== null, 15000);
  const note = await page.locator("#context .note").first().innerText();
  check(note.startsWith("Imported from ") && note.includes("what ctxkit would send"), "whose view the panel is: " + note);
}

// A reader stepping up through entries (k, eight times) while each context takes the server a
// while: the page cancels the context it no longer shows, so the server is left one to build (all
// eight were built), and the entry it stopped at shows its context. Every request is held until
// the eighth step (a fixed delay let a slow machine answer one before the next step: CI saw 6 of
// 8), so each superseded one is still in flight when the page moves on.
async function stepping(page) {
  await until(page, () => document.querySelector("#context .ctx-msg") !== null, 15000);
  const cancelled = [];
  page.on("requestfailed", (request) => { if (new URL(request.url()).pathname === "/api/context") cancelled.push(request.url()); });
  let release;
  const stepped = new Promise((resolve) => { release = resolve; });
  await page.route((url) => url.pathname === "/api/context", async (route) => {
    await stepped;
    try { await route.continue(); } catch (_) { /* cancelled by the page meanwhile */ }
  });
  for (let step = 0; step < 8; step++) { await page.keyboard.press("k"); await sleep(30); }
  await sleep(200);
  release();
  const stopped = await page.locator("#tree .row.sel").getAttribute("data-entry");
  await until(page, (at) => {
    const card = document.querySelector("#context .ctx-msg:last-child");
    return card !== null && card.dataset.entry === at;
  }, 15000, stopped);
  check(cancelled.length >= 7, "the superseded contexts cancelled: " + cancelled.length + " of 8");
}

// The page at a phone's width (375 px): nothing wider than the screen (the header ran to 505 px,
// three columns of 240, 68 and 68 px); the conversation's columns are panes, one at a time across
// the whole width; a tap on a row of the tree shows its entry. Back to a wide window, three columns.
async function narrow(page) {
  await page.setViewportSize({ width: 375, height: 740 });
  const fits = async (what) => {
    const sizes = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      body: document.body.scrollWidth,
      header: Math.max(...[...document.querySelectorAll("#top > *")].map((part) => part.getBoundingClientRect().right)),
      screen: innerWidth,
    }));
    check(sizes.page <= sizes.screen && sizes.body <= sizes.screen && sizes.header <= sizes.screen, what + ": wider than the screen: " + JSON.stringify(sizes));
  };
  const columns = () => page.evaluate(() => [...document.querySelectorAll(".cols > .col")]
    .map((column) => Math.round(column.getBoundingClientRect().width)).filter((width) => width > 0));
  await fits("the conversation");
  for (const pane of ["tree", "context", "raw"]) {
    await page.click('#panes button[data-pane="' + pane + '"]');
    const shown = await columns();
    check(shown.length === 1 && shown[0] >= 360, pane + ": one pane across the screen: " + JSON.stringify(shown));
    await fits(pane);
  }
  await page.screenshot({ path: path.join(shots, "narrow-raw.png") });
  await page.click('#panes button[data-pane="tree"]');
  const row = page.locator("#tree .row").nth(3);
  const tapped = await row.getAttribute("data-entry");
  await row.click();
  check(await page.locator("#raw").isVisible(), "a tapped row shows the raw entries");
  check(await page.locator("#raw .card.sel").getAttribute("data-entry") === tapped, "the tapped entry selected");
  // A search from the raw entries' pane shows its results (QA 2026-12-07: they were drawn in the
  // hidden tree pane, 0 × 0 px, and the page stayed where it was).
  await page.fill("#search", tapped);
  await page.press("#search", "Enter");
  const results = await page.locator("#results").boundingBox();
  check(results !== null && results.width > 0 && results.height > 0, "search results shown on a phone: " + JSON.stringify(results));
  check(await page.locator("#results .search-hit").count() >= 1, "the tapped entry found by its id");
  await page.fill("#search", "");
  await page.press("#search", "Escape");
  for (const tab of ["compactions", "usage"]) {
    await page.click('#tabs button[data-tab="' + tab + '"]');
    await fits(tab);
    await page.screenshot({ path: path.join(shots, "narrow-" + tab + ".png") });
  }
  await page.click('#tabs button[data-tab="conversation"]');
  await page.setViewportSize({ width: 1500, height: 950 });
  check((await columns()).length === 3, "three columns in a wide window");
  console.log("screenshots: " + path.join(shots, "narrow-raw.png"));
}

// A message of one 50,000-character word: laid out at once (it took 31 s kerned), drawn unkerned,
// and wrapped inside its pane.
async function longWord(page) {
  await page.click("#tree .row >> nth=0");
  const started = Date.now();
  const sizes = await page.evaluate(() => {
    const long = document.querySelector("#raw .md .long");
    const block = long && long.closest(".md");
    return long && { kerning: getComputedStyle(long).fontKerning, scroll: block.scrollWidth, width: block.clientWidth };
  });
  const took = Date.now() - started;
  console.log("long word laid out in " + took + " ms");
  check(sizes !== null, "the long word drawn as a run of its own");
  check(sizes.kerning === "none", "the long word unkerned: " + sizes.kerning);
  check(sizes.scroll <= sizes.width + 1, "the long word wraps inside its pane: " + JSON.stringify(sizes));
  check(took < 5000, "laid out within 5 s, took " + took + " ms");
  await page.click("#tree .row >> nth=1");
  const heads = await page.evaluate(() => [...document.querySelectorAll(".tool-head")]
    .map((head) => {
      const column = head.closest(".col") || head.parentElement;
      return { scroll: column.scrollWidth, width: column.clientWidth };
    }));
  check(heads.length > 0, "a tool call's header drawn");
  for (const head of heads) check(head.scroll <= head.width + 1, "a tool call's header wraps: " + JSON.stringify(head));
}

main().catch((error) => { console.error(error.message); process.exit(1); });
