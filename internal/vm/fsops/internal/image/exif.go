package image

import (
	"image"
)

// exifOrientation is pi's getExifOrientation (src/utils/exif-orientation.ts): the EXIF
// orientation tag of a JPEG or WebP, 1 when absent or unreadable.
func exifOrientation(b []byte) int {
	off := -1
	switch {
	case len(b) >= 2 && b[0] == 0xff && b[1] == 0xd8:
		off = jpegTiffOffset(b)
	case len(b) >= 12 && hasPrefixAt(b, 0, []byte("RIFF")) && hasPrefixAt(b, 8, []byte("WEBP")):
		off = webpTiffOffset(b)
	}
	if off < 0 {
		return 1
	}
	return tiffOrientation(b, off)
}

func hasExifHeader(b []byte, off int) bool {
	return hasPrefixAt(b, off, []byte("Exif\x00\x00"))
}

func jpegTiffOffset(b []byte) int {
	off := 2
	for off < len(b)-1 {
		if b[off] != 0xff {
			return -1
		}
		marker := b[off+1]
		if marker == 0xff {
			off++
			continue
		}
		if marker == 0xe1 {
			if off+4 >= len(b) || off+4+6 > len(b) {
				return -1
			}
			if hasExifHeader(b, off+4) {
				return off + 4 + 6
			}
		}
		if off+4 > len(b) {
			return -1
		}
		off += 2 + (int(b[off+2])<<8 | int(b[off+3]))
	}
	return -1
}

func webpTiffOffset(b []byte) int {
	off := 12
	for off+8 <= len(b) {
		id := string(b[off : off+4])
		size := int(uint32(b[off+4]) | uint32(b[off+5])<<8 | uint32(b[off+6])<<16 | uint32(b[off+7])<<24)
		data := off + 8
		if id == "EXIF" {
			if data+size > len(b) {
				return -1
			}
			if size >= 6 && hasExifHeader(b, data) {
				return data + 6
			}
			return data
		}
		off = data + size + size%2
	}
	return -1
}

func tiffOrientation(b []byte, start int) int {
	if start+8 > len(b) {
		return 1
	}
	le := b[start] == 0x49 && b[start+1] == 0x49
	u16 := func(p int) int {
		if le {
			return int(b[p]) | int(b[p+1])<<8
		}
		return int(b[p])<<8 | int(b[p+1])
	}
	u32 := func(p int) int {
		if le {
			return int(uint32(b[p]) | uint32(b[p+1])<<8 | uint32(b[p+2])<<16 | uint32(b[p+3])<<24)
		}
		return int(uint32(b[p])<<24 | uint32(b[p+1])<<16 | uint32(b[p+2])<<8 | uint32(b[p+3]))
	}
	ifd := start + u32(start+4)
	if ifd < 0 || ifd+2 > len(b) {
		return 1
	}
	n := u16(ifd)
	for i := 0; i < n; i++ {
		e := ifd + 2 + i*12
		if e+12 > len(b) {
			return 1
		}
		if u16(e) == 0x0112 {
			if v := u16(e + 8); v >= 1 && v <= 8 {
				return v
			}
			return 1
		}
	}
	return 1
}

// applyExifOrientation turns img upright as pi does before measuring or resizing it.
func applyExifOrientation(img image.Image, orientation int) image.Image {
	if orientation < 2 || orientation > 8 {
		return img
	}
	src := toNRGBA(img)
	w, h := src.Bounds().Dx(), src.Bounds().Dy()
	// dstXY maps a source pixel to its place in the upright image.
	var dstXY func(x, y int) (int, int)
	dw, dh := w, h
	switch orientation {
	case 2: // mirror horizontally
		dstXY = func(x, y int) (int, int) { return w - 1 - x, y }
	case 3: // rotate 180
		dstXY = func(x, y int) (int, int) { return w - 1 - x, h - 1 - y }
	case 4: // mirror vertically
		dstXY = func(x, y int) (int, int) { return x, h - 1 - y }
	case 5: // transpose
		dw, dh = h, w
		dstXY = func(x, y int) (int, int) { return y, x }
	case 6: // rotate 90 clockwise
		dw, dh = h, w
		dstXY = func(x, y int) (int, int) { return h - 1 - y, x }
	case 7: // transverse
		dw, dh = h, w
		dstXY = func(x, y int) (int, int) { return h - 1 - y, w - 1 - x }
	case 8: // rotate 90 counter-clockwise
		dw, dh = h, w
		dstXY = func(x, y int) (int, int) { return y, w - 1 - x }
	}
	dst := image.NewNRGBA(image.Rect(0, 0, dw, dh))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			dx, dy := dstXY(x, y)
			si := src.PixOffset(x, y)
			di := dst.PixOffset(dx, dy)
			copy(dst.Pix[di:di+4], src.Pix[si:si+4])
		}
	}
	return dst
}
