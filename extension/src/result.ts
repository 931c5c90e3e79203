// serve's tools/call results as pi's: the content blocks, the text, and how the call
// ended (thrown or returned, the exit code), which serve sends as data in _meta.

import type { AgentToolResult } from "@earendil-works/pi-coding-agent";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** pi's content blocks. */
export type Content = AgentToolResult<unknown>["content"];

/** serve's content blocks as pi's (text and image only, nothing else carried over). */
export function toContent(res: CallToolResult): Content {
	const out: Content = [];
	for (const c of res.content) {
		if (c.type === "text") out.push({ type: "text", text: c.text });
		else if (c.type === "image") out.push({ type: "image", data: c.data, mimeType: c.mimeType });
	}
	return out;
}

/** The text of the result's text blocks, joined. */
export function textOf(res: CallToolResult): string {
	return res.content
		.filter((c): c is { type: "text"; text: string } => c.type === "text")
		.map((c) => c.text)
		.join("");
}

/** How a call of one of pi's seven tools ended, as serve says it in the result's _meta. */
export interface Outcome {
	/** pi's tool would have thrown the result's text. */
	thrown: boolean;
	/** The exit code of a command that ran to one (bash; pi returns these, 0 or not). */
	exitCode?: number;
}

/** The keys serve sets in a result's _meta (Go: pi/result.ThrownMeta, ExitCodeMeta). */
export const THROWN_META = "pi-sbx/thrown";
export const EXIT_CODE_META = "pi-sbx/exitCode";

/** Reads a result's Outcome from its _meta. */
export function outcome(res: CallToolResult): Outcome {
	const meta = res._meta as Record<string, unknown> | undefined;
	const code = meta?.[EXIT_CODE_META];
	return { thrown: meta?.[THROWN_META] === true, exitCode: typeof code === "number" ? code : undefined };
}
