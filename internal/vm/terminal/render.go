package terminal

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Render turns raw terminal output into the text a person would read off the screen
// once it stopped changing: carriage returns, backspaces and cursor moves overwrite what
// they move over (a progress bar redrawn a thousand times is its last state), erase
// sequences erase, and every other escape sequence (colours, titles, modes) is dropped.
// Invalid UTF-8 becomes U+FFFD. rows is the screen's height, which absolute cursor
// positions count from (0: 24).
//
// It is a line model, not a full terminal: lines do not wrap at a width and full-screen
// programs (editors, top) come out approximately; what it is for — logs, prompts,
// progress bars, test runners, spinners — comes out as the screen showed it.
func Render(raw []byte, rows int) string {
	if plain(raw) {
		return string(raw)
	}
	if rows <= 0 {
		rows = 24
	}
	s := screen{rows: rows, lines: [][]rune{nil}}
	for i := 0; i < len(raw); {
		b := raw[i]
		switch {
		case b == 0x1b:
			i = s.escape(raw, i+1)
			continue
		case b == '\n':
			s.down(1)
			s.col = 0
		case b == '\r':
			s.col = 0
		case b == '\b':
			if s.col > 0 {
				s.col--
			}
		case b == '\t':
			s.put('\t')
		case b < 0x20 || b == 0x7f:
			// other controls (bell, shift in/out) show nothing
		case b < utf8.RuneSelf:
			s.put(rune(b))
		default:
			r, n := utf8.DecodeRune(raw[i:])
			if r >= 0x80 && r < 0xa0 { // C1 controls
				i += n
				continue
			}
			s.put(r)
			i += n
			continue
		}
		i++
	}
	var out strings.Builder
	for i, l := range s.lines {
		if i > 0 {
			out.WriteByte('\n')
		}
		out.WriteString(string(l))
	}
	return out.String()
}

// plain reports whether raw is text that renders as itself: valid UTF-8 with no control
// characters but newline and tab (the usual log, rendered without a copy per rune).
func plain(raw []byte) bool {
	for _, b := range raw {
		if b < 0x20 && b != '\n' && b != '\t' || b == 0x7f {
			return false
		}
	}
	return utf8.Valid(raw) && !hasC1(raw)
}

// hasC1 reports whether raw holds a C1 control character (U+0080–U+009F).
func hasC1(raw []byte) bool {
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] == 0xc2 && raw[i+1] >= 0x80 && raw[i+1] < 0xa0 {
			return true
		}
	}
	return false
}

// maxCols bounds how far right a cursor move goes, so that a hostile sequence cannot make
// Render pad a line with millions of spaces.
const maxCols = 4096

// screen is the line model Render draws on: every line written so far (the scrollback
// included, since the reader wants it all), a cursor, and the top of the visible screen
// for absolute moves.
type screen struct {
	lines          [][]rune
	row, col, rows int
	savedRow       int
	savedCol       int
	screenTop      int // the first line of the screen since the last clear
}

// put writes r at the cursor, over what is there, and moves right.
func (s *screen) put(r rune) {
	l := s.lines[s.row]
	for len(l) < s.col {
		l = append(l, ' ')
	}
	if s.col < len(l) {
		l[s.col] = r
	} else {
		l = append(l, r)
	}
	s.lines[s.row] = l
	s.col++
}

// down moves the cursor n lines down, adding lines at the bottom as a terminal scrolls.
func (s *screen) down(n int) {
	s.row += n
	for len(s.lines) <= s.row {
		s.lines = append(s.lines, nil)
	}
}

// up moves the cursor n lines up, no further than the top of the visible screen.
func (s *screen) up(n int) {
	s.row = max(s.row-n, s.top())
}

// top is the first line of the visible screen: the last rows lines are on it, and none
// from before the last clear.
func (s *screen) top() int { return max(s.screenTop, len(s.lines)-s.rows) }

// escape interprets the escape sequence whose ESC was just before raw[i] and returns the
// index after it.
func (s *screen) escape(raw []byte, i int) int {
	if i >= len(raw) {
		return i
	}
	switch c := raw[i]; c {
	case '[':
		return s.csi(raw, i+1)
	case ']', 'P', '_', '^', 'X': // OSC, DCS, APC, PM, SOS: a string up to BEL or ESC \
		for j := i + 1; j < len(raw); j++ {
			if raw[j] == 0x07 {
				return j + 1
			}
			if raw[j] == 0x1b && j+1 < len(raw) && raw[j+1] == '\\' {
				return j + 2
			}
		}
		return len(raw)
	case '7':
		s.savedRow, s.savedCol = s.row, s.col
	case '8':
		s.row, s.col = min(s.savedRow, len(s.lines)-1), s.savedCol
	case 'M': // reverse index
		s.up(1)
	case 'D':
		s.down(1)
	case 'E':
		s.down(1)
		s.col = 0
	case '(', ')', '*', '+', '#', '%', ' ': // a designation or setting of one more byte
		return min(i+2, len(raw))
	}
	return i + 1
}

