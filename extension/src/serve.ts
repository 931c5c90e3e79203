// The connection to `pi-sbx-backend serve`: one child process per pi session, spoken to
// in MCP over its stdin/stdout by a small client of our own (McpClient), with the MCP
// SDK's types. The transport is our own too, so that we control the environment, see the
// process exit the moment it happens, and give serve time to tear its sandbox down. The
// SDK's client and message reader check every message and result against its schemas,
// which cost a fifth of a small call; serve is our own binary, and the tools check what
// they use.

import { type ChildProcess, spawn } from "node:child_process";
import type { CallToolResult, JSONRPCMessage, Tool } from "@modelcontextprotocol/sdk/types.js";

/**
 * How long serve gets to answer the MCP handshake: it answers at once (the sandbox is made
 * later, by pi_sbx_status), so a serve silent this long is hung, not busy.
 */
export const HANDSHAKE_TIMEOUT_MS = 30_000;
/** How long serve gets to tear its sandbox down after its stdin closes. */
const SHUTDOWN_GRACE_MS = 15_000;
/** How many bytes of serve's stderr are kept for error messages. */
/** The line length from which a message is announced to serve first (mcpserver.LineSizeMin). */
const LINE_SIZE_MIN = 1 << 20;

const STDERR_TAIL = 4096;

/** Where the extension finds the binary and what it runs it with. */
export interface ServeSpec {
	bin: string;
	args: string[];
	cwd: string;
	env: Record<string, string>;
	/** The bound on the handshake (HANDSHAKE_TIMEOUT_MS when unset). */
	handshakeTimeoutMs?: number;
	/** Every complete line serve writes on stderr. */
	onStderrLine?: (line: string) => void;
}

/** A child process speaking MCP on stdio. */
class ChildTransport {
	onclose?: () => void;
	onerror?: (error: Error) => void;
	onmessage?: (message: JSONRPCMessage) => void;

	readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
	private child: ChildProcess;
	/** Output read but not yet split into lines. */
	private buffer = "";
	private stderrTail = "";
	private stderrLine = "";
	private spawnError?: Error;
	private closed = false;

	constructor(private spec: ServeSpec) {
		this.child = spawn(spec.bin, spec.args, {
			cwd: spec.cwd,
			env: spec.env,
			stdio: ["pipe", "pipe", "pipe"],
			// Its own process group, so ^C in pi's terminal does not kill serve before it
			// has torn its sandbox down; pi's exit closes its stdin, which ends it.
			detached: true,
		});
		this.exited = new Promise((resolve) => {
			this.child.once("error", (err) => {
				this.spawnError = err;
				resolve({ code: null, signal: null });
			});
			this.child.once("exit", (code, signal) => resolve({ code, signal }));
		});
		// 'close' comes after the output has ended: every message has been delivered.
		this.child.once("close", () => {
			this.closed = true;
			this.onclose?.();
		});
		this.exited.then(() => {
			if (this.spawnError) {
				this.closed = true;
				this.onclose?.();
			}
		});
	}

	/** Whether serve still runs. */
	get alive(): boolean {
		return !this.closed;
	}

	/** The pid of serve, for tests and /sandbox. */
	get pid(): number | undefined {
		return this.child.pid;
	}

	/** Why the process could not start, if it could not. */
	get startError(): Error | undefined {
		return this.spawnError;
	}

	/** The last few KB serve wrote on stderr. */
	get stderr(): string {
		return this.stderrTail;
	}

