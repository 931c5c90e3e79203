// pibench.mjs times pi 1.6.0's own tools — createXTool(cwd).execute(...) — called
// in-process in this one Node process, for the Go benchmark's ratio table.
//
// stdin:  one JSON object per line: {"tool": "read", "cwd": "/abs", "args": [{...}, …], "n": 20}
//         (the argument sets are used in turn, so an edit can alternate and undo itself)
// stdout: one JSON object per line: {"medianNs": 123, "isError": false} or {"error": "…"}
// Each request runs 3 untimed warm-up calls, then n timed ones; it reports the median.
// PI_MODULE points at the installed package.
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const mod = await import(pathToFileURL(process.env.PI_MODULE).href + "/dist/index.js");
const factories = {
	read: mod.createReadTool, write: mod.createWriteTool, edit: mod.createEditTool,
	grep: mod.createGrepTool, find: mod.createFindTool, ls: mod.createLsTool, bash: mod.createBashTool,
};
const tools = new Map();

async function once(tool, args) {
	let a = args;
	if (tool.prepareArguments) a = tool.prepareArguments(a);
	try {
		const r = await tool.execute("bench", a, undefined, undefined);
		return r.isError === true;
	} catch {
		return true; // a thrown pi error is what the model sees as isError
	}
}

for await (const line of createInterface({ input: process.stdin })) {
	if (!line.trim()) continue;
	try {
		const req = JSON.parse(line);
		const key = req.tool + "\0" + req.cwd;
		if (!tools.has(key)) tools.set(key, factories[req.tool](req.cwd));
		const tool = tools.get(key);
		let i = 0;
		const next = () => req.args[i++ % req.args.length];
		for (let w = 0; w < 3; w++) await once(tool, next());
		const times = [];
		let isError = false;
		for (let k = 0; k < req.n; k++) {
			const t0 = process.hrtime.bigint();
			isError = (await once(tool, next())) || isError;
			times.push(Number(process.hrtime.bigint() - t0));
		}
		times.sort((a, b) => a - b);
		process.stdout.write(JSON.stringify({ medianNs: times[Math.floor((times.length - 1) / 2)], isError }) + "\n");
	} catch (err) {
		process.stdout.write(JSON.stringify({ error: String(err && err.stack || err) }) + "\n");
	}
}
