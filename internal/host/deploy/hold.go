package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// A bind mount's source is a path, and the daemon resolves it when the container
// starts: a container that can write the workspace could swap a checked directory for a
// link to the daemon's socket between the check and the start. So while docker_run
// resolves its volume sources (in the sandbox) and the container starts, every running
// container that can write the workspace is paused: nothing of the docker tools' making
// can rename anything then. (Processes outside containers, started by bash, can; they
// hold the daemon's socket anyway — the microVM is the boundary, confinement a guard.)

// holdWriters pauses the running containers with a writable bind mount that overlaps
// the workspace and returns the function that resumes them (safe to call twice). Holds
// are serialized: two runs never pause and resume each other's writers.
func (d *Deployer) holdWriters(ctx context.Context) (release func(), err error) {
	return d.holdWritersBut(ctx, "")
}

// holdWritersBut is holdWriters leaving compose project's own containers running:
// compose stops and recreates them itself.
func (d *Deployer) holdWritersBut(ctx context.Context, project string) (release func(), err error) {
	d.hold.Lock()
	unlock := sync.OnceFunc(d.hold.Unlock)
	defer func() {
		if err != nil {
			unlock()
		}
	}()
	writers, err := d.workspaceWriters(ctx, project)
	if err != nil {
		return nil, err
	}
	if len(writers) == 0 {
		return unlock, nil
	}
	if _, err := d.dockerOK(ctx, ShortTimeout, "pausing the containers that can write the workspace", append([]string{"pause"}, writers...)...); err != nil {
		return nil, err
	}
	return sync.OnceFunc(func() {
		// Resumed even when the call was cancelled: a paused container is the user's.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShortTimeout)
		defer cancel()
		d.docker(rctx, ShortTimeout, append([]string{"unpause"}, writers...)...)
		unlock()
	}), nil
}

// workspaceWriters lists the running, unpaused containers that can write the workspace
// (but those of compose project, when given).
func (d *Deployer) workspaceWriters(ctx context.Context, project string) ([]string, error) {
	o, err := d.dockerOK(ctx, ShortTimeout, "docker ps", "ps", "--quiet", "--no-trunc", "--filter=status=running")
	if err != nil {
		return nil, err
	}
	ids := strings.Fields(o.stdout)
	if len(ids) == 0 {
		return nil, nil
	}
	o, err = d.dockerOK(ctx, ShortTimeout, "docker inspect", append([]string{"inspect", "--type=container", "--format", "{{.Id}}\t{{index .Config.Labels \"com.docker.compose.project\"}}\t{{json .Mounts}}"}, ids...)...)
	if err != nil {
		return nil, err
	}
	var writers []string
	for _, line := range strings.Split(strings.TrimSpace(o.stdout), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 || (project != "" && f[1] == project) {
			continue
		}
		id, mounts := f[0], f[2]
		var ms []struct {
			Type, Source string
			RW           bool
		}
		if err := json.Unmarshal([]byte(mounts), &ms); err != nil {
			return nil, fmt.Errorf("docker inspect %s: %w", short(id), err)
		}
		for _, m := range ms {
			if m.Type == "bind" && m.RW && (within(d.Workspace, m.Source) || within(m.Source, d.Workspace)) {
				writers = append(writers, id)
				break
			}
		}
	}
	return writers, nil
}

// whenStarted calls release once container name has started (or done is closed).
func (d *Deployer) whenStarted(ctx context.Context, name string, done <-chan struct{}, release func()) {
	defer release()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
		o, err := d.docker(ctx, ShortTimeout, "inspect", "--type=container", "--format", "{{.State.StartedAt}}", name)
		if err == nil && o.code == 0 && !strings.HasPrefix(strings.TrimSpace(o.stdout), "0001-") {
			return
		}
	}
}
