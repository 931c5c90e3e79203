// Which directory the sandbox mounts. pi started inside a git repository works on the
// whole repository, as plain pi does (`git status`, `read ../README.md` from a
// subdirectory), so the sandbox mounts the repository's root at its path while the tools'
// cwd stays where pi is. PI_SBX_WORKSPACE=cwd mounts the cwd alone: less of the disk is
// writable from the sandbox, and git does not work below the root.

import { statSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";

/** The sandbox's workspace for pi's cwd, and why it is that one. */
export interface Workspace {
	/** The directory the sandbox mounts (rw), absolute. */
	root: string;
	/** The tools' working directory: pi's cwd. */
	cwd: string;
	/** "repo": the enclosing git repository's root; "cwd": pi's cwd itself. */
	kind: "repo" | "cwd";
}

/**
 * The workspace for cwd: the nearest enclosing directory holding `.git` (a directory, or
 * the file of a worktree or submodule), unless setting is "cwd" or that directory is the
 * user's home or one of its ancestors (a dotfiles repository in ~ must not put ~/.ssh in
 * the sandbox), or the file system's root.
 */
export function chooseWorkspace(cwd: string, setting: string | undefined, home: string | undefined): Workspace {
	const here = resolve(cwd);
	const mode = (setting ?? "").trim().toLowerCase();
	if (mode !== "" && mode !== "repo" && mode !== "cwd") {
		throw new Error(`PI_SBX_WORKSPACE=${setting}: use repo (the git repository's root, the default) or cwd`);
	}
	if (mode === "cwd") return { root: here, cwd: here, kind: "cwd" };
	for (let dir = here; ; dir = dirname(dir)) {
		if (exists(resolve(dir, ".git"))) {
			if (dir === here) return { root: here, cwd: here, kind: "repo" };
			if (dirname(dir) === dir || (home && isAncestorOrSame(dir, resolve(home)))) break;
			return { root: dir, cwd: here, kind: "repo" };
		}
		if (dirname(dir) === dir) break;
	}
	return { root: here, cwd: here, kind: "cwd" };
}

function exists(p: string): boolean {
	try {
		statSync(p);
		return true;
	} catch {
		return false;
	}
}

/** Whether dir is p or one of p's ancestors. */
function isAncestorOrSame(dir: string, p: string): boolean {
	const rel = relative(dir, p);
	return rel === "" || (!rel.startsWith("..") && !rel.startsWith("/"));
}
