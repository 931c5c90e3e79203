// gen.mjs reconstructs ICU's root collation elements from Intl.Collator alone, under the
// Node that runs it (pi's Node: ICU 78, Unicode 17), and prints them as JSON for gen.go.
//
// ICU compares strings by their collation elements (CEs), (primary, secondary, tertiary)
// triples: first the sequence of non-zero primaries, then of secondaries, then of
// tertiaries. Comparisons at sensitivity "base", "accent" and "variant" show exactly
// those three levels, so each code point's CEs can be read back with comparisons only:
//
//   - Level 1. Sorting every code point by primaries gives classes. A class is an
//     "atom" (one primary of its own) unless it starts with the primary of the atom
//     before it (an expansion such as "æ" = [a][e]), which one comparison tells; an
//     expansion is spelled in atoms by binary search, one atom at a time.
//   - Level 2. A secondary belongs to a primary CE (a "slot": common, or a variant such
//     as the Arabic digit's) or to a primary-ignorable CE (a combining mark: "free").
//     Strings with equal primaries only ever compare slot secondaries of the same primary
//     with each other and with free ones, so slots are ranked per primary, free
//     secondaries globally, and every slot sorts below every free secondary (checked).
//     A string's secondaries are spelled one at a time by binary search over strings
//     that realise a prefix and one candidate, completed with the smallest remainder.
//   - Level 3. With equal primaries and secondaries the CEs line up one to one, so a
//     tertiary is only compared with tertiaries of CEs with the same primary and
//     secondary: ranked per such context, spelled the same way.
//   - Contractions (Thai and Lao prevowels, Tibetan, …) and prefix rules are found by
//     comparing each pair of neighbouring code points with the same pair split by a
//     completely ignorable U+0001, which no contraction spans, and spelled as units.
//
// What comparisons cannot show is spelled as closely as they allow and listed in
// "approximate": a secondary or tertiary that no single code point carries (such as the
// secondary of "ß" or "æ"; 622 code points) is placed in the gap where it falls, exact
// against everything outside it; code points in one gap are ordered among themselves
// inside it (refine); what follows such a weight within its code point is taken to be
// the smallest remainder. testdata/pairs.mjs tests these hardest.
//
// Usage: gen.go runs it (stdin: one mark per combining class, from Go's tables; stdout:
// JSON), under the Node whose order it reads.

import { readFileSync } from "node:fs";

// en-US: the locale of a user without one, whose collation is root's untailored. Not
// "und", which Node resolves to the default locale (zh-CN's pinyin order under LANG=zh_CN).
const LOCALE = "en-US";
if (new Intl.Collator(LOCALE).resolvedOptions().locale !== LOCALE) fail(`Node has no ${LOCALE} collation`);
const base = new Intl.Collator(LOCALE, { sensitivity: "base" }).compare;
const accent = new Intl.Collator(LOCALE, { sensitivity: "accent" }).compare;
const full = new Intl.Collator(LOCALE, { sensitivity: "variant" }).compare;
const S = (c) => String.fromCodePoint(c);
const SPLIT = "\u0001"; // completely ignorable, a starter: no contraction spans it
const MAXLEN = 64;

const stats = { atoms: 0, expansions: 0, free: 0, slots: 0, contractions: 0, canonical: 0, approximate: [], unspelled: [] };

function fail(msg) {
	throw new Error(msg);
}

// Every representative below starts with SPLIT, so that representatives put side by side
// collate as the sum of their parts: no contraction, no canonical reordering across them.

// Last index in [lo, hi) for which pred holds, pred being true then false; lo-1 if none.
function lastTrue(lo, hi, pred) {
	while (lo < hi) {
		const mid = (lo + hi) >>> 1;
		if (pred(mid)) lo = mid + 1;
		else hi = mid;
	}
	return lo - 1;
}

// ---- the code points and their classes ----

