package hostgit

import (
	"bytes"
	"errors"
	"testing"
)

func TestCapWriter(t *testing.T) {
	tests := []struct {
		name   string
		budget int64
		writes []string
		want   string
		over   bool
	}{
		{"under", 5, []string{"ab", "cd"}, "abcd", false},
		{"exactly", 4, []string{"ab", "cd"}, "abcd", false},
		{"over", 3, []string{"ab", "cd"}, "ab", true},
		{"nothing after over", 3, []string{"ab", "cd", "e"}, "ab", true},
		{"zero budget", 0, []string{"a"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewCapWriter(&buf, tt.budget)
			var err error
			for _, s := range tt.writes {
				if _, e := w.Write([]byte(s)); e != nil && err == nil {
					err = e
				}
			}
			if buf.String() != tt.want {
				t.Errorf("passed on %q, want %q", buf.String(), tt.want)
			}
			if w.Over() != tt.over || errors.Is(err, ErrOver) != tt.over {
				t.Errorf("Over() = %v, err = %v; want over %v", w.Over(), err, tt.over)
			}
		})
	}
}
