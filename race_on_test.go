//go:build race

package main

// raceEnabled: the tests run under the race detector, which multiplies
// the CPU time of the service's work tenfold and more.
const raceEnabled = true
