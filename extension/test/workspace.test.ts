// workspace.test.ts: which directory the sandbox mounts for pi's cwd (src/workspace.ts).
// `node --test test/workspace.test.ts` (scripts/test.sh runs it).
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { chooseWorkspace, type Workspace } from "../src/workspace.ts";

test("chooseWorkspace", () => {
	// t/home/user/repo/src/deep, with .git in repo; home has a dotfiles .git too;
	// t/home/user/plain/sub has none; t/home/user/wt has a worktree's .git file.
	const t = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-sbx-ws-")));
	const home = path.join(t, "home/user");
	const repo = path.join(home, "repo");
	for (const d of [
		path.join(repo, ".git"),
		path.join(repo, "src/deep"),
		path.join(home, ".git"),
		path.join(home, "plain/sub"),
		path.join(home, "wt/a"),
	]) {
		fs.mkdirSync(d, { recursive: true });
	}
	fs.writeFileSync(path.join(home, "wt/.git"), "gitdir: /elsewhere\n");
	const cases: { name: string; cwd: string; setting?: string; want: Workspace | RegExp }[] = [
		{
			name: "a subdirectory mounts the repository's root",
			cwd: path.join(repo, "src/deep"),
			want: { root: repo, cwd: path.join(repo, "src/deep"), kind: "repo" },
		},
		{ name: "the root itself", cwd: repo, want: { root: repo, cwd: repo, kind: "repo" } },
		{
			name: "repo is the default's name",
			cwd: path.join(repo, "src"),
			setting: "repo",
			want: { root: repo, cwd: path.join(repo, "src"), kind: "repo" },
		},
		{
			name: "cwd restricts it to the cwd",
			cwd: path.join(repo, "src"),
			setting: " CWD ",
			want: { root: path.join(repo, "src"), cwd: path.join(repo, "src"), kind: "cwd" },
		},
		{
			name: "a worktree's .git file counts",
			cwd: path.join(home, "wt/a"),
			want: { root: path.join(home, "wt"), cwd: path.join(home, "wt/a"), kind: "repo" },
		},
		// The nearest .git is the home's (dotfiles): never mount the home for a subdirectory.
		{
			name: "never the home directory",
			cwd: path.join(home, "plain/sub"),
			want: { root: path.join(home, "plain/sub"), cwd: path.join(home, "plain/sub"), kind: "cwd" },
		},
		{ name: "outside any repository", cwd: t, want: { root: t, cwd: t, kind: "cwd" } },
		{ name: "an unknown setting", cwd: repo, setting: "root", want: /PI_SBX_WORKSPACE=root: use repo/ },
	];
	for (const c of cases) {
		if (c.want instanceof RegExp) {
			assert.throws(() => chooseWorkspace(c.cwd, c.setting, home), c.want, c.name);
		} else {
			assert.deepEqual(chooseWorkspace(c.cwd, c.setting, home), c.want, c.name);
		}
	}
	fs.rmSync(t, { recursive: true, force: true });
});
