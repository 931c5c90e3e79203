// binary.test.ts: which pi-sbx-backend the extension runs, and which it refuses
// (src/binary.ts). `node --test test/binary.test.ts` (scripts/test.sh runs it).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { findBackend, type Lookup, type Manifest } from "../src/binary.ts";

const VERSION = "1.2.3";
const PKG = "@pi-sbx/backend-linux-x64";
const sha = (s: string) => createHash("sha256").update(s).digest("hex");
/** A "binary": a script whose `version` prints the given version. */
const script = (version: string) => `#!/bin/sh\necho "pi-sbx-backend ${version}"\n`;
const RELEASED = script(VERSION);

interface Case {
	name: string;
	manifest: boolean;
	/** The platform package's binary, if it is installed. */
	pkgBin?: string;
	/** A pi-sbx-backend in a PATH directory. */
	pathBin?: string;
	/** PI_SBX_BACKEND points at a binary with this content. */
	override?: string;
	platform?: string;
	/** "pkg", "path", "override", a literal, or an Error message fragment. */
	want: string | RegExp;
}

const cases: Case[] = [
	{ name: "a source checkout runs pi-sbx-backend from PATH", manifest: false, want: "pi-sbx-backend" },
	{
		name: "a source checkout runs PI_SBX_BACKEND as it is",
		manifest: false,
		override: script("dev"),
		want: "override",
	},
	{ name: "the platform package", manifest: true, pkgBin: RELEASED, pathBin: RELEASED, want: "pkg" },
	{
		name: "a corrupted platform package is refused, never passed over for PATH",
		manifest: true,
		pkgBin: `${RELEASED}#`,
		pathBin: RELEASED,
		want: /^refusing the binary of @pi-sbx\/backend-linux-x64 \(.*\): it is not the pi-sbx-backend 1\.2\.3 this package was released with \(its SHA-256 is [0-9a-f]{64}, the package's manifest says [0-9a-f]{64}\); reinstall the package \(pi install npm:pi-sbx\)$/,
	},
	{ name: "PATH when the platform package is not installed", manifest: true, pathBin: RELEASED, want: "path" },
	{
		name: "another build on PATH is refused",
		manifest: true,
		pathBin: script("1.2.3 "),
		want: /^refusing .*pi-sbx-backend: it is not the pi-sbx-backend 1\.2\.3/,
	},
	{
		name: "PI_SBX_BACKEND of the package's version comes first",
		manifest: true,
		pkgBin: RELEASED,
		override: script(VERSION),
		want: "override",
	},
	{
		name: "PI_SBX_BACKEND of another version is refused",
		manifest: true,
		pkgBin: RELEASED,
		override: script("1.2.2"),
		want: /^refusing PI_SBX_BACKEND \(.*\): it is version 1\.2\.2, this package is 1\.2\.3/,
	},
	{
		name: "a platform without a package: PATH, by version",
		manifest: true,
		platform: "freebsd-x64",
		pathBin: script(VERSION),
		want: "path",
	},
	{
		name: "a platform without a package: another version on PATH is refused",
		manifest: true,
		platform: "freebsd-x64",
		pathBin: script("2.0.0"),
		want: /it is version 2\.0\.0, this package is 1\.2\.3/,
	},
	{
		name: "none at all",
		manifest: true,
		want: /^pi-sbx-backend not found: its package @pi-sbx\/backend-linux-x64 is not installed, and pi-sbx-backend is in none of PATH/,
	},
];

for (const c of cases) {
	test(c.name, async () => {
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-sbx-binary-"));
		try {
			const put = (rel: string, content: string) => {
				const p = path.join(dir, rel);
				fs.mkdirSync(path.dirname(p), { recursive: true });
				fs.writeFileSync(p, content, { mode: 0o755 });
				return p;
			};
			const packageDir = path.join(dir, "pi-sbx");
			fs.mkdirSync(packageDir);
			if (c.manifest) {
				const m: Manifest = {
					package: "pi-sbx",
					version: VERSION,
					commit: "c0ffee",
					binaries: { "linux-x64": { package: PKG, bin: "bin/pi-sbx-backend", sha256: sha(RELEASED) } },
				};
				put("pi-sbx/backend.json", JSON.stringify(m));
			}
			const pkgBin =
				c.pkgBin === undefined
					? undefined
					: put("node_modules/@pi-sbx/backend-linux-x64/bin/pi-sbx-backend", c.pkgBin);
			if (pkgBin) put("node_modules/@pi-sbx/backend-linux-x64/package.json", "{}");
			const pathBin = c.pathBin === undefined ? undefined : put("path/pi-sbx-backend", c.pathBin);
			const override = c.override === undefined ? undefined : put("override/pi-sbx-backend", c.override);
			const l: Lookup = {
				env: { PATH: path.join(dir, "path"), ...(override ? { PI_SBX_BACKEND: override } : {}) },
				platform: c.platform ?? "linux-x64",
				packageDir,
				resolve: (s) => {
					if (pkgBin && s === `${PKG}/package.json`) return path.join(dir, "node_modules", s);
					throw new Error(`Cannot find module '${s}'`);
				},
				home: path.join(dir, "home"),
			};
			const got = findBackend(l);
			if (c.want instanceof RegExp) {
				await assert.rejects(got, (err: Error) => {
					assert.match(err.message, c.want as RegExp);
					return true;
				});
				return;
			}
			const want = { pkg: pkgBin, path: pathBin, override }[c.want] ?? c.want;
			assert.equal(await got, want);
		} finally {
			fs.rmSync(dir, { recursive: true, force: true });
		}
	});
}
