package backend

import (
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/result"
)

// snapshotText is the text of a partial result (bash's output tail so far).
func snapshotText(r result.Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}
