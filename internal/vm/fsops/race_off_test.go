//go:build !race

package fsops

// raceDetector: this test binary runs under the race detector.
const raceDetector = false
