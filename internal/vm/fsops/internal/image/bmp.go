package image

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"math/bits"

	"golang.org/x/image/bmp"
)

// decodeBMP decodes a BMP. x/image/bmp covers 1-, 2-, 4-, 8-, 24- and 32-bit images
// without compression; pi (Photon) also converts 16-bit ones and those with bit-field
// masks, which decodeBMPBitfields handles.
func decodeBMP(data []byte) (image.Image, error) {
	img, err := bmp.Decode(bytes.NewReader(data))
	if err == nil || !errors.Is(err, bmp.ErrUnsupported) {
		return img, err
	}
	return decodeBMPBitfields(data)
}

var errBadBMP = errors.New("bmp: unsupported or corrupt bitmap")

// decodeBMPBitfields decodes uncompressed 16- and 32-bit BMPs, with the default masks
// (5-5-5 and 8-8-8) or explicit BI_BITFIELDS / BI_ALPHABITFIELDS masks.
func decodeBMPBitfields(b []byte) (image.Image, error) {
	if len(b) < 54 {
		return nil, errBadBMP
	}
	le := binary.LittleEndian
	pixOff := int(le.Uint32(b[10:]))
	infoLen := int(le.Uint32(b[14:]))
	w, h := int(int32(le.Uint32(b[18:]))), int(int32(le.Uint32(b[22:])))
	bpp, compression := int(le.Uint16(b[28:])), le.Uint32(b[30:])
	topDown := h < 0
	if topDown {
		h = -h
	}
	if infoLen < 40 || le.Uint16(b[26:]) != 1 || (bpp != 16 && bpp != 32) || w <= 0 || h <= 0 || w*h > maxImagePixels {
		return nil, errBadBMP
	}
	var masks [4]uint32 // r, g, b, a
	switch compression {
	case 0:
		if bpp == 16 {
			masks = [4]uint32{0x7C00, 0x03E0, 0x001F, 0}
		} else {
			masks = [4]uint32{0xFF0000, 0xFF00, 0xFF, 0}
		}
	case 3, 6: // BI_BITFIELDS, BI_ALPHABITFIELDS: masks follow the 40-byte header
		if len(b) < 66 {
			return nil, errBadBMP
		}
		masks = [4]uint32{le.Uint32(b[54:]), le.Uint32(b[58:]), le.Uint32(b[62:]), 0}
		if (infoLen >= 56 || compression == 6) && len(b) >= 70 {
			masks[3] = le.Uint32(b[66:])
		}
	default:
		return nil, errBadBMP
	}
	rowSize := (bpp*w + 31) / 32 * 4
	if pixOff < 0 || pixOff+rowSize*h > len(b) {
		return nil, errBadBMP
	}
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		row := b[pixOff+y*rowSize:]
		dy := h - 1 - y
		if topDown {
			dy = y
		}
		for x := 0; x < w; x++ {
			var v uint32
			if bpp == 16 {
				v = uint32(le.Uint16(row[2*x:]))
			} else {
				v = le.Uint32(row[4*x:])
			}
			a := uint8(255)
			if masks[3] != 0 {
				a = scaleMasked(v, masks[3])
			}
			img.SetNRGBA(x, dy, color.NRGBA{scaleMasked(v, masks[0]), scaleMasked(v, masks[1]), scaleMasked(v, masks[2]), a})
		}
	}
	return img, nil
}

// scaleMasked extracts the field mask selects from v and scales it to 0..255, rounded
// to nearest as the Rust image crate's BMP decoder (Photon's) does.
func scaleMasked(v, mask uint32) uint8 {
	if mask == 0 {
		return 0
	}
	shift := bits.TrailingZeros32(mask)
	max := uint64(mask >> shift)
	return uint8((uint64((v&mask)>>shift)*255 + max/2) / max)
}
