// specs.mjs prints pi 1.6.0's tool definitions — name, description, parameter schema —
// so the Go tests can check that tools/ advertises exactly the same.
import { pathToFileURL } from "node:url";

const mod = await import(pathToFileURL(process.env.PI_MODULE).href + "/dist/index.js");
const factories = {
	read: mod.createReadTool, write: mod.createWriteTool, edit: mod.createEditTool,
	grep: mod.createGrepTool, find: mod.createFindTool, ls: mod.createLsTool, bash: mod.createBashTool,
};
const out = {};
for (const [name, factory] of Object.entries(factories)) {
	const t = factory(process.cwd());
	out[name] = { name: t.name, description: t.description, parameters: t.parameters };
}
process.stdout.write(JSON.stringify(out));
