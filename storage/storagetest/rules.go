package storagetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// testRules: rules and placements round trip, are listed by name, and a
// taken or missing name is a conflict or not found.
func testRules(t *testing.T, open Opener) {
	s := open(t, Options{})
	at := time.Date(2026, 3, 9, 8, 0, 0, 0, time.UTC)
	lambda := 0.4
	rules := []api.Rule{
		{Name: "b-pin", Condition: `id == "i1"`, Action: api.ActionPin, Position: 2, CreatedAt: at, UpdatedAt: at},
		{Name: "a-boost", Condition: `"c1" in categories`, Action: api.ActionBoost, Factor: 1.5,
			StartsAt: at, EndsAt: at.Add(48 * time.Hour), Placements: []string{"home", "cart"}, CreatedAt: at, UpdatedAt: at.Add(time.Minute)},
	}
	places := []api.Placement{
		{Name: "home", Model: "itemknn", N: 12, Filter: `labels.stock != "0"`, Rules: []string{"b-pin"},
			Diversity: api.Diversity{MaxPerCategory: 3, Lambda: &lambda}, UpdatedAt: at},
		{Name: "cart", Experiment: "x000001", UpdatedAt: at},
	}
	for _, r := range rules {
		if err := s.CreateRule(bg, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateRule(bg, rules[0]); api.ErrorCode(err) != api.CodeConflict {
		t.Fatalf("a second rule of one name: err = %v, want a conflict", err)
	}
	for _, p := range places {
		if created, err := s.PutPlacement(bg, p); err != nil || !created {
			t.Fatalf("PutPlacement(%s) = %v, %v; want created", p.Name, created, err)
		}
	}
	check := func(what string, wantRules []api.Rule, wantPlaces []api.Placement) {
		t.Helper()
		got, err := s.Rules(bg)
		if err != nil || !reflect.DeepEqual(got, wantRules) {
			t.Fatalf("%s: Rules = %+v, %v; want %+v", what, got, err, wantRules)
		}
		ps, err := s.Placements(bg)
		if err != nil || !reflect.DeepEqual(ps, wantPlaces) {
			t.Fatalf("%s: Placements = %+v, %v; want %+v", what, ps, err, wantPlaces)
		}
	}
	check("stored", []api.Rule{rules[1], rules[0]}, []api.Placement{places[1], places[0]})

	changed := rules[0]
	changed.Action, changed.Position, changed.UpdatedAt = api.ActionBury, 0, at.Add(time.Hour)
	if err := s.UpdateRule(bg, changed); err != nil {
		t.Fatal(err)
	}
	missing := changed
	missing.Name = "c-none"
	if err := s.UpdateRule(bg, missing); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("updating a missing rule: err = %v, want not found", err)
	}
	home := places[0]
	home.N, home.Diversity = 5, api.Diversity{}
	if created, err := s.PutPlacement(bg, home); err != nil || created {
		t.Fatalf("replacing a placement = %v, %v; want replaced", created, err)
	}
	check("changed", []api.Rule{rules[1], changed}, []api.Placement{places[1], home})

	if err := s.DeleteRule(bg, "a-boost"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRule(bg, "a-boost"); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("deleting a deleted rule: err = %v", err)
	}
	if err := s.DeletePlacement(bg, "cart"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePlacement(bg, "cart"); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("deleting a deleted placement: err = %v", err)
	}
	check("deleted", []api.Rule{changed}, []api.Placement{home})
}
