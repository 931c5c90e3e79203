package js

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Expected strings are what JavaScript's String(n) gives.
func TestString(t *testing.T) {
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
		{123456789012, "123456789012"},
		{1.5e21, "1.5e+21"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, String(tt.in), "%v", tt.in)
	}
}

func TestToFixed(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{1.25, "1.25"}, {1.125, "1.13"}, {1.005, "1.00"}, {1.5, "1.50"}, {2, "2.00"}, {0.995, "0.99"}, {1.3333333, "1.33"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ToFixed(tt.in, 2), "%v", tt.in)
	}
}
