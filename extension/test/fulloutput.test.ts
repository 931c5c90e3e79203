// fulloutput.test.ts: a truncated `!` command's full-output file, copied into the VM at
// the path pi names, or the path annotated with why it is not there
// (src/fulloutput.ts). `node --test test/fulloutput.test.ts`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { EARLIER_SANDBOX, FullOutputs, type HostFiles, MAX_COPY, type SandboxFiles } from "../src/fulloutput.ts";

class FakeSandbox implements SandboxFiles {
	generation = 0;
	root = "/home/u/repo";
	writes: string[] = [];
	fail?: string;
	vmFiles = new Set<string>();
	checks = 0;
	async exists(path: string): Promise<boolean> {
		this.checks++;
		return this.vmFiles.has(path) || this.writes.some((w) => w.startsWith(`${path}=`));
	}
	async write(path: string, content: string): Promise<string | undefined> {
		if (this.fail) return this.fail;
		this.writes.push(`${path}=${content}`);
		return undefined;
	}
}

const host = (files: Record<string, string | number>): HostFiles => ({
	async size(path) {
		const f = files[path];
		return f === undefined ? undefined : typeof f === "number" ? f : f.length;
	},
	async read(path) {
		return String(files[path]);
	},
});

const bash = (fullOutputPath: string, extra: Record<string, unknown> = {}) => ({
	role: "bashExecution",
	command: "seq 1 300000",
	output: "…",
	truncated: true,
	fullOutputPath,
	...extra,
});

test("each named file is copied or annotated", async () => {
	const cases: {
		name: string;
		message: Record<string, unknown>;
		files: Record<string, string | number>;
		fail?: string;
		writes: string[];
		path: string; // the message's fullOutputPath afterwards
	}[] = [
		{
			name: "copied",
			message: bash("/tmp/pi-bash-1.log"),
			files: { "/tmp/pi-bash-1.log": "1\n2\n" },
			writes: ["/tmp/pi-bash-1.log=1\n2\n"],
			path: "/tmp/pi-bash-1.log",
		},
		{
			name: "gone from the host (an old session)",
			message: bash("/tmp/pi-bash-2.log"),
			files: {},
			writes: [],
			path: "/tmp/pi-bash-2.log (gone from the host, so not in this sandbox: run the command again for its output)",
		},
		{
			name: "too large",
			message: bash("/tmp/pi-bash-3.log"),
			files: { "/tmp/pi-bash-3.log": MAX_COPY + 1 },
			writes: [],
			path: `/tmp/pi-bash-3.log (on the host only: ${MAX_COPY + 1} bytes, too large to copy into the sandbox)`,
		},
		{
			name: "the write fails",
			message: bash("/tmp/pi-bash-4.log"),
			files: { "/tmp/pi-bash-4.log": "x" },
			fail: "ENOSPC: no space left on device",
			writes: [],
			path: "/tmp/pi-bash-4.log (not copied into the sandbox: ENOSPC: no space left on device)",
		},
		{
			name: "inside the mounted workspace",
			message: bash("/home/u/repo/tmp/pi-bash-5.log"),
			files: { "/home/u/repo/tmp/pi-bash-5.log": "x" },
			writes: [],
			path: "/home/u/repo/tmp/pi-bash-5.log",
		},
		{
			name: "beside the workspace, not in it",
			message: bash("/home/u/repo2/pi-bash-6.log"),
			files: { "/home/u/repo2/pi-bash-6.log": "y" },
			writes: ["/home/u/repo2/pi-bash-6.log=y"],
			path: "/home/u/repo2/pi-bash-6.log",
		},
		{
			name: "!! (not in the model's context)",
			message: bash("/tmp/pi-bash-7.log", { excludeFromContext: true }),
			files: {},
			writes: [],
			path: "/tmp/pi-bash-7.log",
		},
		{
			name: "not truncated",
			message: bash("/tmp/pi-bash-8.log", { truncated: false }),
			files: {},
			writes: [],
			path: "/tmp/pi-bash-8.log",
		},
	];
	for (const c of cases) {
		const sb = new FakeSandbox();
		sb.fail = c.fail;
		const before = c.message.fullOutputPath;
		const messages: unknown[] = [{ role: "user", content: "hi" }, c.message];
		const changed = await new FullOutputs(sb, host(c.files)).sync(messages);
		assert.deepEqual(sb.writes, c.writes, c.name);
		assert.equal((messages[1] as { fullOutputPath: string }).fullOutputPath, c.path, c.name);
		assert.equal(changed, c.path !== before, `${c.name}: reported changed`);
	}
});

test("copied once per sandbox, again in a new one", async () => {
	const sb = new FakeSandbox();
	const outputs = new FullOutputs(sb, host({ "/tmp/pi-bash-9.log": "z" }));
	// pi's context event hands over a fresh copy of the messages every time.
	await outputs.sync([bash("/tmp/pi-bash-9.log")]);
	await outputs.sync([bash("/tmp/pi-bash-9.log")]);
	assert.equal(sb.writes.length, 1, "one copy for one sandbox");
	sb.generation++; // serve restarted, or the sandbox made again
	await outputs.sync([bash("/tmp/pi-bash-9.log")]);
	assert.equal(sb.writes.length, 2, "copied again into the new one");
});

test("a bash tool result's file from an earlier sandbox is named as gone", async () => {
	const tool = (path: string) => ({
		role: "toolResult",
		toolName: "bash",
		details: { fullOutputPath: path },
		content: [
			{ type: "text", text: `b299999\nb300000\n\n[Showing lines 298001-300000 of 300000. Full output: ${path}]` },
		],
	});
	const sb = new FakeSandbox();
	sb.vmFiles.add("/tmp/pi-bash-here.log");
	const here = tool("/tmp/pi-bash-here.log");
	const earlier = tool("/tmp/pi-bash-earlier.log");
	const outputs = new FullOutputs(sb, host({}));
	assert.equal(await outputs.sync([here, earlier]), true);
	assert.equal(
		here.content[0]!.text.endsWith("Full output: /tmp/pi-bash-here.log]"),
		true,
		"this sandbox's: as it was",
	);
	assert.equal(
		earlier.content[0]!.text.endsWith(`Full output: /tmp/pi-bash-earlier.log (${EARLIER_SANDBOX})]`),
		true,
		earlier.content[0]!.text,
	);
	await outputs.sync([tool("/tmp/pi-bash-here.log"), tool("/tmp/pi-bash-earlier.log")]);
	assert.equal(sb.checks, 2, "each checked once per sandbox");
	assert.equal(await outputs.sync([tool("/tmp/pi-bash-here.log")]), false, "nothing to say: not changed");
});
