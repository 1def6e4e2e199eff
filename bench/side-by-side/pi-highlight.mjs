// node pi-highlight.mjs PI_PACKAGE_DIR FILE LANGUAGE [REPEAT]: Pi's `highlightCode` (1.6.0: highlight.js
// through cli-highlight, the `dark` theme) over FILE's code, REPEAT times (default 20); prints
// {"lines", "bytes", "medianMs", "outputBytes"} as `highlight-speed` does for ctxkit.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, file, language, repeatText] = process.argv.slice(2);
const themeModule = await import(pathToFileURL(join(packageDir, "dist/modes/interactive/theme/theme.js")).href);
themeModule.initTheme("dark", false);
const code = readFileSync(file, "utf8");
const repeat = Number(repeatText ?? 20);
const times = [];
let outputBytes = 0;
for (let run = 0; run < Math.max(1, repeat); run++) {
  const started = process.hrtime.bigint();
  const lines = themeModule.highlightCode(code, language);
  times.push(Number(process.hrtime.bigint() - started) / 1e6);
  outputBytes = lines.reduce((total, line) => total + Buffer.byteLength(line), 0);
}
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];
console.log(JSON.stringify({
  lines: code.split("\n").length,
  bytes: Buffer.byteLength(code),
  medianMs: Math.round(median * 100) / 100,
  outputBytes,
}));
