// stage.mjs VERSION COMMIT HOSTS OUT: writes the npm packages of a release into OUT, one
// directory each, ready for `npm pack` (scripts/release.sh): for every platform in
// platforms.json, its package with HOSTS/<goos>-<goarch>/pi-sbx-backend[.exe] in bin/;
// and the pi package (extension/), stamped with VERSION, with an optional dependency on
// every platform package and the manifest backend.json (version, commit, and each
// platform's package and binary SHA-256), which the extension checks its binary against.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

const [version, commit, hosts, out] = process.argv.slice(2);
if (!out) throw new Error("usage: stage.mjs VERSION COMMIT HOSTS OUT");
const here = path.dirname(new URL(import.meta.url).pathname);
const root = path.dirname(here);
const { pi, platforms } = JSON.parse(fs.readFileSync(path.join(here, "platforms.json"), "utf8"));

const write = (file, text) => {
	fs.mkdirSync(path.dirname(file), { recursive: true });
	fs.writeFileSync(file, text);
};
const json = (v) => `${JSON.stringify(v, null, "\t")}\n`;

const binaries = {};
for (const p of platforms) {
	const exe = p.goos === "windows" ? "pi-sbx-backend.exe" : "pi-sbx-backend";
	const bin = fs.readFileSync(path.join(hosts, `${p.goos}-${p.goarch}`, exe));
	const dir = path.join(out, p.npm);
	const [os, cpu] = p.npm.split("-");
	write(
		path.join(dir, "package.json"),
		json({
			name: p.package,
			version,
			description: `pi-sbx-backend ${version} for ${p.npm}, with its linux agents: the host binary of the pi package ${pi}`,
			license: "MIT",
			os: [os],
			cpu: [cpu],
			files: [`bin/${exe}`],
		}),
	);
	write(path.join(dir, "README.md"), `# ${p.package}\n\nThe \`pi-sbx-backend\` binary (${version}, commit ${commit}) for ${p.npm}, installed by the pi package \`${pi}\` as an optional dependency: install that (\`pi install npm:${pi}\`), not this.\n`);
	write(path.join(dir, "bin", exe), bin);
	fs.chmodSync(path.join(dir, "bin", exe), 0o755);
	binaries[p.npm] = { package: p.package, bin: `bin/${exe}`, sha256: createHash("sha256").update(bin).digest("hex") };
}

const ext = path.join(root, "extension");
const meta = JSON.parse(fs.readFileSync(path.join(ext, "package.json"), "utf8"));
if (meta.name !== pi) throw new Error(`extension/package.json is ${meta.name}, platforms.json says ${pi}`);
const dir = path.join(out, pi);
// The files npm would pack from extension/ itself (its package.json's "files"), so the
// list is kept in one place.
const [listing] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ext, encoding: "utf8" }));
for (const { path: f } of listing.files) {
	if (f !== "package.json") write(path.join(dir, f), fs.readFileSync(path.join(ext, f)));
}
meta.version = version;
meta.files = [...meta.files, "backend.json"];
meta.optionalDependencies = Object.fromEntries(platforms.map((p) => [p.package, version]));
delete meta.devDependencies;
delete meta.scripts;
write(path.join(dir, "package.json"), json(meta));
write(path.join(dir, "backend.json"), json({ package: pi, version, commit, binaries }));
