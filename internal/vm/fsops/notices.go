package fsops

import (
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/truncate"
)

// byteLimitNotice is pi's notice for output cut at 50KB.
func byteLimitNotice() string {
	return truncate.FormatSize(truncate.DefaultMaxBytes) + " limit reached"
}

// withNotices is the listing tools' result: pi's bracketed notices, joined by ". ",
// after a blank line. Without notices pi returns no details at all.
func withNotices(text string, notices []string, details any) result.Result {
	if len(notices) == 0 {
		return result.Text(text, nil)
	}
	return result.Text(text+"\n\n["+strings.Join(notices, ". ")+"]", details)
}
