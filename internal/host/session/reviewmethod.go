package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// Collector returns the session's review-mode work, fetched fresh.
type Collector func(ctx context.Context) (review.Changes, error)

// ReviewRoute is serve's pi_sbx_review (unlisted), answered here on the host from the
// work collect returns; environ is the host environment git's basics come from.
func ReviewRoute(collect Collector, environ []string) mcpserver.Route {
	return mcpserver.Route{Tool: tools.Review(), Caller: mcpserver.Typed((&reviewCaller{collect: collect, environ: environ, maxText: maxReviewText}).call), Unlisted: true}
}

// maxReviewText bounds the review's text in one answer: a generated file's diff can be
// far more than a client should hold (or pi's view show); the command prints it all.
const maxReviewText = 16 << 20

type reviewCaller struct {
	collect Collector
	environ []string
	maxText int
}

// reviewFile is one file of pi_sbx_review's structuredContent.
type reviewFile struct {
	Path    string        `json:"path"`
	OldPath string        `json:"old_path,omitempty"`
	Status  review.Status `json:"status"`
	OldMode string        `json:"old_mode,omitempty"`
	NewMode string        `json:"new_mode,omitempty"`
	Binary  bool          `json:"binary"`
	Added   int           `json:"added"`
	Removed int           `json:"removed"`
	Risks   []string      `json:"risks"`
}

// reviewResult is pi_sbx_review's structuredContent.
type reviewResult struct {
	Sandbox string           `json:"sandbox"`
	Summary string           `json:"summary"` // "review: N files changed", for a status line
	Head    string           `json:"head"`    // the work shown (its tree): land's head to land exactly it
	Files   []reviewFile     `json:"files"`
	Landed  []string         `json:"landed,omitempty"`
	Held    []string         `json:"held,omitempty"`
	Refused []review.Refusal `json:"refused,omitempty"`
}

// call answers pi_sbx_review.
func (c *reviewCaller) call(ctx context.Context, call mcpserver.Call) (*mcp.CallToolResult, error) {
	var args tools.ReviewArgs
	if len(call.Args) > 0 {
		if err := json.Unmarshal(call.Args, &args); err != nil {
			return nil, fmt.Errorf("%s arguments: %w", tools.ReviewName, err)
		}
	}
	work, err := c.collect(ctx)
	if err != nil {
		return nil, err
	}
	g := work.Git(c.environ)
	if work, err = review.WorkID(ctx, g, work); err != nil {
		return nil, err
	}
	var text bytes.Buffer
	res := reviewResult{Sandbox: work.Sandbox, Head: work.Work}
	if args.Land {
		landed, err := review.Land(ctx, g, work, review.Selection{All: args.All, Paths: args.Paths, Head: args.Head}, &text)
		var refused *review.RefusedError
		switch {
		case errors.As(err, &refused):
			res.Refused = refused.Refusals
			r := result.Text(err.Error(), res)
			r.IsError = true
			return mcpserver.ToMCP(r)
		case err != nil:
			return nil, err
		}
		for _, f := range landed.Files {
			res.Landed = append(res.Landed, f.Path)
		}
		for _, f := range landed.Held {
			res.Held = append(res.Held, f.Path)
		}
		fmt.Fprintf(&text, "landed %d change(s) from %s; %d left\n", len(landed.Files), work.Sandbox, landed.Left)
		if landed.Base != "" {
			work.Base = landed.Base // what is left is against what landed
		}
	}
	files, err := review.Files(ctx, g, work)
	if err != nil {
		return nil, err
	}
	res.Summary = review.Summary(files)
	res.Files = make([]reviewFile, len(files))
	for i, f := range files {
		res.Files[i] = reviewFile{Path: f.Path, OldPath: f.OldPath, Status: f.Status, OldMode: f.OldMode, NewMode: f.NewMode,
			Binary: f.Binary, Added: f.Added, Removed: f.Removed, Risks: append([]string{}, f.Risks...)}
	}
	if !args.Land {
		shown := review.Filter(files, args.Paths)
		if args.Stat {
			review.WriteStat(&text, work, shown)
		} else if err := review.Write(ctx, &text, g, work, shown); err != nil {
			return nil, err
		}
	}
	return mcpserver.ToMCP(result.Text(cut(text.String(), c.maxText, work.Root), res))
}

// cut keeps the text whole up to max bytes, else its lines up to there and a line saying
// how much more there is and where to see it.
func cut(text string, max int, root string) string {
	if len(text) <= max {
		return text
	}
	keep := strings.LastIndexByte(text[:max], '\n') + 1
	return fmt.Sprintf("%s[the review goes on for %d more bytes: pi-sbx-backend review --workspace %s shows it all]\n", text[:keep], len(text)-keep, root)
}
