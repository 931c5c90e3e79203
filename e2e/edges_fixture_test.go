//go:build e2e

package e2e

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// edgeNames are names from each of the ls collation classes (conformance
// TestLsCollationClasses holds them to pi): emoji newer than Unicode 6.2, capitals of
// Unicode 16 and 17, final sigma, old and new scripts with Thai's prevowel, digits,
// punctuation and combining marks; and names holding "\r", which pi's find splits.
var edgeNames = []string{
	"🫨", "🩷", "😀", "🏳️‍🌈", "👍🏽", "1️⃣", "a", "\u1C89a", "\uA7CBd", "ɤe", "\U00010D50j", "\U00016EA0m",
	"ΟΔΟΣ", "οδοσ", "ΑΣ.txt", "ας-x2", "ελληνικά", "кириллица", "עברית", "العربية", "เกม", "ไทย",
	"한국어", "カード", "漢字", "\U00011F04\U00011F05", "\U0001E4D0\U0001E4D1", "Straße", "strasse2",
	"Ærø", "aero2", "10", "9", "½", "٢b", "_x", "-x", "…x", "e\u0301a", "éb", "a\u0316\u0301y",
	"x\u1AD5", "йb", "и\u0306a", "cr\rname.txt",
}

// writeEdgeFixture adds to a workspace names/ (edgeNames) and two images whose resize
// rounds a side to 0.
func writeEdgeFixture(t testing.TB, ws string) {
	t.Helper()
	dir := filepath.Join(ws, "names")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, n := range edgeNames {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o644))
	}
	for name, r := range map[string]image.Rectangle{"thin-tall.png": image.Rect(0, 0, 1, 10000), "thin-wide.png": image.Rect(0, 0, 10000, 1)} {
		var b bytes.Buffer
		require.NoError(t, png.Encode(&b, image.NewGray(r)))
		require.NoError(t, os.WriteFile(filepath.Join(ws, "images", name), b.Bytes(), 0o644))
	}
}
