// serveenv.ts: the environment the package starts serve with (kept apart from sandbox.ts
// so that it loads without a TypeScript build, for its test).

/** The values a yes/no setting reads as yes, as serve reads them (Go: settings.parseBool). */
const YES = ["1", "true", "yes", "on"];

/** What serve needs of pi's environment besides its own settings (as serve's env policy). */
const BASICS = ["HOME", "PATH", "USER", "LOGNAME", "TMPDIR", "SHELL", "LANG", "TERM", "XDG_STATE_HOME"];

/**
 * The environment serve is started with, by the same rules serve applies to its own
 * children: never the host's DOCKER_ and COMPOSE_ variables (serve's DOCKER_SANDBOX settings
 * excepted); pi's PI_* variables; the basics; the DOCKER_SANDBOX_ENV_ALLOWLIST names; and
 * with DOCKER_SANDBOX_ENV_PASSTHROUGH=1 everything else too. So pi's API keys do not even
 * reach serve unless the user asked for them. The session's PI_* values replace pi's own.
 */
export function serveEnv(base: NodeJS.ProcessEnv, session: Record<string, string>): Record<string, string> {
	const passthrough = YES.includes(base.DOCKER_SANDBOX_ENV_PASSTHROUGH?.toLowerCase() ?? "");
	const allow = (base.DOCKER_SANDBOX_ENV_ALLOWLIST ?? "")
		.split(",")
		.map((n) => n.trim())
		.filter(Boolean);
	const env: Record<string, string> = {};
	for (const [k, v] of Object.entries(base)) {
		if (v === undefined) continue;
		if (k.startsWith("DOCKER_SANDBOX")) env[k] = v;
		else if (k.startsWith("DOCKER_") || k.startsWith("COMPOSE_")) continue;
		else if (passthrough || k.startsWith("PI_") || BASICS.includes(k) || allow.includes(k)) env[k] = v;
	}
	for (const k of ["PI_SESSION_ID", "PI_SESSION_FILE", "PI_PROVIDER", "PI_MODEL", "PI_REASONING_LEVEL"]) delete env[k];
	return { ...env, ...session };
}
