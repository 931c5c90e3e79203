// pi-session.mjs: the pi runtime that `pi` itself builds (pi 1.6.0's SDK), on pi-ai's
// scripted faux model, with or without this extension: shared by the scripts that drive
// pi end to end (e2e.mjs, review-e2e.mjs).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fauxProvider } from "@earendil-works/pi-ai";
import {
	createAgentSessionFromServices,
	createAgentSessionRuntime,
	createAgentSessionServices,
	ModelRuntime,
	SessionManager,
	SettingsManager,
} from "@earendil-works/pi-coding-agent";

/**
 * Starts pi in cwd with the extension at extensionPath (none when it is empty) and the
 * given active tools (pi's default set when undefined). errors collects what the
 * extensions reported while binding or loading; bind() binds them again (after a reload).
 */
export async function startPi({ cwd, extensionPath, tools }) {
	const agentDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-agent-"));
	const faux = fauxProvider({ provider: "faux", models: [{ id: "scripted", reasoning: false }] });
	const modelRuntime = await ModelRuntime.create({
		modelsPath: null,
		refreshOnCreate: false,
		authPath: path.join(agentDir, "auth.json"),
	});
	modelRuntime.registerNativeProvider(faux.provider);
	const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false }, retry: { enabled: false } });
	const errors = [];
	const createRuntime = async ({ cwd, sessionManager, sessionStartEvent }) => {
		const services = await createAgentSessionServices({
			cwd,
			agentDir,
			settingsManager,
			modelRuntime,
			resourceLoaderOptions: {
				noExtensions: true,
				noSkills: true,
				noPromptTemplates: true,
				noThemes: true,
				noContextFiles: true,
				additionalExtensionPaths: extensionPath ? [extensionPath] : [],
			},
		});
		const created = await createAgentSessionFromServices({
			services,
			sessionManager,
			sessionStartEvent,
			model: faux.getModel(),
			thinkingLevel: "off",
			tools,
		});
		return { ...created, services, diagnostics: services.diagnostics };
	};
	const runtime = await createAgentSessionRuntime(createRuntime, {
		cwd,
		agentDir,
		sessionManager: SessionManager.inMemory(cwd),
	});
	const bind = async () => {
		await runtime.session.bindExtensions({ onError: (e) => errors.push(`${e.event}: ${e.error}`) });
		const loaded = runtime.session.resourceLoader?.getExtensions?.();
		if (loaded?.errors?.length) errors.push(...loaded.errors.map((e) => JSON.stringify(e)));
	};
	await bind();
	return {
		runtime,
		faux,
		errors,
		bind,
		get session() {
			return runtime.session;
		},
	};
}
