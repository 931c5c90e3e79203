package image

import (
	"encoding/binary"
	"errors"
	"io"
	"os"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"
)

// imageSniffBytes is how much of a file pi inspects to recognise an image.
const imageSniffBytes = 4100

var pngSignature = []byte{0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a}

// DetectFileMimeType is pi's detectSupportedImageMimeTypeFromFile: the image
// type by magic bytes of the first 4100 bytes, or "" for anything else.
func DetectFileMimeType(abs string) (string, error) {
	f, err := os.Open(abs)
	if err != nil {
		return "", fileio.NodeErr(err, "open", abs)
	}
	defer f.Close()
	mime, _, err := DetectMimeType(f, 0)
	return mime, err
}

// DetectMimeType is DetectFileMimeType for a file already open, read from r's current
// offset: the type, and the bytes it read, which a caller reading the file on uses
// instead of opening it again (over a shared workspace each open and read is a round
// trip to the host). It reads up to headSize bytes, at least the 4100 the type is told
// from: a caller that knows the file's size asks for all of it (or its first chunk), so
// a small file takes one read instead of the sniff's and then the rest's.
func DetectMimeType(r io.Reader, headSize int) (string, []byte, error) {
	buf := make([]byte, max(headSize, imageSniffBytes))
	n, err := io.ReadFull(r, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", nil, fileio.NodeErr(err, "read", "")
	}
	return detectImageMimeType(buf[:min(n, imageSniffBytes)]), buf[:n], nil
}

// detectImageMimeType is pi's detectSupportedImageMimeType (src/utils/mime.ts): JPEG
// (not JPEG-LS), PNG with a valid IHDR and no animation, GIF, WebP, and BMP with a sane
// header.
func detectImageMimeType(b []byte) string {
	switch {
	case hasPrefixAt(b, 0, []byte{0xff, 0xd8, 0xff}):
		if len(b) > 3 && b[3] == 0xf7 {
			return ""
		}
		return "image/jpeg"
	case hasPrefixAt(b, 0, pngSignature):
		if isPNG(b) && !isAnimatedPNG(b) {
			return "image/png"
		}
		return ""
	case hasPrefixAt(b, 0, []byte("GIF87a")) || hasPrefixAt(b, 0, []byte("GIF89a")):
		return "image/gif"
	case hasPrefixAt(b, 0, []byte("RIFF")) && hasPrefixAt(b, 8, []byte("WEBP")):
		return "image/webp"
	case hasPrefixAt(b, 0, []byte("BM")) && isBMP(b):
		return "image/bmp"
	}
	return ""
}

func hasPrefixAt(b []byte, off int, prefix []byte) bool {
	if len(b) < off+len(prefix) {
		return false
	}
	for i, c := range prefix {
		if b[off+i] != c {
			return false
		}
	}
	return true
}

func isPNG(b []byte) bool {
	return len(b) >= 16 && binary.BigEndian.Uint32(b[8:]) == 13 && hasPrefixAt(b, 12, []byte("IHDR"))
}

// isAnimatedPNG walks the chunks seen so far: an acTL chunk before the first IDAT marks
// an APNG, which pi does not treat as an image.
func isAnimatedPNG(b []byte) bool {
	off := int64(len(pngSignature))
	for off+8 <= int64(len(b)) {
		length := int64(binary.BigEndian.Uint32(b[off:]))
		switch {
		case hasPrefixAt(b, int(off+4), []byte("acTL")):
			return true
		case hasPrefixAt(b, int(off+4), []byte("IDAT")):
			return false
		}
		next := off + 8 + length + 4
		if next <= off || next > int64(len(b)) {
			return false
		}
		off = next
	}
	return false
}

func isBMP(b []byte) bool {
	if len(b) < 26 {
		return false
	}
	fileSize := binary.LittleEndian.Uint32(b[2:])
	pixelOffset := binary.LittleEndian.Uint32(b[10:])
	dibSize := binary.LittleEndian.Uint32(b[14:])
	if fileSize != 0 && fileSize < 26 {
		return false
	}
	if uint64(pixelOffset) < 14+uint64(dibSize) {
		return false
	}
	if fileSize != 0 && pixelOffset >= fileSize {
		return false
	}
	var planes, bpp uint16
	switch {
	case dibSize == 12:
		planes = binary.LittleEndian.Uint16(b[22:])
		bpp = binary.LittleEndian.Uint16(b[24:])
	case dibSize >= 40 && dibSize <= 124:
		if len(b) < 30 {
			return false
		}
		planes = binary.LittleEndian.Uint16(b[26:])
		bpp = binary.LittleEndian.Uint16(b[28:])
	default:
		return false
	}
	if planes != 1 {
		return false
	}
	switch bpp {
	case 1, 4, 8, 16, 24, 32:
		return true
	}
	return false
}
