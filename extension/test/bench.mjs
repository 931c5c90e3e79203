// bench.mjs: each tool's call time through the extension (serve on sbxsim, the agent in
// the "VM") against pi 1.6.0's built-in tool, in one process, on one workspace. Warm
// medians; the ratio is extension / built-in. Run by e2e/bench_test.go
// BenchmarkPiExtensionTools: node bench.mjs CONFIG_JSON; prints one JSON object.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fauxProvider } from "@earendil-works/pi-ai";
import {
	createAgentSessionFromServices,
	createAgentSessionServices,
	ModelRuntime,
	SessionManager,
	SettingsManager,
} from "@earendil-works/pi-coding-agent";

const config = JSON.parse(process.argv[2]);
const ws = config.ws;
const iterations = config.iterations ?? 100;

async function session(extension) {
	const agentDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-bench-"));
	const faux = fauxProvider({ provider: "faux", models: [{ id: "scripted", reasoning: false }] });
	const modelRuntime = await ModelRuntime.create({
		modelsPath: null,
		refreshOnCreate: false,
		authPath: path.join(agentDir, "auth.json"),
	});
	modelRuntime.registerNativeProvider(faux.provider);
	const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false }, retry: { enabled: false } });
	const services = await createAgentSessionServices({
		cwd: ws,
		agentDir,
		settingsManager,
		modelRuntime,
		resourceLoaderOptions: {
			noExtensions: true,
			noSkills: true,
			noPromptTemplates: true,
			noThemes: true,
			noContextFiles: true,
			additionalExtensionPaths: extension ? [config.extension] : [],
		},
	});
	const { session } = await createAgentSessionFromServices({
		services,
		sessionManager: SessionManager.inMemory(ws),
		model: faux.getModel(),
		thinkingLevel: "off",
		tools: ["read", "bash", "edit", "write", "grep", "find", "ls"],
	});
	await session.bindExtensions({});
	return session;
}

// One representative call per tool. edit flips a word back and forth, so every call edits.
let flip = false;
const cases = {
	read: () => ({ path: "src/pkg17/file3.go" }),
	// Each side writes its own file: alternating pi's in-place write and our atomic
	// replace on one file makes ext4 flush the other's fresh data, which costs both and
	// happens in neither's real use.
	write: (side) => ({ path: `out/bench-${side}.txt`, content: "bench\n".repeat(20) }),
	edit: () => {
		flip = !flip;
		return { path: "edit-me.txt", edits: [{ oldText: flip ? "alpha" : "ALPHA", newText: flip ? "ALPHA" : "alpha" }] };
	},
	bash: () => ({ command: "echo hi" }),
	grep: () => ({ pattern: "func F1[0-9]" }),
	find: () => ({ pattern: "**/*.go" }),
	ls: () => ({ path: "src" }),
};

/** Times one call of a tool; throws on an error result. */
async function once(s, name, i) {
	const tool = s.agent.state.tools.find((t) => t.name === name);
	if (!tool) throw new Error(`no tool ${name}`);
	const args = cases[name](s === builtin ? "builtin" : "ext");
	const t0 = performance.now();
	const res = await tool.execute(`bench-${i}`, args, undefined, undefined);
	const dt = performance.now() - t0;
	if (res.isError) throw new Error(`${name}: ${JSON.stringify(res.content)}`);
	return dt;
}

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];

const builtin = await session(false);
const ext = await session(true);
// Wait until the extension's sandbox is up (its pre-warm), so no call pays for creation.
await ext.agent.state.tools.find((t) => t.name === "ls").execute("warm", {}, undefined, undefined);

const rows = {};
for (const name of Object.keys(cases)) {
	// Warm up both, then alternate call by call, so load on the (shared) machine hits both alike.
	for (let i = 0; i < 5; i++) {
		await once(builtin, name, i);
		await once(ext, name, i);
	}
	const local = [];
	const sandboxed = [];
	for (let i = 0; i < iterations; i++) {
		local.push(await once(builtin, name, i));
		sandboxed.push(await once(ext, name, i));
	}
	rows[name] = {
		builtin_ms: median(local),
		extension_ms: median(sandboxed),
		ratio: median(sandboxed) / median(local),
	};
}
const ratios = Object.values(rows).map((r) => r.ratio);
const geomean = Math.exp(ratios.reduce((s, r) => s + Math.log(r), 0) / ratios.length);
builtin.dispose();
ext.dispose();
process.stdout.write(`${JSON.stringify({ rows, geomean, max: Math.max(...ratios) })}\n`);
process.exit(0);
