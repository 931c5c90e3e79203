package image

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func noisePNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	rand.New(rand.NewSource(1)).Read(img.Pix)
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// TestResizeSteps drives pi's fallback chain with small limits: lower JPEG qualities
// first, then ever smaller sizes (x0.75), and failure when even 1x1 does not fit.
func TestResizeSteps(t *testing.T) {
	data := noisePNG(t, 300, 300)
	ctx := context.Background()

	r, ok, err := resizeImage(ctx, data, "image/png", imageLimits{width: 2000, height: 2000, b64Bytes: 90 << 10})
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "image/jpeg", r.mimeType, "noise: JPEG beats PNG")
	assert.Equal(t, 300, r.w, "a lower quality fits before shrinking")
	assert.True(t, r.wasResized)
	assert.Less(t, len(r.data), 90<<10)

	r, ok, err = resizeImage(ctx, data, "image/png", imageLimits{width: 2000, height: 2000, b64Bytes: 6 << 10})
	require.NoError(t, err)
	require.True(t, ok)
	sizes := map[int]bool{}
	for w := 300; w > 1; w = w * 3 / 4 {
		sizes[w] = true
	}
	assert.True(t, sizes[r.w] && r.w < 300 && r.w == r.h, "shrunk by quarters to %dx%d", r.w, r.h)
	assert.Less(t, len(r.data), 6<<10)

	_, ok, err = resizeImage(ctx, data, "image/png", imageLimits{width: 2000, height: 2000, b64Bytes: 10})
	require.NoError(t, err)
	assert.False(t, ok, "nothing fits in 10 bytes")
}

// TestExifOrientation checks the pixel mapping of all eight orientations against pi's
// rotate90 index formulas and flips.
func TestExifOrientation(t *testing.T) {
	const w, h = 3, 2
	src := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			src.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), 0, 255})
		}
	}
	// pi's formulas: rotate90 writes pixel (x, y) at index dst(x, y) of an h-wide image;
	// fliph mirrors columns, flipv rows.
	rot := func(x, y int) (int, int) { i := x*h + (h - 1 - y); return i % h, i / h }
	rotCCW := func(x, y int) (int, int) { i := (w-1-x)*h + y; return i % h, i / h }
	want := map[int]func(x, y int) (int, int){
		1: func(x, y int) (int, int) { return x, y },
		2: func(x, y int) (int, int) { return w - 1 - x, y },
		3: func(x, y int) (int, int) { return w - 1 - x, h - 1 - y },
		4: func(x, y int) (int, int) { return x, h - 1 - y },
		5: func(x, y int) (int, int) { dx, dy := rot(x, y); return h - 1 - dx, dy },
		6: rot,
		7: func(x, y int) (int, int) { dx, dy := rotCCW(x, y); return h - 1 - dx, dy },
		8: rotCCW,
	}
	for o := 1; o <= 8; o++ {
		got := toNRGBA(applyExifOrientation(src, o))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				dx, dy := want[o](x, y)
				c := got.NRGBAAt(dx, dy)
				assert.Equal(t, [2]uint8{uint8(x), uint8(y)}, [2]uint8{c.R, c.G}, "orientation %d pixel %d,%d", o, x, y)
			}
		}
	}
}

func TestDetectImageMimeType(t *testing.T) {
	pngData := noisePNG(t, 2, 2)
	apng := append(append(append([]byte{}, pngData[:33]...), 0, 0, 0, 8, 'a', 'c', 'T', 'L', 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0), pngData[33:]...)
	webp, _ := base64.StdEncoding.DecodeString("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==")
	bmpHeader := func(dib uint32, bpp uint16) []byte {
		b := make([]byte, 54)
		copy(b, "BM")
		b[10] = 54
		b[14] = byte(dib)
		b[26], b[28] = 1, byte(bpp)
		b[22], b[24] = 1, byte(bpp) // the 12-byte core header keeps planes and depth here
		return b
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"jpeg", []byte{0xff, 0xd8, 0xff, 0xe0, 1, 2}, "image/jpeg"},
		{"jpeg-ls", []byte{0xff, 0xd8, 0xff, 0xf7, 1, 2}, ""},
		{"png", pngData, "image/png"},
		{"apng", apng, ""},
		{"png signature only", pngData[:8], ""},
		{"gif87a", []byte("GIF87a...."), "image/gif"},
		{"gif89a", []byte("GIF89a...."), "image/gif"},
		{"webp", webp, "image/webp"},
		{"riff not webp", []byte("RIFF\x00\x00\x00\x00WAVE"), ""},
		{"bmp 24", bmpHeader(40, 24), "image/bmp"},
		{"bmp core header", bmpHeader(12, 8), "image/bmp"},
		{"bmp bad depth", bmpHeader(40, 7), ""},
		{"bmp bad header size", bmpHeader(20, 24), ""},
		{"text", []byte("hello"), ""},
		{"empty", nil, ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, detectImageMimeType(tt.data), tt.name)
	}
}
