//go:build e2e

package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/image/bmp"
	_ "golang.org/x/image/webp" // decode pi's WebP results

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

// webp1x1 are tiny WebP files (lossless, lossy, lossy with alpha); Go cannot encode WebP.
var webp1x1 = []string{
	"UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==",
	"UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA",
	"UklGRkoAAABXRUJQVlA4WAoAAAAQAAAAAAAAAAAAQUxQSAwAAAARBxAR/Q9ERP8DAABWUDggGAAAABQBAJ0BKgEAAQAAAP4AAA3AAP7mtQAAAA==",
}

// TestReadMatchesPi compares pi 1.6.0's read with ours on text files (offsets, limits,
// every notice, CRLF, BOM, invalid UTF-8, Unicode and macOS-style names), errors and
// images.
func TestReadMatchesPi(t *testing.T) {
	f := newFileFixture(t, buildReadTree)
	text := func(name string, args map[string]any) fileCase {
		return fileCase{name: name, tool: "read", args: args}
	}
	p := func(path string) map[string]any { return map[string]any{"path": path} }
	po := func(path string, offset, limit any) map[string]any {
		m := p(path)
		if offset != nil {
			m["offset"] = offset
		}
		if limit != nil {
			m["limit"] = limit
		}
		return m
	}
	cases := []fileCase{
		text("small", p("a.txt")),
		text("limit 1 (reference §9)", po("a.txt", nil, 1)),
		text("offset 2", po("a.txt", 2, nil)),
		text("offset 2 limit 1", po("a.txt", 2, 1)),
		text("offset = last (empty) line", po("a.txt", 4, nil)),
		text("offset beyond end", po("a.txt", 5, nil)),
		text("offset far beyond end", po("a.txt", 1e21, nil)),
		text("offset 0", po("a.txt", 0, 2)),
		text("negative offset", po("a.txt", -5, 2)),
		text("limit 0", po("a.txt", nil, 0)),
		text("limit past end", po("a.txt", 2, 100)),
		text("fractional offset", po("lines3000.txt", 2.5, 3)),
		text("fractional limit", po("a.txt", 1, 1.5)),
		text("negative limit (pi: all but the last lines)", po("a.txt", nil, -1)),
		text("negative limit beyond start", po("a.txt", 3, -5)),
		text("empty file", p("empty.txt")),
		text("empty file offset 2", po("empty.txt", 2, nil)),
		text("no trailing newline", p("nonl.txt")),
		text("only newlines", p("newlines.txt")),
		text("2000-line truncation", p("lines3000.txt")),
		text("2000-line truncation from offset", po("lines3000.txt", 500, nil)),
		text("exactly 2000 lines", p("lines2000.txt")),
		text("2001 lines", p("lines2001.txt")),
		text("limit inside big file", po("lines3000.txt", 2990, 5)),
		text("near the end of a big file", po("lines3000.txt", 2999, 10)),
		text("50KB truncation", p("wide.txt")),
		text("50KB truncation from offset", po("wide.txt", 200, nil)),
		text("50KB and limit", po("wide.txt", 10, 700)),
		text("exactly 50KB", p("exact50k.txt")),
		text("first line over 50KB", p("longline.txt")),
		text("long line at offset", po("longmid.txt", 3, nil)),
		text("long line after short ones", p("longmid.txt")),
		text("long line with a size tie (51.25KB → 51.3KB)", p("tie.txt")),
		text("multibyte long line", p("multibyte-long.txt")),
		text("CRLF", p("crlf.txt")),
		text("CRLF limit", po("crlf.txt", 2, 1)),
		text("BOM", p("bom.txt")),
		text("invalid UTF-8", p("latin1.txt")),
		text("invalid UTF-8 sequences", p("broken-utf8.txt")),
		text("NUL bytes", p("nul.bin")),
		text("Unicode name", p("héllo wörld 日本.txt")),
		text("Unicode spaces in the argument", p("héllo\u00A0wörld\u3000日本.txt")),
		text("@ prefix", p("@a.txt")),
		text("absolute path", p("<ROOT>/work/a.txt")),
		text("file URL", p("file://<ROOT>/work/a.txt")),
		text("percent-encoded file URL", p("file://<ROOT>/work/h%C3%A9llo%20w%C3%B6rld%20%E6%97%A5%E6%9C%AC.txt")),
		text("home directory", p("~/outside.txt")),
		text("trailing slash on a file", p("a.txt/")),
		text("dot-dot to a parent file", p("../outside.txt")),
		text("dot-dot inside", p("sub/../a.txt")),
		text("nested", p("sub/dir/deep.txt")),
		text("macOS AM/PM screenshot name", p("Screenshot 2024-01-01 at 10.00.00 AM.txt")),
		text("macOS NFD name", p("café.txt")),
		text("macOS curly apostrophe", p("Capture d'écran.txt")),
		text("symlink", p("link.txt")),
		text("missing", p("missing.txt")),
		text("missing directory", p("nodir/x.txt")),
		text("directory", p("sub")),
		text("through a file", p("a.txt/x")),
		text("dangling symlink", p("dangling.txt")),
		text("symlink loop", p("loop1")),
		text("large sparse file near its end", po("sparse.bin", 2, nil)),
		text("large sparse file", p("sparse.bin")),
		text("APNG is not an image", p("animated.png")),
		text("JPEG-LS is not an image", p("jpegls.jpg")),
		text("BMP header that fails the checks", p("notbmp.bmp")),
		text("text named .png", p("text.png")),
		text("PNG", p("img/small.png")),
		text("JPEG", p("img/small.jpg")),
		text("GIF", p("img/small.gif")),
		text("WebP lossless", p("img/lossless.webp")),
		text("WebP alpha", p("img/alpha.webp")),
		text("image without extension", p("img/noext")),
		text("undecodable JPEG", p("img/broken.jpg")),
		text("PNG at the limit", p("img/edge2000.png")),
		text("1x10000 PNG: its width rounds to 0, the image is omitted", p("img/thin-tall.png")),
		text("10000x1 PNG: its height rounds to 0, the image is omitted", p("img/thin-wide.png")),
		imageCase("BMP converted to PNG", "img/small.bmp"),
		imageCase("4-bit BMP", "img/bits4.bmp"),
		imageCase("16-bit BMP (5-5-5)", "img/bits16.bmp"),
		imageCase("16-bit BMP with 5-6-5 bit fields", "img/bits565.bmp"),
		imageCase("32-bit BMP with bit fields", "img/bits32.bmp"),
		imageCase("large PNG resized", "img/wide.png"),
		imageCase("scale with a rounding tie (1.125 → 1.13)", "img/wide2250.png"),
		imageCase("large BMP converted and resized", "img/wide.bmp"),
		imageCase("large noisy PNG resized, JPEG smaller", "img/noise.png"),
		imageCase("tall JPEG resized", "img/tall.jpg"),
		imageCase("JPEG with EXIF orientation 6 resized", "img/rotated.jpg"),
		imageCase("JPEG with EXIF orientation 3 resized", "img/upside.jpg"),
	}
	cases = append(cases, randomReads(rand.New(rand.NewSource(3)), 60)...)
	runFileCases(t, f, cases)
}

