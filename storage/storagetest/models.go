package storagetest

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// The contract on persisted models.

func testModels(t *testing.T, open Opener) {
	s := open(t, Options{})
	if m, err := s.Models(bg); err != nil || len(m) != 0 {
		t.Fatalf("no models = %v, %v", m, err)
	}
	if name, err := s.ActiveModel(bg); err != nil || name != "" {
		t.Fatalf("active = %q, %v", name, err)
	}
	var versions []string
	for range 3 {
		v, err := s.NewModelVersion(bg)
		if err != nil {
			t.Fatal(err)
		}
		versions = append(versions, v)
	}
	if !sort.StringsAreSorted(versions) || versions[0] == versions[1] || versions[1] == versions[2] {
		t.Fatalf("versions %v, want increasing", versions)
	}
	big := make([]byte, 3<<20+17) // more than one chunk of any reasonable size
	for k := range big {
		big[k] = byte(k * 7 / 3)
	}
	blobs := map[string][]byte{versions[0]: []byte("one"), versions[1]: big, versions[2]: {}}
	for _, v := range versions {
		info := api.ModelInfo{Name: "knn", Version: v, Params: map[string]float64{"k": 50}, Active: true}
		if err := s.PutModel(bg, info, blobs[v]); err != nil {
			t.Fatal(err)
		}
	}
	cost := &api.ServingCost{MeanMS: 0.25, P50MS: 0.2, P99MS: 1.5, Requests: 1000}
	if err := s.PutModel(bg, api.ModelInfo{Name: "als", Version: versions[0], ServingCost: cost}, []byte("als")); err != nil {
		t.Fatal(err)
	}
	if err := s.SetActiveModel(bg, "knn"); err != nil {
		t.Fatal(err)
	}
	ms, err := s.Models(bg)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, fmt.Sprintf("%s/%s/%d/%v", m.Name, m.Version, m.Bytes, m.Active))
	}
	// Two versions of a name are kept; only the newest of the active one is active.
	want := []string{"als/" + versions[0] + "/3/false", "knn/" + versions[2] + "/0/true", "knn/" + versions[1] + fmt.Sprintf("/%d/false", len(big))}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("models = %v, want %v", got, want)
	}
	if ms[1].Params["k"] != 50 {
		t.Fatalf("params = %v", ms[1].Params)
	}
	// The serving cost is kept with the version; a version stored without
	// one reads as not measured.
	if ms[0].ServingCost == nil || *ms[0].ServingCost != *cost || ms[1].ServingCost != nil {
		t.Fatalf("serving costs %+v and %+v, want %+v and none", ms[0].ServingCost, ms[1].ServingCost, cost)
	}
	for _, v := range versions[1:] {
		b, err := s.ModelBlob(bg, "knn", v)
		if err != nil || !bytes.Equal(b, blobs[v]) {
			t.Fatalf("blob %s: %d bytes, %v; want %d", v, len(b), err, len(blobs[v]))
		}
	}
	if _, err := s.ModelBlob(bg, "knn", versions[0]); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("dropped version err = %v, want not_found", err)
	}
	if name, err := s.ActiveModel(bg); err != nil || name != "knn" {
		t.Fatalf("active = %q, %v", name, err)
	}
}
