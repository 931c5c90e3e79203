package shell

import "testing"

// Expected strings are what JavaScript's String(n) gives.
func TestJSNumber(t *testing.T) {
	pointOne := 0.1 // a variable, so the sum is computed in float64
	tests := []struct {
		in   float64
		want string
	}{
		{5, "5"},
		{0.5, "0.5"},
		{1.25, "1.25"},
		{120, "120"},
		{2147483.647, "2147483.647"},
		{pointOne + 0.2, "0.30000000000000004"},
		{1e-6, "0.000001"},
		{1e-7, "1e-7"},
		{1.5e-7, "1.5e-7"},
		{1e21, "1e+21"},
		{123456789012345680000, "123456789012345680000"},
		{-2, "-2"},
		{0, "0"},
	}
	for _, tt := range tests {
		if got := jsNumber(tt.in); got != tt.want {
			t.Errorf("jsNumber(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
