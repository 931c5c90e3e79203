// pairs.mjs makes pairs of random names and says how localeCompare orders each, under
// the Node that runs it (pi's): stdin {"seed": n, "count": n}, stdout [[a, b, sign], ...].
// Names are drawn from every code point assigned in this Node's Unicode: uniformly; from
// one neighbourhood (a script's block: letters, marks, digits of one script together);
// from the characters where collation is most involved (see special); the ones the
// tables spell approximately (testdata/approximate.json, written by gen.go);
// as a name and a near copy (a character changed for a neighbour, a mark added or moved,
// case changed), where the second and third levels decide; and mixed with ASCII.
import { readFileSync } from "node:fs";

const { seed, count } = JSON.parse(readFileSync(0, "utf8"));
let x = BigInt(seed) | 1n;
const rand = () => {
	// xorshift64*, so that a seed names the same pairs on every run
	x ^= x >> 12n;
	x ^= (x << 25n) & 0xffffffffffffffffn;
	x ^= x >> 27n;
	return Number(((x * 0x2545f4914f6cdd1dn) & 0xffffffffffffffffn) >> 11n) / 2 ** 53;
};
const pick = (a) => a[Math.floor(rand() * a.length)];
const assigned = [];
for (let c = 0; c <= 0x10ffff; c++) {
	if (c >= 0xd800 && c <= 0xdfff) continue;
	if (!/\p{Cn}/u.test(String.fromCodePoint(c))) assigned.push(c);
}
const marks = assigned.filter((c) => /\p{M}/u.test(String.fromCodePoint(c)));
// Where collation is at its most involved: compatibility characters (ligatures, "½",
// "ß"-like letters with special secondaries), prevowel scripts (contractions), Hangul,
// kana, emoji with modifiers and joiners, Latin with accents.
const special = assigned.filter((c) => {
	const s = String.fromCodePoint(c);
	return (
		s.normalize("NFKD") !== s ||
		(c >= 0xc0 && c < 0x250) ||
		(c >= 0xe00 && c < 0xf00) ||
		(c >= 0x1980 && c < 0x19e0) ||
		(c >= 0xaa80 && c < 0xaae0) ||
		(c >= 0x1100 && c < 0x1200) ||
		(c >= 0x3040 && c < 0x3100) ||
		(c >= 0x1f300 && c < 0x1fb00) ||
		c === 0x200d ||
		c === 0xfe0f ||
		c === 0xb7
	);
});
// The characters gen.mjs could spell only as closely as comparisons allow, against each
// other and the plain spellings they resemble, with suffixes that move the decision on.
const approximate = JSON.parse(readFileSync(new URL("approximate.json", import.meta.url), "utf8"));
const plain = ["ss", "st", "ae", "af", "oe", "ij", "1/2", "dz", "nj", "(a)", "(b)", "a", "s", "o", "1", "2"];
const suffixes = ["", "a", "A", "\u0301", "e", "ss", "b\u0300"];
const ascii = [];
for (let c = 0x20; c < 0x7f; c++) if (c !== 0x2f) ascii.push(c);
const near = (c) => {
	let lo = 0;
	let hi = assigned.length;
	while (lo < hi) {
		const mid = (lo + hi) >>> 1;
		if (assigned[mid] < c) lo = mid + 1;
		else hi = mid;
	}
	const i = lo;
	const j = Math.min(assigned.length - 1, Math.max(0, i + Math.floor(rand() * 512) - 256));
	return assigned[j];
};
const S = (a) => String.fromCodePoint(...a);
const len = () => 1 + Math.floor(rand() * 6);
function uniform() {
	return Array.from({ length: len() }, () => pick(assigned));
}
function local() {
	const c0 = pick(assigned);
	return Array.from({ length: len() }, () => (rand() < 0.15 ? pick(marks) : near(c0)));
}
function mixed() {
	return Array.from({ length: len() + 2 }, () => (rand() < 0.7 ? pick(ascii) : pick(assigned)));
}
function tricky() {
	return Array.from({ length: len() }, () => (rand() < 0.3 ? pick(ascii) : pick(special)));
}
function mutate(a) {
	const b = a.slice();
	const i = Math.floor(rand() * b.length);
	switch (Math.floor(rand() * 5)) {
		case 0:
			b[i] = near(b[i]);
			break;
		case 1:
			b.splice(i + 1, 0, pick(marks));
			break;
		case 2: {
			const s = String.fromCodePoint(b[i]);
			const t = rand() < 0.5 ? s.toUpperCase() : s.toLowerCase();
			b.splice(i, 1, ...[...t].map((ch) => ch.codePointAt(0)));
			break;
		}
		case 3:
			if (b.length > 1) [b[0], b[b.length - 1]] = [b[b.length - 1], b[0]];
			break;
		default:
			b.push(pick(marks));
	}
	return b;
}
const out = [];
for (let k = 0; k < count; k++) {
	let a, b;
	switch (k % 9) {
		case 7:
			[a, b] = [pick(approximate) + pick(suffixes), pick(approximate) + pick(suffixes)].map((s) => [...s].map((c) => c.codePointAt(0)));
			break;
		case 8:
			[a, b] = [pick(approximate) + pick(suffixes), pick(plain) + pick(suffixes)].map((s) => [...s].map((c) => c.codePointAt(0)));
			break;
		case 5:
			[a, b] = [tricky(), tricky()];
			break;
		case 6:
			a = tricky();
			b = mutate(a);
			break;
		case 0:
			[a, b] = [uniform(), uniform()];
			break;
		case 1:
			[a, b] = [local(), local()];
			break;
		case 2:
			a = local();
			b = mutate(a);
			break;
		case 3:
			a = mixed();
			b = mutate(a);
			break;
		default:
			[a, b] = [mixed(), mixed()];
	}
	const sa = S(a);
	const sb = S(b);
	out.push([sa, sb, Math.sign(sa.localeCompare(sb))]);
}
process.stdout.write(JSON.stringify(out));
