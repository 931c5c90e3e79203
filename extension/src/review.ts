// Review mode in pi: `/sandbox review` (the review, scrollable), `/sandbox land` (asks,
// then lands), and the status line's `review: N files changed`. Everything is serve's
// pi_sbx_review, computed on the host by pi-sbx-backend; this file only shows it.

import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { type Component, matchesKey, truncateToWidth } from "@earendil-works/pi-tui";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type HunkList, parseHunkList } from "./hunks.ts";
import { textOf } from "./result.ts";

/** serve's review method (unlisted). */
export const REVIEW_TOOL = "pi_sbx_review";

/** One changed file, as pi_sbx_review reports it. */
export interface ReviewFile {
	path: string;
	old_path?: string;
	status: "A" | "M" | "D" | "R" | "T";
	old_mode?: string;
	new_mode?: string;
	binary: boolean;
	added: number;
	removed: number;
	/** Why it would run on the host; non-empty: flagged. */
	risks: string[];
}

/** pi_sbx_review's structuredContent. */
export interface ReviewResult {
	sandbox: string;
	summary: string;
	/** The work shown; a land given it refuses if the work moved on since. */
	head: string;
	files: ReviewFile[];
	landed?: string[];
	held?: string[];
	refused?: { path: string; why: string }[];
	/** With list_hunks: the one named file's hunks. */
	hunks?: HunkList;
	/** After a land of hunks: how many of the file's are left. */
	hunks_left?: number;
}

/** What `/sandbox ARGS` asks for. */
export type SandboxCommand =
	| { kind: "describe" }
	| { kind: "review"; paths: string[]; stat: boolean }
	| { kind: "land"; paths: string[]; all: boolean; hunks?: number[] | "pick" }
	| { kind: "calls" }
	| { kind: "undo"; to?: number; last?: number }
	| { kind: "network"; action: "allow" | "deny"; hosts: string[]; scope: "session" | "project" | "global" }
	| { kind: "usage"; message: string };

/** The flags each verb of `/sandbox` takes, for completion. */
const VERB_FLAGS: Record<string, { flag: string; description: string }[]> = {
	review: [
		{ flag: "--stat", description: "the list of files only" },
		{ flag: "--calls", description: "the journal: one line per call that changed the workspace" },
	],
	land: [
		{ flag: "--all", description: "every change but the flagged ones" },
		{ flag: "--hunk", description: "some hunks of one file: picked one by one, or N,N" },
	],
	undo: [
		{ flag: "--last", description: "undo the last N checkpoints (default 1)" },
		{ flag: "--to", description: "back to checkpoint N of /sandbox review --calls (0: the start)" },
	],
};

/** What `/sandbox ` completes to: a verb, then its flags. */
export function sandboxCompletions(prefix: string): { value: string; label: string; description: string }[] | null {
	const verbs = [
		{
			value: "review",
			label: "review",
			description: "what the review-mode sandbox changed (--stat: the list only; --calls: per call)",
		},
		{ value: "land", label: "land", description: "write chosen changes into the workspace (--all, or PATH...)" },
		{
			value: "undo",
			label: "undo",
			description: "reset the sandbox's workspace to an earlier checkpoint (--last N, --to N)",
		},
		{
			value: "allow",
			label: "allow",
			description: "let the sandbox reach HOST (--project, --global; default this session)",
		},
		{
			value: "deny",
			label: "deny",
			description: "keep the sandbox from HOST (--project, --global; default this session)",
		},
	];
	const flagged = /^(\w+) +(?:\S+ +)*(-{0,2}[\w-]*)$/.exec(prefix);
	if (flagged) {
		const [, verb, word] = flagged as unknown as [string, string, string];
		const head = prefix.slice(0, prefix.length - word.length);
		const hits = (VERB_FLAGS[verb] ?? []).filter(
			(f) => word && f.flag.startsWith(word) && !prefix.includes(`${f.flag} `),
		);
		return hits.length
			? hits.map((f) => ({ value: `${head}${f.flag}`, label: f.flag, description: f.description }))
			: null;
	}
	const hits = verbs.filter((v) => v.value.startsWith(prefix.trim()));
	return prefix.includes(" ") || !hits.length ? null : hits;
}

export const SANDBOX_USAGE =
	"usage: /sandbox | /sandbox review [--stat] [PATH...] | /sandbox review --calls | /sandbox land (--all | PATH... | PATH --hunk [N,...]) | /sandbox undo [--last N | --to N] | /sandbox allow|deny HOST... [--project|--global]";

