//go:build race

package retrieval

// raceEnabled shrinks the slow quality tests under the race detector, which
// slows the numeric loops about tenfold.
const raceEnabled = true
