// oracle.mjs runs pi 1.6.0's own tools — createXTool(cwd).execute(...) — on a batch of
// calls and prints their results, so the Go tests can compare against pi itself.
//
// stdin:  JSON array of {"tool": "read", "cwd": "/abs", "args": {...}}
// stdout: JSON array of {"content": [...], "details": ..., "isError": bool}
// A thrown error becomes what pi's agent loop shows the model: the message as the only
// text block, details {}, isError true. PI_MODULE points at the installed package.
import { pathToFileURL } from "node:url";

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
	if (!factory) { out.push({ content: [{ type: "text", text: `Tool ${call.tool} not found` }], details: {}, isError: true }); continue; }
	const tool = factory(call.cwd);
	let args = call.args;
	if (tool.prepareArguments) args = tool.prepareArguments(args);
	try {
		const r = await tool.execute("oracle", args, undefined, undefined);
		out.push({ content: r.content, details: r.details ?? null, isError: r.isError === true });
	} catch (err) {
		out.push({ content: [{ type: "text", text: err instanceof Error ? err.message : String(err) }], details: {}, isError: true });
	}
}
process.stdout.write(JSON.stringify(out));
