// e2e.mjs: real pi 1.6.0, driven by its SDK with pi-ai's scripted `faux` provider, runs
// the same conversation with its built-in tools and with this extension (against
// pi-sbx-backend serve on sbxsim), and checks that the model sees the same thing.
// Run by e2e/extension_test.go: node e2e.mjs CONFIG_JSON, with PI_SBX_BACKEND, PI_SBX_BIN
// and sbxsim's settings in the environment. Writes a JSON report to config.report.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { startPi as startPiIn } from "./pi-session.mjs";

const config = JSON.parse(process.argv[2]);
const ws = config.ws;
const report = { checks: [] };
const check = (name, fn) => {
	fn();
	report.checks.push(name);
};
/** Asserts deep equality, reporting the first path that differs (the values can be huge). */
function same(got, want, what) {
	const walk = (g, w, at) => {
		if (JSON.stringify(g) === JSON.stringify(w)) return;
		if (g && w && typeof g === "object" && typeof w === "object") {
			for (const k of new Set([...Object.keys(w), ...Object.keys(g)])) walk(g[k], w[k], `${at}.${k}`);
			return;
		}
		const cut = (v) => JSON.stringify(v)?.slice(0, 400);
		assert.fail(`${what}: differs at ${at}\n got: ${cut(g)}\nwant: ${cut(w)}`);
	};
	walk(got, want, "");
}
const ALL_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/** A pi runtime (what `pi` itself builds) with or without the extension, on the faux model. */
const startPi = ({ extension, tools }) =>
	startPiIn({ cwd: ws, extensionPath: extension ? config.extension : "", tools });

/** Runs one prompt through a scripted list of assistant turns; returns what happened. */
async function converse(pi, steps, prompt = "go") {
	const contexts = [];
	const events = { updates: {}, ends: {} };
	pi.faux.setResponses(
		steps.map((step) => (context) => {
			contexts.push(structuredClone(context.messages));
			return typeof step === "function" ? step(context) : step;
		}),
	);
	const unsub = pi.session.subscribe((e) => {
		if (e.type === "tool_execution_update") {
			events.updates[e.toolCallId] ??= [];
			events.updates[e.toolCallId].push(e.partialResult);
		}
		if (e.type === "tool_execution_end") events.ends[e.toolCallId] = { result: e.result, isError: e.isError };
	});
	try {
		await pi.session.prompt(prompt);
	} finally {
		unsub();
	}
	assert.equal(pi.faux.getPendingResponseCount(), 0, "the whole script ran");
	return { contexts, events };
}

const calls = (...list) =>
	fauxAssistantMessage(
		list.map(([name, args, id]) => fauxToolCall(name, args, { id })),
		{ stopReason: "toolUse" },
	);

// The conversation: every tool, offsets and limits, an image, a multi-edit, >50 KB of
// bash output, a failing command, a thrown error, several calls in parallel.
const conversation = [
	calls(
		["read", { path: "README.md" }, "r1"],
		["read", { path: "README.md", offset: 2, limit: 1 }, "r2"],
		["read", { path: "images/pixel.png" }, "r3"],
		["ls", {}, "l1"],
		["ls", { path: "src", limit: 1 }, "l2"],
		["find", { pattern: "**/*.go" }, "f1"],
		["grep", { pattern: "todo", path: "notes", ignoreCase: true }, "g1"],
		// One file: across files our order is sorted, ripgrep's varies (docs/conformance.md).
		["grep", { pattern: "hello", glob: "*.md", path: "src/../deep", context: 1 }, "g2"],
	),
	calls(
		["write", { path: "out/new.txt", content: "written\n" }, "w1"],
		[
			"edit",
			{
				path: "edit-me.txt",
				edits: [
					{ oldText: "alpha", newText: "ALPHA" },
					{ oldText: "gamma", newText: "GAMMA" },
				],
			},
			"e1",
		],
		["read", { path: "missing.txt" }, "r4"],
		["edit", { path: "edit-me.txt", edits: [{ oldText: "nowhere", newText: "x" }] }, "e2"],
	),
	calls(
		["bash", { command: "seq 1 20000" }, "b1"],
		["bash", { command: "echo oops >&2; exit 3" }, "b2"],
		["bash", { command: "printf 'a\\nb\\n'" }, "b3"],
		// pi throws on a timeout (its output so far, then the status): serve says so in _meta.
		["bash", { command: "echo started; sleep 5", timeout: 1 }, "b4"],
	),
	fauxAssistantMessage("done"),
];

