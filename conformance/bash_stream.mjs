// bash_stream.mjs runs pi 1.6.0's bash tool with an AbortSignal and an onUpdate
// callback, recording every partial result, so the Go tests can compare streaming and
// abort with pi itself.
//
// stdin:  JSON array of {"cwd": "/abs", "args": {...}, "abortOn": "text"?}
//         (abortOn: abort as soon as a partial result's text contains it)
// stdout: JSON array of {"updates": [...], "result": {"content", "details", "isError", "_meta"}}
import { pathToFileURL } from "node:url";
import { returned, thrown } from "./outcome.mjs";

const mod = await import(pathToFileURL(process.env.PI_MODULE).href + "/dist/index.js");

let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = [];
for (const call of JSON.parse(input)) {
	const tool = mod.createBashTool(call.cwd);
	const ac = new AbortController();
	const updates = [];
	const onUpdate = (u) => {
		updates.push(JSON.parse(JSON.stringify(u)));
		if (call.abortOn && (u.content[0]?.text ?? "").includes(call.abortOn)) ac.abort();
	};
	let result;
	try {
		const r = await tool.execute("oracle", call.args, ac.signal, onUpdate);
		result = returned("bash", r);
	} catch (err) {
		result = thrown(err);
	}
	out.push({ updates, result });
}
process.stdout.write(JSON.stringify(out));
