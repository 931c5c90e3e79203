// One pi session's sandbox: the serve process behind it, started on session_start,
// restarted (a bounded number of times) if it dies, and closed on session_shutdown.
// Failures are reported once in pi's UI (or on stderr without one) and then make every
// call fail with the same message: nothing ever falls back to running on the host.

import { homedir } from "node:os";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { CallToolResult, Progress, Tool } from "@modelcontextprotocol/sdk/types.js";
import { findBackend } from "./binary.ts";
import { outcome, textOf } from "./result.ts";
import { type Connection, connect, type ServeSpec, stderrSuffix } from "./serve.ts";
import { serveEnv } from "./serveenv.ts";
import { serveLogText } from "./servelog.ts";
import { chooseWorkspace, type Workspace } from "./workspace.ts";

/** Hidden serve tools (routed to the VM's agent, absent from tools/list). */
export const STATUS_TOOL = "pi_sbx_status";
export const PTY_TOOL = "pi_sbx_pty_exec";
export const PTY_RESIZE_TOOL = "pi_sbx_pty_resize";

/** How many times a session restarts a serve that died. */
const MAX_RESTARTS = 3;

/** What `pi_sbx_status` reports (serve's structuredContent). */
export interface SandboxStatus {
	sandbox: string;
	status: string;
	workspace: string;
	workspace_mode: "rw" | "ro" | "review";
	env_mode: string;
	teardown: string;
	reuse: boolean;
	shell: string;
	/** A cloud sandbox's (PI_SBX_CLOUD=1) time: when it stops, and why. */
	cloud?: string;
	/** sbx's network policy in a word ("balanced", "locked (3 allowed)"); absent before sbx 0.55. */
	network?: string;
}

/** serve's unlisted method that allows or denies hosts (`/sandbox allow HOST`). */
export const NETWORK_TOOL = "pi_sbx_network";

/** Options of one call. */
export interface CallOptions {
	signal?: AbortSignal;
	/** pi's id of the tool call, for serve's audit log. */
	callId?: string;
	/** New output, and the total bytes the tool has produced so far. */
	onProgress?: (message: string, total: number) => void;
}

/** A call that failed before a result came back (not a tool's own error). */
export class SandboxError extends Error {}

/** pi's session variables, as its bash tool computes them. */
export function sessionVars(ctx: ExtensionContext): Record<string, string> {
	const vars: Record<string, string> = { PI_SESSION_ID: ctx.sessionManager.getSessionId() };
	const file = ctx.sessionManager.getSessionFile();
	if (file) vars.PI_SESSION_FILE = file;
	if (ctx.model) {
		vars.PI_PROVIDER = ctx.model.provider;
		vars.PI_MODEL = ctx.model.id;
	}
	if (ctx.thinkingLevel) vars.PI_REASONING_LEVEL = ctx.thinkingLevel;
	return vars;
}

/** PI_SBX_HANDSHAKE_TIMEOUT (seconds) as milliseconds; unset or not a positive number: the default. */
export function handshakeTimeout(setting: string | undefined): number | undefined {
	const secs = Number(setting);
	return setting && Number.isFinite(secs) && secs > 0 ? secs * 1000 : undefined;
}

export class Sandbox {
	private spec?: ServeSpec;
	private ctx?: ExtensionContext;
	private conn?: Promise<Connection>;
	private fatal?: Error;
	private restarts = 0;
	private stopped = false;
	private lastStatus?: SandboxStatus;
	/** The pre-warm in flight: calls wait for it, so they see what it found (e.g. a serve too old). */
	private warming?: Promise<void>;
	/** Tools serve lists, once connected. */
	tools: Tool[] = [];
	/** Aborted by stop: a serve still starting is killed rather than waited for. */
	private ending = new AbortController();
	/** What the sandbox mounts for pi's cwd (see workspace.ts), once started. */
	workspace?: Workspace;
	/** Bumped whenever the VM may be a new one: serve started again, the sandbox made again. */
	generation = 0;

	/** The mounted workspace's root (the same path in the VM). */
	get root(): string | undefined {
		return this.workspace?.root;
	}

