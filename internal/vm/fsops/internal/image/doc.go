// Package image is read's handling of image files as pi's: the MIME type sniffed from
// the first bytes, then the image decoded (PNG, JPEG, GIF, WebP and BMP), turned upright
// by its EXIF orientation, resized to pi's limits and returned base64-encoded.
//
// It knows image formats and pi's image limits, nothing of paths or of the other
// tools; of this module it imports fileio and pi/{js,result}.
package image
