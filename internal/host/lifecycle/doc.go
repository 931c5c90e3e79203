// Package lifecycle is the life of a session's sandbox on the host, built on the sbx
// door (internal/host/sbx): the Session that creates it on first need and tears it down
// on shutdown (remove, stop or keep), its name, workspace modes and project reuse, the
// leases of every process using it, the owner records and the teardown watchdog that
// outlive a killed backend, the keep-alive that holds sbx's auto-stop off, a cloud
// sandbox's time to live, what happens when it is lost, and GC of the sandboxes left
// behind.
//
// It runs sbx only through the door's Client (internal/arch checks it): it starts no
// process of its own.
package lifecycle
