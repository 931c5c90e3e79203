// pi's bash tool through serve: the output streamed as pi's bash streams it (Stream), and
// serve's result mapped back to what pi's bash returns or throws (runBash). Whether the
// command ran to an exit code, and which, comes as data in the result's _meta (see
// outcome in result.ts), never from pi's message text.

import { type AgentToolResult, truncateTail } from "@earendil-works/pi-coding-agent";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { outcome, textOf, toContent } from "./result.ts";
import type { Sandbox } from "./sandbox.ts";

/** The output a bash call has streamed so far, kept as pi's bash keeps it. */
export class Stream {
	/** The decoded tail shown in updates (bounded). */
	private tail = "";
	private lines = 0;
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

/**
 * Runs pi's bash in the sandbox: the result pi's bash returns (a command that ran to an
 * exit code, non-zero ones with isError), or the message it throws (timeouts, aborts, a
 * missing cwd, a sandbox failure).
 */
export async function runBash(
	sandbox: Sandbox,
	params: { command: string; timeout?: number },
	signal: AbortSignal | undefined,
	onUpdate: ((r: AgentToolResult<unknown>) => void) | undefined,
	callId?: string,
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
			callId,
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
	const { thrown, exitCode } = outcome(res);
	if (thrown || exitCode === undefined) {
		if (!thrown && !res.isError)
			throw new Error(
				"pi-sbx-backend serve sent a bash result without its exit code: it is older than this package",
			);
		throw new Error(textOf(res));
	}
	const details = (res.structuredContent as Record<string, unknown> | undefined) ?? undefined;
	const full = stream.full();
	const fullPath = details?.fullOutputPath;
	const structuredContent = {
		output: full.output,
		truncated: full.truncated,
		...(full.truncated && typeof fullPath === "string" ? { full_output_path: fullPath } : {}),
		exit_code: exitCode,
		wall_time_seconds: Math.round((performance.now() - started) / 100) / 10,
	};
	const result: AgentToolResult<unknown> = { content: toContent(res), details, structuredContent };
	if (res.isError) result.isError = true;
	return result;
}