const cps = [];
for (let c = 0; c <= 0x10ffff; c++) if (c < 0xd800 || c > 0xdfff) cps.push(c);
const str = new Map(cps.map((c) => [c, S(c)]));
const byPrimary = cps.slice().sort((a, b) => base(str.get(a), str.get(b)) || a - b);

// classes groups sorted code points into runs that cmp finds equal.
function classes(sorted, cmp) {
	const out = [];
	let cur = [sorted[0]];
	for (let i = 1; i < sorted.length; i++) {
		if (cmp(str.get(sorted[i - 1]), str.get(sorted[i])) === 0) cur.push(sorted[i]);
		else {
			out.push(cur);
			cur = [sorted[i]];
		}
	}
	out.push(cur);
	return out;
}

// ---- level 1 ----

const primaryClasses = classes(byPrimary, base);
const atoms = []; // atoms[i] = representative string of primary i+1
const K1 = new Map(); // code point -> array of primary indexes (0-based atoms)
const ignorable1 = [];
{
	const top = primaryClasses[primaryClasses.length - 1][0];
	const MAX1 = (SPLIT + str.get(top)).repeat(MAXLEN);
	const expansionClasses = [];
	let last = null;
	for (const cls of primaryClasses) {
		const rep = str.get(cls[0]);
		if (base(rep, "") === 0) {
			ignorable1.push(...cls);
			continue;
		}
		if (last !== null && base(rep, last + MAX1) < 0) {
			expansionClasses.push(cls);
			continue;
		}
		atoms.push(SPLIT + rep);
		last = rep;
		for (const c of cls) K1.set(c, [atoms.length - 1]);
	}
	stats.atoms = atoms.length;
	for (const cls of expansionClasses) {
		const w = spell1(str.get(cls[0]), MAX1);
		if (w === null) fail(`cannot spell the primaries of U+${cls[0].toString(16)}`);
		for (const c of cls) K1.set(c, w);
		stats.expansions += cls.length;
	}
	for (const c of ignorable1) K1.set(c, []);
}

// spell1 spells u's primaries in atoms, or null.
function spell1(u, MAX1) {
	const w = [];
	let r = "";
	while (base(u, r) !== 0) {
		if (w.length >= MAXLEN) return null;
		const i = lastTrue(0, atoms.length, (k) => base(r + atoms[k], u) <= 0);
		if (i < 0 || base(u, r + atoms[i] + MAX1) >= 0) return null;
		w.push(i);
		r += atoms[i];
	}
	return w;
}
const MAX1 = atoms[atoms.length - 1].repeat(MAXLEN);

// ---- level 2 ----

// Free secondaries: the primary-ignorable code points, ranked as the atoms were.
const freeAtoms = []; // representative strings
const K2free = new Map(); // primary-ignorable code point -> array of free indexes
{
	const sorted = ignorable1.slice().sort((a, b) => accent(str.get(a), str.get(b)) || a - b);
	const cls2 = classes(sorted, accent);
	const top = (SPLIT + str.get(cls2[cls2.length - 1][0])).repeat(MAXLEN);
	const later = [];
	let last = null;
	for (const cls of cls2) {
		const rep = str.get(cls[0]);
		if (accent(rep, "") === 0) {
			for (const c of cls) K2free.set(c, []);
			continue;
		}
		if (last !== null && accent(rep, last + top) < 0) {
			later.push(cls);
			continue;
		}
		freeAtoms.push(SPLIT + rep);
		last = rep;
		for (const c of cls) K2free.set(c, [freeAtoms.length - 1]);
	}
	for (const cls of later) {
		const w = [];
		let r = "";
		const u = str.get(cls[0]);
		while (accent(u, r) !== 0) {
			const i = lastTrue(0, freeAtoms.length, (k) => accent(r + freeAtoms[k], u) <= 0);
			if (i < 0 || w.length >= MAXLEN) fail(`cannot spell the secondaries of U+${cls[0].toString(16)}`);
			w.push(i);
			r += freeAtoms[i];
		}
		for (const c of cls) K2free.set(c, w);
	}
	stats.free = freeAtoms.length;
}
const MAXFREE = freeAtoms[freeAtoms.length - 1].repeat(MAXLEN);

