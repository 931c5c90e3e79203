// The seven overrides: pi's own tool definitions (name, label, description, schema,
// prompt snippet and guidelines, prepareArguments, renderers) with an execute that runs
// the call in the sandbox through serve and maps serve's result back to pi's.

import {
	type AgentToolResult,
	createBashToolDefinition,
	createEditToolDefinition,
	createFindToolDefinition,
	createGrepToolDefinition,
	createLsToolDefinition,
	createReadToolDefinition,
	createWriteToolDefinition,
	type ExtensionAPI,
	type ToolDefinition,
	truncateTail,
} from "@earendil-works/pi-coding-agent";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { Type } from "typebox";
import { type Sandbox, textOf } from "./sandbox.ts";

/** pi's seven built-in tools, which the extension overrides. */
export const PI_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"] as const;

type Content = AgentToolResult<unknown>["content"];
// any: the seven definitions differ in their parameter and details types.
type AnyDefinition = ToolDefinition<any, any>;

function definitions(cwd: string): AnyDefinition[] {
	return [
		createReadToolDefinition(cwd),
		createBashToolDefinition(cwd),
		createEditToolDefinition(cwd),
		createWriteToolDefinition(cwd),
		createGrepToolDefinition(cwd),
		createFindToolDefinition(cwd),
		createLsToolDefinition(cwd),
	];
}

/** serve's content blocks as pi's (text and image only, nothing else carried over). */
export function toContent(res: CallToolResult): Content {
	const out: Content = [];
	for (const c of res.content) {
		if (c.type === "text") out.push({ type: "text", text: c.text });
		else if (c.type === "image") out.push({ type: "image", data: c.data, mimeType: c.mimeType });
	}
	return out;
}

/** pi's read structuredContent (its outputSchema, for codemode): the text, or the image and its note. */
function readOutput(content: Content): AgentToolResult<unknown>["structuredContent"] {
	let text = "";
	for (const c of content) {
		if (c.type === "text") {
			text = c.text;
			break;
		}
	}
	for (const c of content) {
		if (c.type === "image") return { type: "image", data: c.data, mimeType: c.mimeType, note: text };
	}
	return text;
}

/** A bash result that pi returns (not throws): a command that exited non-zero. */
const EXIT_STATUS = /(?:^|\n\n)Command exited with code (\d+)$/;

/**
 * Registers the overrides. Every one is registered inactive: pi's own default tool set
 * (read, bash, edit, write, or whatever --tools / defaultTools name) decides which are
 * active, exactly as for the built-ins they replace.
 */
export function registerOverrides(pi: ExtensionAPI, sandbox: Sandbox, cwd: string): void {
	for (const def of definitions(cwd)) {
		const name = def.name;
		const execute: AnyDefinition["execute"] =
			name === "bash"
				? (_id, params, signal, onUpdate) => runBash(sandbox, params as { command: string; timeout?: number }, signal, onUpdate)
				: async (_id, params, signal) => {
						if (signal?.aborted) throw new Error("Operation aborted");
						let res: CallToolResult;
						try {
							res = await sandbox.call(name, params as Record<string, unknown>, { signal });
						} catch (err) {
							if (signal?.aborted) throw new Error("Operation aborted");
							throw err;
						}
						// pi's file tools report every failure by throwing its message.
						if (res.isError) throw new Error(textOf(res));
						const content = toContent(res);
						const result: AgentToolResult<unknown> = { content, details: res.structuredContent ?? undefined };
						if (name === "read") result.structuredContent = readOutput(content);
						return result;
					};
		pi.registerTool({ ...def, defaultActive: false, execute });
	}
}

/** The output a bash call has streamed so far, kept as pi's bash keeps it. */
class Stream {
	/** The decoded tail shown in updates (bounded). */
	private tail = "";
	private lines = 0;
	private bytes = 0;
	/** Raw head and tail for structuredContent (pi's readFullOutput: 1 MiB, head + tail). */
	private head: Buffer[] = [];
	private headBytes = 0;
	private rest: Buffer[] = [];
	private restBytes = 0;
	/** The tool's own byte count so far (progress totals). */
	private reported = 0;
	/** Whether serve skipped part of a burst (its stream keeps the newest 64 KB of one). */
	private gap = false;
	private static readonly TAIL_CHARS = 400 * 1024;
	private static readonly HALF = 512 * 1024;

