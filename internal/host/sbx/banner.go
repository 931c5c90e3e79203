package sbx

import (
	"bytes"
	"io"
	"regexp"
)

// When its daemon was not running, sbx starts it and prints, on stdout and before the
// command's own output (the JSON of `ls --json`, the first line a command prints, the
// agent channel's first protocol line):
//
//	Starting sandboxd daemon...
//	Daemon started (PID 12345)
//	Logs: /Users/me/.local/state/sandboxes/sandboxd/daemon.log
//
// (SBX#201). bannerSkipper drops exactly those lines from the start of a stream and
// passes everything after the first line that is not one of them untouched.
var bannerLine = regexp.MustCompile(`^(Starting sandboxd daemon\.\.\.|Daemon started \(PID \d+\)|Logs: .*)\r?$`)

// bannerPrefixes are how banner lines begin: a partial first line that could still
// become one is held back until it is complete.
var bannerPrefixes = [][]byte{[]byte("Starting sandboxd daemon..."), []byte("Daemon started (PID "), []byte("Logs: ")}

// maxBannerLine bounds what is held back: a longer line is no banner.
const maxBannerLine = 4096

// bannerSkipper is an io.Writer in front of w that drops the daemon banner.
type bannerSkipper struct {
	w       io.Writer
	head    []byte // held back: a possible banner line, not yet complete
	passing bool   // past the banner: everything goes straight to w
}

// SkipBanner returns a writer that forwards to w all but a leading daemon banner.
func SkipBanner(w io.Writer) io.Writer { return &bannerSkipper{w: w} }

// Write implements io.Writer. It reports len(p) written unless w fails.
func (b *bannerSkipper) Write(p []byte) (int, error) {
	if b.passing {
		return b.w.Write(p)
	}
	n := len(p)
	b.head = append(b.head, p...)
	for !b.passing {
		i := bytes.IndexByte(b.head, '\n')
		if i < 0 {
			if couldBeBanner(b.head) {
				return n, nil // wait for the rest of the line
			}
			break
		}
		if !bannerLine.Match(b.head[:i]) {
			break
		}
		b.head = b.head[i+1:]
	}
	b.passing = true
	rest := b.head
	b.head = nil
	if len(rest) == 0 {
		return n, nil
	}
	if _, err := b.w.Write(rest); err != nil {
		return 0, err
	}
	return n, nil
}

// Flush passes on a held-back partial line (the stream ended without a newline).
func (b *bannerSkipper) Flush() error {
	b.passing = true
	if len(b.head) == 0 {
		return nil
	}
	_, err := b.w.Write(b.head)
	b.head = nil
	return err
}

func couldBeBanner(partial []byte) bool {
	if len(partial) > maxBannerLine {
		return false
	}
	for _, pre := range bannerPrefixes {
		n := min(len(pre), len(partial))
		if bytes.Equal(partial[:n], pre[:n]) {
			return true
		}
	}
	return false
}

// bannerReader is SkipBanner for a stream read rather than written (the agent
// channel's stdout).
type bannerReader struct {
	r    io.Reader
	buf  bytes.Buffer
	skip *bannerSkipper
	err  error
}

// SkipBannerReader returns a reader of r without a leading daemon banner.
func SkipBannerReader(r io.Reader) io.Reader {
	br := &bannerReader{r: r}
	br.skip = &bannerSkipper{w: &br.buf}
	return br
}

// Read implements io.Reader: until the banner is behind, it reads through the skipper;
// then it reads r directly.
func (br *bannerReader) Read(p []byte) (int, error) {
	for br.buf.Len() == 0 {
		if br.skip.passing {
			return br.r.Read(p)
		}
		if br.err != nil {
			_ = br.skip.Flush()
			if br.buf.Len() == 0 {
				return 0, br.err
			}
			break
		}
		n, err := br.r.Read(p)
		if n > 0 {
			_, _ = br.skip.Write(p[:n])
		}
		br.err = err
	}
	return br.buf.Read(p)
}
