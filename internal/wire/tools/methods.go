package tools

import (
	"github.com/google/jsonschema-go/jsonschema"
)

// Serve methods: tools a client calls with tools/call that serve leaves out of
// tools/list, so no model ever sees them (pi's extension uses them for `!` commands and
// its status line; an editor can run a task with them).
const (
	PtyExecName   = "pi_sbx_pty_exec"
	PtyResizeName = "pi_sbx_pty_resize"
	StatusName    = "pi_sbx_status"
	ReviewName    = "pi_sbx_review"
	NetworkName   = "pi_sbx_network"
	CallsName     = "pi_sbx_calls"
	UndoName      = "pi_sbx_undo"
)

// NetworkArgs are pi_sbx_network's arguments.
type NetworkArgs struct {
	Action string   `json:"action"` // allow | deny
	Hosts  []string `json:"hosts"`
	Scope  string   `json:"scope,omitempty"` // session (default) | project | global
}

// Network describes pi_sbx_network: allow or deny hosts in sbx's network policy for
// this session's sandbox, this project's sandboxes, or every sandbox (pi's
// /sandbox allow HOST).
func Network() *Tool {
	return &Tool{
		Name: NetworkName,
		Description: "Allow or deny hosts in the sandbox's network policy (sbx's proxy): scope session (this session's " +
			"sandbox; sbx scopes an allow only under the deny-all preset), project (every sandbox this project's sessions " +
			"create, remembered outside the workspace) or global (every sandbox). Not offered in tools/list.",
		Schema: Object([]string{"action", "hosts"}, map[string]*jsonschema.Schema{
			"action": {Type: "string", Enum: []any{"allow", "deny"}, Description: "allow or deny"},
			"hosts":  {Type: "array", Items: String("example.com, *.example.com, an IP or CIDR, optionally :PORT"), Description: "The hosts"},
			"scope":  {Type: "string", Enum: []any{"session", "project", "global"}, Description: "Where the rule holds (default session)"},
		}),
	}
}

