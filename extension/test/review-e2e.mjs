// review-e2e.mjs: real pi 1.6.0 (its SDK, pi-ai's scripted faux model) with this
// extension, in review mode (DOCKER_SANDBOX_WORKSPACE_MODE=review from the environment):
// the model edits files, creates .git/hooks/pre-commit and makes a script executable;
// then `/sandbox review --stat` prints the review (no UI: on stdout). It then prints
// READY and waits to be killed (e2e/reviewshow_test.go checks the host, lands, and kills
// pi with SIGKILL). Run as: node review-e2e.mjs CONFIG_JSON.
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { startPi } from "./pi-session.mjs";

const config = JSON.parse(process.argv[2]);
const ws = config.ws;

const { runtime, faux, errors } = await startPi({
	cwd: ws,
	extensionPath: config.extension,
	tools: ["read", "bash", "edit", "write"],
});
if (errors.length) throw new Error(`extension errors: ${errors.join("; ")}`);

const calls = (...list) =>
	fauxAssistantMessage(
		list.map(([name, args, id]) => fauxToolCall(name, args, { id })),
		{ stopReason: "toolUse" },
	);
const results = [];
const unsub = runtime.session.subscribe((e) => {
	if (e.type === "tool_execution_end")
		results.push({ id: e.toolCallId, isError: e.isError, text: e.result?.content?.map((c) => c.text).join("") });
});
faux.setResponses([
	calls(
		["edit", { path: "README.md", edits: [{ oldText: "hello world", newText: "hello sandbox" }] }, "e1"],
		[
			"write",
			{ path: "src/new.go", content: "package main\n\n// New came from the sandbox.\nfunc New() {}\n" },
			"w1",
		],
		["write", { path: "notes/todo.txt", content: "TODO: one\nTODO: two\ndone: three\nTODO: land this\n" }, "w2"],
	),
	calls([
		"bash",
		{
			command:
				"set -e; mkdir -p .git/hooks; printf '#!/bin/sh\\necho owned > /tmp/pi-sbx-owned\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; " +
				"printf '#!/bin/sh\\necho build\\n' > build.sh; chmod +x build.sh; rm deep/a/b/c/file.md; echo worked",
		},
		"b1",
	]),
	fauxAssistantMessage("done"),
]);
await runtime.session.prompt("go");
unsub();
if (faux.getPendingResponseCount() !== 0)
	throw new Error(`the script stopped early: ${faux.getPendingResponseCount()} turns left`);
const failed = results.filter((r) => r.isError);
if (failed.length) throw new Error(`tool calls failed: ${JSON.stringify(failed)}`);

// The extension's own review command; without a UI it prints to stdout.
process.stdout.write("REVIEW-BEGIN\n");
await runtime.session.prompt("/sandbox review --stat");
process.stdout.write("REVIEW-END\n");
process.stdout.write(`READY ${JSON.stringify({ results })}\n`);
// Wait to be killed (SIGKILL: no cleanup of ours runs; serve's stdin just ends).
setInterval(() => {}, 1 << 30);
