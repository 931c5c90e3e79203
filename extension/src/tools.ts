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
import { runBash } from "./bash.ts";
import { type Content, outcome, textOf, toContent } from "./result.ts";
import type { Sandbox } from "./sandbox.ts";

/** pi's seven built-in tools, which the extension overrides. */
export const PI_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"] as const;

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
				? (id, params, signal, onUpdate) =>
						runBash(sandbox, params as { command: string; timeout?: number }, signal, onUpdate, id)
				: async (id, params, signal) => {
						if (signal?.aborted) throw new Error("Operation aborted");
						let res: CallToolResult;
						try {
							res = await sandbox.call(name, params as Record<string, unknown>, { signal, callId: id });
						} catch (err) {
							if (signal?.aborted) throw new Error("Operation aborted");
							throw err;
						}
						// pi's file tools report every failure by throwing its message.
						if (res.isError || outcome(res).thrown) throw new Error(textOf(res));
						const content = toContent(res);
						const result: AgentToolResult<unknown> = { content, details: res.structuredContent ?? undefined };
						if (name === "read") result.structuredContent = readOutput(content);
						return result;
					};
		pi.registerTool({ ...def, defaultActive: false, execute });
	}
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
			async execute(id, params, signal, onUpdate) {
				let streamed = "";
				const res = await sandbox.call(t.name, params, {
					signal,
					callId: id,
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
