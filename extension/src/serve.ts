// The connection to `pi-sbx-backend serve`: one child process per pi session, spoken to
// with the official MCP TypeScript SDK over its stdin/stdout. The transport is our own
// (not the SDK's StdioClientTransport) so that we control the environment, see the
// process exit the moment it happens, and give serve time to tear its sandbox down.

import { type ChildProcess, spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** How long serve gets to tear its sandbox down after its stdin closes. */
const SHUTDOWN_GRACE_MS = 15_000;
/** How many bytes of serve's stderr are kept for error messages. */
const STDERR_TAIL = 4096;

/** Where the extension finds the binary and what it runs it with. */
export interface ServeSpec {
	bin: string;
	args: string[];
	cwd: string;
	env: Record<string, string>;
	/** Every complete line serve writes on stderr. */
	onStderrLine?: (line: string) => void;
}

/** A child process speaking MCP on stdio. */
class ChildTransport implements Transport {
	onclose?: () => void;
	onerror?: (error: Error) => void;
	onmessage?: (message: JSONRPCMessage) => void;

	readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
	private child: ChildProcess;
	private buffer = new ReadBuffer();
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
		// 'close' comes after the output has ended; messages still queued are delivered first.
		this.child.once("close", async () => {
			while (this.pumping || this.inbox.length) await new Promise((r) => setImmediate(r));
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

	/** Messages read but not yet delivered, in order. */
	private inbox: JSONRPCMessage[] = [];
	private pumping = false;

	/**
	 * Delivers messages one by one, yielding a macrotask after each notification. The SDK
	 * runs notification handlers a microtask late but settles responses at once, so a
	 * call's last progress notifications, which serve writes just before its result, would
	 * otherwise reach a request that has already ended and be dropped.
	 */
	private async pump(): Promise<void> {
		if (this.pumping) return;
		this.pumping = true;
		try {
			while (this.inbox.length) {
				const msg = this.inbox.shift()!;
				this.onmessage?.(msg);
				if (!("id" in msg)) await new Promise((r) => setImmediate(r));
			}
		} finally {
			this.pumping = false;
		}
	}

	async start(): Promise<void> {
		this.child.stdout?.on("data", (chunk: Buffer) => {
			this.buffer.append(chunk);
			for (;;) {
				let msg: JSONRPCMessage | null;
				try {
					msg = this.buffer.readMessage();
				} catch (err) {
					this.onerror?.(err as Error);
					continue;
				}
				if (msg === null) break;
				this.inbox.push(msg);
			}
			void this.pump();
		});
		this.child.stderr?.on("data", (chunk: Buffer) => {
			const text = chunk.toString("utf8");
			this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL);
			this.stderrLine += text;
			let nl: number;
			while ((nl = this.stderrLine.indexOf("\n")) >= 0) {
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
		const data = serializeMessage(message);
		await new Promise<void>((resolve, reject) => {
			this.child.stdin!.write(data, (err) => (err ? reject(err) : resolve()));
		});
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

/** The result of one successful start. */
export interface Connection {
	client: Client;
	transport: ChildTransport;
}

/** Starts serve and completes the MCP handshake. Throws a message fit for the user. */
export async function connect(spec: ServeSpec): Promise<Connection> {
	const transport = new ChildTransport(spec);
	const client = new Client({ name: "pi-sbx-extension", version: "0.1.0" });
	try {
		await client.connect(transport);
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