// PtyExecArgs are pi_sbx_pty_exec's arguments.
type PtyExecArgs struct {
	Command string            `json:"command"`
	ID      string            `json:"id,omitempty"` // names the call for pi_sbx_pty_resize
	Cwd     string            `json:"cwd,omitempty"`
	Cols    uint16            `json:"cols,omitempty"`
	Rows    uint16            `json:"rows,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// PtyExec describes pi_sbx_pty_exec: a shell command on a terminal in the sandbox, its raw
// output streamed as progress notifications, its exit code in structuredContent.
func PtyExec() *Tool {
	return &Tool{
		Name: PtyExecName,
		Description: "Run a shell command on a pseudo-terminal in the sandbox, as a user would in an interactive shell " +
			"(programs see a tty: colours, progress bars). The terminal's output streams as progress notifications " +
			"(message = the new output, raw, UTF-8); the result's structuredContent is {exit_code}, its text the last 50KB " +
			"of output. Cancelling the request kills the command's process group. Not offered in tools/list.",
		Schema: Object([]string{"command"}, map[string]*jsonschema.Schema{
			"command": String("Shell command to run (bash -c, or sh -c where the sandbox has no bash)"),
			"id":      String("A name for this call, unique among the running ones, that pi_sbx_pty_resize uses"),
			"cwd":     String("Working directory (default: serve's working directory; relative to it)"),
			"cols":    termSize("Terminal width in columns (default 80)"),
			"rows":    termSize("Terminal height in rows (default 24)"),
			"env": {Type: "object", Description: "Extra environment variables for the command",
				AdditionalProperties: &jsonschema.Schema{Type: "string"}},
		}),
	}
}

// termSize is the schema of a terminal's width or height.
func termSize(desc string) *jsonschema.Schema {
	s := Integer(desc)
	lo, hi := 1.0, 10000.0
	s.Minimum, s.Maximum = &lo, &hi
	return s
}

// PtyResizeArgs are pi_sbx_pty_resize's arguments.
type PtyResizeArgs struct {
	ID   string `json:"id"`
	Cols uint16 `json:"cols"`
	Rows uint16 `json:"rows"`
}

// PtyResize describes pi_sbx_pty_resize: the new window size of a running
// pi_sbx_pty_exec call, which its command gets as SIGWINCH, as in a terminal.
func PtyResize() *Tool {
	return &Tool{
		Name: PtyResizeName,
		Description: "Resize the terminal of a running pi_sbx_pty_exec call (named by its id): its command gets " +
			"SIGWINCH, as in a terminal window that was resized. Not offered in tools/list.",
		Schema: Object([]string{"id", "cols", "rows"}, map[string]*jsonschema.Schema{
			"id":   String("The id the pi_sbx_pty_exec call was given"),
			"cols": termSize("Terminal width in columns"),
			"rows": termSize("Terminal height in rows"),
		}),
	}
}

// Status describes pi_sbx_status: it makes sure the session's sandbox exists and its
// agent runs (creating them if needed, so a client can pre-warm) and reports the
// sandbox's name and settings in structuredContent.
func Status() *Tool {
	return &Tool{
		Name: StatusName,
		Description: "Create the session's sandbox and start its agent if they are not running yet, then report " +
			"{sandbox, status, workspace, workspace_mode, env_mode, teardown, reuse, shell} in structuredContent. " +
			"Not offered in tools/list.",
		Schema: Object(nil, map[string]*jsonschema.Schema{}),
	}
}

// ReviewArgs are pi_sbx_review's arguments.
type ReviewArgs struct {
	Land  bool     `json:"land,omitempty"`
	All   bool     `json:"all,omitempty"`
	Paths []string `json:"paths,omitempty"`
	Stat  bool     `json:"stat,omitempty"`
	Head  string   `json:"head,omitempty"`
	// Hunks, with land and one path: only those hunks of that file (as list_hunks
	// numbers them); HunkBase: the base its hunks were numbered against.
	Hunks    []int  `json:"hunks,omitempty"`
	HunkBase string `json:"hunk_base,omitempty"`
	// ListHunks, without land and with one path: that file's hunks as data.
	ListHunks bool `json:"list_hunks,omitempty"`
}

// Review describes pi_sbx_review: the review of a review-mode sandbox's work, or with
// land, writing chosen changes of it into the host workspace (pi-sbx-backend review and
// land, through serve).
func Review() *Tool {
	return &Tool{
		Name: ReviewName,
		Description: "Review mode: what the session's sandbox changed against the workspace as it was when it started, " +
			"the files that would run on the host first. The text is pi-sbx-backend review's (the list, then unified diffs " +
			"unless stat); structuredContent is {sandbox, summary, files:[{path, old_path, status, old_mode, new_mode, " +
			"binary, added, removed, risks}], head}. With land: writes paths (or with all, every change but the flagged ones, " +
			"which must be named) into the host workspace, refusing all of it when one changed on the host since the start; " +
			"structuredContent then also has {landed, held, refused:[{path, why}]}; head refuses it if the work is no longer " +
			"the one reviewed. With list_hunks and one path: structuredContent also has hunks:{path, base, hunks:[{n, header, " +
			"added, removed, text}]}, that file's hunks as the review numbers them; land with hunks (and that path alone) " +
			"lands only those, hunk_base (the base listed) refusing it if a land has moved the file since. " +
			"Not offered in tools/list.",
		Schema: Object(nil, map[string]*jsonschema.Schema{
			"land":  Boolean("Write the chosen changes into the host workspace instead of showing them"),
			"all":   Boolean("With land: every change except the flagged ones"),
			"paths": {Type: "array", Description: "Files or directories, relative to the workspace root", Items: String("a path")},
			"stat":  Boolean("The list of files only, without the diffs"),
			"head":  String("With land: the head a review returned; the land is refused if the work has changed since"),
			"hunks": {Type: "array", Description: "With land and one path: land only these hunks of it (numbered from 1)",
				Items: Integer("a hunk's number")},
			"hunk_base":  String("With hunks: the base list_hunks gave; the land is refused if the file's base has moved since"),
			"list_hunks": Boolean("Without land, with one path: that file's hunks as data"),
		}),
	}
}

// Calls describes pi_sbx_calls: review mode's journal, one checkpoint per call that
// changed the sandbox's workspace (pi-sbx-backend review --calls, as data).
func Calls() *Tool {
	return &Tool{
		Name: CallsName,
		Description: "Review mode's journal: every call that changed the sandbox's workspace, oldest first. The text is " +
			"pi-sbx-backend review --calls's (one line per checkpoint); structuredContent is {sandbox, at, start, calls:[{n, time, " +
			"client, call_id, tool, args, commit, tree, parent, files, added, removed}]}, at being the last checkpoint's " +
			"number (calls leaves out checkpoint 0, the start: that is start). Not offered in tools/list.",
		Schema: Object(nil, map[string]*jsonschema.Schema{}),
	}
}

// UndoArgs are pi_sbx_undo's arguments: the checkpoint to restore (To, 0 the start) or
// how many of the last ones to undo (Last; 1 without either).
type UndoArgs struct {
	To     *int `json:"to,omitempty"`
	Last   int  `json:"last,omitempty"`
	DryRun bool `json:"dry_run,omitempty"`
}

// Undo describes pi_sbx_undo: reset the sandbox's workspace to a checkpoint of the
// journal (pi-sbx-backend undo).
func Undo() *Tool {
	return &Tool{
		Name: UndoName,
		Description: "Review mode: reset the sandbox's workspace (never the host's) to a checkpoint of the journal: to " +
			"(a checkpoint's number, 0 the start) or the one before the last `last` checkpoints (default 1). The undo is a " +
			"checkpoint of its own, so it can be undone. With dry_run nothing changes: the answer says what would be " +
			"restored. structuredContent is {sandbox, target:{n, tool, call_id, ...}, warnings, checkpoint, done}; warnings " +
			"name the processes holding files in the workspace. Not offered in tools/list.",
		Schema: Object(nil, map[string]*jsonschema.Schema{
			"to":      Integer("The checkpoint to restore (0: the workspace before the first call)"),
			"last":    Integer("Undo the last N checkpoints"),
			"dry_run": Boolean("Say what would be restored and which processes hold files, changing nothing"),
		}),
	}
}

// JournalName is the agent's journal method: checkpoints of a review-mode workspace,
// taken and restored in the VM (the host calls it; serve does not offer it).
const JournalName = "pi_sbx_journal"

// JournalArgs are pi_sbx_journal's arguments.
type JournalArgs struct {
	Op     string `json:"op"` // checkpoint | restore | holders
	Root   string `json:"root"`
	GitDir string `json:"git_dir,omitempty"`
	Index  string `json:"index,omitempty"`
	// checkpoint: the previous checkpoint (commit and tree), the ref and message of the new one
	Parent     string `json:"parent,omitempty"`
	ParentTree string `json:"parent_tree,omitempty"`
	Ref        string `json:"ref,omitempty"`
	Message    string `json:"message,omitempty"`
	// Paths, when set, are the only files the call can have changed (absolute).
	Paths []string `json:"paths,omitempty"`
	// restore: the checkpoint whose files the work tree gets
	Target string `json:"target,omitempty"`
}

// Journal describes pi_sbx_journal (the agent's, called by the host only): op checkpoint
// commits the work tree (git add -A with a private index) on a private ref unless its
// tree is parent_tree's; op restore writes target's files over the work tree; op holders
// lists the processes with files or a working directory under root.
func Journal() *Tool {
	return &Tool{
		Name: JournalName,
		Description: "Review mode's journal, in the VM: checkpoint (a commit of the work tree on a private ref, with a " +
			"private index; nothing when its tree is parent_tree), restore (target's files over the work tree) or holders " +
			"(the processes holding files under root). structuredContent: {commit, tree, changed} or {holders}. Called by " +
			"the host; not offered in tools/list.",
		Schema: Object([]string{"op", "root"}, map[string]*jsonschema.Schema{
			"op":          {Type: "string", Enum: []any{"checkpoint", "restore", "holders"}, Description: "what to do"},
			"root":        String("The work tree (absolute)"),
			"git_dir":     String("The repository of the checkpoints (absolute)"),
			"index":       String("The private index file (absolute)"),
			"parent":      String("checkpoint: the previous checkpoint's commit"),
			"parent_tree": String("checkpoint: the previous checkpoint's tree"),
			"ref":         String("checkpoint: the ref of the new checkpoint"),
			"message":     String("checkpoint: its commit message"),
			"paths":       {Type: "array", Items: String("an absolute path"), Description: "checkpoint: the only files the call can have changed"},
			"target":      String("restore: the checkpoint to restore"),
		}),
	}
}
