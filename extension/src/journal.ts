// Review mode's journal in pi: `/sandbox review --calls`, `/sandbox undo`, and the
// workspace following pi's session tree (after /tree, and at /fork, the offer to move the
// sandbox's workspace to the checkpoint of the last tool call before that point). The
// journal and the undo are serve's (pi_sbx_calls, pi_sbx_undo); this file maps pi's
// session entries onto it.

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { textOf } from "./result.ts";

/** serve's journal methods (unlisted). */
export const CALLS_TOOL = "pi_sbx_calls";
export const UNDO_TOOL = "pi_sbx_undo";

/** One checkpoint of the journal, as pi_sbx_calls reports it. */
export interface JournalCall {
	n: number;
	time: string;
	client?: string;
	/** The client's id for the call: pi's tool-call id for pi's tools. */
	call_id?: string;
	tool: string;
	args?: Record<string, string>;
	commit: string;
	tree: string;
	parent?: string;
	files: number;
	added: number;
	removed: number;
}

/** pi_sbx_calls's structuredContent. */
export interface CallsResult {
	sandbox: string;
	/** The last checkpoint's number: the workspace as last recorded. */
	at: number;
	/** Checkpoint 0: the workspace before the first call (absent in an empty journal). */
	start?: { n: number; tool: string; commit: string; tree: string };
	/** Every checkpoint but the start (0). */
	calls: JournalCall[];
}

/** pi_sbx_undo's structuredContent. */
export interface UndoResult {
	sandbox: string;
	target: { n: number; tool: string; call_id?: string; args?: Record<string, string>; tree: string };
	warnings: string[];
	checkpoint?: number;
	done: boolean;
}

/** The result's structuredContent, or a throw with its text (an error, or no journal). */
export function callsOf(res: CallToolResult): CallsResult {
	const r = res.structuredContent as unknown as CallsResult | undefined;
	if (res.isError || !r || !Array.isArray(r.calls)) throw new Error(textOf(res) || `${CALLS_TOOL} gave no result`);
	return r;
}

/** The result's structuredContent, or a throw with its text. */
export function undoOf(res: CallToolResult): UndoResult {
	const r = res.structuredContent as unknown as UndoResult | undefined;
	if (res.isError || !r || !r.target) throw new Error(textOf(res) || `${UNDO_TOOL} gave no result`);
	return r;
}

/** A checkpoint in a few words: `call 3 (write path="a.txt")`, or `the start`. */
export function callName(c: { n: number; tool: string; args?: Record<string, string> }): string {
	if (c.n === 0) return "the start (before the first call)";
	const args = Object.entries(c.args ?? {})
		.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
		.map(([k, v]) => ` ${k}=${JSON.stringify(firstLine(v).slice(0, 60))}`)
		.join("");
	return `call ${c.n} (${c.tool}${args})`;
}

function firstLine(s: string): string {
	const i = s.indexOf("\n");
	return i < 0 ? s : `${s.slice(0, i)} …`;
}

/** The part of a session entry this file reads: a message's role and tool-call id. */
export interface EntryLike {
	type: string;
	message?: unknown;
}

/** The ids of the tool calls whose results are among entries, in order. */
export function toolCallIds(entries: readonly EntryLike[]): string[] {
	const ids: string[] = [];
	for (const e of entries) {
		if (e.type !== "message") continue;
		const m = e.message as { role?: unknown; toolCallId?: unknown } | undefined;
		if (m?.role === "toolResult" && typeof m.toolCallId === "string") ids.push(m.toolCallId);
	}
	return ids;
}

/**
 * The entries a fork keeps of the branch up to its entry (pi's session_before_fork):
 * with position "before" the entry itself is left out (a fork that re-edits a prompt).
 */
export function forkBranch<T>(branch: readonly T[], position: "before" | "at"): T[] {
	return position === "before" ? branch.slice(0, -1) : [...branch];
}

/** A checkpoint to move the workspace to. */
export interface Checkpoint {
	n: number;
	tool: string;
	args?: Record<string, string>;
	commit: string;
	tree: string;
}

/**
 * The checkpoint the workspace belongs at for a point of pi's session tree: the latest
 * checkpoint of a tool call on the branch up to it (branch: the tool-call ids up to the
 * point). The latest in the journal, not the last in pi's order: pi runs a turn's calls
 * side by side, so its last call may have been checkpointed before the others. When none has, but some call of the session does (session: every
 * tool-call id of the session, on any branch), the checkpoint before the first of those:
 * the workspace before the session changed it. Undefined when the session's calls
 * changed nothing, or when the workspace is there already (its last checkpoint has the
 * target's tree).
 */