// randomReads are reads of the text fixtures at generated offsets and limits, including
// zero, negative and fractional values that take pi's whole-file path.
func randomReads(rng *rand.Rand, n int) []fileCase {
	files := []string{"a.txt", "lines3000.txt", "wide.txt", "longmid.txt", "crlf.txt", "newlines.txt", "broken-utf8.txt", "exact50k.txt"}
	num := func() any {
		switch rng.Intn(6) {
		case 0:
			return nil
		case 1:
			return -rng.Intn(5)
		case 2:
			return float64(rng.Intn(40)) + 0.5
		case 3:
			return rng.Intn(3000)
		default:
			return rng.Intn(10)
		}
	}
	var out []fileCase
	for i := 0; i < n; i++ {
		args := map[string]any{"path": files[rng.Intn(len(files))]}
		if v := num(); v != nil {
			args["offset"] = v
		}
		if v := num(); v != nil {
			args["limit"] = v
		}
		out = append(out, fileCase{name: fmt.Sprintf("random %02d %v", i, args), tool: "read", args: args})
	}
	return out
}

// imageCase is a read of an image that pi re-encodes. The text line (type, conversion and
// resize notes with their dimensions and scale), the MIME type and the dimensions of the
// attached picture must equal pi's.
//
// Intended difference: the attached bytes. pi resizes and encodes with Photon (Rust);
// we resize with the same Lanczos3 kernel through x/image and encode with Go's PNG and
// JPEG encoders, so the compressed bytes differ. Lossless (PNG) results must have nearly
// pi's pixels; JPEG results differ by what two JPEG encoders make of the same pixels.
// Images pi passes through unchanged are compared byte for byte by the plain cases above.
// For the same reason, when the PNG and JPEG encodings of a resized image are close in
// size, pi and we may pick different ones; the fixtures are chosen so that one format is
// clearly smaller (flat blocks: PNG; noise: JPEG), and then the choice must agree.
func imageCase(name, path string) fileCase {
	return fileCase{
		name: name, tool: "read", args: map[string]any{"path": path},
		diff: "re-encoded image bytes differ (Photon's encoders vs Go's)",
		check: func(t *testing.T, want, got result.Result) {
			require.Len(t, got.Content, len(want.Content))
			assert.Equal(t, want.Content[0], got.Content[0], "text line")
			assert.Equal(t, want.IsError, got.IsError)
			if len(want.Content) < 2 {
				return
			}
			w, g := want.Content[1], got.Content[1]
			assert.Equal(t, "image", g.Type)
			assert.Equal(t, w.MimeType, g.MimeType)
			assert.Equal(t, imageSize(t, w.Data), imageSize(t, g.Data), "dimensions")
			if w.MimeType == "image/png" {
				// Lossless output: the same resampling filter must give (nearly) pi's pixels.
				assert.Less(t, meanPixelDiff(t, w.Data, g.Data), 1.0, "mean difference per channel, of 255")
			}
			assert.Less(t, float64(len(g.Data)), 4.5*1024*1024, "under the inline limit")
		},
	}
}

