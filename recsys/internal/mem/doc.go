// Package mem holds what the models' inner loops need from the processor
// beyond Go: a prefetch, so that a loop whose next addresses are known a
// few iterations ahead does not wait for each cache miss in turn.
package mem
