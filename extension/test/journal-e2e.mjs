// journal-e2e.mjs: real pi 1.6.0 (its SDK, pi-ai's scripted faux model) with this
// extension, driven one turn at a time so that other clients can act on the same sandbox
// between pi's calls (e2e/journalclients_test.go). Each line of stdin is a JSON array of
// tool calls [name, args, id]: the model makes them in one turn, then says "done"; the
// script answers with one line, DONE and the calls' results as JSON. It ends when stdin
// does. Run as: node journal-e2e.mjs CONFIG_JSON (config: ws, extension).
import readline from "node:readline";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { startPi } from "./pi-session.mjs";

const config = JSON.parse(process.argv[2]);
const { runtime, faux, errors } = await startPi({
	cwd: config.ws,
	extensionPath: config.extension,
	tools: ["read", "bash", "edit", "write"],
});
if (errors.length) throw new Error(`extension errors: ${errors.join("; ")}`);

let results = [];
runtime.session.subscribe((e) => {
	if (e.type === "tool_execution_end")
		results.push({ id: e.toolCallId, isError: e.isError, text: e.result?.content?.map((c) => c.text).join("") });
});
for await (const line of readline.createInterface({ input: process.stdin })) {
	const calls = JSON.parse(line);
	results = [];
	faux.setResponses([
		fauxAssistantMessage(
			calls.map(([name, args, id]) => fauxToolCall(name, args, { id })),
			{ stopReason: "toolUse" },
		),
		fauxAssistantMessage("done"),
	]);
	await runtime.session.prompt("go");
	if (faux.getPendingResponseCount() !== 0)
		throw new Error(`the script stopped early: ${faux.getPendingResponseCount()} turns left`);
	process.stdout.write(`DONE ${JSON.stringify(results)}\n`);
}
// stdin ended: pi ends as a user's pi does, its serve's stdin closed.
await runtime.dispose();
process.exit(0);