	append(text: string, total: number): void {
		const raw = Buffer.from(text, "utf8");
		if (total - raw.length > this.reported) {
			this.gap = true; // what came before this message is not all here: keep the tail only
			this.rest = [];
			this.restBytes = 0;
		}
		this.reported = Math.max(total, this.reported + raw.length);
		this.bytes += raw.length;
		for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) this.lines++;
		this.tail += text;
		if (this.tail.length > Stream.TAIL_CHARS * 2) this.tail = this.tail.slice(-Stream.TAIL_CHARS);
		let chunk = raw;
		if (!this.gap && this.headBytes < Stream.HALF) {
			const take = chunk.subarray(0, Stream.HALF - this.headBytes);
			this.head.push(take);
			this.headBytes += take.length;
			chunk = chunk.subarray(take.length);
		}
		if (chunk.length) {
			this.rest.push(chunk);
			this.restBytes += chunk.length;
			while (this.restBytes - this.rest[0]!.length >= Stream.HALF) this.restBytes -= this.rest.shift()!.length;
		}
	}

	/** What pi's bash passes to onUpdate: the tail-truncated output so far. */
	snapshot(): AgentToolResult<unknown> {
		const t = truncateTail(this.tail);
		if (t.truncated) {
			// The kept tail is a window: report the whole stream's totals, as pi does.
			const whole = this.lines + (this.tail.endsWith("\n") || this.tail === "" ? 0 : 1);
			t.totalLines = Math.max(t.totalLines, whole);
			t.totalBytes = Math.max(t.totalBytes, this.reported);
		}
		return {
			content: [{ type: "text", text: t.content }],
			details: { truncation: t.truncated ? t : undefined, fullOutputPath: undefined },
		};
	}

	/** The text so far, tail-truncated, for the message of an aborted call. */
	text(): string {
		return truncateTail(this.tail).content;
	}

	/** pi's bash structuredContent output: ≤ 1 MiB, head and tail around an omission marker. */
	full(): { output: string; truncated: boolean } {
		let rest = Buffer.concat(this.rest);
		if (rest.length > Stream.HALF) rest = rest.subarray(rest.length - Stream.HALF);
		const head = this.gap ? Buffer.alloc(0) : Buffer.concat(this.head);
		const omitted = this.reported - head.length - rest.length;
		if (omitted <= 0) return { output: head.toString("utf8") + rest.toString("utf8"), truncated: false };
		return {
			output: `${head.toString("utf8")}\n\n[... ${omitted} bytes omitted ...]\n\n${rest.toString("utf8")}`,
			truncated: true,
		};
	}
}

async function runBash(
	sandbox: Sandbox,
	params: { command: string; timeout?: number },
	signal: AbortSignal | undefined,
	onUpdate: ((r: AgentToolResult<unknown>) => void) | undefined,
): Promise<AgentToolResult<unknown>> {
	const stream = new Stream();
	onUpdate?.({ content: [], details: undefined });
	const started = performance.now();
	const status = (text: string, s: string) => `${text ? `${text}\n\n` : ""}${s}`;
	if (signal?.aborted) throw new Error("Command aborted");
	let res: CallToolResult;
	try {
		res = await sandbox.call("bash", params, {
			signal,
			onProgress: (msg, total) => {
				if (!msg) return;
				stream.append(msg, total);
				onUpdate?.(stream.snapshot());
			},
		});
	} catch (err) {
		// pi's bash on abort: the output so far, then the status; thrown.
		if (signal?.aborted) throw new Error(status(stream.text(), "Command aborted"));
		throw err;
	}
	const text = textOf(res);
	const exited = res.isError ? EXIT_STATUS.exec(text) : null;
	if (res.isError && !exited) throw new Error(text);
	const details = (res.structuredContent as Record<string, unknown> | undefined) ?? undefined;
	const full = stream.full();
	const fullPath = details?.fullOutputPath;
	const structuredContent = {
		output: full.output,
		truncated: full.truncated,
		...(full.truncated && typeof fullPath === "string" ? { full_output_path: fullPath } : {}),
		exit_code: exited ? Number(exited[1]) : 0,
		wall_time_seconds: Math.round((performance.now() - started) / 100) / 10,
	};
	const result: AgentToolResult<unknown> = { content: toContent(res), details, structuredContent };
	if (exited) result.isError = true;
	return result;
}

/**
 * Registers every other tool serve lists (the docker_* deploy tools) as a pi tool with
 * serve's name, description and schema.
 */
export function registerServeTools(pi: ExtensionAPI, sandbox: Sandbox, tools: Tool[]): string[] {
	const names: string[] = [];
	for (const t of tools) {
		if ((PI_TOOLS as readonly string[]).includes(t.name)) continue;
		names.push(t.name);
		pi.registerTool({
			name: t.name,
			label: t.title ?? t.name,
			description: t.description ?? "",
			// serve's JSON Schema as it is; pi validates with it and sends it to the model.
			parameters: Type.Unsafe<Record<string, unknown>>(t.inputSchema as Record<string, unknown>),
			async execute(_id, params, signal, onUpdate) {
				let streamed = "";
				const res = await sandbox.call(t.name, params, {
					signal,
					onProgress: (msg) => {
						streamed += msg;
						onUpdate?.({ content: [{ type: "text", text: truncateTail(streamed).content }], details: undefined });
					},
				});
				const result: AgentToolResult<unknown> = {
					content: toContent(res),
					details: res.structuredContent ?? undefined,
				};
				if (res.isError) result.isError = true;
				return result;
			},
		});
	}
	return names;
}
