// The "Full output" file of a truncated `!` command, where the model can read it. pi's own
// bash executor writes that file on the host (its OS temp directory) and names it in the
// message it gives the model; the model's `read` runs in the VM, where the host's temp
// directory is not. So before each request to the model (pi's `context` event), each
// file such a message names is copied into the VM at the same path, once per sandbox. A
// file that cannot be there (gone from the host after a /resume, too large to copy, a
// failed copy) is named with the reason, so the model is never sent to a path that the
// sandbox cannot open without being told. The bash tool's own full-output file is
// written by the tool, in the VM: it is there unless the result is from an earlier
// sandbox (a /resume, a new session on the same one, a sandbox made again), which is
// checked once per sandbox; one that is gone is named with that reason too. Files are
// not carried from one sandbox to the next (a warm re-use sandbox keeps its own).

import { readFile, stat } from "node:fs/promises";
import { isAbsolute, relative } from "node:path";

/** The largest file copied into the VM (serve takes requests of up to 64 MiB of JSON). */
export const MAX_COPY = 32 << 20;

/** What the copy needs of the session's sandbox. */
export interface SandboxFiles {
	/** Changes whenever the VM may be a new one (serve restarted, the sandbox made again). */
	readonly generation: number;
	/** The workspace mounted at the same path (its files need no copy); undefined before start. */
	readonly root?: string;
	/** Writes text to a path in the VM; rejects, or gives the tool's error text. */
	write(path: string, content: string, signal?: AbortSignal): Promise<string | undefined>;
	/** Whether a file exists in the VM. */
	exists(path: string, signal?: AbortSignal): Promise<boolean>;
}

/** The host's files, injected for tests. */
export interface HostFiles {
	size(path: string): Promise<number | undefined>;
	read(path: string): Promise<string>;
}

export const hostFiles: HostFiles = {
	async size(path) {
		try {
			return (await stat(path)).size;
		} catch {
			return undefined;
		}
	},
	read: (path) => readFile(path, "utf8"),
};

/** The part of pi's bashExecution message this module reads and may annotate. */
interface BashMessage {
	role: "bashExecution";
	truncated?: boolean;
	fullOutputPath?: string;
	excludeFromContext?: boolean;
}

function isBashMessage(m: unknown): m is BashMessage {
	return typeof m === "object" && m !== null && (m as { role?: unknown }).role === "bashExecution";
}

/** The part of a bash tool result this module reads and may annotate. */
interface BashToolResult {
	role: "toolResult";
	toolName: "bash";
	details?: { fullOutputPath?: unknown };
	content: { type: string; text?: string }[];
}

function isBashToolResult(m: unknown): m is BashToolResult {
	const r = m as Partial<BashToolResult> | null;
	return (
		typeof m === "object" &&
		r !== null &&
		r.role === "toolResult" &&
		r.toolName === "bash" &&
		Array.isArray(r.content)
	);
}

/** The note for a bash tool's file that is not in the current sandbox. */
export const EARLIER_SANDBOX = "written in an earlier sandbox, not in this one: run the command again for its output";

/** Copies `!` commands' full-output files into the VM (see the top of this file). */
export class FullOutputs {
	/** Paths in the VM of the current generation: copied, or the note that says why not. */
	private done = new Map<string, string | undefined>();
	private generation = -1;

	private readonly sandbox: SandboxFiles;
	private readonly host: HostFiles;

	constructor(sandbox: SandboxFiles, host: HostFiles = hostFiles) {
		this.sandbox = sandbox;
		this.host = host;
	}

	/**
	 * Makes every full-output file the messages name readable in the VM, in place in
	 * `messages` (pi's context event hands over a copy): a path that cannot be opened
	 * there gets the reason after it. Reports whether a message changed.
	 */
	async sync(messages: unknown[], signal?: AbortSignal): Promise<boolean> {
		if (this.generation !== this.sandbox.generation) {
			this.generation = this.sandbox.generation;
			this.done.clear();
		}
		let changed = false;
		for (const m of messages) {
			if (isBashToolResult(m)) {
				if ((await this.checkToolFile(m, signal)) !== undefined) changed = true;
				continue;
			}
			if (!isBashMessage(m) || !m.truncated || !m.fullOutputPath || m.excludeFromContext) continue;
			const path = m.fullOutputPath;
			if (!this.done.has(path)) this.done.set(path, await this.copy(path, signal));
			const note = this.done.get(path);
			if (note) {
				m.fullOutputPath = `${path} (${note})`;
				changed = true;
			}
		}
		return changed;
	}

	/** Annotates a bash tool result whose file is not in this VM; the note, if any. */
	private async checkToolFile(m: BashToolResult, signal?: AbortSignal): Promise<string | undefined> {
		const path = m.details?.fullOutputPath;
		if (typeof path !== "string" || !path) return undefined;
		if (!this.done.has(path)) {
			let there = false;
			try {
				there = await this.sandbox.exists(path, signal);
			} catch {
				// unknown: say nothing rather than something wrong
				there = true;
			}
			this.done.set(path, there ? undefined : EARLIER_SANDBOX);
		}
		const note = this.done.get(path);
		if (!note) return undefined;
		const named = `Full output: ${path}`;
		for (const c of m.content) {
			if (c.type === "text" && c.text?.includes(named)) c.text = c.text.replace(named, `${named} (${note})`);
		}
		return note;
	}

	/** Copies one file; the note for the model when it is not in the VM afterwards. */
	private async copy(path: string, signal?: AbortSignal): Promise<string | undefined> {
		const root = this.sandbox.root;
		if (root && isAbsolute(path)) {
			const rel = relative(root, path);
			if (rel && !rel.startsWith("..") && !isAbsolute(rel)) return undefined; // mounted there already
		}
		const size = await this.host.size(path);
		if (size === undefined) return "gone from the host, so not in this sandbox: run the command again for its output";
		if (size > MAX_COPY) return `on the host only: ${size} bytes, too large to copy into the sandbox`;
		try {
			const err = await this.sandbox.write(path, await this.host.read(path), signal);
			return err === undefined ? undefined : `not copied into the sandbox: ${err}`;
		} catch (e) {
			return `not copied into the sandbox: ${(e as Error).message}`;
		}
	}
}
