// truncate.mjs applies pi 1.6.0's exported truncation helpers to a batch of inputs.
// stdin: [{"fn":"head"|"tail"|"line"|"size", "s": string, "n": number, "maxLines"?, "maxBytes"?}]
import { pathToFileURL } from "node:url";

const mod = await import(pathToFileURL(process.env.PI_MODULE).href + "/dist/index.js");
let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = JSON.parse(input).map((c) => {
	const opts = {};
	if (c.maxLines !== undefined) opts.maxLines = c.maxLines;
	if (c.maxBytes !== undefined) opts.maxBytes = c.maxBytes;
	switch (c.fn) {
		case "head": return mod.truncateHead(c.s, opts);
		case "tail": return mod.truncateTail(c.s, opts);
		case "line": return mod.truncateLine(c.s, c.n);
		case "size": return mod.formatSize(c.n);
	}
});
process.stdout.write(JSON.stringify(out));