	/** Whether a file exists in the VM (serve's bash tool: `test -e`). */
	async exists(path: string, signal?: AbortSignal): Promise<boolean> {
		const res = await this.call("bash", { command: `test -e '${path.replaceAll("'", `'\\''`)}'` }, { signal });
		return outcome(res).exitCode === 0;
	}

	/** Writes text to a path in the VM with serve's write tool; the tool's error text if it failed. */
	async write(path: string, content: string, signal?: AbortSignal): Promise<string | undefined> {
		const res = await this.call("write", { path, content }, { signal });
		return res.isError ? textOf(res) : undefined;
	}

	/** Starts serve for the session (the handshake only; the sandbox is made in the background). */
	async start(ctx: ExtensionContext): Promise<void> {
		this.ctx = ctx;
		this.report("info", "sandbox: starting pi-sbx-backend serve…");
		let bin: string;
		try {
			bin = await findBackend();
		} catch (err) {
			this.fail(err as Error);
			return;
		}
		let ws: Workspace;
		try {
			ws = chooseWorkspace(ctx.cwd, process.env.PI_SBX_WORKSPACE, homedir());
		} catch (err) {
			this.fail(err as Error);
			return;
		}
		this.workspace = ws;
		this.spec = {
			bin,
			// pi shows the user its tools' details (diffs, truncation): serve sends them only when asked.
			args: ["serve", "--workspace", ws.root, "--cwd", ws.cwd, "--details", "structured"],
			cwd: ctx.cwd,
			// pi's tool list stays pi's own unless PI_SBX_MODE asks for the docker_* tools.
			env: { PI_SBX_MODE: "tools", ...serveEnv(process.env, sessionVars(ctx)) },
			handshakeTimeoutMs: handshakeTimeout(process.env.PI_SBX_HANDSHAKE_TIMEOUT),
			onStderrLine: (line) => this.onServeLog(line),
		};
		try {
			const conn = await this.connection();
			this.tools = (await conn.client.listTools()).tools;
			if (!this.tools.length) throw new Error("pi-sbx-backend serve lists no tools");
		} catch (err) {
			this.fail(err as Error);
			return;
		}
		this.warming = this.prewarm();
	}

	/** Creates the sandbox now, so that the first tool call does not wait for it. */
	private async prewarm(): Promise<void> {
		this.report("info", "sandbox: creating…");
		try {
			await this.announce();
		} catch (err) {
			if (this.stopped || this.fatal) return;
			const e = err as Error;
			if (e.message.includes(`unknown tool "${STATUS_TOOL}"`)) {
				this.fail(
					new Error(
						`${this.spec?.bin} is too old for this package (it has no ${STATUS_TOOL}): install a newer pi-sbx-backend`,
					),
				);
				return;
			}
			// The sandbox could not be made: calls still go to serve, which tries again and
			// fails with its own message.
			this.report("error", `sandbox: ${e.message}`);
		}
	}

	/** Asks serve for the sandbox (creating it if needed) and shows it in the status line. */
	private async announce(): Promise<void> {
		const st = await this.status();
		const root =
			this.workspace && this.workspace.root !== this.workspace.cwd ? `, repo root ${this.workspace.root}` : "";
		const net = st.network ? `, net: ${st.network}` : "";
		this.report("ready", `sandbox: ${st.sandbox} (${st.workspace_mode}${st.reuse ? ", kept" : ""}${root})${net}`);
	}

	/** Settles once the pre-warm has (the sandbox made or failed). */
	async warmed(): Promise<void> {
		await this.warming;
	}

	/** The workspace mode serve reported last (undefined before it answered). */
	get workspaceMode(): SandboxStatus["workspace_mode"] | undefined {
		return this.lastStatus?.workspace_mode;
	}

	/** Whether the sandbox outlives the session (DOCKER_SANDBOX_REUSE), as serve reported last. */
	get kept(): boolean {
		return this.lastStatus?.reuse === true;
	}

	/** Asks serve for the sandbox's name and settings (creating it if needed). */
	async status(signal?: AbortSignal): Promise<SandboxStatus> {
		const res = await this.call(STATUS_TOOL, {}, { signal });
		if (res.isError) throw new Error(textOf(res));
		this.lastStatus = res.structuredContent as unknown as SandboxStatus;
		return this.lastStatus;
	}

	/** Calls a serve tool. Rejects with a SandboxError when serve cannot be reached or dies. */
	async call(name: string, args: Record<string, unknown>, o: CallOptions = {}): Promise<CallToolResult> {
		if (o.signal?.aborted) throw abortError();
		if (name !== STATUS_TOOL && this.warming) await untilAborted(this.warming, o.signal);
		const conn = await this.connection();
		try {
			const res = await conn.client.callTool(
				{ name, arguments: args },
				{
					signal: o.signal,
					callId: o.callId,
					onprogress: o.onProgress ? (p: Progress) => o.onProgress!(p.message ?? "", p.progress) : undefined,
				},
			);
			return res;
		} catch (err) {
			if (o.signal?.aborted) throw abortError();
			const exit = await Promise.race([conn.transport.exited, delay(200)]);
			if (exit) {
				throw new SandboxError(
					`pi-sbx-backend serve exited unexpectedly (${exit.signal ?? `code ${exit.code}`})${stderrSuffix(conn.transport.stderr)}; the next call starts it again`,
				);
			}
			throw new SandboxError(`pi-sbx-backend serve: ${(err as Error).message}`);
		}
	}

	/** Ends serve (it tears its sandbox down per DOCKER_SANDBOX_TEARDOWN) and waits for it. */
	async stop(): Promise<void> {
		this.stopped = true;
		this.ending.abort();
		const conn = this.conn;
		this.conn = undefined;
		if (!conn) return;
		try {
			const c = await conn;
			await c.transport.close();
		} catch {
			// it never started
		}
	}

	/** The live connection, (re)starting serve if needed. */
	private async connection(): Promise<Connection> {
		if (this.fatal) throw this.fatal;
		if (this.stopped || !this.spec) throw new SandboxError("the sandbox session has ended");
		if (this.conn) {
			const c = await this.conn.catch(() => undefined);
			if (c?.transport.alive) return c;
			if (++this.restarts > MAX_RESTARTS) {
				this.fatal = new SandboxError(`pi-sbx-backend serve died ${MAX_RESTARTS + 1} times; not starting it again`);
				this.report("error", `sandbox: ${this.fatal.message}`);
				throw this.fatal;
			}
			this.report("info", "sandbox: serve exited; starting it again…");
			this.generation++;
			const conn = connect(this.spec, this.ending.signal);
			this.conn = conn;
			// The status line says how the restart ended, not that it is under way.
			conn.then(
				() => this.announce().catch(() => {}),
				(err: Error) => {
					if (!this.stopped) this.report("error", `sandbox: ${err.message}`);
				},
			);
			return conn;
		}
		this.conn = connect(this.spec, this.ending.signal);
		return this.conn;
	}

	/** A failure to start: reported once, then the message of every call. */
	private fail(err: Error): void {
		this.fatal = err instanceof SandboxError ? err : new SandboxError(err.message);
		this.report("error", `sandbox: ${this.fatal.message}`);
	}

	private onServeLog(line: string): void {
		if (!this.ctx?.hasUI) {
			process.stderr.write(`${line}\n`);
			return;
		}
		const msg = serveLogText(line);
		// The sandbox removed from outside and made again by serve: one line, once.
		const gone = /sandbox (\S+) was removed from outside; creating it again/.exec(msg);
		if (gone) {
			this.generation++;
			this.ctx.ui.notify(`sandbox: ${gone[1]} was removed from outside (sbx rm?); pi-sbx made it again`, "warning");
			return;
		}
		// sbx's progress while the sandbox is made: shown in the status line.
		if (!this.lastStatus) this.ctx.ui.setStatus("sbx", `sandbox: ${msg.slice(0, 80)}`);
	}

	private report(kind: "info" | "ready" | "error", text: string): void {
		const ctx = this.ctx;
		if (!ctx?.hasUI) {
			if (kind === "error" || process.env.PI_SBX_VERBOSE) process.stderr.write(`${text}\n`);
			return;
		}
		ctx.ui.setStatus("sbx", text);
		if (kind === "error") ctx.ui.notify(text, "error");
	}
}

function abortError(): Error {
	return new Error("aborted");
}

/** p, or a rejection as soon as signal aborts. */
function untilAborted(p: Promise<void>, signal?: AbortSignal): Promise<void> {
	if (!signal) return p;
	return new Promise((resolve, reject) => {
		const onAbort = () => reject(abortError());
		signal.addEventListener("abort", onAbort, { once: true });
		p.then(resolve, resolve).finally(() => signal.removeEventListener("abort", onAbort));
	});
}

function delay(ms: number): Promise<undefined> {
	return new Promise((r) => setTimeout(r, ms));
}
