// `/sandbox land PATH --hunk`: land some hunks of one file. The hunks, their numbers and
// the land are serve's (pi_sbx_review's list_hunks, and land with hunks); this file
// parses the user's list and walks them through the hunks one by one, as `git add -p`
// does, with pi's own selector.

/** One hunk of a file, as pi_sbx_review's list_hunks reports it. */
export interface HunkData {
	n: number;
	header: string;
	added: number;
	removed: number;
	/** The hunk's header and lines, as the diff has them. */
	text: string;
}

/** pi_sbx_review's structuredContent.hunks: one file's hunks. */
export interface HunkList {
	path: string;
	/** The file's blob the hunks apply to: the land's hunk_base. */
	base: string;
	hunks: HunkData[];
}

/**
 * Parses a list of hunk numbers as the CLI takes it ("2", "1,3", "2-4"), sorted; a
 * malformed part, 0, a backwards range or a number named twice is an error string.
 */
export function parseHunkList(s: string): number[] | string {
	const out: number[] = [];
	for (const raw of s.split(",")) {
		const part = raw.trim();
		const m = /^(\d+)(?:-(\d+))?$/.exec(part);
		if (!m) return `hunk list "${s}": "${part}" is not a hunk number or a range N-M`;
		const from = Number(m[1]);
		const to = m[2] === undefined ? from : Number(m[2]);
		if (from < 1 || to < 1) return `hunk list "${s}": hunks are numbered from 1`;
		if (to < from) return `hunk list "${s}": the range ${part} goes backwards`;
		for (let n = from; n <= to; n++) {
			if (out.includes(n)) return `hunk list "${s}": hunk ${n} is named twice`;
			out.push(n);
		}
	}
	return out.sort((a, b) => a - b);
}

/** Checks chosen against the file's hunks: an error string for a number it has not. */
export function checkHunks(list: HunkList, chosen: readonly number[]): string | undefined {
	const bad = chosen.find((n) => !list.hunks.some((h) => h.n === n));
	return bad === undefined ? undefined : `${list.path} has ${list.hunks.length} hunk(s): there is no hunk ${bad}`;
}

/** The answers the picker offers for each hunk, first key first. */
export const PICK = {
	yes: "y  land this hunk",
	no: "n  keep it back",
	all: "a  land this hunk and every one after it",
	done: "d  keep back this hunk and every one after it",
	quit: "q  land nothing",
} as const;

/** The most lines of a hunk the picker shows; the rest is counted. */
const MAX_SHOWN = 40;

/** The picker's question for one hunk: where it is, then its lines (cut to MAX_SHOWN). */
export function hunkTitle(list: HunkList, h: HunkData): string {
	const lines = h.text.replace(/\n$/, "").split("\n");
	const shown = lines.slice(0, MAX_SHOWN);
	if (lines.length > MAX_SHOWN) shown.push(`… ${lines.length - MAX_SHOWN} more line(s): /sandbox review ${list.path}`);
	return `Land hunk ${h.n} of ${list.hunks.length} of ${list.path} (+${h.added} -${h.removed})?\n\n${shown.join("\n")}`;
}

/** Asks one question: title and options as pi's ctx.ui.select takes them; undefined: cancelled. */
export type Ask = (title: string, options: string[]) => Promise<string | undefined>;

/**
 * Walks the user through list's hunks in order, asking for each (PICK): returns the
 * numbers chosen (maybe none), or undefined when the user cancelled (q, or Esc).
 */
export async function pickHunks(list: HunkList, ask: Ask): Promise<number[] | undefined> {
	const chosen: number[] = [];
	const options = [PICK.yes, PICK.no, PICK.all, PICK.done, PICK.quit];
	for (let i = 0; i < list.hunks.length; i++) {
		const h = list.hunks[i]!;
		const answer = await ask(hunkTitle(list, h), options);
		switch (answer) {
			case PICK.yes:
				chosen.push(h.n);
				break;
			case PICK.no:
				break;
			case PICK.all:
				for (const rest of list.hunks.slice(i)) chosen.push(rest.n);
				return chosen;
			case PICK.done:
				return chosen;
			default:
				return undefined; // q, Esc, or an answer the picker does not know
		}
	}
	return chosen;
}

/** The final confirmation: the chosen hunks' lines, each under its number. */
export function hunksQuestion(list: HunkList, chosen: readonly number[]): string {
	return list.hunks
		.filter((h) => chosen.includes(h.n))
		.map((h) => `hunk ${h.n}:\n${h.text.replace(/\n$/, "")}`)
		.join("\n\n");
}

/** "hunk 2" or "hunks 1, 3". */
export function hunkWords(chosen: readonly number[]): string {
	return chosen.length === 1 ? `hunk ${chosen[0]}` : `hunks ${chosen.join(", ")}`;
}