// Slot secondaries: per primary, the code points whose primaries are just that one,
// ranked by secondaries; a class that is a smaller slot followed by free secondaries
// (a precomposed letter) is not a slot of its own.
const slots = atoms.map(() => []); // slots[p][r] = representative string
{
	const members = atoms.map(() => []);
	for (const [c, w] of K1) if (w.length === 1) members[w[0]].push(c);
	for (let p = 0; p < atoms.length; p++) {
		const m = members[p].sort((a, b) => accent(str.get(a), str.get(b)) || a - b);
		const cls2 = classes(m, accent);
		for (const cls of cls2) {
			const rep = str.get(cls[0]);
			const prev = slots[p][slots[p].length - 1];
			if (prev !== undefined && accent(rep, prev + MAXFREE) < 0) continue;
			slots[p].push(SPLIT + rep);
		}
		stats.slots += slots[p].length;
		if (slots[p].length > 250) fail(`primary ${p} has ${slots[p].length} secondaries`);
	}
	// Every slot secondary sorts below every free one: [slot, free] < [free, slot].
	const minFree = freeAtoms[0];
	for (const s of slots) for (const rep of s) {
		if (!(accent(rep + minFree, minFree + rep) < 0)) fail(`a slot secondary of ${JSON.stringify(rep)} is not below the free ones`);
	}
}

// A level-2 letter: {slot: r} (of the next primary) or {free: k}; null ends the word.
function rep2(p, letter) {
	return letter.slot !== undefined ? slots[p][letter.slot] : freeAtoms[letter.free];
}

// spell2 spells the secondaries of u, whose primaries are w1, as CE contexts: an array of
// {p, s} (p = primary index or -1 for a free CE, s = slot rank or free index, plus
// approx when the secondary lies strictly between two known ones).
function spell2(u, w1) {
	const minRest = (i) => w1.slice(i).map((p) => slots[p][0]).join("");
	const maxRest = (i) => MAXFREE + w1.slice(i).map((p) => slots[p][slots[p].length - 1] + MAXFREE).join("");
	if (accent(u, minRest(0)) === 0) return { ces: w1.map((p) => ({ p, s: 0 })), exact: true };
	const ces = [];
	let r = "";
	let i = 0;
	while (!(i === w1.length && accent(u, r) === 0)) {
		if (ces.length >= MAXLEN) return null;
		// Candidates in increasing order: the next primary's slots, then the free ones.
		const nslot = i < w1.length ? slots[w1[i]].length : 0;
		const cand = (k) => (k < nslot ? { slot: k } : { free: k - nslot });
		const tmin = (k) => {
			const l = cand(k);
			return r + rep2(w1[i], l) + minRest(l.slot !== undefined ? i + 1 : i);
		};
		const k = lastTrue(0, nslot + freeAtoms.length, (k) => accent(u, tmin(k)) >= 0);
		if (k < 0) return null;
		const l = cand(k);
		const ni = l.slot !== undefined ? i + 1 : i;
		const ce = l.slot !== undefined ? { p: w1[i], s: l.slot } : { p: -1, s: l.free };
		if (accent(u, r + rep2(w1[i], l) + maxRest(ni)) > 0) {
			// Between this candidate and the next: no code point carries it alone.
			ce.approx = true;
			ces.push(ce);
			for (let j = ni; j < w1.length; j++) ces.push({ p: w1[j], s: 0 });
			return { ces, exact: false };
		}
		ces.push(ce);
		r += rep2(w1[i], l);
		i = ni;
	}
	return { ces, exact: true };
}

// ---- level 3 ----

