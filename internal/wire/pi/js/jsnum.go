// Package js formats numbers exactly as JavaScript does, because pi interpolates the
// model's numbers (offsets, limits, timeouts, scale factors) into its messages verbatim.
package js

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// String formats f as JavaScript's String(f) / Number.prototype.toString: 5 → "5",
// 0.5 → "0.5", 1e-7 → "1e-7", 1e21 → "1e+21".
func String(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	case f < 0:
		return "-" + String(-f)
	}
	// Shortest round-tripping digits, as ECMAScript requires: d.ddde±x.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	k, n := len(digits), x+1 // value = digits × 10^(n-k)
	switch {
	case k <= n && n <= 21:
		return digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return "0." + strings.Repeat("0", -n) + digits
	}
	sign := "+"
	if n-1 < 0 {
		sign = "-"
	}
	exponent := strconv.Itoa(absInt(n - 1))
	if k == 1 {
		return digits + "e" + sign + exponent
	}
	return digits[:1] + "." + digits[1:] + "e" + sign + exponent
}

func absInt(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// ToFixed formats f as JavaScript's f.toFixed(digits) for |f| < 1e21: the exact binary
// value rounded to the nearest, ties away from zero. Go's %.*f breaks exact ties to even
// (1.25 → "1.2" where JavaScript prints "1.3").
func ToFixed(f float64, digits int) string {
	if f < 0 {
		return "-" + ToFixed(-f, digits)
	}
	r := new(big.Rat).SetFloat64(f)
	if r == nil {
		return strconv.FormatFloat(f, 'f', digits, 64)
	}
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil)
	r.Mul(r, new(big.Rat).SetInt(scale))
	r.Add(r, big.NewRat(1, 2))
	n := new(big.Int).Quo(r.Num(), r.Denom()) // floor, r is positive
	s := n.String()
	if digits == 0 {
		return s
	}
	if len(s) <= digits {
		s = strings.Repeat("0", digits-len(s)+1) + s
	}
	return s[:len(s)-digits] + "." + s[len(s)-digits:]
}
