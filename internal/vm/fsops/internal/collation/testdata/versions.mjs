// versions.mjs prints the ICU and Unicode versions of the Node that runs it.
process.stdout.write(JSON.stringify({ icu: process.versions.icu, unicode: process.versions.unicode }));
