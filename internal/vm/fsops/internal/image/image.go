package image

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"strings"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/webp"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/js"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

// imageLimits are what an attached image must fit: pi's ResizeOptions.
type imageLimits struct {
	width, height int
	b64Bytes      float64 // the base64 text must be smaller than this
}

// inlineImageLimits are pi's defaults (src/utils/image-resize-core.ts): at most
// 2000x2000 pixels and 4.5 MB of base64, below Anthropic's 5 MB.
func inlineImageLimits() imageLimits {
	return imageLimits{width: 2000, height: 2000, b64Bytes: 4.5 * 1024 * 1024}
}

// jpegQualities are tried in pi's order: the configured 80, then 85, 70, 55, 40.
var jpegQualities = []int{80, 85, 70, 55, 40}

// The texts pi shows when an image cannot be attached.
const (
	imageNotConverted = "[Image omitted: could not be converted to a supported inline image format.]"
	imageNotResized   = "[Image omitted: could not be resized below the inline image size limit.]"
)

// Read is the image branch of pi's read: the picture attached as base64, converted
// to PNG when the model cannot take its format (BMP), scaled down to pi's limits, with
// pi's text line and hints.
func Read(ctx context.Context, data []byte, mime string) (result.Result, error) {
	img, err := processImage(ctx, data, mime)
	if err != nil {
		return result.Result{}, err
	}
	if img.omitted != "" {
		return result.Text(fmt.Sprintf("Read image file [%s]\n%s", mime, img.omitted), nil), nil
	}
	text := fmt.Sprintf("Read image file [%s]", img.mimeType)
	if len(img.hints) > 0 {
		text += "\n" + strings.Join(img.hints, "\n")
	}
	return result.Result{Content: []result.Content{
		result.TextBlock(text),
		result.ImageBlock(img.data, img.mimeType),
	}}, nil
}

// processedImage is pi's processImage outcome: an attachable image, or why there is none.
type processedImage struct {
	data     string // base64
	mimeType string
	hints    []string
	omitted  string
}

// processImage is pi's processImage (src/utils/image-process.ts) with resizing on.
func processImage(ctx context.Context, data []byte, mime string) (processedImage, error) {
	convertedFrom := ""
	switch mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
	default:
		img, err := decodeImage(data, mime)
		if err != nil {
			return processedImage{omitted: imageNotConverted}, nil
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			return processedImage{omitted: imageNotConverted}, nil
		}
		data, convertedFrom, mime = buf.Bytes(), mime, "image/png"
	}
	r, ok, err := resizeImage(ctx, data, mime, inlineImageLimits())
	if err != nil {
		return processedImage{}, err
	}
	if !ok {
		return processedImage{omitted: imageNotResized}, nil
	}
	out := processedImage{data: r.data, mimeType: r.mimeType}
	if convertedFrom != "" && convertedFrom != r.mimeType {
		out.hints = append(out.hints, fmt.Sprintf("[Image converted from %s to %s.]", convertedFrom, r.mimeType))
	}
	if r.wasResized {
		scale := float64(r.origW) / float64(r.w)
		out.hints = append(out.hints, fmt.Sprintf("[Image: original %dx%d, displayed at %dx%d. Multiply coordinates by %s to map to original image.]",
			r.origW, r.origH, r.w, r.h, js.ToFixed(scale, 2)))
	}
	return out, nil
}

type resizedImage struct {
	data               string
	mimeType           string
	origW, origH, w, h int
	wasResized         bool
}

// resizeImage is pi's resizeImageInProcess: the image unchanged when it is within the
// limits, else scaled to fit 2000x2000 and encoded as the smaller of PNG and JPEG 80, then
// lower JPEG qualities, then ever smaller (x0.75) until it fits. ok is false when nothing
// fits or the image cannot be decoded.
func resizeImage(ctx context.Context, data []byte, mime string, lim imageLimits) (resizedImage, bool, error) {
	img, err := decodeImage(data, mime)
	if err != nil {
		return resizedImage{}, false, nil
	}
	img = applyExifOrientation(img, exifOrientation(data))
	b := img.Bounds()
	ow, oh := b.Dx(), b.Dy()
	inputB64 := math.Ceil(float64(len(data))/3) * 4
	if ow <= lim.width && oh <= lim.height && inputB64 < lim.b64Bytes {
		return resizedImage{data: base64.StdEncoding.EncodeToString(data), mimeType: mime,
			origW: ow, origH: oh, w: ow, h: oh}, true, nil
	}
	tw, th := ow, oh
	if tw > lim.width {
		th = int(math.Round(float64(th) * float64(lim.width) / float64(tw)))
		tw = lim.width
	}
	if th > lim.height {
		tw = int(math.Round(float64(tw) * float64(lim.height) / float64(th)))
		th = lim.height
	}
	if tw == 0 || th == 0 {
		// A side rounded to nothing (a 1x10000 image): Photon refuses to resize to it,
		// and pi omits the image.
		return resizedImage{}, false, nil
	}
	for {
		if ctx.Err() != nil {
			return resizedImage{}, false, fileio.ErrAborted
		}
		if data, mt, ok := encodeFitting(scaleImage(img, tw, th), lim.b64Bytes); ok {
			return resizedImage{data: data, mimeType: mt, origW: ow, origH: oh, w: tw, h: th, wasResized: true}, true, nil
		}
		if tw == 1 && th == 1 {
			return resizedImage{}, false, nil
		}
		nw, nh := shrink(tw), shrink(th)
		if nw == tw && nh == th {
			return resizedImage{}, false, nil
		}
		tw, th = nw, nh
	}
}