// meanPixelDiff is the mean absolute difference of two same-sized images' RGB channels,
// on a 0-255 scale.
func meanPixelDiff(t *testing.T, a, b string) float64 {
	t.Helper()
	decode := func(s string) image.Image {
		data, err := base64.StdEncoding.DecodeString(s)
		require.NoError(t, err)
		img, _, err := image.Decode(bytes.NewReader(data))
		require.NoError(t, err)
		return img
	}
	ia, ib := decode(a), decode(b)
	var sum, n float64
	r := ia.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, _ := ia.At(x, y).RGBA()
			r2, g2, b2, _ := ib.At(x, y).RGBA()
			for _, d := range []float64{float64(r1) - float64(r2), float64(g1) - float64(g2), float64(b1) - float64(b2)} {
				sum += math.Abs(d) / 257
				n++
			}
		}
	}
	return sum / n
}

func imageSize(t *testing.T, b64 string) image.Point {
	t.Helper()
	data, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err)
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	require.NoError(t, err)
	return image.Pt(cfg.Width, cfg.Height)
}

// buildReadTree writes the read fixture under root; the tools run in root/work.
func buildReadTree(root string) {
	w := func(rel string, data []byte) {
		p := filepath.Join(root, "work", rel)
		must(os.MkdirAll(filepath.Dir(p), 0o755))
		must(os.WriteFile(p, data, 0o644))
	}
	s := func(rel, data string) { w(rel, []byte(data)) }
	s("a.txt", "line1\nline2\r\nfoo bar\n")
	s("empty.txt", "")
	s("nonl.txt", "one\ntwo")
	s("newlines.txt", "\n\n\n")
	s("lines2000.txt", numbered(2000))
	s("lines2001.txt", numbered(2001))
	s("lines3000.txt", numbered(3000))
	var wide strings.Builder
	for i := 0; i < 1200; i++ {
		fmt.Fprintf(&wide, "%04d %s\n", i, strings.Repeat("w", 95))
	}
	s("wide.txt", wide.String())
	s("exact50k.txt", strings.Repeat(strings.Repeat("e", 99)+"\n", 512))
	s("longline.txt", strings.Repeat("L", 60000)+"\nshort\n")
	s("longmid.txt", "one\ntwo\n"+strings.Repeat("M", 70000)+"\nfour\n")
	s("tie.txt", strings.Repeat("T", 52480)+"\n")
	s("multibyte-long.txt", strings.Repeat("日本語", 6000)+"\n")
	s("crlf.txt", "first\r\nsecond\r\nthird\r\n")
	s("bom.txt", "\uFEFFwith bom\nsecond\n")
	w("latin1.txt", []byte("caf\xe9 cr\xe8me\nna\xefve\n"))
	w("broken-utf8.txt", []byte("a\xffb\xe2\x82c\xed\xa0\x80d\xf0\x9f\x98e\xc0\xafz\xf4\x90\x80\x80\n\xe2\x82"))
	w("nul.bin", []byte("a\x00b\x00\x01\x02\n\x00"))
	s("héllo wörld 日本.txt", "unicode name\n")
	s("héllo wörld 日本.txt", "unicode name\n")
	must(os.WriteFile(filepath.Join(root, "outside.txt"), []byte("outside the cwd\n"), 0o644))
	s("sub/dir/deep.txt", "deep\n")
	s("Screenshot 2024-01-01 at 10.00.00\u202FAM.txt", "am/pm\n")
	s("cafe\u0301.txt", "nfd\n")
	s("Capture d\u2019e\u0301cran.txt", "nfd and curly\n")
	must(os.Symlink("a.txt", filepath.Join(root, "work", "link.txt")))
	must(os.Symlink("nowhere.txt", filepath.Join(root, "work", "dangling.txt")))
	sparse := filepath.Join(root, "work", "sparse.bin")
	must(os.WriteFile(sparse, []byte("head\nsecond line\n"), 0o644))
	must(os.Truncate(sparse, 16<<20))
	w("animated.png", apng())
	w("jpegls.jpg", []byte("\xff\xd8\xff\xf7 not a jpeg\n"))
	w("notbmp.bmp", []byte("BM this is text that only starts like a bitmap\n"))
	s("text.png", "just text\n")

	w("img/small.png", encodePNG(pattern(40, 30)))
	w("img/small.jpg", encodeJPEG(pattern(40, 30), nil))
	w("img/small.gif", encodeGIF(pattern(16, 12)))
	for i, name := range []string{"lossless", "lossy", "alpha"} {
		b, err := base64.StdEncoding.DecodeString(webp1x1[i])
		must(err)
		w("img/"+name+".webp", b)
	}
	w("img/noext", encodePNG(pattern(5, 7)))
	w("img/broken.jpg", []byte("\xff\xd8\xff\xe0 truncated jpeg"))
	w("img/edge2000.png", encodePNG(blocks(2000, 10)))
	w("img/thin-tall.png", encodePNG(blocks(1, 10000)))
	w("img/thin-wide.png", encodePNG(blocks(10000, 1)))
	var bmpBuf bytes.Buffer
	must(bmp.Encode(&bmpBuf, pattern(30, 20)))
	w("img/small.bmp", bmpBuf.Bytes())
	w("img/bits1.bmp", rawBMP(33, 9, 1, 0, nil, 2, func(x, y int) uint32 { return uint32((x + y) % 2) }))
	w("img/bits4.bmp", rawBMP(13, 5, 4, 0, nil, 16, func(x, y int) uint32 { return uint32(x % 16) }))
	w("img/bits16.bmp", rawBMP(21, 7, 16, 0, nil, 0, func(x, y int) uint32 { return uint32(x<<10 | y<<5 | 9) }))
	w("img/bits565.bmp", rawBMP(20, 6, 16, 3, []uint32{0xF800, 0x07E0, 0x001F}, 0, func(x, y int) uint32 { return uint32(x<<11 | y<<5 | 3) }))
	w("img/bits32.bmp", rawBMP(9, 4, 32, 3, []uint32{0xFF00, 0xFF0000, 0xFF000000}, 0, func(x, y int) uint32 { return uint32(x<<8 | y<<16 | 0x80<<24) }))
	w("img/wide.png", encodePNG(blocks(2100, 60)))
	w("img/wide2250.png", encodePNG(blocks(2250, 100)))
	bmpBuf.Reset()
	must(bmp.Encode(&bmpBuf, blocks(2100, 60)))
	w("img/wide.bmp", bmpBuf.Bytes())
	w("img/noise.png", encodePNG(noise(2050, 60)))
	w("img/tall.jpg", encodeJPEG(blocks(200, 2100), nil))
	w("img/rotated.jpg", encodeJPEG(blocks(2100, 300), exifOrientation(6)))
	w("img/upside.jpg", encodeJPEG(blocks(2050, 40), exifOrientation(3)))
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// pattern is a small image with distinct pixels.
func pattern(w, h int) image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.NRGBA{uint8(x * 255 / w), uint8(y * 255 / h), 128, 255})
		}
	}
	return img
}

