package handlers

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"github.com/recsys-engine/recsys/api"
)

func (h *handler) registerInteractionRoutes(r chi.Router) {
	r.With(h.requireApp).Post("/interactions", h.serve(h.handleInteractionsPost))
}

// handleInteractionsPost stores one event or a batch, all or nothing, and
// answers 201 only after the transaction has committed.
func (h *handler) handleInteractionsPost(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in api.InteractionsIn
	if err := h.decodeJSON(w, r, &in); err != nil {
		return 0, nil, err
	}
	evs, err := h.interactionsFrom(in)
	if err != nil {
		return 0, nil, err
	}
	n, err := h.Interactions.AddInteractions(r.Context(), evs)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, api.InteractionsOut{Stored: n, Attributed: h.attribute(r, evs, in)}, nil
}

// batchIn is validated on its own so that failing fields are named
// interactions[k].field.
type batchIn struct {
	Interactions []api.InteractionIn `json:"interactions" validate:"min=1,dive"`
}

// notPlainlyValid reports whether e fails one of InteractionIn's validate
// tags, checked by hand so that a batch of valid events skips the
// validator's reflection; a batch with a failing event goes through the
// validator, which names every failure.
// TestNotPlainlyValid_isTheValidator keeps the two in step.
func notPlainlyValid(e api.InteractionIn) bool {
	return api.ValidateID(e.UserID) != "" || api.ValidateID(e.ItemID) != "" ||
		utf8.RuneCountInString(e.Type) > 64 ||
		len(e.RecommendationID) > 64 || strings.ContainsFunc(e.RecommendationID, func(r rune) bool { return r < 0x20 || r > 0x7e })
}

func (h *handler) interactionsFrom(in api.InteractionsIn) ([]api.Interaction, error) {
	now := h.Now().UTC()
	if in.Interactions == nil {
		if err := h.validate(in.InteractionIn); err != nil {
			return nil, err
		}
		if p := in.CheckTimestamp(); p != "" {
			return nil, api.FieldError("timestamp", p)
		}
		return []api.Interaction{in.InteractionIn.ToInteraction(now)}, nil
	}
	if in.InteractionIn != (api.InteractionIn{}) {
		return nil, api.Errorf(api.CodeInvalid, "send either one event or {\"interactions\": [...]}, not both")
	}
	if len(in.Interactions) > h.limits.MaxBatch {
		return nil, api.FieldError("interactions", fmt.Sprintf("must have at most %d entries, got %d", h.limits.MaxBatch, len(in.Interactions)))
	}
	if len(in.Interactions) == 0 || slices.ContainsFunc(in.Interactions, notPlainlyValid) {
		// The validator names every failure. A batch whose events all pass
		// by hand skips its reflection (5% of the server's CPU under live
		// ingest).
		if err := h.validate(batchIn{Interactions: in.Interactions}); err != nil {
			return nil, err
		}
	}
	evs := make([]api.Interaction, len(in.Interactions))
	for k, e := range in.Interactions {
		if p := e.CheckTimestamp(); p != "" {
			return nil, api.FieldError(fmt.Sprintf("interactions[%d].timestamp", k), p)
		}
		evs[k] = e.ToInteraction(now)
	}
	return evs, nil
}
