// hunks.test.ts: /sandbox land PATH --hunk: the list's parsing, the picker's walk through
// a file's hunks (y/n/a/d/q, Esc), and the confirmation (src/hunks.ts).
// `node --test test/hunks.test.ts`.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
	type Ask,
	checkHunks,
	type HunkList,
	hunksQuestion,
	hunkTitle,
	hunkWords,
	PICK,
	parseHunkList,
	pickHunks,
} from "../src/hunks.ts";
import { parseSandboxArgs } from "../src/review.ts";

const list: HunkList = {
	path: "src/app.ts",
	base: "0123abcd",
	hunks: [1, 2, 3, 4].map((n) => ({
		n,
		header: `@@ -${n * 10},3 +${n * 10},3 @@`,
		added: 1,
		removed: 1,
		text: `@@ -${n * 10},3 +${n * 10},3 @@\n a\n-old ${n}\n+new ${n}\n`,
	})),
};

/** An Ask that answers from answers in turn and records each title it was asked. */
function scripted(answers: (string | undefined)[]): { ask: Ask; titles: string[] } {
	const titles: string[] = [];
	const ask: Ask = async (title, options) => {
		titles.push(title);
		assert.deepEqual(options, [PICK.yes, PICK.no, PICK.all, PICK.done, PICK.quit]);
		assert.ok(titles.length <= answers.length, `asked more than ${answers.length} times`);
		return answers[titles.length - 1];
	};
	return { ask, titles };
}

test("pickHunks: y/n per hunk, a and d for the rest, q and Esc cancel", async () => {
	const cases: { name: string; answers: (string | undefined)[]; want: number[] | undefined; asked: number }[] = [
		{ name: "each in turn", answers: [PICK.yes, PICK.no, PICK.yes, PICK.no], want: [1, 3], asked: 4 },
		{ name: "none", answers: [PICK.no, PICK.no, PICK.no, PICK.no], want: [], asked: 4 },
		{ name: "a: this and the rest", answers: [PICK.no, PICK.all], want: [2, 3, 4], asked: 2 },
		{ name: "d: none of the rest", answers: [PICK.yes, PICK.done], want: [1], asked: 2 },
		{ name: "q cancels, even after a y", answers: [PICK.yes, PICK.quit], want: undefined, asked: 2 },
		{ name: "Esc cancels", answers: [PICK.yes, undefined], want: undefined, asked: 2 },
	];
	for (const c of cases) {
		const { ask, titles } = scripted(c.answers);
		assert.deepEqual(await pickHunks(list, ask), c.want, c.name);
		assert.equal(titles.length, c.asked, c.name);
		titles.forEach((t, i) => {
			assert.match(t, new RegExp(`^Land hunk ${i + 1} of 4 of src/app\\.ts \\(\\+1 -1\\)\\?\\n\\n@@ `), c.name);
			assert.ok(t.includes(`+new ${i + 1}`), c.name);
		});
	}
});

test("hunkTitle cuts a long hunk and says where to see it all", () => {
	const body = Array.from({ length: 100 }, (_, i) => `+line ${i}`).join("\n");
	const t = hunkTitle(list, {
		n: 1,
		header: "@@ -1,0 +1,100 @@",
		added: 100,
		removed: 0,
		text: `@@ -1,0 +1,100 @@\n${body}\n`,
	});
	const lines = t.split("\n");
	assert.equal(lines.length, 2 + 40 + 1);
	assert.equal(lines.at(-1), "… 61 more line(s): /sandbox review src/app.ts");
});

test("parseHunkList and checkHunks", () => {
	assert.deepEqual(parseHunkList("3,1"), [1, 3]);
	assert.deepEqual(parseHunkList("1, 3-4"), [1, 3, 4]);
	for (const [s, err] of [
		["", '"" is not a hunk number'],
		["x", '"x" is not a hunk number'],
		["0", "numbered from 1"],
		["4-2", "goes backwards"],
		["1,1", "hunk 1 is named twice"],
		["1-3,2", "hunk 2 is named twice"],
	] as const) {
		const got = parseHunkList(s);
		assert.equal(typeof got, "string", s);
		assert.ok((got as string).includes(err), `${s}: ${got}`);
	}
	assert.equal(checkHunks(list, [1, 4]), undefined);
	assert.equal(checkHunks(list, [2, 5]), "src/app.ts has 4 hunk(s): there is no hunk 5");
	assert.equal(hunkWords([2]), "hunk 2");
	assert.equal(hunkWords([1, 3]), "hunks 1, 3");
	assert.equal(
		hunksQuestion(list, [3, 1]),
		`hunk 1:\n${list.hunks[0]!.text.trimEnd()}\n\nhunk 3:\n${list.hunks[2]!.text.trimEnd()}`,
	);
});

test("parseSandboxArgs: land PATH --hunk", () => {
	const cases: { args: string; want: ReturnType<typeof parseSandboxArgs> }[] = [
		{ args: "land a.txt --hunk", want: { kind: "land", paths: ["a.txt"], all: false, hunks: "pick" } },
		{ args: "land --hunk a.txt", want: { kind: "land", paths: ["a.txt"], all: false, hunks: "pick" } },
		{ args: "land a.txt --hunk 3,1", want: { kind: "land", paths: ["a.txt"], all: false, hunks: [1, 3] } },
		{ args: "land --hunk=2-3 a.txt", want: { kind: "land", paths: ["a.txt"], all: false, hunks: [2, 3] } },
		{ args: "land --hunk 2 ./3", want: { kind: "land", paths: ["./3"], all: false, hunks: [2] } },
	];
	for (const c of cases) assert.deepEqual(parseSandboxArgs(c.args), c.want, c.args);
	for (const [args, err] of [
		["land --hunk", "name exactly one file"],
		["land a.txt b.txt --hunk", "name exactly one file"],
		["land --all a.txt --hunk", "name exactly one file"],
		["land a.txt --hunk 0", "numbered from 1"],
		["land a.txt --hunk 1,1", "named twice"],
		["land a.txt --hunk=x", '"x" is not a hunk number'],
		["land a.txt --hunk 1 --hunk 2", "given twice"],
	] as const) {
		const got = parseSandboxArgs(args);
		assert.equal(got.kind, "usage", args);
		assert.ok(got.kind === "usage" && got.message.includes(err), `${args}: ${JSON.stringify(got)}`);
	}
});
