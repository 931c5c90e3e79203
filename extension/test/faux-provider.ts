// faux-provider.ts: a test-only pi extension that gives the pi CLI a scripted model
// (pi-ai's faux provider), for the tmux test of the TUI (e2e/extension_test.go
// TestPiTUI): `pi --provider faux --model scripted -e ./extension -e ./test/faux-provider.ts`.
// Every user prompt gets one bash tool call (or PI_FAUX_CALLS's), then a text reply.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { createFauxCore, fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";

export default function (pi: ExtensionAPI): void {
	const faux = createFauxCore({ provider: "faux", api: "faux-tui", models: [{ id: "scripted", reasoning: false }] });
	let turn = 0;
	// PI_FAUX_CALLS, a JSON list of [tool, arguments], replaces the one bash call.
	const calls: [string, Parameters<typeof fauxToolCall>[1]][] = process.env.PI_FAUX_CALLS
		? JSON.parse(process.env.PI_FAUX_CALLS)
		: [["bash", { command: "echo tool-ran-in-$(hostname)" }]];
	const script = () => {
		turn++;
		faux.appendResponses([
			fauxAssistantMessage(
				calls.map(([name, args], i) => fauxToolCall(name, args, { id: `call${turn}-${i}` })),
				{ stopReason: "toolUse" },
			),
			fauxAssistantMessage(`turn ${turn} done`),
		]);
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
