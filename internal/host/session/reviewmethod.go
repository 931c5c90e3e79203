package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/review"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/hostgit"
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
	// HunksLeft is, after a land of hunks, how many of the file's hunks are left.
	HunksLeft int `json:"hunks_left,omitempty"`
	// Hunks is, for list_hunks, the named file's hunks.
	Hunks *hunkList `json:"hunks,omitempty"`
}

// hunkList is one file's hunks, numbered as review numbers them.
type hunkList struct {
	Path  string     `json:"path"`
	Base  string     `json:"base"` // the file's blob the hunks apply to: land's hunk_base
	Hunks []hunkData `json:"hunks"`
}

// hunkData is one hunk of a hunkList.
type hunkData struct {
	N       int    `json:"n"`
	Header  string `json:"header"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Text    string `json:"text"` // its header and lines, as the diff has them
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
		sel := review.Selection{All: args.All, Paths: args.Paths, Head: args.Head, Hunks: args.Hunks, HunkBase: args.HunkBase}
		landed, err := review.Land(ctx, g, work, sel, &text)
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
		res.HunksLeft = landed.HunksLeft
		if len(args.Hunks) > 0 {
			fmt.Fprintf(&text, "landed %d hunk(s) of %s; %d of its hunks left\n", len(args.Hunks), review.Quote(args.Paths[0]), landed.HunksLeft)
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
	if args.ListHunks && !args.Land {
		if res.Hunks, err = listHunks(ctx, g, work, files, args.Paths); err != nil {
			return nil, err
		}
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

// listHunks is the hunks of the one file paths names.
func listHunks(ctx context.Context, g *hostgit.Git, work review.Changes, files []review.File, paths []string) (*hunkList, error) {
	if len(paths) != 1 {
		return nil, fmt.Errorf("%s: list_hunks wants exactly one path", tools.ReviewName)
	}
	p := path.Clean(paths[0])
	for _, f := range files {
		if f.Path != p {
			continue
		}
		hunks, err := review.Hunks(ctx, g, work, f)
		if err != nil {
			return nil, err
		}
		out := &hunkList{Path: f.Path, Base: f.OldID, Hunks: make([]hunkData, len(hunks))}
		for i, h := range hunks {
			out.Hunks[i] = hunkData{N: h.N, Header: h.Header, Added: h.Added, Removed: h.Removed, Text: h.Text}
		}
		return out, nil
	}
	return nil, fmt.Errorf("no change to land at %s (see pi-sbx-backend review)", review.Quote(p))
}
