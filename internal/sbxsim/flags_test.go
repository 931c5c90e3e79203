//go:build linux

package sbxsim

import (
	"reflect"
	"testing"
)

func TestParseFlags(t *testing.T) {
	specs := execFlags
	tests := []struct {
		name         string
		args         []string
		interspersed bool
		want         map[string][]string
		wantArgs     []string
		wantErr      string
	}{
		{"cluster and value", []string{"-it", "-e", "A=1", "box", "ls", "-l"}, false,
			map[string][]string{"interactive": {"true"}, "tty": {"true"}, "env": {"A=1"}}, []string{"box", "ls", "-l"}, ""},
		{"attached values", []string{"-eA=1", "--env=B=2", "--workdir", "/w", "box", "--", "x"}, false,
			map[string][]string{"env": {"A=1", "B=2"}, "workdir": {"/w"}}, []string{"box", "--", "x"}, ""},
		{"double dash first", []string{"--", "-i"}, false, map[string][]string{}, []string{"-i"}, ""},
		{"interspersed", []string{"shell", "-q", "/p", "--name", "n"}, true,
			map[string][]string{"quiet": {"true"}, "name": {"n"}}, []string{"shell", "/p"}, ""},
		{"unknown long", []string{"--nope"}, false, nil, nil, "unknown flag: --nope"},
		{"unknown short", []string{"-x"}, false, nil, nil, "unknown shorthand flag: 'x' in -x"},
		{"missing value", []string{"-e"}, false, nil, nil, "flag needs an argument: 'e' in -e"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := specs
			if tt.interspersed {
				s = createFlags
			}
			fs, err := parseFlags(s, tt.args, tt.interspersed)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fs.values, tt.want) || !reflect.DeepEqual(fs.args, tt.wantArgs) {
				t.Errorf("got %v %q, want %v %q", fs.values, fs.args, tt.want, tt.wantArgs)
			}
		})
	}
}
