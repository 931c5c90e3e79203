package shell

import (
	"math"
	"strconv"
	"strings"
)

// jsNumber formats f as JavaScript's Number.prototype.toString does, because pi puts
// the model's timeout into its message as `${timeout}`: 5 → "5", 0.5 → "0.5",
// 1e-7 → "1e-7", 1e21 → "1e+21".
func jsNumber(f float64) string {
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
		return "-" + jsNumber(-f)
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
	exponent := strconv.Itoa(abs(n - 1))
	if k == 1 {
		return digits + "e" + sign + exponent
	}
	return digits[:1] + "." + digits[1:] + "e" + sign + exponent
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
