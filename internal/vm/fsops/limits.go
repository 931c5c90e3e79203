package fsops

import (
	"errors"
	"math"
)

// newError makes a pi error whose message is shown to the model verbatim.
func newError(msg string) error { return errors.New(msg) }

// effectiveLimit is pi's Math.max(1, Math.floor(limit ?? def)).
func effectiveLimit(limit *float64, def int) int {
	if limit == nil || math.IsNaN(*limit) {
		if limit != nil {
			return 1 // Math.max(1, NaN) is NaN in JS; a NaN limit never reaches a tool via JSON
		}
		return def
	}
	f := math.Floor(*limit)
	if f < 1 {
		return 1
	}
	if f > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(f)
}
