// faux-provider.ts: a test-only pi extension that gives the pi CLI a scripted model
// (pi-ai's faux provider), for the tmux test of the TUI (e2e/extension_test.go
// TestPiTUI): `pi --provider faux --model scripted -e ./extension -e ./test/faux-provider.ts`.
// Every user prompt gets one bash tool call, then a text reply.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { createFauxCore, fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";

export default function (pi: ExtensionAPI): void {
	const faux = createFauxCore({ provider: "faux", api: "faux-tui", models: [{ id: "scripted", reasoning: false }] });
	let turn = 0;
	const script = () => {
		turn++;
		faux.appendResponses([
			fauxAssistantMessage([fauxToolCall("bash", { command: "echo tool-ran-in-$(hostname)" }, { id: `call${turn}` })], {
				stopReason: "toolUse",
			}),
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