// Tertiary contexts: "p:s" for a primary CE, "f:s" for a free one; each a sorted list of
// representatives of its tertiaries.
const contexts = new Map();
const ctxKey = (ce) => (ce.p >= 0 ? `p${ce.p}:${ce.s}` : `f${ce.s}`);
const K2 = new Map(); // code point -> spell2 result
{
	const members = new Map();
	for (const c of cps) {
		const w1 = K1.get(c);
		let res;
		if (w1.length === 0) {
			const w = K2free.get(c);
			res = { ces: w.map((s) => ({ p: -1, s })), exact: true };
		} else {
			res = spell2(str.get(c), w1);
			if (res === null) fail(`cannot spell the secondaries of U+${c.toString(16)}`);
		}
		K2.set(c, res);
		if (res.exact && res.ces.length === 1) {
			const key = ctxKey(res.ces[0]);
			if (!members.has(key)) members.set(key, []);
			members.get(key).push(c);
		}
	}
	for (const [key, m] of members) {
		m.sort((a, b) => full(str.get(a), str.get(b)) || a - b);
		contexts.set(key, classes(m, full).map((cls) => SPLIT + str.get(cls[0])));
	}
}

// reps3 is the representatives of ce's tertiaries, or null for a context no single code
// point has (an approximate secondary), whose tertiaries refine orders.
function reps3(ce) {
	return contexts.get(ctxKey(ce)) ?? null;
}

// spell3 adds tertiaries to the CE contexts of u.
function spell3(u, res) {
	const ces = res.ces.map((ce) => ({ ...ce }));
	const lists = ces.map(reps3);
	if (lists.some((l) => l === null)) {
		for (const ce of ces) ce.t = 0;
		return { ces, exact: false };
	}
	const minRest = (j) => lists.slice(j).map((l) => l[0]).join("");
	const maxRest = (j) => lists.slice(j).map((l) => l[l.length - 1]).join("");
	if (full(u, minRest(0)) === 0) {
		for (const ce of ces) ce.t = 0;
		return { ces, exact: res.exact };
	}
	let r = "";
	let exact = res.exact;
	for (let j = 0; j < ces.length; j++) {
		const l = lists[j];
		const k = lastTrue(0, l.length, (k) => full(u, r + l[k] + minRest(j + 1)) >= 0);
		if (k < 0) {
			ces[j].t = 0;
			exact = false;
			continue;
		}
		ces[j].t = k;
		if (full(u, r + l[k] + maxRest(j + 1)) > 0) {
			ces[j].tapprox = true;
			exact = false;
		}
		r += l[k];
	}
	if (exact && full(u, r) !== 0) exact = false;
	return { ces, exact };
}

// ---- every code point ----

// weights turns a spelled CE into [primary, secondary, tertiary] weights: primaries 1..;
// secondaries and tertiaries in steps of GAP (a slot secondary GAP·(r+1), a free one
// GAP·(256+k), a tertiary GAP·(k+1)), so that an approximate one fits just above the
// candidate below it: +1, and +1+i for the i-th of several in one gap (refine).
const GAP = 64;
function weights(ce) {
	const p = ce.p >= 0 ? ce.p + 1 : 0;
	const s = GAP * (ce.p >= 0 ? ce.s + 1 : 256 + ce.s) + (ce.approx ? 1 : 0);
	const t = GAP * (ce.t + 1) + (ce.tapprox ? 1 : 0);
	return [p, s, t];
}

function spell(u, res2) {
	const res = spell3(u, res2);
	if (!res.exact) stats.approximate.push(u);
	return res.ces.map(weights);
}

const table = []; // [code point, [[p,s,t]...]]
for (const c of cps) table.push([c, spell(str.get(c), K2.get(c))]);

