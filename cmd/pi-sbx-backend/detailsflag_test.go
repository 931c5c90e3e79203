package main

import "testing"

func TestContentOnly(t *testing.T) {
	tests := []struct {
		flag, env string
		want      bool
		wantErr   bool
	}{
		{flag: "", env: "", want: true}, // the obvious editor config gets content only
		{flag: "none", want: true},
		{flag: "structured", want: false},
		{env: "structured", want: false},
		{env: "none", want: true},
		{flag: "none", env: "structured", want: true}, // the flag wins
		{flag: "structured", env: "none", want: false},
		{flag: "some", wantErr: true},
		{env: "some", wantErr: true},
	}
	for _, tc := range tests {
		got, err := contentOnly(tc.flag, tc.env)
		if (err != nil) != tc.wantErr {
			t.Errorf("contentOnly(%q, %q) error = %v, want error %v", tc.flag, tc.env, err, tc.wantErr)
			continue
		}
		if err == nil && got != tc.want {
			t.Errorf("contentOnly(%q, %q) = %v, want %v", tc.flag, tc.env, got, tc.want)
		}
	}
}
