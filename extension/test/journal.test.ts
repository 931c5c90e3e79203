// journal.test.ts: the journal in pi (src/journal.ts): which checkpoint a point of pi's
// session tree maps to, the offer that follows /tree (never silent), and /sandbox undo's
// confirmation. `node --test test/journal.test.ts`.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
	CALLS_TOOL,
	type CallsResult,
	callName,
	type FollowDeps,
	followTree,
	forkBranch,
	type JournalCall,
	toolCallIds,
	treeTarget,
	UNDO_TOOL,
	undoCommand,
	whereTo,
} from "../src/journal.ts";

const hex = (s: string) => Buffer.from(s).toString("hex").padStart(40, "0");

/** A journal: the start, then one checkpoint per [call id, tree] (tree defaults to a fresh one). */
function journal(calls: [string | undefined, string?][], at?: number): CallsResult {
	const start = { n: 0, tool: "(start)", commit: hex("c0"), tree: hex("t0") };
	const out: JournalCall[] = calls.map(([id, tree], i) => ({
		n: i + 1,
		time: "2026-12-05T22:00:00Z",
		client: "pi-sbx-extension",
		call_id: id,
		tool: "write",
		args: { path: `f${i + 1}.txt` },
		commit: hex(`c${i + 1}`),
		tree: tree ?? hex(`t${i + 1}`),
		parent: hex(`c${i}`),
		files: 1,
		added: 1,
		removed: 0,
	}));
	return { sandbox: "box", at: at ?? calls.length, start, calls: out };
}

test("toolCallIds: the tool results' ids, in order; nothing else", () => {
	const entries = [
		{ type: "message", message: { role: "user", content: "go" } },
		{ type: "message", message: { role: "assistant", content: [{ type: "toolCall", id: "a" }] } },
		{ type: "message", message: { role: "toolResult", toolCallId: "a" } },
		{ type: "model_change" },
		{ type: "message", message: { role: "bashExecution", command: "ls" } },
		{ type: "message", message: { role: "toolResult", toolCallId: "b" } },
	];
	assert.deepEqual(toolCallIds(entries), ["a", "b"]);
	assert.deepEqual(toolCallIds([]), []);
});

test("treeTarget", () => {
	// Calls a, b, c changed files (checkpoints 1-3); r (a read) changed nothing.
	const j = journal([["a"], ["b"], ["c"]]);
	const session = ["a", "r", "b", "c"];
	const cases: { name: string; branch: string[]; j?: CallsResult; session?: string[]; want: number | undefined }[] = [
		{ name: "the last call with a checkpoint", branch: ["a", "r", "b"], want: 2 },
		{ name: "a read after it changes nothing", branch: ["a", "b", "r"], want: 2 },
		{
			name: "a turn's calls ran side by side, its last checkpointed first: the latest checkpoint",
			branch: ["b", "a"],
			j: journal([["a"], ["b"], ["c"]]),
			want: 2,
		},
		{ name: "there already", branch: ["a", "r", "b", "c"], want: undefined },
		{ name: "before any call: the start", branch: [], want: 0 },
		{ name: "only reads on the branch: the start", branch: ["r"], want: 0 },
		{
			name: "the session changed nothing: no offer",
			branch: [],
			session: ["r"],
			want: undefined,
		},
		{
			name: "an undo made the tree the target's already",
			branch: ["a"],
			j: (() => {
				const u = journal([["a"], ["b"], [undefined, hex("t1")]]); // checkpoint 3: undo to 1
				return u;
			})(),
			session: ["a", "b"],
			want: undefined,
		},
		{
			name: "calls of another client before this session's: back to before the session's first",
			branch: [],
			j: journal([["editor-1"], ["a"], ["b"]]),
			session: ["a", "b"],
			want: 1,
		},
		{
			name: "at the start after an undo to it: no offer",
			branch: [],
			j: journal([["a"], [undefined, hex("t0")]]),
			session: ["a"],
			want: undefined,
		},
	];
	for (const c of cases) {
		assert.equal(treeTarget(c.branch, c.session ?? session, c.j ?? j)?.n, c.want, c.name);
	}
});

test("callName and whereTo", () => {
	assert.equal(
		callName({ n: 3, tool: "bash", args: { timeout: "5", command: "make\nmake test" } }),
		'call 3 (bash command="make …" timeout="5")',
	);
	assert.equal(whereTo({ n: 2, tool: "write", args: { path: "a.txt" } }), 'back to after call 2 (write path="a.txt")');
	assert.equal(whereTo({ n: 0, tool: "(start)" }), "back to the start (before the first call)");
});

/** A fake serve (pi_sbx_calls, pi_sbx_undo) and UI that record what was asked. */
function fake(j: CallsResult, answer: boolean, warnings: string[] = []) {
	const calls: { name: string; args: Record<string, unknown> }[] = [];
	const asked: { title: string; message: string }[] = [];
	const said: { text: string; kind: string }[] = [];
	const ok = (text: string, sc: Record<string, unknown>): CallToolResult => ({
		content: [{ type: "text", text }],
		structuredContent: sc,
	});
	const deps: FollowDeps = {
		async call(name, args) {
			calls.push({ name, args });
			if (name === CALLS_TOOL) return ok("lines", j as unknown as Record<string, unknown>);
			if (name !== UNDO_TOOL) throw new Error(`unexpected ${name}`);
			if (args.to === 99)
				return { content: [{ type: "text", text: "--to 99: the journal has checkpoints 0 to 3" }], isError: true };
			const to = typeof args.to === "number" ? args.to : j.at - ((args.last as number | undefined) ?? 1);
			const target = to === 0 ? j.start! : j.calls[to - 1]!;
			const done = !args.dry_run;
			const text = `${warnings.map((w) => `${w}\n`).join("")}${done ? `reset the workspace of box to checkpoint ${to}` : `would reset`}\n`;
			return ok(text, { sandbox: "box", target, warnings, done, checkpoint: done ? j.at + 1 : 0 });
		},
		async confirm(title, message) {
			asked.push({ title, message });
			return answer;
		},
		notify(text, kind) {
			said.push({ text, kind });
		},
	};
	return { deps, calls, asked, said };
}

