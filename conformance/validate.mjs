// validate.mjs runs pi 1.6.0's argument handling before a tool runs — the tool's
// prepareArguments, then pi-ai's validateToolArguments (coercion, then the check) — on
// a batch of calls, as pi's agent loop does.
//
// stdin:  JSON array of {"tool": "read", "args": <raw arguments, any JSON>}
// stdout: JSON array of {"ok": true, "value": <validated arguments>} or {"ok": false, "error": "<message>"}
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const mod = await import(pathToFileURL(process.env.PI_MODULE).href + "/dist/index.js");
// pi-ai as pi-coding-agent resolves it: its own copy, else the one beside it.
const nested = join(process.env.PI_MODULE, "node_modules/@earendil-works/pi-ai");
const aiDir = existsSync(nested) ? nested : join(process.env.PI_MODULE, "../pi-ai");
const ai = await import(pathToFileURL(join(aiDir, "dist/index.js")).href);
const factories = {
	read: mod.createReadTool, write: mod.createWriteTool, edit: mod.createEditTool,
	grep: mod.createGrepTool, find: mod.createFindTool, ls: mod.createLsTool, bash: mod.createBashTool,
};

let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = [];
for (const call of JSON.parse(input)) {
	const tool = factories[call.tool](process.cwd());
	try {
		const args = tool.prepareArguments ? tool.prepareArguments(call.args) : call.args;
		out.push({ ok: true, value: ai.validateToolArguments(tool, { name: call.tool, arguments: args }) });
	} catch (err) {
		out.push({ ok: false, error: err.message });
	}
}
process.stdout.write(JSON.stringify(out));
