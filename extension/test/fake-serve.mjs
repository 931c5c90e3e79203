#!/usr/bin/env node
// fake-serve.mjs: stands in for `pi-sbx-backend serve` in extension/test/e2e.mjs to show
// that every non-pi tool serve lists (the docker_* deploy tools) becomes a pi tool with
// serve's name, description and schema, and (PI_TEST_FAKE_SERVE_OLD=1) how a serve too old for
// the package is reported. An MCP server (the official SDK's) on stdio.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

export const demoTool = {
	name: "docker_demo",
	description: "Demo deploy tool: echoes its service name.",
	inputSchema: {
		type: "object",
		properties: { service: { type: "string", description: "service name" } },
		required: ["service"],
	},
};
const server = new Server({ name: "fake-serve", version: "0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [demoTool] }));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
	const { name, arguments: args } = req.params;
	if (name === "docker_demo") {
		return {
			content: [{ type: "text", text: `deployed ${args.service}` }],
			structuredContent: { service: args.service },
		};
	}
	if (name === "pi_sbx_status" && process.env.PI_TEST_FAKE_SERVE_OLD) {
		// What a serve from before the serve methods answers (the Go SDK's unknown-tool error).
		throw new McpError(ErrorCode.InvalidParams, `unknown tool "${name}"`);
	}
	if (name === "pi_sbx_status") {
		return {
			content: [{ type: "text", text: "fake" }],
			structuredContent: {
				sandbox: "fake",
				status: "running",
				workspace: process.cwd(),
				workspace_mode: "rw",
				env_mode: "PI_* only",
				teardown: "remove",
				reuse: false,
				shell: "",
			},
		};
	}
	return { isError: true, content: [{ type: "text", text: `unknown tool ${name}` }] };
});
await server.connect(new StdioServerTransport());
