//go:build race

package fsops

// raceDetector: this test binary runs under the race detector, whose shadow memory and
// bookkeeping add to every process's RSS.
const raceDetector = true