	async start(): Promise<void> {
		this.child.stdout?.setEncoding("utf8"); // chunks then never split a character
		this.child.stdout?.on("data", (chunk: string) => {
			this.buffer += chunk;
			for (let nl = this.buffer.indexOf("\n"); nl >= 0; nl = this.buffer.indexOf("\n")) {
				const line = this.buffer.slice(0, nl);
				this.buffer = this.buffer.slice(nl + 1);
				if (!line.trim()) continue;
				let msg: JSONRPCMessage;
				try {
					msg = JSON.parse(line) as JSONRPCMessage;
				} catch (err) {
					this.onerror?.(err as Error);
					continue;
				}
				// Delivered at once and in order: a call's progress before its result.
				this.onmessage?.(msg);
			}
		});
		this.child.stderr?.on("data", (chunk: Buffer) => {
			const text = chunk.toString("utf8");
			this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL);
			this.stderrLine += text;
			for (let nl = this.stderrLine.indexOf("\n"); nl >= 0; nl = this.stderrLine.indexOf("\n")) {
				const line = this.stderrLine.slice(0, nl).replace(/\r$/, "");
				this.stderrLine = this.stderrLine.slice(nl + 1);
				this.spec.onStderrLine?.(line);
			}
		});
		// A write to a child that died reports EPIPE here; the exit handler reports it.
		this.child.stdin?.on("error", () => {});
		await new Promise<void>((resolve, reject) => {
			this.child.once("spawn", () => resolve());
			this.child.once("error", reject);
		});
	}

	async send(message: JSONRPCMessage): Promise<void> {
		if (this.closed || !this.child.stdin?.writable) throw new Error("pi-sbx-backend serve is not running");
		const data = `${JSON.stringify(message)}\n`;
		if (data.length >= LINE_SIZE_MIN) {
			// Announced, so that serve takes the line's memory whole (backend.LineSizeMethod).
			const bytes = Buffer.byteLength(data, "utf8");
			this.child.stdin.write(`{"jsonrpc":"2.0","method":"pi-sbx/lineSize","params":{"bytes":${bytes}}}\n`);
		}
		await new Promise<void>((resolve, reject) => {
			this.child.stdin!.write(data, (err) => (err ? reject(err) : resolve()));
		});
	}

	/**
	 * Kills serve and its process group at once: for a serve that never finished the
	 * handshake, which has made no sandbox yet (that waits for a call).
	 */
	kill(): void {
		const pid = this.child.pid;
		try {
			if (pid !== undefined) process.kill(-pid, "SIGKILL");
		} catch {
			this.child.kill("SIGKILL");
		}
	}

	/** Closes serve's stdin (an orderly shutdown: it answers, tears down, exits), then waits. */
	async close(): Promise<void> {
		if (this.closed) return;
		this.child.stdin?.end();
		const timer = setTimeout(() => this.child.kill("SIGTERM"), SHUTDOWN_GRACE_MS);
		await this.exited;
		clearTimeout(timer);
	}
}

/** Options of one tool call. */
export interface RequestOptions {
	signal?: AbortSignal;
	onprogress?: (p: { progress: number; message?: string }) => void;
	/** The caller's own id for a tools/call (pi's tool-call id), sent in _meta for serve's audit log. */
	callId?: string;
}

/** The request _meta key of a call's own id (Go: mcpserver.CallIDMeta). */
export const CALL_ID_META = "pi-sbx/callId";

/** A JSON-RPC error answer, worded as the MCP SDK words it ("MCP error CODE: …"). */
export class McpError extends Error {
	constructor(
		readonly code: number,
		message: string,
	) {
		super(`MCP error ${code}: ${message}`);
	}
}

/**
 * A small MCP client: the initialize handshake, tools/list and tools/call with progress
 * and cancellation, over a ChildTransport. Messages are dispatched in the order they
 * arrive, so a call's progress is handled before its result. There is no client-side
 * timeout: commands run as long as the model or user asked.
 */
export class McpClient {
	private nextId = 0;
	private pending = new Map<number, { resolve: (r: unknown) => void; reject: (e: Error) => void }>();
	private progress = new Map<string, (p: { progress: number; message?: string }) => void>();
	private closed?: Error;

	constructor(private transport: ChildTransport) {
		transport.onmessage = (m) => this.dispatch(m);
		transport.onclose = () => this.fail(new Error("Connection closed"));
	}

	async connect(): Promise<void> {
		await this.transport.start();
		await this.request("initialize", {
			protocolVersion: "2025-06-18",
			capabilities: {},
			clientInfo: { name: "pi-sbx-extension", version: "0.1.0" },
		});
		await this.transport.send({ jsonrpc: "2.0", method: "notifications/initialized" } as JSONRPCMessage);
	}

	async listTools(): Promise<{ tools: Tool[] }> {
		const res = (await this.request("tools/list", {})) as { tools?: Tool[] };
		return { tools: res.tools ?? [] };
	}

	async callTool(
		params: { name: string; arguments: Record<string, unknown> },
		o: RequestOptions = {},
	): Promise<CallToolResult> {
		return (await this.request("tools/call", params, o)) as CallToolResult;
	}

	private request(method: string, params: Record<string, unknown>, o: RequestOptions = {}): Promise<unknown> {
		if (this.closed) return Promise.reject(this.closed);
		if (o.signal?.aborted) return Promise.reject(o.signal.reason ?? new Error("aborted"));
		const id = ++this.nextId;
		const token = o.onprogress ? `t${id}` : undefined;
		if (token || o.callId) {
			const meta: Record<string, string> = {};
			if (token) meta.progressToken = token;
			if (o.callId) meta[CALL_ID_META] = o.callId;
			params = { ...params, _meta: meta };
		}
		return new Promise((resolve, reject) => {
			const onAbort = () => {
				if (!this.pending.delete(id)) return;
				if (token) this.progress.delete(token);
				void this.transport
					.send({
						jsonrpc: "2.0",
						method: "notifications/cancelled",
						params: { requestId: id, reason: String(o.signal?.reason ?? "aborted") },
					} as JSONRPCMessage)
					.catch(() => {});
				reject(o.signal?.reason ?? new Error("aborted"));
			};
			const done = () => {
				o.signal?.removeEventListener("abort", onAbort);
				if (token) this.progress.delete(token);
			};
			this.pending.set(id, {
				resolve: (r) => {
					done();
					resolve(r);
				},
				reject: (e) => {
					done();
					reject(e);
				},
			});
			if (token) this.progress.set(token, o.onprogress!);
			o.signal?.addEventListener("abort", onAbort, { once: true });
			this.transport.send({ jsonrpc: "2.0", id, method, params } as JSONRPCMessage).catch((err: Error) => {
				if (this.pending.delete(id)) {
					done();
					reject(err);
				}
			});
		});
	}

