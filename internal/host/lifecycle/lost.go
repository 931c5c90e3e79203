package lifecycle

// Lost tells the session that its sandbox is gone although it was made (removed from
// outside: `sbx rm`, a cleanup): the next Ensure creates it again under the same name,
// torn down with the session as the first one was, rather than every later call
// failing. It says so on Progress, once, and reports whether a new one will be made
// (not for a closed session, nor one that has not made its sandbox yet).
func (s *Session) Lost() bool {
	s.mu.Lock()
	if !s.ensured || s.closed || s.removed {
		s.mu.Unlock()
		return false
	}
	s.ensured = false
	s.releaseLocked() // the keep-alive session of the old one ended with it
	s.mu.Unlock()
	s.logf("pi-sbx-backend: sandbox %s was removed from outside; creating it again\n", s.Name)
	return true
}

// Removed tells the session that its sandbox was removed on purpose (docker_sandbox_rm):
// Lost no longer makes it again, so every later call fails closed until a new session.
func (s *Session) Removed() {
	s.mu.Lock()
	s.removed = true
	s.mu.Unlock()
}
