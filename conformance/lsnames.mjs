// lsnames.mjs prints random file names, stdin {"seed": n, "count": n}, stdout a JSON
// array: drawn from every code point this Node's Unicode assigns (uniformly, from one
// script's neighbourhood, or mixed with ASCII), without "/" and NUL, and without two
// names that pi's sort finds equal (a.toLowerCase().localeCompare(b.toLowerCase()) = 0),
// whose order pi leaves to the directory.
import { readFileSync } from "node:fs";

const { seed, count } = JSON.parse(readFileSync(0, "utf8"));
let x = BigInt(seed) | 1n;
const rand = () => {
	// xorshift64*, so that a seed names the same names on every run
	x ^= x >> 12n;
	x ^= (x << 25n) & 0xffffffffffffffffn;
	x ^= x >> 27n;
	return Number(((x * 0x2545f4914f6cdd1dn) & 0xffffffffffffffffn) >> 11n) / 2 ** 53;
};
const assigned = [];
for (let c = 1; c <= 0x10ffff; c++) {
	if ((c >= 0xd800 && c <= 0xdfff) || c === 0x2f) continue;
	if (!/\p{Cn}/u.test(String.fromCodePoint(c))) assigned.push(c);
}
const ascii = [];
for (let c = 0x20; c < 0x7f; c++) if (c !== 0x2f) ascii.push(c);
const pick = (a) => a[Math.floor(rand() * a.length)];
const len = () => 1 + Math.floor(rand() * 6);
const kinds = [
	() => Array.from({ length: len() }, () => pick(assigned)),
	() => {
		const i = Math.floor(rand() * assigned.length);
		return Array.from({ length: len() }, () => assigned[Math.min(assigned.length - 1, i + Math.floor(rand() * 300))]);
	},
	() => Array.from({ length: len() + 2 }, () => (rand() < 0.7 ? pick(ascii) : pick(assigned))),
];
const names = [];
const lowered = [];
while (names.length < count) {
	const name = String.fromCodePoint(...kinds[names.length % kinds.length]());
	if (name === "." || name === ".." || Buffer.byteLength(name) > 255) continue;
	const l = name.toLowerCase();
	if (lowered.some((o) => o.localeCompare(l) === 0)) continue;
	names.push(name);
	lowered.push(l);
}
process.stdout.write(JSON.stringify(names));
