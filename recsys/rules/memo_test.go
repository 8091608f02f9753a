package rules

import (
	"sync"
	"testing"
)

func TestMemo_outcomesByVersion(t *testing.T) {
	p, err := Compile(`"a" in categories`)
	if err != nil {
		t.Fatal(err)
	}
	m := p.Memo(1, 40)
	if m == nil {
		t.Fatal("no memo for an expression without age_days")
	}
	// Items 0..39 over three words; each item's two bits are its own.
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := uint32(w); i < 40; i += 4 {
				m.Set(i, Outcome(1+i%3))
			}
		}()
	}
	wg.Wait()
	for i := uint32(0); i < 40; i++ {
		if got := m.Get(i); got != Outcome(1+i%3) {
			t.Fatalf("item %d = %d, want %d", i, got, 1+i%3)
		}
	}
	if got := m.Get(40 + 16*3); got != Unknown {
		t.Errorf("past the end = %d, want Unknown", got)
	}
	if p.Memo(1, 40) != m {
		t.Error("the same version gave a new memo")
	}
	if again := p.Memo(2, 40); again == m || again.Get(5) != Unknown {
		t.Error("a new version kept the old outcomes")
	}
	aged, err := Compile(`age_days < 30`)
	if err != nil {
		t.Fatal(err)
	}
	if aged.Memo(1, 40) != nil {
		t.Error("an expression reading age_days is remembered; its answers change with the clock")
	}
}