/** Restores the files the conversation changes. */
function resetWorkspace() {
	fs.rmSync(path.join(ws, "out"), { recursive: true, force: true });
	fs.writeFileSync(path.join(ws, "edit-me.txt"), "alpha\nbeta\ngamma\n");
}

/** The messages as the model saw them, minus what differs by nature between two runs. */
function normalize(messages) {
	return JSON.parse(
		JSON.stringify(messages, (k, v) =>
			["timestamp", "usage", "durationMs", "api", "responseId", "wall_time_seconds"].includes(k) ? undefined : v,
		).replace(/\/tmp\/pi-bash-[0-9a-f]+\.log/g, "/tmp/pi-bash-XXXX.log"),
	);
}

/** Pids of serve processes of the binary under test. */
function servePids() {
	const pids = [];
	for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
		try {
			const args = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
			if (args[0] === config.backend && args[1] === "serve") pids.push(pid);
		} catch {}
	}
	return pids;
}

function sandboxes() {
	const out = spawnSync(config.sim, ["ls", "--json"], { env: { ...process.env }, encoding: "utf8" });
	return JSON.parse(out.stdout || '{"sandboxes":[]}').sandboxes.map((s) => s.name);
}

// --- 1. the same conversation, built-in tools vs the extension ---
resetWorkspace();
const builtin = await startPi({ extension: false, tools: ALL_TOOLS });
const a = await converse(builtin, conversation);
await builtin.runtime.dispose();
// pi's default tool set (no --tools): read, bash, edit, write active; grep, find, ls not.
const builtinDefault = await startPi({ extension: false });
const extDefault = await startPi({ extension: true });
check("with pi's default tools: the same active tools and system prompt", () => {
	assert.deepEqual(builtinDefault.session.getActiveToolNames(), ["read", "bash", "edit", "write"]);
	assert.deepEqual(extDefault.session.getActiveToolNames(), builtinDefault.session.getActiveToolNames());
	assert.equal(extDefault.session.systemPrompt, builtinDefault.session.systemPrompt);
});
await builtinDefault.runtime.dispose();
await extDefault.runtime.dispose();

resetWorkspace();
const ext = await startPi({ extension: true, tools: ALL_TOOLS });
assert.deepEqual(ext.errors, [], "the extension loads without errors");
const b = await converse(ext, conversation);
report.servePids = [];

check("system prompt and tool declarations are pi's", () => {
	const sys = (ctx) => ctx.filter((m) => m.role === "system");
	assert.ok(sys(a.contexts[0]).length > 0);
	same(normalize(sys(b.contexts[0])), normalize(sys(a.contexts[0])), "system messages");
});
check("tool results as the model sees them are pi's", () => {
	same(normalize(b.contexts.at(-1)), normalize(a.contexts.at(-1)), "transcript");
});
check("tool results with details are pi's", () => {
	for (const id of Object.keys(a.events.ends)) {
		const got = normalize(b.events.ends[id]);
		const want = normalize(a.events.ends[id]);
		if (id === "b1") {
			// Known difference: structuredContent (codemode's, not the model's) of a fast
			// 108 KB burst. serve streams the newest 64 KB of a burst, so the extension has
			// the tail and marks the rest omitted; pi has all of it.
			// When the burst came in several messages the stream is whole and equal to pi's.
			const sc = got.result.structuredContent;
			if (sc.truncated) {
				assert.ok(want.result.structuredContent.output.endsWith(sc.output.split("omitted ...]\n\n")[1]));
				delete got.result.structuredContent;
				delete want.result.structuredContent;
			}
		}
		same(got, want, id);
	}
	assert.equal(Object.keys(b.events.ends).length, 16);
});
report.sandboxesDuring = sandboxes();

