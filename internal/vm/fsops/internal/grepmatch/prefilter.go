package grepmatch

import (
	"regexp/syntax"
	"unicode/utf8"
)

// requiredLit is one literal of a prefilter set.
type requiredLit struct {
	text []byte
	fold bool
}

// maxRequiredLits bounds a prefilter set; beyond it the regexp runs on its own.
const maxRequiredLits = 8

// requiredLiterals returns literals one of which every match of t contains — from a
// literal, the best piece of a concatenation, or every branch of an alternation — or
// nil when no such set is known.
func requiredLiterals(t *syntax.Regexp) []requiredLit {
	switch t.Op {
	case syntax.OpLiteral:
		b := make([]byte, 0, len(t.Rune))
		for _, r := range t.Rune {
			b = utf8.AppendRune(b, r)
		}
		return []requiredLit{{text: b, fold: t.Flags&syntax.FoldCase != 0}}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(t.Sub[0])
	case syntax.OpRepeat:
		if t.Min >= 1 {
			return requiredLiterals(t.Sub[0])
		}
	case syntax.OpConcat:
		var best []requiredLit
		for _, s := range t.Sub {
			if set := requiredLiterals(s); set != nil && betterLits(set, best) {
				best = set
			}
		}
		return best
	case syntax.OpAlternate:
		var all []requiredLit
		for _, s := range t.Sub {
			set := requiredLiterals(s)
			if set == nil || len(all)+len(set) > maxRequiredLits {
				return nil
			}
			all = append(all, set...)
		}
		return all
	}
	return nil
}

// betterLits prefers the set whose literals are expected to occur less often (by their
// rarest bytes, which is what litFinder searches for), then the one whose shortest
// literal is longer, then the smaller set. Length alone is a poor guide: in "func.*zzq"
// the rare "zzq" is worth far more than the longer "func", which is on most Go lines.
func betterLits(a, b []requiredLit) bool {
	if b == nil {
		return true
	}
	if ca, cb := litSetCost(a), litSetCost(b); ca != cb {
		return ca < cb
	}
	ma, mb := shortestLit(a), shortestLit(b)
	if ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

// litSetCost estimates how often a candidate of the set turns up: the sum over its
// literals of the frequency of the byte a litFinder would search for, discounted for
// longer literals (each further byte must match too).
func litSetCost(set []requiredLit) int {
	cost := 0
	for _, l := range set {
		best := -1
		for _, c := range l.text {
			if l.fold && !asciiFoldOnly(c) {
				continue
			}
			if score := foldedFrequency(c, l.fold); best < 0 || score < best {
				best = score
			}
		}
		if best < 0 {
			best = 4000 // no byte to search for: the finder cannot be used
		}
		cost += best * 4 / (3 + min(len(l.text), 8))
	}
	return cost
}

func shortestLit(set []requiredLit) int {
	m := -1
	for _, l := range set {
		if m < 0 || len(l.text) < m {
			m = len(l.text)
		}
	}
	return m
}

// requiredBytes returns a set of bytes one of which every match of t contains: the
// cheapest required character class (a UTF-8 byte set: any non-ASCII member admits all
// bytes >= 0x80), or the union over an alternation's branches; nil if none is known.
func requiredBytes(t *syntax.Regexp) *[256]bool {
	switch t.Op {
	case syntax.OpCharClass:
		var set [256]bool
		for i := 0; i+1 < len(t.Rune); i += 2 {
			lo, hi := t.Rune[i], t.Rune[i+1]
			for r := lo; r <= hi && r < utf8.RuneSelf; r++ {
				set[r] = true
			}
			if hi >= utf8.RuneSelf {
				for b := utf8.RuneSelf; b < 256; b++ {
					set[b] = true
				}
			}
		}
		return &set
	case syntax.OpLiteral:
		if len(t.Rune) == 0 || t.Flags&syntax.FoldCase != 0 {
			return nil
		}
		var set [256]bool
		set[utf8.AppendRune(nil, t.Rune[0])[0]] = true
		return &set
	case syntax.OpCapture, syntax.OpPlus:
		return requiredBytes(t.Sub[0])
	case syntax.OpRepeat:
		if t.Min >= 1 {
			return requiredBytes(t.Sub[0])
		}
	case syntax.OpConcat:
		var best *[256]bool
		for _, s := range t.Sub {
			if set := requiredBytes(s); set != nil && (best == nil || byteSetCost(set) < byteSetCost(best)) {
				best = set
			}
		}
		return best
	case syntax.OpAlternate:
		var all [256]bool
		for _, s := range t.Sub {
			set := requiredBytes(s)
			if set == nil {
				return nil
			}
			for b, in := range set {
				all[b] = all[b] || in
			}
		}
		return &all
	}
	return nil
}

func byteSetCost(set *[256]bool) int {
	cost := 0
	for b, in := range set {
		if in {
			cost += byteFrequency(byte(b))
		}
	}
	return cost
}
