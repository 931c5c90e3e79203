// pi-sbx: pi's seven tools and the user's `!` commands run inside a Docker Sandboxes
// microVM, through `pi-sbx-backend serve`; pi itself (keys, sessions) stays on the host.
//
// Settings (environment): PI_SBX_BACKEND (the binary; default: see src/binary.ts),
// PI_SBX_MODE=tools (the default: pi's seven, in the sandbox), deploy (do not override
// pi's tools: only serve's docker_* tools, the sandbox as a deploy target) or both,
// PI_SBX_WORKSPACE=repo (the default: the enclosing git repository's root is mounted, the
// tools work in pi's cwd) or cwd (only pi's cwd is mounted), and
// everything serve reads (PI_SBX_BIN, DOCKER_SANDBOX*).

import { randomUUID } from "node:crypto";
import type { BashOperations, ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { FullOutputs } from "./src/fulloutput.ts";
import { checkHunks, hunksQuestion, hunkWords, pickHunks } from "./src/hunks.ts";
import { CALLS_TOOL, type FollowDeps, followTree, forkBranch, toolCallIds, undoCommand } from "./src/journal.ts";
import { textOf } from "./src/result.ts";
import {
	landPlan,
	notReview,
	parseSandboxArgs,
	planLine,
	REVIEW_TOOL,
	reviewOf,
	sandboxCompletions,
	showText,
} from "./src/review.ts";
import { NETWORK_TOOL, PTY_RESIZE_TOOL, PTY_TOOL, Sandbox, type SandboxStatus } from "./src/sandbox.ts";
import { registerOverrides, registerServeTools } from "./src/tools.ts";
import type { Workspace } from "./src/workspace.ts";

export default function piSbx(pi: ExtensionAPI): void {
	const deployOnly = (process.env.PI_SBX_MODE ?? "").toLowerCase() === "deploy";
	// One Sandbox per extension instance: pi makes a new instance for every session
	// (/new, /resume, /fork reload extensions), and session_shutdown ends the old one.
	const sandbox = new Sandbox();
	if (!deployOnly) registerOverrides(pi, sandbox, process.cwd());

	pi.on("session_start", async (_event, ctx) => {
		await sandbox.start(ctx);
		registerServeTools(pi, sandbox, sandbox.tools);
		// A kept review sandbox may hold work already: say so from the start.
		void sandbox.warmed().then(() => (sandbox.workspaceMode === "review" ? refreshReview(sandbox, ctx) : undefined));
	});
	pi.on("session_shutdown", async () => {
		await sandbox.stop();
	});

	if (!deployOnly) {
		pi.on("user_bash", () => ({ operations: ptyOperations(sandbox) }));
		// A truncated `!` command's full output, which pi saved on the host, is copied
		// into the VM at the path pi names before the model can ask for it.
		const outputs = new FullOutputs(sandbox);
		pi.on("context", async (event, ctx) => {
			if (await outputs.sync(event.messages, ctx.signal)) return { messages: event.messages };
		});
	}

	// Review mode: after each prompt the status line says how much is waiting to land.
	pi.on("agent_end", async (_event, ctx) => {
		if (sandbox.workspaceMode === "review") await refreshReview(sandbox, ctx);
	});

	// Review mode: after /tree (and at /fork, when the sandbox is kept for the next
	// session) the sandbox's workspace can follow: one confirmation, never silently.
	// Both wait for the pre-warm: right after /new, /resume, /fork or /clone this instance
	// may not know the sandbox's mode yet.
	pi.on("session_tree", async (event, ctx) => {
		if (!ctx.hasUI || !event.newLeafId) return;
		await sandbox.warmed();
		if (sandbox.workspaceMode !== "review") return;
		const sm = ctx.sessionManager;
		await followTree(
			followDeps(sandbox, ctx),
			toolCallIds(sm.getBranch(event.newLeafId)),
			toolCallIds(sm.getEntries()),
		);
		await refreshReview(sandbox, ctx);
	});
	pi.on("session_before_fork", async (event, ctx) => {
		if (!ctx.hasUI) return;
		await sandbox.warmed();
		if (sandbox.workspaceMode !== "review" || !sandbox.kept) return;
		const sm = ctx.sessionManager;
		const branch = forkBranch(sm.getBranch(event.entryId), event.position);
		await followTree(followDeps(sandbox, ctx), toolCallIds(branch), toolCallIds(sm.getEntries()));
	});

	pi.registerCommand("sandbox", {
		description:
			"Show the sandbox (name, status, modes, teardown, shell, network); /sandbox review [--stat] [PATH...] shows its work, --calls per call; /sandbox land (--all | PATH...) lands it, PATH --hunk [N,...] some hunks of one file; /sandbox undo [--last N | --to N] resets its workspace to a checkpoint; /sandbox allow|deny HOST... [--project|--global] changes its network policy",
		getArgumentCompletions: sandboxCompletions,
		handler: async (args, ctx) => {
			const cmd = parseSandboxArgs(args);
			switch (cmd.kind) {
				case "usage":
					show(ctx, cmd.message, "error");
					return;
				case "network": {
					try {
						const res = await sandbox.call(NETWORK_TOOL, {
							action: cmd.action,
							hosts: cmd.hosts,
							scope: cmd.scope,
						});
						show(ctx, textOf(res), res.isError ? "error" : "info");
					} catch (err) {
						show(ctx, `${cmd.action}: ${(err as Error).message}`, "error");
					}
					return;
				}
				case "review":
				case "land":
				case "calls":
				case "undo":
					await sandbox.warmed();
					if (sandbox.workspaceMode && sandbox.workspaceMode !== "review") {
						show(ctx, notReview(cmd.kind, sandbox.workspaceMode), "error");
						return;
					}
					if (cmd.kind === "review") await reviewCommand(sandbox, ctx, cmd);
					else if (cmd.kind === "land") await landCommand(sandbox, ctx, cmd);
					else if (cmd.kind === "calls") await callsCommand(sandbox, ctx);
					else if (!ctx.hasUI)
						// Without a UI there is nobody to ask.
						show(ctx, "undo: needs pi's interactive UI to confirm; run pi-sbx-backend undo instead", "error");
					else {
						await undoCommand(followDeps(sandbox, ctx), cmd);
						await refreshReview(sandbox, ctx);
					}
					return;
			}
			let lines: string[];
			try {
				lines = describe(await sandbox.status(), deployOnly, sandbox.workspace);
			} catch (err) {
				lines = [`sandbox: unavailable — ${(err as Error).message}`];
			}
			show(ctx, lines.join("\n"));
		},
	});
}

/** Sets the status line's `review: N files changed` from serve. */
async function refreshReview(sandbox: Sandbox, ctx: ExtensionContext): Promise<void> {
	if (!ctx.hasUI) return; // no status line to show it in: no fetch from the sandbox either
	try {
		const r = reviewOf(await sandbox.call(REVIEW_TOOL, { stat: true }));
		ctx.ui.setStatus("sbx-review", r.summary);
	} catch (err) {
		ctx.ui.setStatus("sbx-review", `review: ${(err as Error).message.slice(0, 80)}`);
	}
}

/** `/sandbox review`: the review in a scrollable view (stdout without a UI). */
async function reviewCommand(
	sandbox: Sandbox,
	ctx: ExtensionContext,
	cmd: { paths: string[]; stat: boolean },
): Promise<void> {
	let res: CallToolResult;
	try {
		res = await sandbox.call(REVIEW_TOOL, { paths: cmd.paths, stat: cmd.stat });
	} catch (err) {
		show(ctx, `review: ${(err as Error).message}`, "error");
		return;
	}
	if (res.isError) {
		show(ctx, `review: ${textOf(res)}`, "error");
		return;
	}
	const r = reviewOf(res);
	if (ctx.hasUI) ctx.ui.setStatus("sbx-review", r.summary);
	await showText(ctx, `review of ${r.sandbox}`, textOf(res));
}

/** pi's UI and the sandbox, for the journal's commands and the tree's offer. */
function followDeps(sandbox: Sandbox, ctx: ExtensionContext): FollowDeps {
	return {
		call: (name, args) => sandbox.call(name, args),
		confirm: (title, message) => ctx.ui.confirm(title, message),
		notify: (text, kind) => ctx.ui.notify(text, kind),
	};
}

/** `/sandbox review --calls`: the journal, one line per checkpoint, as the CLI prints it. */
async function callsCommand(sandbox: Sandbox, ctx: ExtensionContext): Promise<void> {
	let res: CallToolResult;
	try {
		res = await sandbox.call(CALLS_TOOL, {});
	} catch (err) {
		show(ctx, `review --calls: ${(err as Error).message}`, "error");
		return;
	}
	if (res.isError) {
		show(ctx, `review --calls: ${textOf(res)}`, "error");
		return;
	}
	const sb = (res.structuredContent as { sandbox?: string } | undefined)?.sandbox ?? "the sandbox";
	await showText(ctx, `calls of ${sb}`, textOf(res));
}

/** `/sandbox land`: shows what would be written and lands it once the user agrees. */
async function landCommand(
	sandbox: Sandbox,
	ctx: ExtensionContext,
	cmd: { paths: string[]; all: boolean; hunks?: number[] | "pick" },
): Promise<void> {
	if (cmd.hunks) {
		await landHunksCommand(sandbox, ctx, cmd.paths[0]!, cmd.hunks);
		return;
	}
	try {
		const shown = reviewOf(await sandbox.call(REVIEW_TOOL, { stat: true }));
		const plan = landPlan(shown, cmd);
		if (!plan.take.length) {
			show(ctx, "land: nothing to land there (see /sandbox review)", "error");
			return;
		}
		const held = plan.held.length
			? `\n\nNot landed, they would run on the host (name each to land it):\n${plan.held.map(planLine).join("\n")}`
			: "";
		const question = `${plan.take.map(planLine).join("\n")}${held}`;
		// Without a UI there is nobody to ask: land only from pi's TUI, or with pi-sbx-backend land.
		if (!ctx.hasUI) {
			show(ctx, "land: needs pi's interactive UI to confirm; run pi-sbx-backend land instead", "error");
			return;
		}
		if (
			!(await ctx.ui.confirm(
				`Land ${plan.take.length} change(s) into ${sandbox.workspace?.root ?? "the workspace"}?`,
				question,
			))
		) {
			show(ctx, "land: nothing written");
			return;
		}
		// What lands is what was shown: serve refuses if the work moved on meanwhile.
		const res = await sandbox.call(REVIEW_TOOL, { land: true, all: cmd.all, paths: cmd.paths, head: shown.head });
		const r = reviewOf(res);
		ctx.ui.setStatus("sbx-review", r.summary);
		show(ctx, textOf(res), res.isError ? "error" : "info");
	} catch (err) {
		show(ctx, `land: ${(err as Error).message}`, "error");
	}
}

/**
 * `/sandbox land PATH --hunk [N,...]`: the file's hunks from serve, picked one by one
 * (or the numbers given), confirmed once, then landed: refused if the work or the
 * file's base moved since they were shown.
 */
async function landHunksCommand(
	sandbox: Sandbox,
	ctx: ExtensionContext,
	path: string,
	given: number[] | "pick",
): Promise<void> {
	// Without a UI there is nobody to ask: land only from pi's TUI, or with pi-sbx-backend land.
	if (!ctx.hasUI) {
		show(ctx, "land: needs pi's interactive UI to confirm; run pi-sbx-backend land PATH --hunk N instead", "error");
		return;
	}
	try {
		const res = await sandbox.call(REVIEW_TOOL, { stat: true, paths: [path], list_hunks: true });
		if (res.isError) throw new Error(textOf(res));
		const shown = reviewOf(res);
		const list = shown.hunks;
		if (!list) throw new Error(`no hunks of ${path} (see /sandbox review ${path})`);
		let chosen: number[] | undefined;
		if (given === "pick") {
			chosen = await pickHunks(list, (title, options) => ctx.ui.select(title, options));
			if (chosen === undefined) {
				show(ctx, "land: nothing written");
				return;
			}
		} else {
			const bad = checkHunks(list, given);
			if (bad) throw new Error(bad);
			chosen = given;
		}
		if (!chosen.length) {
			show(ctx, "land: no hunk chosen; nothing written");
			return;
		}
		const where = sandbox.workspace?.root ?? "the workspace";
		if (
			!(await ctx.ui.confirm(
				`Land ${hunkWords(chosen)} of ${list.path} into ${where}?`,
				hunksQuestion(list, chosen),
			))
		) {
			show(ctx, "land: nothing written");
			return;
		}
		// What lands is what was shown: the work (head) and the file's base (hunk_base).
		const landed = await sandbox.call(REVIEW_TOOL, {
			land: true,
			paths: [list.path],
			hunks: chosen,
			head: shown.head,
			hunk_base: list.base,
		});
		if (!landed.isError) ctx.ui.setStatus("sbx-review", reviewOf(landed).summary);
		show(ctx, textOf(landed), landed.isError ? "error" : "info");
	} catch (err) {
		show(ctx, `land: ${(err as Error).message}`, "error");
	}
}

/** The /sandbox report. */
export function describe(st: SandboxStatus, deployOnly: boolean, ws?: Workspace): string[] {
	const why = !ws
		? ""
		: ws.root !== ws.cwd
			? `, the git repository's root; tools work in ${ws.cwd} (PI_SBX_WORKSPACE=cwd mounts that alone)`
			: ws.kind === "repo"
				? ", the git repository's root"
				: ", pi's cwd";
	const lines = [
		`sandbox: ${st.sandbox} (${st.status})`,
		`mode: ${deployOnly ? "deploy target (pi's tools run on the host)" : "execution backend (pi's tools and ! run in the sandbox)"}`,
		`workspace: ${st.workspace} (${st.workspace_mode}${why})`,
		`env: ${st.env_mode}`,
		`teardown: ${st.reuse ? "kept for the next session (DOCKER_SANDBOX_REUSE)" : st.teardown}`,
		`shell: ${st.shell}`,
		...(st.network ? [`network: ${st.network} (change with /sandbox allow|deny HOST)`] : []),
	];
	if (st.cloud) lines.push(st.cloud); // "cloud: stops at …"
	return lines;
}

function show(ctx: ExtensionContext, text: string, kind: "info" | "error" = "info"): void {
	if (ctx.hasUI) ctx.ui.notify(text, kind);
	else if (kind === "error") process.stderr.write(`${text}\n`);
	else process.stdout.write(`${text}\n`);
}

/**
 * `!` and `!!` commands: run on a pty in the VM by serve's hidden pi_sbx_pty_exec tool,
 * raw terminal output streamed to pi as it comes. pi strips the terminal's escapes and
 * keeps the exit code; its abort signal cancels the call, which kills the command; a resize
 * of pi's terminal is passed on (pi_sbx_pty_resize, the call named by a fresh id).
 */
export function ptyOperations(sandbox: Sandbox): BashOperations {
	return {
		async exec(command, cwd, { onData, signal }) {
			// The terminal type of pi's own terminal, so programs draw as they would there.
			const id = randomUUID();
			const args: Record<string, unknown> = {
				command,
				cwd,
				id,
				env: { TERM: process.env.TERM || "xterm-256color" },
			};
			const tty = process.stdout.isTTY && process.stdout.columns > 0;
			if (tty) {
				args.cols = process.stdout.columns;
				args.rows = process.stdout.rows;
			}
			// A resize of pi's terminal reaches the running command as SIGWINCH. A resize
			// that loses the race with the command's end changes nothing: ignored.
			const onResize = () => {
				const size = { id, cols: process.stdout.columns, rows: process.stdout.rows };
				sandbox.call(PTY_RESIZE_TOOL, size, {}).catch(() => {});
			};
			if (tty) process.stdout.on("resize", onResize);
			let res: CallToolResult;
			try {
				res = await sandbox.call(PTY_TOOL, args, {
					signal,
					onProgress: (msg) => onData(Buffer.from(msg, "utf8")),
				});
			} finally {
				process.stdout.off("resize", onResize);
			}
			if (res.isError) throw new Error(textOf(res));
			const code = (res.structuredContent as { exit_code?: number } | undefined)?.exit_code;
			return { exitCode: typeof code === "number" ? code : null };
		},
	};
}
