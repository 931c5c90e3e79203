// servelog.test.ts: what the status line shows of a line serve writes on stderr
// (src/servelog.ts). `node --test test/servelog.test.ts`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { serveLogText } from "../src/servelog.ts";

test("serveLogText", () => {
	const cases: { line: string; want: string }[] = [
		{ line: "Creating sandbox 'pi-sbx-1-a'…", want: "Creating sandbox 'pi-sbx-1-a'…" },
		{
			line: 'time=2026-12-02T02:21:46.953Z level=INFO msg="agent started" sandbox=pi-sbx-1-a',
			want: "agent started",
		},
		{ line: "time=2026-12-02T02:21:46.953Z level=INFO msg=serving sandbox=pi-sbx-1-a", want: "serving" },
		// The reason, not "tool call failed"; escaped quotes and newlines undone.
		{
			line: 'time=2026-12-02T02:21:46.953Z level=WARN msg="tool call failed" tool=bash error="creating sandbox pi-sbx-1-a: sbx create: \\"no space\\"\\nsecond line"',
			want: 'creating sandbox pi-sbx-1-a: sbx create: "no space" second line',
		},
	];
	for (const c of cases) assert.equal(serveLogText(c.line), c.want, c.line);
});
