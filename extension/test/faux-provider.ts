// faux-provider.ts: a test-only pi extension that gives the pi CLI a scripted model
// (pi-ai's faux provider), for the tmux test of the TUI (e2e/extension_test.go
// TestPiTUI): `pi --provider faux --model scripted -e ./extension -e ./test/faux-provider.ts`.
// Every user prompt gets one bash tool call (or PI_FAUX_CALLS's), then a text reply.

import { createFauxCore, fauxAssistantMessage, fauxToolCall, type TranscriptContext } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI): void {
	const faux = createFauxCore({ provider: "faux", api: "faux-tui", models: [{ id: "scripted", reasoning: false }] });
	let turn = 0;
	// PI_FAUX_CALLS, a JSON list of [tool, arguments], replaces the one bash call;
	// PI_FAUX_STEPS, a JSON list of such lists, makes one assistant message of each, in
	// turn. An argument "@FULL_OUTPUT@" is the last "Full output: PATH" the model was
	// shown (a truncated `!` command's or bash result's file). With PI_FAUX_STEPS the
	// closing text also says what each read returned (a line `read: TEXT` each, newlines
	// as "/") and what the last "Full output: " was followed by (`named: …`), and
	// PI_FAUX_TAG, if set, tells this run's lines from a resumed session's
	// earlier ones (`turn N done TAG`, `read TAG: …`).
	type Call = [string, Parameters<typeof fauxToolCall>[1]];
	const steps: Call[][] = process.env.PI_FAUX_STEPS
		? JSON.parse(process.env.PI_FAUX_STEPS)
		: [
				process.env.PI_FAUX_CALLS
					? JSON.parse(process.env.PI_FAUX_CALLS)
					: [["bash", { command: "echo tool-ran-in-$(hostname)" }]],
			];
	type Message = TranscriptContext["messages"][number];
	const textOf = (m: Message): string =>
		typeof m.content === "string" ? m.content : m.content.map((c) => (c.type === "text" ? c.text : "")).join("");
	const texts = (context: TranscriptContext): string[] => context.messages.map(textOf);
	// What follows the last "Full output: " the model was shown, to the end of its line.
	const named = (context: TranscriptContext): string =>
		texts(context)
			.flatMap((t) => [...t.matchAll(/Full output: ([^\n]+)/g)].map((m) => m[1]!))
			.at(-1) ?? "";
	const fullOutput = (context: TranscriptContext): string =>
		/^[^\s\]]+?(?=\.?[\s\]]|$)/.exec(named(context))?.[0] ?? "no-full-output-named";
	const script = () => {
		turn++;
		const n = turn;
		const step = (calls: Call[], k: number) => (context: TranscriptContext) => {
			const path = fullOutput(context);
			const resolved = JSON.parse(
				JSON.stringify(calls).replaceAll("@FULL_OUTPUT@", path.replaceAll("\\", "\\\\").replaceAll('"', '\\"')),
			) as Call[];
			return fauxAssistantMessage(
				resolved.map(([name, args], i) => fauxToolCall(name, args, { id: `call${n}-${k}-${i}` })),
				{ stopReason: "toolUse" },
			);
		};
		const done = (context: TranscriptContext) => {
			if (!process.env.PI_FAUX_STEPS) return fauxAssistantMessage(`turn ${n} done`);
			const tag = process.env.PI_FAUX_TAG ? ` ${process.env.PI_FAUX_TAG}` : "";
			const reads = context.messages
				.filter((m) => m.role === "toolResult" && m.toolName === "read")
				.map((m) => `read${tag}: ${textOf(m).replaceAll("\n", "/").slice(0, 40)}`);
			return fauxAssistantMessage(
				[`turn ${n} done${tag}`, ...reads, `named${tag}: ${named(context).slice(0, 80)}`].join("\n\n"),
			);
		};
		faux.appendResponses([...steps.map(step), done]);
	};
	pi.on("before_agent_start", () => {
		script();
	});
	pi.registerProvider("faux", {
		baseUrl: "http://127.0.0.1:9/unused",
		apiKey: "faux",
		api: "faux-tui",
		streamSimple: faux.streamSimple,
		models: [
			{
				id: "scripted",
				name: "scripted",
				reasoning: false,
				input: ["text"],
				cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
				contextWindow: 128000,
				maxTokens: 4096,
			},
		],
	});
}
