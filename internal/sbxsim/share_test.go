//go:build linux

package sbxsim

import (
	"testing"
	"time"
)

func TestShareFrom(t *testing.T) {
	cases := []struct {
		env     map[string]string
		want    *Share
		wantErr bool
	}{
		{env: nil, want: nil},
		{env: map[string]string{"SBXSIM_SHARE": "off"}, want: nil},
		{env: map[string]string{"SBXSIM_SHARE": "fuse"}, want: &Share{Type: "fuse", Cache: "auto", Latency: DefaultShareLatency}},
		{env: map[string]string{"SBXSIM_SHARE": "fuse", "SBXSIM_SHARE_CACHE": "always", "SBXSIM_SHARE_LATENCY": "2ms"},
			want: &Share{Type: "fuse", Cache: "always", Latency: 2 * time.Millisecond}},
		{env: map[string]string{"SBXSIM_SHARE": "fuse", "SBXSIM_SHARE_LATENCY": "0"}, want: &Share{Type: "fuse", Cache: "auto"}},
		{env: map[string]string{"SBXSIM_SHARE": "9p"}, wantErr: true},
		{env: map[string]string{"SBXSIM_SHARE": "fuse", "SBXSIM_SHARE_CACHE": "never"}, wantErr: true},
		{env: map[string]string{"SBXSIM_SHARE": "fuse", "SBXSIM_SHARE_LATENCY": "-1ms"}, wantErr: true},
	}
	for _, tc := range cases {
		got, err := shareFrom(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		if (err != nil) != tc.wantErr {
			t.Errorf("%v: error %v, want error %v", tc.env, err, tc.wantErr)
			continue
		}
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%v: %+v, want %+v", tc.env, got, tc.want)
		}
	}
}