func shrink(n int) int {
	if n == 1 {
		return 1
	}
	return max(1, int(math.Floor(float64(n)*0.75)))
}

// encodeFitting tries pi's candidates in pi's order and returns the first whose base64
// is under the limit. Lower JPEG qualities are only encoded when needed.
func encodeFitting(img image.Image, maxB64 float64) (string, string, bool) {
	encode := func(q int) string {
		var buf bytes.Buffer
		var err error
		if q == 0 {
			err = png.Encode(&buf, img)
		} else {
			err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: q})
		}
		if err != nil {
			return ""
		}
		return base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	fits := func(s string) bool { return s != "" && float64(len(s)) < maxB64 }
	pngData, jpegData := encode(0), encode(jpegQualities[0])
	first, firstType, second, secondType := pngData, "image/png", jpegData, "image/jpeg"
	if jpegData != "" && len(jpegData) < len(pngData) {
		first, firstType, second, secondType = jpegData, "image/jpeg", pngData, "image/png"
	}
	if fits(first) {
		return first, firstType, true
	}
	if fits(second) {
		return second, secondType, true
	}
	for _, q := range jpegQualities[1:] {
		if d := encode(q); fits(d) {
			return d, "image/jpeg", true
		}
	}
	return "", "", false
}

// scaleImage resamples img to w x h with a Lanczos3 filter, the one pi's Photon uses, so
// the pixels come out close to pi's (the encoders still differ).
func scaleImage(img image.Image, w, h int) image.Image {
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	lanczos3().Scale(dst, dst.Bounds(), img, img.Bounds(), xdraw.Src, nil)
	return dst
}

// lanczos3 is the Lanczos kernel with a = 3: sinc(t)·sinc(t/3) for |t| < 3.
func lanczos3() *xdraw.Kernel {
	sinc := func(x float64) float64 {
		if x == 0 {
			return 1
		}
		x *= math.Pi
		return math.Sin(x) / x
	}
	return &xdraw.Kernel{Support: 3, At: func(t float64) float64 {
		if t < 0 {
			t = -t
		}
		if t >= 3 {
			return 0
		}
		return sinc(t) * sinc(t/3)
	}}
}

// maxImagePixels bounds the pictures read decodes: a small file can declare an enormous
// canvas (a decompression bomb), and the agent must not exhaust the sandbox's memory on
// one. 100 megapixels (400 MB decoded) is far beyond any screenshot or photo a model
// needs; pi has no such bound and would try.
const maxImagePixels = 100_000_000

// decodeImage decodes the formats pi's read accepts.
func decodeImage(data []byte, mime string) (image.Image, error) {
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err == nil && cfg.Width*cfg.Height > maxImagePixels {
		return nil, fmt.Errorf("image of %dx%d pixels is over the %d-pixel bound", cfg.Width, cfg.Height, maxImagePixels)
	}
	r := bytes.NewReader(data)
	switch mime {
	case "image/png":
		return png.Decode(r)
	case "image/jpeg":
		return jpeg.Decode(r)
	case "image/gif":
		return gif.Decode(r)
	case "image/webp":
		return webp.Decode(r)
	case "image/bmp":
		return decodeBMP(data)
	}
	return nil, fmt.Errorf("unsupported image type %s", mime)
}

// toNRGBA copies img into a fresh NRGBA image with its origin at 0,0.
func toNRGBA(img image.Image) *image.NRGBA {
	b := img.Bounds()
	dst := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(dst, dst.Bounds(), img, b.Min, draw.Src)
	return dst
}