// Code points spelled alike but not equal (Œ and œ, whose tertiaries have nothing to be
// compared with; ⒝ and 🄑, whose tertiaries fall into one gap) only ever meet each other
// there: their order among themselves is spelled inside the gap, on the first
// approximate secondary and the first approximate tertiary (else the first CE's).
{
	const groups = new Map();
	for (const e of table) {
		if (!e[1].some((w) => w[1] % GAP !== 0 || w[2] % GAP !== 0)) continue;
		const key = JSON.stringify(e[1]);
		if (!groups.has(key)) groups.set(key, []);
		groups.get(key).push(e);
	}
	for (const members of groups.values()) {
		if (members.length < 2) continue;
		members.sort((a, b) => full(str.get(a[0]), str.get(b[0])) || a[0] - b[0]);
		const ces = members[0][1];
		const si = ces.findIndex((w) => w[1] % GAP !== 0);
		const ti = Math.max(0, ces.findIndex((w) => w[2] % GAP !== 0));
		let a = 0;
		let t = 0;
		for (let i = 0; i < members.length; i++) {
			if (i > 0) {
				const [x, y] = [str.get(members[i - 1][0]), str.get(members[i][0])];
				if (accent(x, y) !== 0) {
					a++;
					t = 0;
				} else if (full(x, y) !== 0) t++;
			}
			if ((a > 0 && si < 0) || a + 2 >= GAP || t + 2 >= GAP) fail(`cannot order ${members.map((m) => m[0].toString(16))}`);
			members[i][1] = members[i][1].map((w, j) => {
				const v = w.slice();
				if (j === si) v[1] = v[1] - (v[1] % GAP) + 1 + a;
				if (j === ti) v[2] = v[2] - (v[2] % GAP) + 1 + t;
				return v;
			});
		}
	}
}

// spellString spells any string as a unit (a contraction).
function spellString(u) {
	const w1 = spell1(u, MAX1);
	if (w1 === null) return null;
	let res2;
	if (w1.length === 0) {
		const sorted = [];
		let r = "";
		while (accent(u, r) !== 0) {
			const i = lastTrue(0, freeAtoms.length, (k) => accent(r + freeAtoms[k], u) <= 0);
			if (i < 0 || sorted.length >= MAXLEN) return null;
			sorted.push(i);
			r += freeAtoms[i];
		}
		res2 = { ces: sorted.map((s) => ({ p: -1, s })), exact: true };
	} else {
		res2 = spell2(u, w1);
		if (res2 === null) return null;
	}
	return spell(u, res2);
}

// ---- contractions (and prefix rules, spelled as contractions of the pair) ----

const contractions = []; // [string, [[p,s,t]...]]
{
	const nonIgnorable = cps.filter((c) => (K1.get(c).length > 0 || K2.get(c).ces.length > 0) && str.get(c).normalize("NFD") === str.get(c));
	const found = [];
	for (const x of nonIgnorable) {
		if (x >= 0x3400 && x <= 0x9fff) continue; // Han: no contractions in root
		if (x >= 0x20000) continue; // supplementary ideographs and unassigned
		const sx = str.get(x);
		const lo = Math.max(0, (x & ~0x7f) - 0x80);
		for (let y = lo; y < lo + 0x180; y++) {
			if (y >= 0xd800 && y <= 0xdfff) continue;
			const sy = str.get(y);
			const xy = sx + sy;
			// Canonical reordering is the normalizer's part, not a contraction.
			if (full(xy, sx + SPLIT + sy) !== 0 && xy.normalize("NFD") === xy) found.push(xy);
		}
	}
	// Longer ones: a found pair and a third code point from the same neighbourhood.
	const more = [];
	for (const xy of found) {
		const z0 = Math.max(0, (xy.codePointAt(0) & ~0x7f) - 0x80);
		for (let z = z0; z < z0 + 0x180; z++) {
			if (z >= 0xd800 && z <= 0xdfff) continue;
			const s = xy + S(z);
			if (s.normalize("NFD") !== s) continue;
			if (full(s, xy + SPLIT + S(z)) !== 0 && !isSplitEqual(s, xy, S(z))) more.push(s);
		}
	}
	for (const u of new Set([...found, ...more])) {
		const w = spellString(u);
		if (w === null) {
			stats.unspelled.push([...u].map((c) => c.codePointAt(0)));
			continue;
		}
		contractions.push([u, w]);
	}
	stats.contractions = contractions.length;
}