// csi interprets a control sequence (ESC [ parameters intermediates final) starting at
// raw[i] and returns the index after it.
func (s *screen) csi(raw []byte, i int) int {
	start := i
	for i < len(raw) && raw[i] >= 0x30 && raw[i] <= 0x3f {
		i++
	}
	params := raw[start:i]
	for i < len(raw) && raw[i] >= 0x20 && raw[i] <= 0x2f {
		i++
	}
	if i >= len(raw) {
		return i
	}
	final := raw[i]
	if len(params) > 0 && (params[0] == '?' || params[0] == '>' || params[0] == '<' || params[0] == '=') {
		return i + 1 // private modes: nothing to draw
	}
	n := func(k, def int) int {
		v := param(params, k)
		if v <= 0 {
			return def
		}
		return v
	}
	switch final {
	case 'A':
		s.up(n(0, 1))
	case 'B', 'e': // down, but not past the bottom line: a terminal does not scroll here
		s.row = max(s.row, min(s.row+n(0, 1), len(s.lines)-1))
	case 'C', 'a':
		s.col = min(s.col+n(0, 1), maxCols)
	case 'D':
		s.col = max(0, s.col-n(0, 1))
	case 'E':
		s.down(min(n(0, 1), s.rows))
		s.col = 0
	case 'F':
		s.up(n(0, 1))
		s.col = 0
	case 'G', '`':
		s.col = min(n(0, 1), maxCols) - 1
	case 'd':
		s.row = s.top()
		s.down(min(n(0, 1), s.rows) - 1)
	case 'H', 'f':
		s.row = s.top()
		s.down(min(n(0, 1), s.rows) - 1)
		s.col = min(n(1, 1), maxCols) - 1
	case 'K':
		s.eraseLine(param(params, 0))
	case 'J':
		s.eraseScreen(param(params, 0))
	case 'X': // erase n characters
		l := s.lines[s.row]
		for k := s.col; k < len(l) && k < s.col+n(0, 1); k++ {
			l[k] = ' '
		}
	case 'P': // delete n characters
		l := s.lines[s.row]
		if s.col < len(l) {
			end := min(len(l), s.col+n(0, 1))
			s.lines[s.row] = append(l[:s.col], l[end:]...)
		}
	case 's':
		s.savedRow, s.savedCol = s.row, s.col
	case 'u':
		s.row, s.col = min(s.savedRow, len(s.lines)-1), s.savedCol
	}
	return i + 1
}

// eraseLine is EL: 0 from the cursor to the end of the line, 1 from its start to the
// cursor, 2 all of it.
func (s *screen) eraseLine(mode int) {
	l := s.lines[s.row]
	switch mode {
	case 0:
		if s.col < len(l) {
			s.lines[s.row] = l[:s.col]
		}
	case 1:
		for k := 0; k <= s.col && k < len(l); k++ {
			l[k] = ' '
		}
	case 2:
		s.lines[s.row] = l[:0]
	}
}

// eraseScreen is ED: 0 from the cursor to the end of the screen, 1 from its top to the
// cursor, 2 and 3 the whole visible screen. A clear keeps what was on the screen, as
// lines above a new empty screen: the reader of a log wants what a `clear` wiped.
func (s *screen) eraseScreen(mode int) {
	switch mode {
	case 0:
		s.eraseLine(0)
		s.lines = s.lines[:s.row+1]
	case 1:
		for r := s.top(); r < s.row; r++ {
			s.lines[r] = s.lines[r][:0]
		}
		s.eraseLine(1)
	case 2, 3:
		for len(s.lines) > 0 && len(s.lines[len(s.lines)-1]) == 0 {
			s.lines = s.lines[:len(s.lines)-1]
		}
		s.lines = append(s.lines, nil)
		s.screenTop = len(s.lines) - 1
		s.row = s.screenTop
	}
}

// param is the k-th numeric parameter of a control sequence (0 if absent).
func param(params []byte, k int) int {
	for i := 0; i < k; i++ {
		j := bytes.IndexByte(params, ';')
		if j < 0 {
			return 0
		}
		params = params[j+1:]
	}
	v := 0
	for _, c := range params {
		if c < '0' || c > '9' {
			break
		}
		v = v*10 + int(c-'0')
		if v > 1<<20 {
			return 1 << 20
		}
	}
	return v
}
