package shell

import (
	"errors"
	"fmt"
	"math"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/js"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/truncate"
)

// The messages below are pi's exact texts, capitals and all: the model reads them.

// format builds pi's final result or thrown error from the output and the ending.
// lastLineBytes is the size of the unfinished last line, which pi's notice for a cut
// last line reports.
func format(snap snapshot, lastLineBytes int, end ending, timeout *float64) (result.Result, error) {
	t := snap.truncation
	text := t.Content
	var details any
	if t.Truncated {
		details = BashDetails{Truncation: &t, FullOutputPath: snap.path}
		full := "Full output: " + snap.path
		if snap.saveErr != nil {
			full = fmt.Sprintf("Full output not saved: %v", snap.saveErr)
		}
		start, last := t.TotalLines-t.OutputLines+1, t.TotalLines
		switch {
		case t.LastLinePartial:
			text += fmt.Sprintf("\n\n[Showing last %s of line %d (line is %s). %s]",
				truncate.FormatSize(t.OutputBytes), last, truncate.FormatSize(lastLineBytes), full)
		case *t.TruncatedBy == "lines":
			text += fmt.Sprintf("\n\n[Showing lines %d-%d of %d. %s]", start, last, t.TotalLines, full)
		default:
			text += fmt.Sprintf("\n\n[Showing lines %d-%d of %d (%s limit). %s]",
				start, last, t.TotalLines, truncate.FormatSize(truncate.DefaultMaxBytes), full)
		}
	}
	// Abort and timeout keep an empty text empty; the others say "(no output)".
	switch {
	case end.aborted:
		return result.Result{}, errors.New(withStatus(text, "Command aborted"))
	case end.timedOut:
		status := fmt.Sprintf("Command timed out after %s seconds", js.String(*timeout))
		if end.shellExited {
			secs := math.Floor(end.exitedAfter.Seconds()*10+0.5) / 10 // Math.round(ms / 100) / 10
			status += fmt.Sprintf(". The shell exited with code %d after %s seconds, but background processes it started kept writing output until the timeout.",
				end.code, js.String(secs))
		}
		return result.Result{}, errors.New(withStatus(text, status))
	}
	if text == "" {
		text = "(no output)"
	}
	switch {
	case !end.hasCode:
		return result.Result{}, errors.New(withStatus(text, "Command terminated without an exit code"))
	case end.code != 0:
		return result.Result{
			Content: []result.Content{result.TextBlock(withStatus(text, fmt.Sprintf("Command exited with code %d", end.code)))},
			Details: details,
			IsError: true,
			Outcome: result.Exited(end.code),
		}, nil
	}
	return result.Result{Content: []result.Content{result.TextBlock(text)}, Details: details, Outcome: result.Exited(0)}, nil
}

func withStatus(text, status string) string {
	if text == "" {
		return status
	}
	return text + "\n\n" + status
}