// blocks is a large image of flat colour blocks: PNG compresses it far better than JPEG.
func blocks(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x / 100 * 40), uint8(y / 100 * 60), 90, 255})
		}
	}
	return img
}

// noise is a random image: JPEG compresses it far better than PNG.
func noise(w, h int) image.Image {
	rng := rand.New(rand.NewSource(7))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rng.Read(img.Pix)
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	return img
}

func encodePNG(img image.Image) []byte {
	var b bytes.Buffer
	must(png.Encode(&b, img))
	return b.Bytes()
}

func encodeGIF(img image.Image) []byte {
	var b bytes.Buffer
	must(gif.Encode(&b, img, nil))
	return b.Bytes()
}

// encodeJPEG encodes img, inserting an APP1 segment (EXIF) after SOI when given.
func encodeJPEG(img image.Image, app1 []byte) []byte {
	var b bytes.Buffer
	must(jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}))
	data := b.Bytes()
	if app1 == nil {
		return data
	}
	out := append([]byte{}, data[:2]...)
	out = append(out, app1...)
	return append(out, data[2:]...)
}

// exifOrientation builds an APP1 EXIF segment holding only the orientation tag.
func exifOrientation(o uint16) []byte {
	var tiff bytes.Buffer
	tiff.WriteString("II*\x00")
	binary.Write(&tiff, binary.LittleEndian, uint32(8))      // IFD offset
	binary.Write(&tiff, binary.LittleEndian, uint16(1))      // one entry
	binary.Write(&tiff, binary.LittleEndian, uint16(0x0112)) // orientation
	binary.Write(&tiff, binary.LittleEndian, uint16(3))      // SHORT
	binary.Write(&tiff, binary.LittleEndian, uint32(1))      // count
	binary.Write(&tiff, binary.LittleEndian, uint16(o))      // value
	binary.Write(&tiff, binary.LittleEndian, uint16(0))      // padding
	binary.Write(&tiff, binary.LittleEndian, uint32(0))      // next IFD
	payload := append([]byte("Exif\x00\x00"), tiff.Bytes()...)
	seg := []byte{0xff, 0xe1, 0, 0}
	binary.BigEndian.PutUint16(seg[2:], uint16(len(payload)+2))
	return append(seg, payload...)
}

