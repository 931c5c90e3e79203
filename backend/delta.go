package backend

// newOutput returns the part of next that was not already in prev, for turning bash's
// partial results (snapshots of the output's tail) into a stream of new text.
//
// When next extends prev that is the extension. When the tail window has moved (output
// was dropped from the front), the longest suffix of prev that is a prefix of next is
// taken as already sent. Output that repeats exactly across the window boundary can make
// this undercount; it never invents text.
func newOutput(prev, next string) string {
	if len(next) >= len(prev) && next[:len(prev)] == prev {
		return next[len(prev):]
	}
	return next[overlap(prev, next):]
}

// overlap returns the length of the longest prefix of next that is a suffix of prev
// (Knuth–Morris–Pratt: the matcher's state after reading all of prev).
func overlap(prev, next string) int {
	if len(next) == 0 || len(prev) == 0 {
		return 0
	}
	fail := make([]int, len(next))
	for i, k := 1, 0; i < len(next); i++ {
		for k > 0 && next[i] != next[k] {
			k = fail[k-1]
		}
		if next[i] == next[k] {
			k++
		}
		fail[i] = k
	}
	k := 0
	for i := 0; i < len(prev); i++ {
		for k > 0 && (k == len(next) || prev[i] != next[k]) {
			k = fail[k-1]
		}
		if k < len(next) && prev[i] == next[k] {
			k++
		}
	}
	return k
}