	private dispatch(m: JSONRPCMessage): void {
		const msg = m as {
			id?: number | string;
			method?: string;
			params?: Record<string, unknown>;
			result?: unknown;
			error?: { code: number; message: string };
		};
		if (msg.method !== undefined) {
			if (msg.method === "notifications/progress" && msg.params) {
				const p = msg.params as { progressToken?: unknown; progress: number; message?: string };
				if (typeof p.progressToken === "string")
					this.progress.get(p.progressToken)?.({ progress: p.progress, message: p.message });
			} else if (msg.id !== undefined) {
				// A request from serve: this client offers none (ping aside).
				const reply =
					msg.method === "ping"
						? { jsonrpc: "2.0", id: msg.id, result: {} }
						: { jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "Method not found" } };
				void this.transport.send(reply as JSONRPCMessage).catch(() => {});
			}
			return;
		}
		if (typeof msg.id !== "number") return;
		const p = this.pending.get(msg.id);
		if (!p) return; // the answer to a call we cancelled
		this.pending.delete(msg.id);
		if (msg.error) p.reject(new McpError(msg.error.code, msg.error.message));
		else p.resolve(msg.result ?? {});
	}

	private fail(err: Error): void {
		this.closed ??= err;
		const pending = [...this.pending.values()];
		this.pending.clear();
		for (const p of pending) p.reject(err);
	}
}

/** The result of one successful start. */
export interface Connection {
	client: McpClient;
	transport: ChildTransport;
}

/**
 * Starts serve and completes the MCP handshake, within spec.handshakeTimeoutMs. Throws a
 * message fit for the user. An abort (the session ending meanwhile) kills serve.
 */
export async function connect(spec: ServeSpec, signal?: AbortSignal): Promise<Connection> {
	const transport = new ChildTransport(spec);
	const client = new McpClient(transport);
	const bound = spec.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS;
	let timer: NodeJS.Timeout | undefined;
	let onAbort: (() => void) | undefined;
	const cut = new Promise<"timeout" | "aborted">((resolve) => {
		timer = setTimeout(() => resolve("timeout"), bound);
		onAbort = () => resolve("aborted");
		if (signal?.aborted) onAbort();
		else signal?.addEventListener("abort", onAbort, { once: true });
	});
	const handshake = client.connect().then(() => "ok" as const);
	handshake.catch(() => {}); // after a timeout or abort its failure is no news
	let how: "ok" | "timeout" | "aborted";
	try {
		how = await Promise.race([handshake, cut]);
	} catch (err) {
		const spawnErr = transport.startError as NodeJS.ErrnoException | undefined;
		if (spawnErr?.code === "ENOENT") {
			throw new Error(
				`pi-sbx-backend not found (${spec.bin}): install it and put it on PATH, or set PI_SBX_BACKEND to its path`,
			);
		}
		if (spawnErr) throw new Error(`cannot start ${spec.bin}: ${spawnErr.message}`);
		const exit = await Promise.race([transport.exited, new Promise<undefined>((r) => setTimeout(r, 2000))]);
		await transport.close();
		const why = exit ? `exited with ${exit.signal ?? `code ${exit.code}`}` : `failed: ${(err as Error).message}`;
		throw new Error(`pi-sbx-backend serve ${why} at start${stderrSuffix(transport.stderr)}`);
	} finally {
		clearTimeout(timer);
		if (onAbort) signal?.removeEventListener("abort", onAbort);
	}
	if (how === "aborted") {
		transport.kill();
		throw new Error("the session ended while pi-sbx-backend serve was starting");
	}
	if (how === "timeout") {
		transport.kill();
		throw new Error(
			`pi-sbx-backend serve did not answer the MCP handshake within ${bound / 1000} s, so it was stopped${stderrSuffix(transport.stderr)}`,
		);
	}
	return { client, transport };
}

/** ": <last stderr line(s)>" or "". */
export function stderrSuffix(stderr: string): string {
	const lines = stderr.trim().split("\n").filter(Boolean);
	if (lines.length === 0) return "";
	return `: ${lines.slice(-3).join(" / ")}`;
}

export type { ChildTransport };