/** Parses `/sandbox undo`'s words: --last N or --to N (also --last=N), or nothing (--last 1). */
function parseUndo(rest: string[]): SandboxCommand {
	const out: { to?: number; last?: number } = {};
	for (let i = 0; i < rest.length; i++) {
		const word = rest[i]!;
		const m = /^--(last|to)(?:=(.*))?$/.exec(word);
		if (!m) return { kind: "usage", message: `undo: unknown argument ${word}; ${SANDBOX_USAGE}` };
		const key = m[1] as "last" | "to";
		const value = m[2] ?? rest[++i];
		if (value === undefined || !/^\d+$/.test(value))
			return { kind: "usage", message: `undo: --${key} wants a number; ${SANDBOX_USAGE}` };
		if (out[key] !== undefined) return { kind: "usage", message: `undo: --${key} given twice; ${SANDBOX_USAGE}` };
		out[key] = Number(value);
	}
	if (out.to !== undefined && out.last !== undefined)
		return { kind: "usage", message: `undo: --to and --last exclude each other; ${SANDBOX_USAGE}` };
	if (out.last === 0) return { kind: "usage", message: `undo: --last 0 undoes nothing; ${SANDBOX_USAGE}` };
	return { kind: "undo", ...out };
}

/**
 * Takes land's --hunk out of its words: `--hunk LIST`, `--hunk=LIST`, or `--hunk` alone
 * (the picker); a word after --hunk made of digits, commas and dashes is its list (name a
 * file called so ./NAME). Undefined without --hunk, an error string for a bad list.
 */
function parseHunkFlag(words: string[]): { hunks: number[] | "pick"; rest: string[] } | string | undefined {
	let hunks: number[] | "pick" | undefined;
	const rest: string[] = [];
	for (let i = 0; i < words.length; i++) {
		const w = words[i]!;
		let list: string | undefined;
		if (w === "--hunk") {
			const next = words[i + 1];
			if (next !== undefined && /^[\d,-]+$/.test(next)) {
				list = next;
				i++;
			}
		} else if (w.startsWith("--hunk=")) list = w.slice("--hunk=".length);
		else {
			rest.push(w);
			continue;
		}
		if (hunks !== undefined) return "given twice";
		if (list === undefined) {
			hunks = "pick";
			continue;
		}
		const parsed = parseHunkList(list);
		if (typeof parsed === "string") return parsed;
		hunks = parsed;
	}
	return hunks === undefined ? undefined : { hunks, rest };
}

/** Parses the arguments of `/sandbox` (paths are split on white space). */
export function parseSandboxArgs(args: string): SandboxCommand {
	const words = args.trim().split(/\s+/).filter(Boolean);
	const [verb, ...rest] = words;
	if (verb === undefined) return { kind: "describe" };
	const flags = rest.filter((w) => w.startsWith("--"));
	const paths = rest.filter((w) => !w.startsWith("--"));
	switch (verb) {
		case "review": {
			if (flags.includes("--calls")) {
				if (rest.length > 1)
					return { kind: "usage", message: `review --calls takes nothing else; ${SANDBOX_USAGE}` };
				return { kind: "calls" };
			}
			const bad = flags.filter((f) => f !== "--stat");
			if (bad.length) return { kind: "usage", message: `unknown flag ${bad[0]}; ${SANDBOX_USAGE}` };
			return { kind: "review", paths, stat: flags.includes("--stat") };
		}
		case "land": {
			const hunk = parseHunkFlag(rest);
			if (typeof hunk === "string") return { kind: "usage", message: `land: --hunk: ${hunk}; ${SANDBOX_USAGE}` };
			if (hunk) {
				const words = hunk.rest;
				if (words.length !== 1 || words[0]!.startsWith("--"))
					return { kind: "usage", message: `land --hunk: name exactly one file, without --all; ${SANDBOX_USAGE}` };
				return { kind: "land", paths: words, all: false, hunks: hunk.hunks };
			}
			const bad = flags.filter((f) => f !== "--all");
			if (bad.length) return { kind: "usage", message: `unknown flag ${bad[0]}; ${SANDBOX_USAGE}` };
			const all = flags.includes("--all");
			if (!all && !paths.length)
				return { kind: "usage", message: `name the paths to land, or --all; ${SANDBOX_USAGE}` };
			return { kind: "land", paths, all };
		}
		case "undo":
			return parseUndo(rest);
		case "allow":
		case "deny": {
			const bad = flags.filter((f) => f !== "--project" && f !== "--global" && f !== "--session");
			if (bad.length) return { kind: "usage", message: `unknown flag ${bad[0]}; ${SANDBOX_USAGE}` };
			if (!paths.length) return { kind: "usage", message: `name the hosts to ${verb}; ${SANDBOX_USAGE}` };
			const scope = flags.includes("--global") ? "global" : flags.includes("--project") ? "project" : "session";
			return { kind: "network", action: verb, hosts: paths, scope };
		}
	}
	return { kind: "usage", message: SANDBOX_USAGE };
}

