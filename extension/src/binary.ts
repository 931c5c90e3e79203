// Which pi-sbx-backend the extension runs. A released package (one that carries the
// manifest backend.json, written by scripts/release.sh) takes, in this order:
//   1. PI_SBX_BACKEND, when set: the user's choice, checked for the package's version;
//   2. its platform package (an optional dependency, found with require.resolve), checked
//      for the manifest's SHA-256 (and so its version);
//   3. pi-sbx-backend on PATH or in the usual install directories, checked likewise.
// A binary that fails its check is refused with one message saying why and what to do:
// nothing falls back to another binary. A source checkout (no manifest) runs
// PI_SBX_BACKEND or pi-sbx-backend on PATH as it is.

import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The manifest a released package carries (npm/stage.mjs writes it). */
export interface Manifest {
	/** The pi package's name. */
	package: string;
	version: string;
	commit: string;
	/** By Node.js platform (process.platform-process.arch): the package and its binary. */
	binaries: Record<string, { package: string; bin: string; sha256: string }>;
}

/** Where to look, injected for tests. */
export interface Lookup {
	env: NodeJS.ProcessEnv;
	/** process.platform-process.arch. */
	platform: string;
	/** The package's directory (where package.json and backend.json are). */
	packageDir: string;
	/** Resolves a module specifier from the package (require.resolve). */
	resolve: (specifier: string) => string;
	home: string;
}

/** The lookup of this process, for the package this file is in. */
export function defaultLookup(): Lookup {
	const packageDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
	const require = createRequire(path.join(packageDir, "package.json"));
	return {
		env: process.env,
		platform: `${process.platform}-${process.arch}`,
		packageDir,
		resolve: (s) => require.resolve(s),
		home: os.homedir(),
	};
}

/** The manifest, or undefined in a source checkout. */
export function readManifest(packageDir: string): Manifest | undefined {
	let text: string;
	try {
		text = fs.readFileSync(path.join(packageDir, "backend.json"), "utf8");
	} catch {
		return undefined;
	}
	return JSON.parse(text) as Manifest;
}

/** Finds and checks the binary; throws one message fit for the user. */
export async function findBackend(l: Lookup = defaultLookup()): Promise<string> {
	const manifest = readManifest(l.packageDir);
	const exe = l.platform.startsWith("win32") ? "pi-sbx-backend.exe" : "pi-sbx-backend";
	if (!manifest) return l.env.PI_SBX_BACKEND || "pi-sbx-backend";
	const want = manifest.binaries[l.platform];
	const reinstall = `reinstall the package (pi install npm:${manifest.package})`;

	if (l.env.PI_SBX_BACKEND) {
		const bin = l.env.PI_SBX_BACKEND;
		await checkVersion(
			bin,
			manifest.version,
			`PI_SBX_BACKEND (${bin})`,
			"point PI_SBX_BACKEND at a build of that version, or unset it",
		);
		return bin;
	}
	if (want) {
		let pkgJson: string | undefined;
		try {
			pkgJson = l.resolve(`${want.package}/package.json`);
		} catch {
			// not installed (npm --omit=optional, or another platform's install): try PATH
		}
		if (pkgJson) {
			const bin = path.join(path.dirname(pkgJson), want.bin);
			await checkHash(bin, want.sha256, `the binary of ${want.package} (${bin})`, manifest.version, reinstall);
			return bin;
		}
	}
	const dirs = [
		...(l.env.PATH ?? "").split(path.delimiter).filter(Boolean),
		path.join(l.home, ".local", "bin"),
		"/opt/homebrew/bin",
		"/usr/local/bin",
		path.join(l.home, "go", "bin"),
	];
	for (const dir of dirs) {
		const bin = path.join(dir, exe);
		if (!isFile(bin)) continue;
		if (want)
			await checkHash(
				bin,
				want.sha256,
				bin,
				manifest.version,
				`install the release's pi-sbx-backend there, or remove it and ${reinstall}`,
			);
		else await checkVersion(bin, manifest.version, bin, "install pi-sbx-backend of that version");
		return bin;
	}
	const where = want
		? `its package ${want.package} is not installed, and `
		: `this package has no binary for ${l.platform}, and `;
	throw new Error(
		`pi-sbx-backend not found: ${where}pi-sbx-backend is in none of PATH, ~/.local/bin, /opt/homebrew/bin, /usr/local/bin, ~/go/bin; ${want ? `${reinstall} with optional dependencies, ` : ""}or set PI_SBX_BACKEND to its path`,
	);
}

function isFile(p: string): boolean {
	try {
		return fs.statSync(p).isFile();
	} catch {
		return false;
	}
}

/** Refuses a binary whose SHA-256 is not the manifest's (before ever running it). */
async function checkHash(bin: string, sha256: string, what: string, version: string, fix: string): Promise<void> {
	let got: string;
	try {
		got = await fileHash(bin);
	} catch (err) {
		throw new Error(`cannot read ${what}: ${(err as Error).message}; ${fix}`);
	}
	if (got !== sha256) {
		throw new Error(
			`refusing ${what}: it is not the pi-sbx-backend ${version} this package was released with (its SHA-256 is ${got}, the package's manifest says ${sha256}); ${fix}`,
		);
	}
}

/** Refuses a binary whose `version` is not the package's. */
async function checkVersion(bin: string, version: string, what: string, fix: string): Promise<void> {
	let out: string;
	try {
		out = await new Promise((resolve, reject) =>
			execFile(bin, ["version"], { timeout: 10_000 }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
		);
	} catch (err) {
		throw new Error(`cannot run ${what} version: ${(err as Error).message}`);
	}
	const got = /^pi-sbx-backend (\S+)/.exec(out)?.[1];
	if (got !== version)
		throw new Error(`refusing ${what}: it is version ${got ?? "unknown"}, this package is ${version}; ${fix}`);
}

function fileHash(file: string): Promise<string> {
	return new Promise((resolve, reject) => {
		const h = createHash("sha256");
		fs.createReadStream(file)
			.on("error", reject)
			.on("data", (c) => h.update(c))
			.on("end", () => resolve(h.digest("hex")));
	});
}
