package session

import "github.com/pi-sbx/pi-sbx-backend/internal/host/deploy"

// Deployer builds the docker_* tools for the session's sandbox; forceGC is gc --force
// (review sandboxes with unlanded work removed, their work fetched first).
func (s *Session) Deployer(forceGC bool) (*deploy.Deployer, error) {
	return deploy.New(deploy.Config{
		Sbx: s.Client, Sandbox: s.Ensure, Name: s.Name, Workspace: s.Workspace,
		ReadOnly: s.ReadOnly, Pinned: s.Pinned, Teardown: s.Teardown,
		Settings: s.Settings, Owners: s.Owners,
		Removed: s.Session.Removed, SaveWork: s.SaveWork, KeepWork: s.KeepWork, ForceGC: forceGC,
		UsedCloud: s.UsedCloud,
	})
}