/** The one line a review-mode command gets in another mode. */
export function notReview(kind: string, mode: string): string {
	const verb = kind === "calls" ? "review --calls" : kind;
	const why =
		kind === "calls" || kind === "undo"
			? "there is no journal of the calls"
			: "the sandbox writes your files directly";
	return `${verb}: the workspace is mounted ${mode}, not in review mode (DOCKER_SANDBOX_WORKSPACE_MODE=review): ${why}`;
}

/** The result's structuredContent, or a throw with its text when it is an error without one. */
export function reviewOf(res: CallToolResult): ReviewResult {
	const r = res.structuredContent as unknown as ReviewResult | undefined;
	if (!r || !Array.isArray(r.files)) throw new Error(textOf(res) || "pi_sbx_review gave no result");
	return r;
}

/** What land would write, for the confirmation: the chosen files, flagged ones marked. */
export function landPlan(
	r: ReviewResult,
	cmd: { paths: string[]; all: boolean },
): { take: ReviewFile[]; held: ReviewFile[] } {
	const named = (f: ReviewFile) =>
		cmd.paths.some((p) =>
			[f.path, f.old_path].some(
				(fp) => fp !== undefined && (fp === p || fp.startsWith(`${p.replace(/\/+$/, "")}/`)),
			),
		);
	const take: ReviewFile[] = [];
	const held: ReviewFile[] = [];
	for (const f of r.files) {
		if (named(f)) take.push(f);
		else if (cmd.all && f.risks.length) held.push(f);
		else if (cmd.all) take.push(f);
	}
	return { take, held };
}

/** One line of the confirmation list. */
export function planLine(f: ReviewFile): string {
	const name = f.old_path ? `${f.old_path} -> ${f.path}` : f.path;
	return `${f.status} ${name}${f.risks.length ? `  (runs on the host: ${f.risks.join("; ")})` : ""}`;
}

/**
 * A scrollable view of text (the review): ↑/↓ a line, PgUp/PgDn/space a page, Home/End,
 * q or Esc closes it. Control characters are shown as `^X`, tabs as spaces, and every line
 * is cut to the width.
 */
export class Pager implements Component {
	private top = 0;
	private readonly lines: string[];
	private readonly title: string;
	private readonly height: () => number;
	private readonly redraw: () => void;
	private readonly done: () => void;

	/** height gives the rows it may use, redraw asks for a render, done closes it. */
	constructor(text: string, title: string, height: () => number, redraw: () => void, done: () => void) {
		this.lines = text.replace(/\n$/, "").split("\n").map(printable);
		this.title = title;
		this.height = height;
		this.redraw = redraw;
		this.done = done;
	}

	/** Rows of text shown at once (the title takes one). */
	private page(): number {
		return Math.max(1, this.height() - 1);
	}

	render(width: number): string[] {
		const page = this.page();
		this.top = Math.max(0, Math.min(this.top, this.lines.length - page));
		const end = Math.min(this.lines.length, this.top + page);
		const head = `${this.title} — lines ${this.lines.length ? this.top + 1 : 0}-${end} of ${this.lines.length} (↑↓ PgUp PgDn Home End; q closes)`;
		return [head, ...this.lines.slice(this.top, end)].map((l) => truncateToWidth(l, width));
	}

	handleInput(data: string): void {
		const page = this.page();
		if (matchesKey(data, "escape") || data === "q") {
			this.done();
			return;
		}
		if (matchesKey(data, "up") || data === "k") this.top -= 1;
		else if (matchesKey(data, "down") || data === "j" || matchesKey(data, "enter")) this.top += 1;
		else if (matchesKey(data, "pageUp") || data === "b") this.top -= page;
		else if (matchesKey(data, "pageDown") || data === " ") this.top += page;
		else if (matchesKey(data, "home") || data === "g") this.top = 0;
		else if (matchesKey(data, "end") || data === "G") this.top = this.lines.length;
		else return;
		this.top = Math.max(0, Math.min(this.top, this.lines.length - page));
		this.redraw();
	}

	invalidate(): void {}
}

/** A line with its control characters made visible (a diff may hold any byte). */
function printable(line: string): string {
	return line
		.replace(/\t/g, "    ")
		.replace(/[\x00-\x08\x0b-\x1f\x7f]/g, (c) => `^${String.fromCharCode(c.charCodeAt(0) ^ 0x40)}`);
}

/** Shows text in a pager with keyboard focus, or on stdout without a UI. */
export async function showText(ctx: ExtensionContext, title: string, text: string): Promise<void> {
	if (!ctx.hasUI) {
		process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
		return;
	}
	await ctx.ui.custom<void>(
		(tui, _theme, _keys, done) =>
			new Pager(
				text,
				title,
				() => tui.terminal.rows - 2,
				() => tui.requestRender(),
				() => done(),
			),
	);
}