// apng is a PNG with an acTL chunk before its image data, as animated PNGs have.
func apng() []byte {
	data := encodePNG(pattern(4, 4))
	ihdrEnd := 8 + 8 + 13 + 4
	body := []byte("acTL\x00\x00\x00\x01\x00\x00\x00\x00")
	chunk := make([]byte, 4, 4+len(body)+4)
	binary.BigEndian.PutUint32(chunk, 8)
	chunk = append(chunk, body...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(body))
	out := append([]byte{}, data[:ihdrEnd]...)
	out = append(out, chunk...)
	return append(out, data[ihdrEnd:]...)
}

// rawBMP writes a bottom-up BMP with a 40-byte header: paletted (palette entries, pixel
// returns an index) or direct colour (pixel returns the packed value), optionally with
// BI_BITFIELDS masks.
func rawBMP(w, h, bpp int, compression uint32, masks []uint32, palette int, pixel func(x, y int) uint32) []byte {
	rowSize := (bpp*w + 31) / 32 * 4
	pixOff := 14 + 40 + 4*len(masks) + 4*palette
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("BM")
	binary.Write(&b, le, uint32(pixOff+rowSize*h))
	binary.Write(&b, le, uint32(0))
	binary.Write(&b, le, uint32(pixOff))
	binary.Write(&b, le, uint32(40))
	binary.Write(&b, le, int32(w))
	binary.Write(&b, le, int32(h))
	binary.Write(&b, le, uint16(1))
	binary.Write(&b, le, uint16(bpp))
	binary.Write(&b, le, compression)
	binary.Write(&b, le, uint32(rowSize*h))
	binary.Write(&b, le, [4]uint32{2835, 2835, uint32(palette), 0})
	for _, m := range masks {
		binary.Write(&b, le, m)
	}
	for i := 0; i < palette; i++ {
		binary.Write(&b, le, [4]uint8{uint8(i * 15), uint8(255 - i*15), uint8(i * 7), 0})
	}
	for y := h - 1; y >= 0; y-- {
		row := make([]byte, rowSize)
		for x := 0; x < w; x++ {
			v := pixel(x, y)
			switch bpp {
			case 1, 4:
				bit := x * bpp
				row[bit/8] |= byte(v) << (8 - bpp - bit%8)
			case 16:
				le.PutUint16(row[2*x:], uint16(v))
			case 32:
				le.PutUint32(row[4*x:], v)
			}
		}
		b.Write(row)
	}
	return b.Bytes()
}
