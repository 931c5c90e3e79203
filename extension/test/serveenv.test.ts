// serveenv.test.ts: what reaches serve of pi's environment (src/serveenv.ts).
// `node --test test/serveenv.test.ts` (scripts/test.sh runs it).
import assert from "node:assert/strict";
import { test } from "node:test";
import { serveEnv } from "../src/serveenv.ts";

test("serveEnv reads DOCKER_SANDBOX_ENV_PASSTHROUGH as serve does", () => {
	const base = { HOME: "/h", API_KEY: "k", DOCKER_HOST: "tcp://x" };
	for (const [value, passed] of [
		["1", true],
		["true", true],
		["Yes", true],
		["on", true],
		["0", false],
		["off", false],
		["", false],
	] as const) {
		const env = serveEnv({ ...base, DOCKER_SANDBOX_ENV_PASSTHROUGH: value }, {});
		assert.equal(env.API_KEY === "k", passed, `DOCKER_SANDBOX_ENV_PASSTHROUGH=${value}`);
		assert.equal(env.DOCKER_HOST, undefined, "never a host DOCKER_ variable");
	}
});
