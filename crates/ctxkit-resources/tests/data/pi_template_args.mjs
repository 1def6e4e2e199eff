// Writes `pi_template_args.json`: each input below with what Pi 1.6.0's own functions make of it.
// Run: node pi_template_args.mjs <path to @earendil-works/pi-coding-agent> > pi_template_args.json
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const root = process.argv[2];
const pi = await import(pathToFileURL(join(root, "dist/core/prompt-templates.js")).href);

const split = [
  "", "   ", "a", "a b c", "a  b   c", "a\tb\tc", " lead trail ", "a\nb", "a\u00a0b", "a\ufeffb", "a\u0085b",
  "doesn't work", "it's Bob's", "'single quoted' x", "\"double quoted\" x", "\"first arg\" second",
  "'first arg' second", "\"the \\\"fast\\\" path\" x", "'it\\'s' x", "'a \\\" b' x", "\"a \\' b\" x",
  "\"a\\\\b\" c", "\"back\\slash\" c", "\"\" x", "'' x", "\"\" \" \"", "x \"\"", "\"\"", "''",
  "\"a b\"c d", "a\"b c\"d", "\"unterminated rest", "a \"unterminated rest", "'open", "x '", "\"",
  "\"abc\\\"", "\"a\" \"b", "\"one\" 'two' \"thr ee\"", "\"line1\nline2\" second", "--flag=\"a b\"",
  "\"\\\"\"", "''''", "\"'\"", "'\"'", "\"a\"\"b\"", "\"a\"'b'", "ünï \"cödé ✓\" 日本",
];

const strings = (list) => list;
const substitute = [
  ["A=[$1] D=[${1:-dflt}] DA=[${@:-alld}]", ["x y", "z"]],
  ["A=[$1] D=[${1:-dflt}] DA=[${@:-alld}]", []],
  ["Review. Focus on ${1:-correctness}. All=[${@:-everything}]", []],
  ["Focus on ${1:-correctness, security, and error handling}.", ["speed"]],
  ["${2:-second} ${3:-third}", ["a", "b"]],
  ["${1:-empty}", [""]],
  ["${@:-none}", [""]],
  ["${@:-none}", ["", ""]],
  ["${ARGUMENTS:-none} ${ARGUMENTS:-none}", []],
  ["${ARGUMENTS:-none}", ["a", "b"]],
  ["${0:-zero}", ["a"]],
  ["${01:-x}", ["a"]],
  ["${1:-}", []],
  ["${1:-a $2 ${@} b}", ["", "two"]],
  ["${1:-multi\nline}", []],
  ["${1:-unclosed", []],
  ["${1:-x}}", []],
  ["${@:-$1}", []],
  ["${A:-x} ${:-x} ${1-x} ${1:x}", ["a"]],
  ["${1:-x}", ["$2", "b"]],
  ["$1", ["a"]],
  ["$1 $2: $ARGUMENTS", ["arg100", "@user"]],
  ["$1 $2 $3 $4 $5", ["a", "b"]],
  ["$0", ["a", "b"]],
  ["$1.5", ["a"]],
  ["$01", ["a"]],
  ["$10 $12 $15", ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15"]],
  ["$99999999999999999999999 ${99999999999999999999999:-big}", ["a"]],
  ["Price: \\$100", []],
  ["$A $$ $ $ARGS", ["a"]],
  ["$arguments $Arguments $ARGUMENTS", ["a", "b"]],
  ["$ARGUMENTS", ["$1", "$ARGUMENTS"]],
  ["$@", ["$100", "$1"]],
  ["$ARGUMENTS", ["x", "$@"]],
  ["$@", ["$$", "$&"]],
  ["$@$1$ARGUMENTS", ["a", "b"]],
  ["${@:2}", ["a", "b", "c", "d"]],
  ["${@:2:2}", ["a", "b", "c", "d"]],
  ["${@:0}", ["a", "b", "c"]],
  ["${@:99}", ["a"]],
  ["${@:2:0}", ["a", "b"]],
  ["${@:2} vs $@", ["a", "b", "c"]],
  ["${@:1}", ["${@:2}", "test"]],
  ["${@} ${@:2:}", ["a", "b"]],
  ["${@:99999999999999999999999} ${@:1:99999999999999999999999}", ["a", "b"]],
  ["${@:-x}${@:1}", ["a"]],
  ["ünï ${1:-cödé ✓} $1", []],
];

const result = {
  generator: "pi_template_args.mjs over @earendil-works/pi-coding-agent 1.6.0",
  split: split.map((input) => ({ input, args: pi.parseCommandArgs(input) })),
  substitute: substitute.map(([template, args]) => ({ template, args, output: pi.substituteArgs(template, args) })),
  expand: ["/t a b", "/t\ta b", "/t\n  a", "/t", "/t   ", "/ta b", " /t a", "/", "/ t"].map((input) => ({
    input,
    output: pi.expandPromptTemplate(input, [{ name: "t", content: "[$1|$2]" }]),
  })),
};
process.stdout.write(JSON.stringify(result, null, 1) + "\n");