// --- 2. the extension's calls run in the sandbox ---
const inside = await converse(ext, [
	calls(
		["bash", { command: "hostname" }, "h1"],
		["read", { path: config.hostSecret }, "s1"],
		["bash", { command: "for i in 1 2 3; do echo tick $i; sleep 0.4; done" }, "t1"],
	),
	fauxAssistantMessage("ok"),
]);
const box = report.sandboxesDuring.find((n) => n.startsWith("pi-sbx-"));
check("bash runs in the sandbox (its hostname)", () => {
	assert.ok(box, `a session sandbox exists: ${report.sandboxesDuring}`);
	assert.equal(inside.events.ends.h1.result.content[0].text, `${box}\n`);
});
check("a host file is invisible to the extension's read", () => {
	assert.equal(fs.readFileSync(config.hostSecret, "utf8"), "host only\n", "it exists on the host");
	assert.equal(inside.events.ends.s1.isError, true);
	// Not there, or (the tools run as agent, as in real sbx) behind the VM's own
	// root-only /root: either way the host's file is not what it reads.
	assert.match(inside.events.ends.s1.result.content[0].text, /ENOENT|no such file|EACCES|permission denied/i);
	assert.doesNotMatch(inside.events.ends.s1.result.content[0].text, /host only/);
});
check("bash streams at least two updates for a slow command", () => {
	const texts = (inside.events.updates.t1 ?? []).map((u) => u.content[0]?.text ?? "").filter(Boolean);
	assert.ok(texts.length >= 2, JSON.stringify(texts));
	assert.equal(texts.at(-1), "tick 1\ntick 2\ntick 3\n");
	assert.equal(inside.events.ends.t1.result.content[0].text, "tick 1\ntick 2\ntick 3\n");
});

// --- 3. an aborted sleep leaves no process ---
{
	const started = new Promise((resolve) => {
		const unsub = ext.session.subscribe((e) => {
			if (e.type === "tool_execution_start" && e.toolCallId === "z1") {
				unsub();
				resolve();
			}
		});
	});
	ext.faux.setResponses([calls(["bash", { command: "sleep 3000" }, "z1"]), fauxAssistantMessage("after abort")]);
	let end;
	const unsub = ext.session.subscribe((e) => {
		if (e.type === "tool_execution_end" && e.toolCallId === "z1") end = e;
	});
	const run = ext.session.prompt("sleep");
	await started;
	await new Promise((r) => setTimeout(r, 700));
	await ext.session.abort();
	await run.catch(() => {});
	unsub();
	const ps = await converse(ext, [calls(["bash", { command: "ps -eo args" }, "p1"]), fauxAssistantMessage("ok")]);
	check("an aborted sleep ends as pi's does and leaves no process", () => {
		assert.equal(end?.isError, true);
		assert.equal(end.result.content[0].text, "Command aborted");
		assert.doesNotMatch(ps.events.ends.p1.result.content[0].text, /sleep 3000/);
	});
}

// --- 4. `!` commands run on a pty in the sandbox ---
{
	const chunks = [];
	// What pi's interactive and RPC modes do with `!cmd`: ask the user_bash handlers, then run.
	const command = "test -t 1 && echo on-a-tty; hostname; exit 4";
	const handled = await ext.session.extensionRunner.emitUserBash({
		type: "user_bash",
		command,
		excludeFromContext: false,
		cwd: ws,
	});
	assert.ok(handled?.operations, "the extension takes ! commands");
	const res = await ext.session.executeBash(command, (c) => chunks.push(c), { operations: handled.operations });
	check("!hostname runs in the sandbox on a pty", () => {
		assert.equal(res.output, `on-a-tty\n${box}\n`);
		assert.equal(res.exitCode, 4);
		assert.equal(res.cancelled, false);
		assert.equal(chunks.join(""), res.output, "streamed to pi as it came");
	});
}