test("followTree: one confirmation naming the call; yes undoes to it and says so", async () => {
	const warning = "warning: process 7 (sleep) holds /w in the workspace: it may change it again after the undo";
	const f = fake(journal([["a"], ["b"], ["c"]]), true, [warning]);
	assert.equal(await followTree(f.deps, ["a"], ["a", "b", "c"]), 1);
	assert.equal(f.asked.length, 1);
	assert.equal(f.asked[0]!.title, `Move the sandbox's workspace back to after call 1 (write path="f1.txt")?`);
	assert.equal(
		f.asked[0]!.message,
		`${warning}\nThe files the journal holds are reset to what they were after call 1 (write path="f1.txt"); the host workspace is not touched, and /sandbox undo --last 1 takes it back.`,
		"the holders are named in the question",
	);
	assert.deepEqual(
		f.calls.map((c) => [c.name, c.args]),
		[
			[CALLS_TOOL, {}],
			[UNDO_TOOL, { to: 1, dry_run: true }],
			[UNDO_TOOL, { to: 1 }],
		],
	);
	assert.deepEqual(f.said, [{ text: `${warning}\nreset the workspace of box to checkpoint 1`, kind: "info" }]);
});

test("followTree: no undoes nothing, and says how to do it later", async () => {
	const f = fake(journal([["a"], ["b"]]), false);
	assert.equal(await followTree(f.deps, [], ["a", "b"]), undefined);
	assert.equal(f.asked[0]!.title, "Move the sandbox's workspace back to the start (before the first call)?");
	assert.match(f.asked[0]!.message, /^The files the journal holds are reset to what they were at the start; /);
	assert.ok(!f.calls.some((c) => c.name === UNDO_TOOL && !c.args.dry_run), "never undone without a yes");
	assert.deepEqual(f.said, [
		{
			text: "sandbox: the workspace was left as it is (/sandbox undo --to 0 moves it back to the start (before the first call))",
			kind: "info",
		},
	]);
});

test("followTree: nothing to move, nothing asked; no journal is one warning", async () => {
	let f = fake(journal([["a"], ["b"]]), true);
	assert.equal(await followTree(f.deps, ["a", "b"], ["a", "b"]), undefined);
	assert.deepEqual(f.asked, []);
	assert.deepEqual(f.said, []);
	assert.equal(f.calls.length, 1);
	f = fake(journal([]), true);
	f.deps.call = async () => ({ content: [{ type: "text", text: "not in review mode" }], isError: true });
	assert.equal(await followTree(f.deps, ["a"], ["a"]), undefined);
	assert.deepEqual(f.asked, []);
	assert.deepEqual(f.said, [{ text: "sandbox: cannot follow the session tree: not in review mode", kind: "warning" }]);
});

test("undoCommand: asks with the holders, undoes the checkpoint it showed, says what it did", async () => {
	const warning = "warning: process 9 (vim) holds /w/a.txt in the workspace: it may change it again after the undo";
	let f = fake(journal([["a"], ["b"], ["c"]]), true, [warning]);
	await undoCommand(f.deps, { last: 2 });
	assert.equal(f.asked[0]!.title, `Reset the sandbox's workspace back to after call 1 (write path="f1.txt")?`);
	assert.ok(f.asked[0]!.message.startsWith(`${warning}\n`));
	assert.deepEqual(
		f.calls.map((c) => c.args),
		[{ last: 2, dry_run: true }, { to: 1 }],
		"the undo names the checkpoint shown, not --last again",
	);
	assert.deepEqual(f.said, [{ text: `${warning}\nreset the workspace of box to checkpoint 1`, kind: "warning" }]);

	f = fake(journal([["a"]]), false);
	await undoCommand(f.deps, {});
	assert.deepEqual(
		f.calls.map((c) => c.args),
		[{ dry_run: true }],
	);
	assert.deepEqual(f.said, [{ text: "undo: nothing changed", kind: "info" }]);

	f = fake(journal([["a"]]), true);
	await undoCommand(f.deps, { to: 99 });
	assert.deepEqual(f.asked, [], "a bad checkpoint is not asked about");
	assert.deepEqual(f.said, [{ text: "undo: --to 99: the journal has checkpoints 0 to 3", kind: "error" }]);
});

test("forkBranch: a fork before an entry leaves it out, at it keeps it", () => {
	const branch = [
		{ type: "message", message: { role: "toolResult", toolCallId: "a" } },
		{ type: "message", message: { role: "user", content: "next" } },
	];
	assert.deepEqual(forkBranch(branch, "at"), branch);
	assert.deepEqual(forkBranch(branch, "before"), branch.slice(0, 1));
	const last = [{ type: "message", message: { role: "toolResult", toolCallId: "b" } }];
	assert.deepEqual(toolCallIds(forkBranch([...branch, ...last], "before")), ["a"]);
	assert.deepEqual(toolCallIds(forkBranch([...branch, ...last], "at")), ["a", "b"]);
	assert.deepEqual(forkBranch([], "before"), []);
});
