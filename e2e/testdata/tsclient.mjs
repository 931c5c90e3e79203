// tsclient.mjs drives `pi-sbx-backend serve` with the official TypeScript MCP SDK, a
// client nobody in this project wrote. Usage: node tsclient.mjs SDK_DIR CONFIG_JSON
// CONFIG = {bin, cwd, env, calls: [{name, arguments}], stream: "shell command"}.
// It prints one JSON object: {tools, results, progress, streamed}.
import { pathToFileURL } from "node:url";
import path from "node:path";

const [sdkDir, configJSON] = process.argv.slice(2);
const config = JSON.parse(configJSON);
const load = (p) => import(pathToFileURL(path.join(sdkDir, "dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");

const transport = new StdioClientTransport({
  command: config.bin,
  args: ["serve"],
  cwd: config.cwd,
  env: config.env,
  stderr: "inherit",
});
const client = new Client({ name: "ts-e2e", version: "1.0.0" });
await client.connect(transport);

const { tools } = await client.listTools();
const results = [];
for (const c of config.calls) {
  results.push(await client.callTool({ name: c.name, arguments: c.arguments }));
}
const progress = [];
const streamed = await client.callTool(
  { name: "bash", arguments: { command: config.stream } },
  undefined,
  { onprogress: (p) => progress.push(p) },
);
await client.close();
process.stdout.write(JSON.stringify({ tools, results, progress, streamed }) + "\n");
