// jslower.mjs prints every code point whose String.prototype.toLowerCase (alone, so no
// final sigma) is not itself, with its lowercase: [[code point, "lowercase"], ...], one
// entry per line. fsops/testdata/js-lower.json is this script's output under pi's Node.
const lines = [];
for (let c = 0; c <= 0x10ffff; c++) {
	if (c >= 0xd800 && c <= 0xdfff) continue;
	const s = String.fromCodePoint(c);
	const l = s.toLowerCase();
	if (l !== s) lines.push(JSON.stringify([c, l]));
}
process.stdout.write("[\n" + lines.join(",\n") + "\n]\n");
