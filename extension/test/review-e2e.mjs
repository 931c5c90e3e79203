// review-e2e.mjs: real pi 1.6.0 (its SDK, pi-ai's scripted faux model) with this
// extension, in review mode (DOCKER_SANDBOX_WORKSPACE_MODE=review from the environment):
// the model edits files, creates .git/hooks/pre-commit and makes a script executable;
// then `/sandbox review --stat` prints the review (no UI: on stdout). It then prints
// READY and waits to be killed (e2e/reviewshow_test.go checks the host, lands, and kills
// pi with SIGKILL). Run as: node review-e2e.mjs CONFIG_JSON.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
	createAgentSessionFromServices,
	createAgentSessionRuntime,
	createAgentSessionServices,
	ModelRuntime,
	SessionManager,
	SettingsManager,
} from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";

const config = JSON.parse(process.argv[2]);
const ws = config.ws;

const agentDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-agent-"));
const faux = fauxProvider({ provider: "faux", models: [{ id: "scripted", reasoning: false }] });
const modelRuntime = await ModelRuntime.create({ modelsPath: null, refreshOnCreate: false, authPath: path.join(agentDir, "auth.json") });
modelRuntime.registerNativeProvider(faux.provider);
const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false }, retry: { enabled: false } });
const createRuntime = async ({ cwd, sessionManager, sessionStartEvent }) => {
	const services = await createAgentSessionServices({
		cwd,
		agentDir,
		settingsManager,
		modelRuntime,
		resourceLoaderOptions: {
			noExtensions: true,
			noSkills: true,
			noPromptTemplates: true,
			noThemes: true,
			noContextFiles: true,
			additionalExtensionPaths: [config.extension],
		},
	});
	const created = await createAgentSessionFromServices({
		services,
		sessionManager,
		sessionStartEvent,
		model: faux.getModel(),
		thinkingLevel: "off",
		tools: ["read", "bash", "edit", "write"],
	});
	return { ...created, services, diagnostics: services.diagnostics };
};
const runtime = await createAgentSessionRuntime(createRuntime, { cwd: ws, agentDir, sessionManager: SessionManager.inMemory(ws) });
const errors = [];
await runtime.session.bindExtensions({ onError: (e) => errors.push(`${e.event}: ${e.error}`) });
if (errors.length) throw new Error(`extension errors: ${errors.join("; ")}`);

const calls = (...list) => fauxAssistantMessage(list.map(([name, args, id]) => fauxToolCall(name, args, { id })), { stopReason: "toolUse" });
const results = [];
const unsub = runtime.session.subscribe((e) => {
	if (e.type === "tool_execution_end") results.push({ id: e.toolCallId, isError: e.isError, text: e.result?.content?.map((c) => c.text).join("") });
});
faux.setResponses([
	calls(
		["edit", { path: "README.md", edits: [{ oldText: "hello world", newText: "hello sandbox" }] }, "e1"],
		["write", { path: "src/new.go", content: "package main\n\n// New came from the sandbox.\nfunc New() {}\n" }, "w1"],
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
const failed = results.filter((r) => r.isError);
if (failed.length) throw new Error(`tool calls failed: ${JSON.stringify(failed)}`);

// The extension's own review command; without a UI it prints to stdout.
process.stdout.write("REVIEW-BEGIN\n");
await runtime.session.prompt("/sandbox review --stat");
process.stdout.write("REVIEW-END\n");
process.stdout.write(`READY ${JSON.stringify({ results })}\n`);
// Wait to be killed (SIGKILL: no cleanup of ours runs; serve's stdin just ends).
setInterval(() => {}, 1 << 30);