// --- 5. serve dies: the call in flight fails clearly, the next call starts it again ---
{
	const pids = servePids();
	assert.equal(pids.length, 1, `one serve runs: ${pids}`);
	const environ = fs.readFileSync(`/proc/${pids[0]}/environ`, "utf8").split("\0");
	check("serve gets pi's session variables and serve's settings, not the host's Docker or other secrets", () => {
		assert.ok(environ.includes(`PI_SESSION_ID=${ext.session.sessionManager.getSessionId()}`), "the session id");
		assert.ok(environ.includes("PI_MODEL=scripted") && environ.includes("PI_PROVIDER=faux"));
		assert.ok(environ.includes("PI_E2E_MARK=forwarded"));
		assert.ok(environ.some((kv) => kv.startsWith("DOCKER_SANDBOX_ENV_ALLOWLIST=")));
		assert.ok(environ.includes(`SBXSIM_STATE=${process.env.SBXSIM_STATE}`), "allowlisted");
		for (const name of ["HOST_SECRET", "DOCKER_HOST", "DOCKER_CONTEXT", "COMPOSE_PROJECT_NAME"]) {
			assert.ok(!environ.some((kv) => kv.startsWith(`${name}=`)), name);
		}
	});
	const started = new Promise((resolve) => {
		const unsub = ext.session.subscribe((e) => {
			if (e.type === "tool_execution_start" && e.toolCallId === "k1") {
				unsub();
				resolve();
			}
		});
	});
	const run = converse(ext, [
		calls(["bash", { command: "sleep 20" }, "k1"]),
		calls(["bash", { command: "echo back in $(hostname)" }, "k2"]),
		fauxAssistantMessage("ok"),
	]);
	await started;
	await new Promise((r) => setTimeout(r, 500));
	// The status lines (on stderr without a UI, with PI_SBX_VERBOSE), from the kill on.
	const statusLines = [];
	const write = process.stderr.write.bind(process.stderr);
	process.env.PI_SBX_VERBOSE = "1";
	process.stderr.write = (chunk, ...rest) => {
		for (const l of String(chunk).split("\n")) if (l.startsWith("sandbox: ")) statusLines.push(l);
		return write(chunk, ...rest);
	};
	process.kill(Number(pids[0]), "SIGKILL");
	const died = await run;
	const settled = await waitFor(() => /^sandbox: pi-sbx-\S+ \(rw/.test(statusLines.at(-1) ?? ""));
	process.stderr.write = write;
	delete process.env.PI_SBX_VERBOSE;
	check("after serve restarted, the status line names the sandbox again, not the restart", () => {
		assert.ok(statusLines.includes("sandbox: serve exited; starting it again…"), statusLines.join(" | "));
		assert.ok(settled, `the last status line: ${statusLines.at(-1)}`);
	});
	check("serve killed: the call in flight fails with a clear error, the next one restarts it", () => {
		assert.equal(died.events.ends.k1.isError, true);
		assert.match(
			died.events.ends.k1.result.content[0].text,
			/^pi-sbx-backend serve exited unexpectedly \(SIGKILL\).*the next call starts it again$/s,
		);
		assert.match(died.events.ends.k2.result.content[0].text, /^back in pi-sbx-\d+-[a-z0-9]+\n$/);
		assert.notDeepEqual(servePids(), pids);
	});
}

// --- 6. lifecycle: /new tears the old sandbox down; exit leaves nothing ---
{
	// The killed serve's watchdog removes its sandbox: wait for just the new one.
	const before = (await waitFor(() => (sandboxes().length === 1 ? sandboxes() : undefined))) ?? sandboxes();
	await ext.runtime.newSession();
	await ext.bind();
	const after = await waitFor(() => {
		const now = sandboxes();
		return now.length === 1 && !before.includes(now[0]) ? now : undefined;
	});
	check("/new removes the session's sandbox and pre-warms a new one", () => {
		assert.equal(before.length, 1);
		assert.ok(after, `sandboxes after /new: ${sandboxes()}`);
	});
	report.sandboxesAfterNew = after;
	await ext.runtime.dispose();
	report.sandboxesAtExit = sandboxes();
	check("after shutdown no sandbox is left", () => assert.deepEqual(report.sandboxesAtExit, []));
}

// --- 7. faults: no binary → every call fails with one clear message, nothing runs here ---
{
	process.env.PI_SBX_BACKEND = "/nonexistent/pi-sbx-backend";
	const broken = await startPi({ extension: true, tools: ALL_TOOLS });
	const r = await converse(broken, [
		calls(["bash", { command: "touch ran-on-the-host" }, "x1"], ["read", { path: "README.md" }, "x2"]),
		fauxAssistantMessage("ok"),
	]);
	check("a missing binary fails every call with one message, never locally", () => {
		for (const id of ["x1", "x2"]) {
			assert.equal(r.events.ends[id].isError, true);
			assert.equal(
				r.events.ends[id].result.content[0].text,
				"pi-sbx-backend not found (/nonexistent/pi-sbx-backend): install it and put it on PATH, or set PI_SBX_BACKEND to its path",
			);
		}
		assert.equal(fs.existsSync(path.join(ws, "ran-on-the-host")), false);
	});
	await broken.runtime.dispose();
	process.env.PI_SBX_BACKEND = config.backend;
}

// --- 8. deploy-target mode: pi's own tools, nothing overridden ---
{
	process.env.PI_SBX_MODE = "deploy";
	const deploy = await startPi({ extension: true, tools: ALL_TOOLS });
	delete process.env.PI_SBX_MODE;
	const r = await converse(deploy, [calls(["bash", { command: "hostname" }, "d1"]), fauxAssistantMessage("ok")]);
	check("PI_SBX_MODE=deploy leaves pi's seven tools (and !) on the host", () => {
		assert.equal(r.events.ends.d1.result.content[0].text, `${os.hostname()}\n`);
		const bash = deploy.session.getAllTools().find((t) => t.name === "bash");
		assert.equal(bash.sourceInfo.source, "builtin");
	});
	await deploy.runtime.dispose();
}

// --- 9. every other tool serve lists becomes a pi tool (serve's name, description, schema) ---
{
	process.env.PI_SBX_BACKEND = path.join(path.dirname(new URL(import.meta.url).pathname), "fake-serve.mjs");
	const deploy = await startPi({ extension: true });
	process.env.PI_SBX_BACKEND = config.backend;
	const r = await converse(deploy, [calls(["docker_demo", { service: "web" }, "q1"]), fauxAssistantMessage("ok")]);
	check("serve's other tools (docker_*) are pi tools with serve's name, description and schema", () => {
		const all = deploy.session.getAllTools().find((t) => t.name === "docker_demo");
		assert.ok(all, "registered");
		assert.equal(all.description, "Demo deploy tool: echoes its service name.");
		assert.deepEqual(JSON.parse(JSON.stringify(all.parameters)), {
			type: "object",
			properties: { service: { type: "string", description: "service name" } },
			required: ["service"],
		});
		assert.ok(deploy.session.getActiveToolNames().includes("docker_demo"), "active");
		assert.equal(r.events.ends.q1.result.content[0].text, "deployed web");
		assert.deepEqual(r.events.ends.q1.result.details, { service: "web" });
	});
	await deploy.runtime.dispose();
}

// --- 10. faults: serve too old; sandbox creation failing ---
{
	process.env.PI_SBX_BACKEND = path.join(path.dirname(new URL(import.meta.url).pathname), "fake-serve.mjs");
	process.env.PI_TEST_FAKE_SERVE_OLD = "1";
	const old = await startPi({ extension: true });
	const r = await converse(old, [calls(["read", { path: "README.md" }, "o1"]), fauxAssistantMessage("ok")]);
	delete process.env.PI_TEST_FAKE_SERVE_OLD;
	process.env.PI_SBX_BACKEND = config.backend;
	check("a serve too old for the package: every call fails with one message", () => {
		assert.equal(r.events.ends.o1.isError, true);
		assert.match(
			r.events.ends.o1.result.content[0].text,
			/fake-serve\.mjs is too old for this package \(it has no pi_sbx_status\): install a newer pi-sbx-backend$/,
		);
	});
	await old.runtime.dispose();

	process.env.PI_SBX_BIN = "/bin/false"; // every sbx command fails
	const nobox = await startPi({ extension: true });
	const f = await converse(nobox, [
		calls(["bash", { command: "touch ran-on-the-host" }, "n1"]),
		fauxAssistantMessage("ok"),
	]);
	process.env.PI_SBX_BIN = config.sim;
	check("sandbox creation failing: calls fail with serve's sandbox error, nothing runs here", () => {
		assert.equal(f.events.ends.n1.isError, true);
		assert.match(f.events.ends.n1.result.content[0].text, /^sandbox error: /);
		assert.equal(fs.existsSync(path.join(ws, "ran-on-the-host")), false);
	});
	await nobox.runtime.dispose();
}

// --- 11. warm re-use: the project's sandbox, kept, and re-attached by the next session ---
{
	process.env.DOCKER_SANDBOX_REUSE = "1";
	const warm = await startPi({ extension: true });
	const first = await waitFor(() => (sandboxes().length === 1 ? sandboxes()[0] : undefined));
	const ready = async (pi) => {
		const t0 = performance.now();
		const r = await converse(pi, [calls(["bash", { command: "hostname" }, "w1"]), fauxAssistantMessage("ok")]);
		return { host: r.events.ends.w1.result.content[0].text.trim(), ms: performance.now() - t0 };
	};
	const a1 = await ready(warm);
	const t0 = performance.now();
	await warm.runtime.newSession(); // a new pi session: serve ends, the sandbox stays
	await warm.bind();
	const a2 = await ready(warm);
	report.reattachMs = performance.now() - t0;
	await warm.runtime.dispose();
	delete process.env.DOCKER_SANDBOX_REUSE;
	const kept = sandboxes();
	check("DOCKER_SANDBOX_REUSE=1: one project sandbox, kept at exit, re-attached by the next session", () => {
		assert.match(first, /^pi-sbx-\d{3}-[0-9a-f]{8}$|^pi-sbx-.+-[0-9a-f]{8}$/);
		assert.equal(a1.host, first);
		assert.equal(a2.host, first, "the new session re-attached to it");
		assert.deepEqual(kept, [first], "kept after pi exits");
	});
	spawnSync(config.sim, ["rm", "-f", first], { env: process.env });
}

// --- 12. the real serve's docker_* tools, registered in pi (PI_SBX_MODE=both, deploy) ---
{
	process.env.PI_SBX_MODE = "both";
	const dep = await startPi({ extension: true });
	delete process.env.PI_SBX_MODE;
	const all = dep.session.getAllTools();
	const docker = all.filter((t) => t.name.startsWith("docker_"));
	report.dockerTools = docker.map((t) => t.name);
	check("the real serve's docker_* tools are pi tools, active, beside pi's seven", () => {
		assert.ok(docker.length >= 10, `docker tools: ${report.dockerTools}`);
		for (const t of docker) {
			assert.ok(t.description.length > 0, t.name);
			assert.equal(t.parameters.type, "object", t.name);
			assert.ok(dep.session.getActiveToolNames().includes(t.name), `${t.name} active`);
		}
		for (const name of ["read", "bash", "edit", "write"]) assert.ok(dep.session.getActiveToolNames().includes(name));
	});
	await dep.runtime.dispose();

	process.env.PI_SBX_MODE = "deploy";
	const target = await startPi({ extension: true });
	delete process.env.PI_SBX_MODE;
	check("deploy-target mode: the docker_* tools, and pi's own seven", () => {
		const tools = target.session.getAllTools();
		assert.deepEqual(
			tools.filter((t) => t.name.startsWith("docker_")).map((t) => t.name),
			report.dockerTools,
		);
		for (const t of tools.filter((t) => ["read", "bash", "edit", "write", "grep", "find", "ls"].includes(t.name))) {
			assert.equal(t.sourceInfo.source, "builtin", t.name);
		}
	});
	await target.runtime.dispose();
}

fs.writeFileSync(config.report, JSON.stringify(report));

async function waitFor(f, ms = 30_000) {
	const end = Date.now() + ms;
	while (Date.now() < end) {
		const v = f();
		if (v) return v;
		await new Promise((r) => setTimeout(r, 100));
	}
	return undefined;
}
