// Parses every theme colour of color-cases-16.json with Pi 1.6.0's terminal library and writes what
// it made of each to vectors-colors-16.json: the foreground escape on a truecolor and on a
// 256-colour terminal, or the error's message for the values it refuses.
//   PI_DIR=<dir holding node_modules/@earendil-works/pi-coding-agent@1.6.0> node record-colors.mjs
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { formatJson } from "./lib.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const modules = path.join(process.env.PI_DIR ?? "", "node_modules", "@earendil-works");
const pkg = JSON.parse(fs.readFileSync(path.join(modules, "pi-coding-agent", "package.json"), "utf8"));
if (pkg.version !== "1.6.0") throw new Error(`expected pi-coding-agent 1.6.0, found ${pkg.version}`);
const { parseColor, foregroundAnsi } = await import(
  pathToFileURL(path.join(modules, "pi-tui", "dist", "colors.js")).href
);

const { values, invalid } = JSON.parse(fs.readFileSync(path.join(here, "color-cases-16.json"), "utf8"));
const parameters = (escape) => escape.slice(2, -1);
const colors = values.map((value) => {
  const color = parseColor(value);
  return {
    value,
    truecolor: parameters(foregroundAnsi(color, "truecolor")),
    ansi256: parameters(foregroundAnsi(color, "256color")),
  };
});
const refused = invalid.map((value) => {
  try {
    parseColor(value);
    return { value, error: null };
  } catch (error) {
    return { value, error: error.message };
  }
});
fs.writeFileSync(path.join(here, "vectors-colors-16.json"), formatJson({ colors, refused }));
