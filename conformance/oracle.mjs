// oracle.mjs runs pi 1.6.0's own tools — createXTool(cwd).execute(...) — on a batch of
// calls and prints their results, so the Go tests can compare against pi itself.
//
// stdin:  JSON array of {"tool": "read", "cwd": "/abs", "args": {...}}
// stdout: JSON array of {"content": [...], "details": ..., "isError": bool, "_meta": ...}
// A thrown error becomes what pi's agent loop shows the model: the message as the only
// text block, details {}, isError true (outcome.mjs). PI_MODULE points at the installed package.
import { pathToFileURL } from "node:url";
import { returned, thrown } from "./outcome.mjs";

const mod = await import(pathToFileURL(process.env.PI_MODULE).href + "/dist/index.js");
const factories = {
	read: mod.createReadTool, write: mod.createWriteTool, edit: mod.createEditTool,
	grep: mod.createGrepTool, find: mod.createFindTool, ls: mod.createLsTool, bash: mod.createBashTool,
};

let input = "";
for await (const chunk of process.stdin) input += chunk;
const calls = JSON.parse(input);
const out = [];
for (const call of calls) {
	const factory = factories[call.tool];
	if (!factory) { out.push(thrown(new Error(`Tool ${call.tool} not found`))); continue; }
	const tool = factory(call.cwd);
	let args = call.args;
	if (tool.prepareArguments) args = tool.prepareArguments(args);
	try {
		const r = await tool.execute("oracle", args, undefined, undefined);
		out.push(returned(call.tool, r));
	} catch (err) {
		out.push(thrown(err));
	}
}
process.stdout.write(JSON.stringify(out));
