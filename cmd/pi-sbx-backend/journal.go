package main

import (
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/journal"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/journal/recorder"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/review/keep"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/settings"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
)

// journalRecorder is the journal of review sandbox name on workspace, whose checkpoints
// agent takes.
func journalRecorder(st settings.Settings, workspace, name string, agent mcpserver.Caller) (*recorder.Recorder, error) {
	store, err := keep.NewStore(st.StateHome)
	if err != nil {
		return nil, err
	}
	kind, root := keep.Plan(workspace)
	return &recorder.Recorder{
		Journal: journal.Open(store.Dir, name),
		VM:      journal.VMFor(name, root, kind == keep.KindClone),
		Agent:   agent,
	}, nil
}
