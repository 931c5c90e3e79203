package lifecycle

import (
	"context"
	"fmt"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// A cloud sandbox lives for its time to live (CloudTTL at creation) and then stops
// (OnTimeoutStop: its work survives, and review collects it). While its session is
// open the session keeps the time to live ahead of it: every TTLEvery it extends it by
// as much, so that it always has about CloudTTL left; never past CloudMaxLife from the
// sandbox's creation, which sbx refuses, and which the status says instead. Once the
// session ends nothing extends it: an idle sandbox stops within CloudTTL.

// DefaultTTLEvery is how often a cloud session extends its sandbox's time to live.
const DefaultTTLEvery = 20 * time.Minute

// CloudLife is what the session knows of its cloud sandbox's time.
type CloudLife struct {
	Expires time.Time // when it stops unless extended again
	Cap     time.Time // CloudMaxLife after its creation: never extended past
	Capped  bool      // the last extension reached Cap: it stops then
	Err     error     // the last extension's failure, if it failed
}

// Status says it in a few words for the status line.
func (l CloudLife) Status() string {
	if l.Expires.IsZero() {
		return ""
	}
	s := "cloud: stops at " + l.Expires.UTC().Format("15:04 UTC")
	switch {
	case l.Capped:
		s += " (sbx's 24 h limit from its creation: land or review the work before)"
	case l.Err != nil:
		s += fmt.Sprintf(" (extending it failed: %v)", l.Err)
	default:
		s += ", extended while the session is open"
	}
	return s
}

// CloudLife returns what the session knows of its cloud sandbox's time (zero for a
// local sandbox, or before the sandbox exists).
func (s *Session) CloudLife() CloudLife {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cloudLife
}

// next is the extension due every interval: as much, in whole minutes (at least one),
// up to Cap; none (false) when less than a minute is left before it.
func (l CloudLife) next(every time.Duration) (time.Duration, bool) {
	room := l.Cap.Sub(l.Expires)
	if room < time.Minute {
		return 0, false
	}
	return max(min(every, room).Truncate(time.Minute), time.Minute), true
}

// startTTL starts extending the cloud sandbox's time to live, from born (its creation,
// or when this session found it), until ctx (the session's life) ends.
func (s *Session) startTTL(ctx context.Context, born time.Time) {
	every := s.TTLEvery
	if every <= 0 {
		every = DefaultTTLEvery
	}
	s.mu.Lock()
	s.cloudLife = CloudLife{Expires: born.Add(sbx.CloudTTL), Cap: born.Add(sbx.CloudMaxLife)}
	s.mu.Unlock()
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			s.mu.Lock()
			l := s.cloudLife
			s.mu.Unlock()
			d, ok := l.next(every)
			if !ok {
				if !l.Capped {
					s.logf("pi-sbx-backend: cloud sandbox %s stops at %s: sbx's 24 h limit from its creation (its work is kept)\n",
						s.Name, l.Cap.UTC().Format(time.RFC3339))
				}
				s.mu.Lock()
				s.cloudLife.Capped = true
				s.mu.Unlock()
				return
			}
			err := s.Client.ExtendTTL(ctx, s.Name, d)
			s.mu.Lock()
			if err == nil {
				s.cloudLife.Expires = s.cloudLife.Expires.Add(d)
				s.cloudLife.Capped = s.cloudLife.Expires.Add(time.Minute).After(s.cloudLife.Cap)
			} else if ctx.Err() == nil {
				s.logf("pi-sbx-backend: extending cloud sandbox %s: %v\n", s.Name, err)
			}
			s.cloudLife.Err = err
			s.mu.Unlock()
		}
	}()
}