// isSplitEqual: s = xy+z collates as the contraction xy followed by z.
function isSplitEqual(s, xy, z) {
	// Compared through their spellings: the contraction xy, then z on its own.
	const a = spellString(s);
	const b = spellString(xy);
	const c = spellString(z);
	return a !== null && b !== null && c !== null && JSON.stringify(a) === JSON.stringify([...b, ...c]);
}

// ---- canonical decompositions ----

// The collator in Go decomposes (NFD) before it looks code points up, as ICU does for
// text that is not already in canonical order; a decomposition whose parts do not add up
// to the precomposed character's CEs (Cyrillic "и" + breve is "й", a letter of its own)
// becomes a contraction. Shorter decompositions first, so longer ones build on them.
{
	const ceOf = new Map(table);
	const contr = new Map(contractions);
	const prefixes = new Set();
	const addPrefixes = (u) => {
		const a = [...u];
		for (let n = 2; n < a.length; n++) prefixes.add(a.slice(0, n).join(""));
	};
	for (const [u] of contractions) addPrefixes(u);
	const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
	// simulate collates s as gen.go's tables will: longest contiguous contraction, else
	// the code point's own CEs.
	const simulate = (s) => {
		const a = [...s];
		const out = [];
		for (let i = 0; i < a.length; ) {
			let end = i + 1;
			let ces = ceOf.get(a[i].codePointAt(0));
			let acc = a[i];
			for (let j = i + 1; j < a.length; j++) {
				acc += a[j];
				if (contr.has(acc)) {
					end = j + 1;
					ces = contr.get(acc);
				} else if (!prefixes.has(acc)) break;
			}
			out.push(...ces);
			i = end;
		}
		return out;
	};
	const decomp = [];
	for (const c of cps) {
		const d = str.get(c).normalize("NFD");
		if (d !== str.get(c)) decomp.push([c, d]);
	}
	decomp.sort((x, y) => [...x[1]].length - [...y[1]].length || x[0] - y[0]);
	let canonical = 0;
	for (const [c, d] of decomp) {
		if (contr.has(d) || same(simulate(d), ceOf.get(c))) continue;
		contr.set(d, ceOf.get(c));
		contractions.push([d, ceOf.get(c)]);
		addPrefixes(d);
		canonical++;
	}
	stats.canonical = canonical;
}

// ---- canonical combining classes ----

// Go's NFD puts marks in canonical order by Unicode 15's classes; ICU by its own. Each mark's
// class is found from how NFD orders it around marks of known classes (gen.go gives one
// per class, from Go's tables): A B are swapped exactly when ccc(A) > ccc(B) > 0.
const ccc = [];
{
	const refs = Object.entries(JSON.parse(readFileSync(0, "utf8")).refs)
		.map(([v, c]) => [Number(v), S(c)])
		.sort((a, b) => a[0] - b[0]);
	const swaps = (a, b) => a !== b && (a + b).normalize("NFD") === b + a;
	const rmin = refs[0][1];
	const rmax = refs[refs.length - 1][1];
	for (const c of cps) {
		const m = str.get(c);
		if (!/\p{M}/u.test(m) || m.normalize("NFD") !== m) continue;
		if (!(swaps(rmax, m) || swaps(m, rmin))) continue; // a starter
		const k = lastTrue(0, refs.length, (k) => swaps(m, refs[k][1])); // ccc(m) > refs[k]
		const v = k + 1 < refs.length && !swaps(refs[k + 1][1], m) ? refs[k + 1][0] : null;
		if (v === null) fail(`U+${c.toString(16)} has a combining class no mark of Go's tables has`);
		ccc.push([c, v]);
	}
}

process.stdout.write(
	JSON.stringify({
		ccc,
		icu: process.versions.icu,
		unicode: process.versions.unicode,
		stats: { ...stats, approximate: stats.approximate.length },
		approximate: stats.approximate.map((s) => [...s].map((c) => c.codePointAt(0))),
		table,
		contractions,
	}),
);
