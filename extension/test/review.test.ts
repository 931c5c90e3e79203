// review.test.ts: /sandbox review and land's parsing, the land confirmation's plan, and the
// scrollable view (src/review.ts). `node --test test/review.test.ts`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { visibleWidth } from "@earendil-works/pi-tui";
import {
	landPlan,
	notReview,
	Pager,
	parseSandboxArgs,
	planLine,
	type ReviewFile,
	type ReviewResult,
	sandboxCompletions,
} from "../src/review.ts";

test("parseSandboxArgs", () => {
	const cases: { args: string; want: ReturnType<typeof parseSandboxArgs> }[] = [
		{ args: "", want: { kind: "describe" } },
		{ args: "  ", want: { kind: "describe" } },
		{ args: "review", want: { kind: "review", paths: [], stat: false } },
		{ args: "review --stat src a.txt", want: { kind: "review", paths: ["src", "a.txt"], stat: true } },
		{ args: "land --all", want: { kind: "land", paths: [], all: true } },
		{ args: "land --all Makefile", want: { kind: "land", paths: ["Makefile"], all: true } },
		{ args: "land a.txt", want: { kind: "land", paths: ["a.txt"], all: false } },
		{ args: "allow a.test", want: { kind: "network", action: "allow", hosts: ["a.test"], scope: "session" } },
		{
			args: "allow a.test b.test:8080 --project",
			want: { kind: "network", action: "allow", hosts: ["a.test", "b.test:8080"], scope: "project" },
		},
		{ args: "deny --global x.test", want: { kind: "network", action: "deny", hosts: ["x.test"], scope: "global" } },
		{ args: "review --calls", want: { kind: "calls" } },
		{ args: "undo", want: { kind: "undo" } },
		{ args: "undo --last 2", want: { kind: "undo", last: 2 } },
		{ args: "undo --last=3", want: { kind: "undo", last: 3 } },
		{ args: "undo --to 0", want: { kind: "undo", to: 0 } },
		{ args: "undo --to=12", want: { kind: "undo", to: 12 } },
	];
	for (const c of cases) assert.deepEqual(parseSandboxArgs(c.args), c.want, c.args);
	for (const args of [
		"land",
		"land --force x",
		"review --all",
		"review --calls src",
		"review --calls --stat",
		"bogus",
		"allow",
		"deny --all x.test",
		"undo 3",
		"undo --last",
		"undo --last x",
		"undo --last -1",
		"undo --last 0",
		"undo --to 1 --last 1",
		"undo --to 1 --to 2",
		"undo --all",
	]) {
		assert.equal(parseSandboxArgs(args).kind, "usage", args);
	}
});

const file = (path: string, risks: string[] = [], old_path?: string): ReviewFile => ({
	path,
	old_path,
	status: old_path ? "R" : "M",
	binary: false,
	added: 1,
	removed: 0,
	risks,
});

test("landPlan: --all holds the flagged files unless named; directories take what is beneath", () => {
	const r: ReviewResult = {
		sandbox: "h19l-x",
		summary: "review: 4 files changed",
		head: "0123456789ab",
		files: [file("Makefile", ["make runs it"]), file("src/a.go"), file("src/b/c.go"), file("new.txt", [], "old.txt")],
	};
	const names = (fs: ReviewFile[]) => fs.map((f) => f.path);
	let p = landPlan(r, { all: true, paths: [] });
	assert.deepEqual(names(p.take), ["src/a.go", "src/b/c.go", "new.txt"]);
	assert.deepEqual(names(p.held), ["Makefile"]);
	p = landPlan(r, { all: true, paths: ["Makefile"] });
	assert.deepEqual(names(p.take), ["Makefile", "src/a.go", "src/b/c.go", "new.txt"]);
	assert.deepEqual(p.held, []);
	p = landPlan(r, { all: false, paths: ["src/", "old.txt"] });
	assert.deepEqual(names(p.take), ["src/a.go", "src/b/c.go", "new.txt"]);
	assert.equal(planLine(r.files[0]!), "M Makefile  (runs on the host: make runs it)");
	assert.equal(planLine(r.files[3]!), "R old.txt -> new.txt");
});

test("Pager scrolls, cuts lines to the width, shows control characters, and closes", () => {
	const text = `${Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join("\n")}\nbell\x07\ttab\n`;
	let rows = 11;
	let redraws = 0;
	let closed = false;
	const p = new Pager(
		text,
		"review",
		() => rows,
		() => redraws++,
		() => {
			closed = true;
		},
	);
	let out = p.render(40);
	assert.equal(out.length, 11);
	assert.match(out[0]!, /^review — lines 1-10 of 51/);
	assert.equal(out[1], "line 1");
	p.handleInput("\x1b[B"); // down
	assert.equal(p.render(40)[1], "line 2");
	p.handleInput("\x1b[6~"); // page down
	assert.equal(p.render(40)[1], "line 12");
	p.handleInput("G");
	out = p.render(40);
	assert.equal(out[out.length - 1], "bell^G    tab");
	assert.match(out[0]!, /lines 42-51 of 51/);
	p.handleInput("\x1b[5~"); // page up
	assert.equal(p.render(40)[1], "line 32");
	p.handleInput("g");
	assert.equal(p.render(40)[1], "line 1");
	assert.ok(p.render(8).every((l) => visibleWidth(l) <= 8));
	p.handleInput("x"); // not a key it knows: nothing to redraw
	assert.equal(redraws, 5);
	rows = 3;
	assert.equal(p.render(40).length, 3);
	p.handleInput("q");
	assert.ok(closed);
});

test("sandboxCompletions", () => {
	assert.deepEqual(
		sandboxCompletions("")?.map((c) => c.value),
		["review", "land", "undo", "allow", "deny"],
	);
	assert.deepEqual(
		sandboxCompletions("u")?.map((c) => c.value),
		["undo"],
	);
	// A verb's flags: the value is the whole argument text, as pi replaces it.
	assert.deepEqual(
		sandboxCompletions("undo --")?.map((c) => c.value),
		["undo --last", "undo --to"],
	);
	assert.deepEqual(
		sandboxCompletions("undo --l")?.map((c) => c.value),
		["undo --last"],
	);
	assert.deepEqual(
		sandboxCompletions("review --c")?.map((c) => c.value),
		["review --calls"],
	);
	assert.deepEqual(
		sandboxCompletions("review --stat --")?.map((c) => c.value),
		["review --stat --calls"],
	);
	assert.equal(sandboxCompletions("undo "), null, "no flag begun: nothing offered");
	assert.equal(sandboxCompletions("undo --last 2"), null);
	assert.deepEqual(
		sandboxCompletions("la")?.map((c) => c.value),
		["land"],
	);
	assert.equal(sandboxCompletions("land src"), null);
	assert.equal(sandboxCompletions("x"), null);
});

test("notReview: one line for each review-mode command in another mode", () => {
	assert.equal(
		notReview("undo", "rw"),
		"undo: the workspace is mounted rw, not in review mode (DOCKER_SANDBOX_WORKSPACE_MODE=review): there is no journal of the calls",
	);
	assert.equal(
		notReview("calls", "ro"),
		"review --calls: the workspace is mounted ro, not in review mode (DOCKER_SANDBOX_WORKSPACE_MODE=review): there is no journal of the calls",
	);
	assert.match(notReview("land", "rw"), /^land: .*the sandbox writes your files directly$/);
	for (const k of ["undo", "calls", "land", "review"]) assert.ok(!notReview(k, "rw").includes("\n"), k);
});