export function treeTarget(
	branch: readonly string[],
	session: readonly string[],
	journal: CallsResult,
): Checkpoint | undefined {
	const all: Checkpoint[] = journal.start ? [journal.start, ...journal.calls] : [...journal.calls];
	const byId = new Map<string, JournalCall>();
	for (const c of journal.calls) if (c.call_id) byId.set(c.call_id, c);
	let target: Checkpoint | undefined;
	for (const id of branch) {
		const c = byId.get(id);
		if (c && (!target || c.n > target.n)) target = c;
	}
	if (!target) {
		const ours = session.map((id) => byId.get(id)).filter((c): c is JournalCall => c !== undefined);
		if (!ours.length) return undefined;
		const first = ours.reduce((a, b) => (b.n < a.n ? b : a));
		target = all.find((c) => c.commit === first.parent);
		if (!target) return undefined; // its parent is not in the journal: nothing to offer
	}
	const at = all.find((c) => c.n === journal.at);
	if (at && at.tree === target.tree) return undefined;
	return target;
}

/** Where an undo to c takes the workspace, in words. */
export function whereTo(c: { n: number; tool: string; args?: Record<string, string> }): string {
	return c.n === 0 ? "back to the start (before the first call)" : `back to after ${callName(c)}`;
}

/** What following the tree needs of the sandbox and of pi's UI. */
export interface FollowDeps {
	call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
	confirm(title: string, message: string): Promise<boolean>;
	notify(text: string, kind: "info" | "warning" | "error"): void;
}

/**
 * After the user moved in pi's session tree (or forks): offers, with one confirmation,
 * to move the sandbox's workspace to the checkpoint of the last tool call on the branch
 * (see treeTarget), and says what it did. branch and session are tool-call ids (see
 * toolCallIds). Returns the checkpoint restored, if any.
 */
export async function followTree(
	d: FollowDeps,
	branch: readonly string[],
	session: readonly string[],
): Promise<number | undefined> {
	let target: Checkpoint | undefined;
	let warnings: string[];
	try {
		target = treeTarget(branch, session, callsOf(await d.call(CALLS_TOOL, {})));
		if (!target) return undefined;
		warnings = undoOf(await d.call(UNDO_TOOL, { to: target.n, dry_run: true })).warnings;
	} catch (err) {
		d.notify(`sandbox: cannot follow the session tree: ${(err as Error).message}`, "warning");
		return undefined;
	}
	const where = whereTo(target);
	const body = [
		...warnings,
		`The files the journal holds are reset to what they were ${target.n === 0 ? "at the start" : `after ${callName(target)}`}; the host workspace is not touched, and /sandbox undo --last 1 takes it back.`,
	].join("\n");
	if (!(await d.confirm(`Move the sandbox's workspace ${where}?`, body))) {
		d.notify(`sandbox: the workspace was left as it is (/sandbox undo --to ${target.n} moves it ${where})`, "info");
		return undefined;
	}
	try {
		const res = await d.call(UNDO_TOOL, { to: target.n });
		undoOf(res);
		d.notify(textOf(res).trimEnd(), "info");
		return target.n;
	} catch (err) {
		d.notify(`undo: ${(err as Error).message}`, "error");
		return undefined;
	}
}

/** The undo the user asked for (`/sandbox undo`), confirmed first: what it restores and who holds files. */
export async function undoCommand(d: FollowDeps, cmd: { to?: number; last?: number }): Promise<void> {
	let plan: UndoResult;
	try {
		plan = undoOf(await d.call(UNDO_TOOL, { ...cmd, dry_run: true }));
	} catch (err) {
		d.notify(`undo: ${(err as Error).message}`, "error");
		return;
	}
	const where = whereTo(plan.target);
	const body = [
		...plan.warnings,
		`Every file the journal holds is reset; ignored files and the sandbox's .git are left alone; the host workspace is not touched. The undo is a checkpoint of its own: /sandbox undo --last 1 takes it back.`,
	].join("\n");
	if (!(await d.confirm(`Reset the sandbox's workspace ${where}?`, body))) {
		d.notify("undo: nothing changed", "info");
		return;
	}
	try {
		// The checkpoint shown, by number: a call recorded meanwhile does not shift it.
		const res = await d.call(UNDO_TOOL, { to: plan.target.n });
		undoOf(res);
		d.notify(textOf(res).trimEnd(), plan.warnings.length ? "warning" : "info");
	} catch (err) {
		d.notify(`undo: ${(err as Error).message}`, "error");
	}
}
