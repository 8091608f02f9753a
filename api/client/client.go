// Package client is a Go client of the recsys HTTP API (openapi.yaml): one
// typed method per operation, answers decoded into the api package's wire
// types, and every failure the service reports returned as an *Error
// carrying its JSON error code. It uses only the standard library and
// package api.
//
// Another module adds it with
//
//	go get github.com/recsys-engine/recsys/api/client
//
// The examples run against a real server holding a small shop's
// purchases.
//
// Works cited in the comments are listed in docs/references.md.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/recsys-engine/recsys/api"
)

// Client calls one recsys server. It is safe for concurrent use.
type Client struct {
	base string
	key  string
	hc   *http.Client
}

// Option configures a Client.
type Option func(*Client)

// WithKey sends key as a bearer token on every request (the application
// or the admin key).
func WithKey(key string) Option { return func(c *Client) { c.key = key } }

// WithHTTPClient makes the client send its requests through hc (its
// transport, timeout, connection pool); the default is http.DefaultClient.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// New returns a client of the server at baseURL, such as
// "http://127.0.0.1:8080".
func New(baseURL string, opts ...Option) *Client {
	c := &Client{base: strings.TrimSuffix(baseURL, "/"), hc: http.DefaultClient}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Error is a failure the service answered: the HTTP status and the error
// envelope of docs/design.md#api. An answer that is not the envelope (a
// proxy's page) has an empty Code and the start of the body as Message.
type Error struct {
	Status    int
	Code      string // api.CodeInvalid, api.CodeNotFound, ...
	Message   string
	Details   []api.ErrorDetail
	RequestID string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("recsys: %d %s: %s", e.Status, e.Code, e.Message)
	if e.RequestID != "" {
		msg += " (request " + e.RequestID + ")"
	}
	return msg
}

// Code returns the service's error code of err, "" when err is not an
// *Error (a network failure, a cancelled context).
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Call is one request of the API, built by the function named after its
// operation (RecommendCall, SimilarCall). The typed methods send it and
// decode the answer; Send sends it and drops the answer, for a load
// generator that should not spend its CPU decoding.
type Call struct {
	method, path string
	query        url.Values
}

// Send sends call and reads the answer to the end without decoding it:
// nil on a 2xx, else an *Error like the typed methods'.
func (c *Client) Send(ctx context.Context, call Call) error {
	return c.do(ctx, call.method, call.path, call.query, nil, nil)
}

// do sends one request: body, when not nil, is sent as JSON (or as is
// when it is a json.RawMessage); a 2xx answer is decoded into out when out
// is not nil; any other answer becomes an *Error.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	return c.doType(ctx, method, path, query, "application/json", body, out)
}

func (c *Client) doType(ctx context.Context, method, path string, query url.Values, ctype string, body, out any) error {
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, ok := body.(json.RawMessage)
		if !ok {
			var err error
			if b, err = json.Marshal(body); err != nil {
				return fmt.Errorf("recsys: encoding the %s %s body: %w", method, path, err)
			}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", ctype)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer func() {
		// Read what is left so the connection goes back to the pool.
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return readError(resp)
	}
	switch o := out.(type) {
	case nil:
		return nil
	case *[]byte:
		*o, err = io.ReadAll(resp.Body)
		return err
	default:
		// One pooled buffer and Unmarshal allocate less than a Decoder
		// per answer: a load generator feels it.
		buf := bufPool.Get().(*bytes.Buffer)
		defer bufPool.Put(buf)
		buf.Reset()
		if _, err := buf.ReadFrom(resp.Body); err != nil {
			return fmt.Errorf("recsys: reading the %s %s answer: %w", method, path, err)
		}
		if err := json.Unmarshal(buf.Bytes(), out); err != nil {
			return fmt.Errorf("recsys: decoding the %s %s answer: %w", method, path, err)
		}
		return nil
	}
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readError turns a failed answer into an *Error.
func readError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var env api.ErrorOut
	if err := json.Unmarshal(b, &env); err != nil || env.Error.Code == "" {
		msg := strings.TrimSpace(string(b))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return &Error{Status: resp.StatusCode, Message: msg}
	}
	return &Error{Status: resp.StatusCode, Code: env.Error.Code, Message: env.Error.Message,
		Details: env.Error.Details, RequestID: env.Error.RequestID}
}

func seg(id string) string { return url.PathEscape(id) }

// Health checks liveness (GET /healthz).
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/healthz", nil, nil, nil)
}

// Ready checks readiness (GET /readyz): nil when the server can answer
// recommendations, else an *Error with code unavailable.
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/readyz", nil, nil, nil)
}

// Metrics returns the Prometheus text exposition (GET /metrics).
func (c *Client) Metrics(ctx context.Context) (string, error) {
	var b []byte
	err := c.do(ctx, http.MethodGet, "/metrics", nil, nil, &b)
	return string(b), err
}

// OpenAPI returns the server's openapi.yaml (GET /openapi.yaml).
func (c *Client) OpenAPI(ctx context.Context) ([]byte, error) {
	var b []byte
	err := c.do(ctx, http.MethodGet, "/openapi.yaml", nil, nil, &b)
	return b, err
}

// Stats returns the counters and the events of the last days days, 1–3650
// (GET /stats); 0 takes the server's default.
func (c *Client) Stats(ctx context.Context, days int) (api.StatsOut, error) {
	var out api.StatsOut
	q := url.Values{}
	if days != 0 {
		q.Set("days", strconv.Itoa(days))
	}
	err := c.do(ctx, http.MethodGet, "/stats", q, nil, &out)
	return out, err
}

// AddInteractions stores a batch of 1–10,000 events, all or nothing, and
// returns how many were stored (POST /interactions).
func (c *Client) AddInteractions(ctx context.Context, evs []api.InteractionIn) (int, error) {
	var out api.InteractionsOut
	err := c.do(ctx, http.MethodPost, "/interactions", nil, struct {
		Interactions []api.InteractionIn `json:"interactions"`
	}{evs}, &out)
	return out.Stored, err
}

// AddInteractionsJSON posts a body the caller encoded, such as
// {"interactions":[...]}, for callers that build it faster than
// encoding/json (POST /interactions).
func (c *Client) AddInteractionsJSON(ctx context.Context, body []byte) (int, error) {
	var out api.InteractionsOut
	err := c.do(ctx, http.MethodPost, "/interactions", nil, json.RawMessage(body), &out)
	return out.Stored, err
}

// User returns what the server holds about a user (GET /users/{id}).
func (c *Client) User(ctx context.Context, id string) (api.UserOut, error) {
	var out api.UserOut
	err := c.do(ctx, http.MethodGet, "/users/"+seg(id), nil, nil, &out)
	return out, err
}

// Users returns one page of the users, in natural id order (GET /users).
func (c *Client) Users(ctx context.Context, p Page) (api.UsersOut, error) {
	var out api.UsersOut
	err := c.do(ctx, http.MethodGet, "/users", p.query(), nil, &out)
	return out, err
}

// DeleteUser deletes a user and their interactions (DELETE /users/{id};
// the admin key).
func (c *Client) DeleteUser(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/users/"+seg(id), nil, nil, nil)
}

// Page asks for one page of a listing: Limit 1–1000 (0: the server's
// default) from Cursor (empty: the first page).
type Page struct {
	Limit  int
	Cursor string
}

func (p Page) query() url.Values {
	q := url.Values{}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	return q
}

// UserInteractions returns one page of a user's history (GET
// /users/{id}/interactions).
func (c *Client) UserInteractions(ctx context.Context, id string, p Page) (api.HistoryOut, error) {
	var out api.HistoryOut
	err := c.do(ctx, http.MethodGet, "/users/"+seg(id)+"/interactions", p.query(), nil, &out)
	return out, err
}

// DeleteInteraction forgets one (user, item) pair (DELETE
// /users/{id}/interactions/{item_id}; the admin key).
func (c *Client) DeleteInteraction(ctx context.Context, userID, itemID string) error {
	return c.do(ctx, http.MethodDelete, "/users/"+seg(userID)+"/interactions/"+seg(itemID), nil, nil, nil)
}

// RecommendOptions are the query of GET /users/{id}/recommendations; the
// zero value asks for the server's defaults.
type RecommendOptions struct {
	N, Offset  int
	Model      string
	Categories []string // any of them
	Exclude    []string
	// IncludeConsumed asks for items the user already interacted with
	// (exclude_consumed=false).
	IncludeConsumed bool
	Explain         bool
	Diversity       DiversityOptions
	Steering        SteeringOptions
}

// SteeringOptions filter and steer a ranked list (filter and placement,
// docs/rules.md); the zero value does neither.
type SteeringOptions struct {
	// Filter is an expression every item of the list satisfies.
	Filter string
	// Placement answers as the named placement.
	Placement string
}

// set adds the options to a query.
func (o SteeringOptions) set(q url.Values) {
	if o.Filter != "" {
		q.Set("filter", o.Filter)
	}
	if o.Placement != "" {
		q.Set("placement", o.Placement)
	}
}

// DiversityOptions diversify a ranked list (max_per_category and
// diversity); the zero value leaves it as the model ranked it.
type DiversityOptions struct {
	// MaxPerCategory, when positive, keeps at most that many items of any
	// one category.
	MaxPerCategory int
	// Lambda, when not nil, re-ranks by MMR with this λ in [0, 1]: 1 is
	// the model's order, 0 the most diverse.
	Lambda *float64
}

// Lambda returns a pointer to l, for DiversityOptions.Lambda.
func Lambda(l float64) *float64 { return &l }

// set adds the options to a query.
func (o DiversityOptions) set(q url.Values) {
	if o.MaxPerCategory != 0 {
		q.Set("max_per_category", strconv.Itoa(o.MaxPerCategory))
	}
	if o.Lambda != nil {
		q.Set("diversity", strconv.FormatFloat(*o.Lambda, 'g', -1, 64))
	}
}

// RecommendCall is GET /users/{id}/recommendations.
func RecommendCall(userID string, o RecommendOptions) Call {
	q := url.Values{}
	if o.N != 0 {
		q.Set("n", strconv.Itoa(o.N))
	}
	if o.Offset != 0 {
		q.Set("offset", strconv.Itoa(o.Offset))
	}
	if o.Model != "" {
		q.Set("model", o.Model)
	}
	for _, cat := range o.Categories {
		q.Add("category", cat)
	}
	// Each id is its own value, commas in it escaped: the server splits
	// values on the literal commas only.
	for _, id := range o.Exclude {
		q.Add("exclude", id)
	}
	if o.IncludeConsumed {
		q.Set("exclude_consumed", "false")
	}
	if o.Explain {
		q.Set("explain", "true")
	}
	o.Diversity.set(q)
	o.Steering.set(q)
	return Call{method: http.MethodGet, path: "/users/" + seg(userID) + "/recommendations", query: q}
}

// Recommend returns the top items for a user (GET
// /users/{id}/recommendations).
func (c *Client) Recommend(ctx context.Context, userID string, o RecommendOptions) (api.RecommendationsOut, error) {
	var out api.RecommendationsOut
	call := RecommendCall(userID, o)
	err := c.do(ctx, call.method, call.path, call.query, nil, &out)
	return out, err
}

// RecommendForItems returns recommendations for an anonymous history
// (POST /recommendations).
func (c *Client) RecommendForItems(ctx context.Context, in api.RecommendIn) (api.RecommendationsOut, error) {
	var out api.RecommendationsOut
	err := c.do(ctx, http.MethodPost, "/recommendations", nil, in, &out)
	return out, err
}

// Rerank orders candidates by the model's scores for a user (POST
// /users/{id}/rerank); model empty: the active one.
func (c *Client) Rerank(ctx context.Context, userID string, items []string, model string) (api.RecommendationsOut, error) {
	return c.RerankWith(ctx, userID, api.RerankIn{Items: items, Model: model})
}

// RerankWith is Rerank with every field of the body, diversity included.
func (c *Client) RerankWith(ctx context.Context, userID string, in api.RerankIn) (api.RecommendationsOut, error) {
	var out api.RecommendationsOut
	err := c.do(ctx, http.MethodPost, "/users/"+seg(userID)+"/rerank", nil, in, &out)
	return out, err
}

// Items returns one page of the catalogue (GET /items).
func (c *Client) Items(ctx context.Context, p Page) (api.ItemsOut, error) {
	var out api.ItemsOut
	err := c.do(ctx, http.MethodGet, "/items", p.query(), nil, &out)
	return out, err
}

// PutItems creates or replaces a batch of 1–10,000 items, all or nothing
// (POST /items).
func (c *Client) PutItems(ctx context.Context, items []api.ItemIn) (int, error) {
	var out api.ItemsPutOut
	err := c.do(ctx, http.MethodPost, "/items", nil, api.ItemsIn{Items: items}, &out)
	return out.Stored, err
}

// Item returns one item (GET /items/{id}).
func (c *Client) Item(ctx context.Context, id string) (api.ItemOut, error) {
	var out api.ItemOut
	err := c.do(ctx, http.MethodGet, "/items/"+seg(id), nil, nil, &out)
	return out, err
}

// PutItem creates or replaces one item and returns it as stored (PUT
// /items/{id}).
func (c *Client) PutItem(ctx context.Context, id string, in api.ItemIn) (api.ItemOut, error) {
	var out api.ItemOut
	err := c.do(ctx, http.MethodPut, "/items/"+seg(id), nil, in, &out)
	return out, err
}

// PatchItem changes part of an item with a JSON merge patch (RFC 7396),
// such as map[string]any{"hidden": true}, and returns it as stored (PATCH
// /items/{id}).
func (c *Client) PatchItem(ctx context.Context, id string, patch map[string]any) (api.ItemOut, error) {
	var out api.ItemOut
	err := c.doType(ctx, http.MethodPatch, "/items/"+seg(id), nil, "application/merge-patch+json", patch, &out)
	return out, err
}

// DeleteItem deletes an item (DELETE /items/{id}; the admin key).
func (c *Client) DeleteItem(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/items/"+seg(id), nil, nil, nil)
}

// SimilarOptions are the query of GET /items/{id}/similar; the zero value
// asks for the server's defaults.
type SimilarOptions struct {
	N         int
	By        string // collaborative, content or hybrid
	Exclude   []string
	Diversity DiversityOptions
	Steering  SteeringOptions
	// Explain names on each item the rules that changed it.
	Explain bool
}

// SimilarCall is GET /items/{id}/similar.
func SimilarCall(itemID string, o SimilarOptions) Call {
	q := url.Values{}
	if o.N != 0 {
		q.Set("n", strconv.Itoa(o.N))
	}
	if o.By != "" {
		q.Set("by", o.By)
	}
	for _, id := range o.Exclude {
		q.Add("exclude", id)
	}
	o.Diversity.set(q)
	o.Steering.set(q)
	if o.Explain {
		q.Set("explain", "true")
	}
	return Call{method: http.MethodGet, path: "/items/" + seg(itemID) + "/similar", query: q}
}

// Similar returns the items most similar to one (GET /items/{id}/similar).
func (c *Client) Similar(ctx context.Context, id string, o SimilarOptions) (api.SimilarOut, error) {
	var out api.SimilarOut
	call := SimilarCall(id, o)
	err := c.do(ctx, call.method, call.path, call.query, nil, &out)
	return out, err
}

// SearchSimilar ranks the catalogue for a feature vector (POST
// /search/similar).
func (c *Client) SearchSimilar(ctx context.Context, in api.SearchIn) (api.SearchOut, error) {
	var out api.SearchOut
	err := c.do(ctx, http.MethodPost, "/search/similar", nil, in, &out)
	return out, err
}

// Retrain starts a training job (POST /admin/retrain; the admin key).
func (c *Client) Retrain(ctx context.Context, in api.RetrainIn) (api.JobAccepted, error) {
	var out api.JobAccepted
	err := c.do(ctx, http.MethodPost, "/admin/retrain", nil, in, &out)
	return out, err
}

// Evaluate starts an evaluation job (POST /admin/evaluations; the admin
// key).
func (c *Client) Evaluate(ctx context.Context, in api.EvaluationIn) (api.JobAccepted, error) {
	var out api.JobAccepted
	err := c.do(ctx, http.MethodPost, "/admin/evaluations", nil, in, &out)
	return out, err
}

// Jobs lists up to limit jobs, newest first (GET /admin/jobs); 0 takes the
// server's default.
func (c *Client) Jobs(ctx context.Context, limit int) ([]api.Job, error) {
	q := url.Values{}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out api.JobsOut
	err := c.do(ctx, http.MethodGet, "/admin/jobs", q, nil, &out)
	return out.Jobs, err
}

// Job returns one job's record (GET /admin/jobs/{id}).
func (c *Client) Job(ctx context.Context, id string) (api.Job, error) {
	var out api.Job
	err := c.do(ctx, http.MethodGet, "/admin/jobs/"+seg(id), nil, nil, &out)
	return out, err
}

// CancelJob cancels a queued or running job (DELETE /admin/jobs/{id}).
func (c *Client) CancelJob(ctx context.Context, id string) (api.Job, error) {
	var out api.Job
	err := c.do(ctx, http.MethodDelete, "/admin/jobs/"+seg(id), nil, nil, &out)
	return out, err
}

// Models lists the trained model versions and the names the server
// accepts (GET /models).
func (c *Client) Models(ctx context.Context) (api.ModelsOut, error) {
	var out api.ModelsOut
	err := c.do(ctx, http.MethodGet, "/models", nil, nil, &out)
	return out, err
}

// ActivateModel makes a trained recommender the default and returns its
// record (POST /admin/models/{name}/activate).
func (c *Client) ActivateModel(ctx context.Context, name string) (api.ModelInfo, error) {
	var out api.ModelInfo
	err := c.do(ctx, http.MethodPost, "/admin/models/"+seg(name)+"/activate", nil, nil, &out)
	return out, err
}

// Evaluations lists the evaluation reports, newest first (GET
// /evaluations).
func (c *Client) Evaluations(ctx context.Context) ([]api.ReportSummary, error) {
	var out api.ReportsOut
	err := c.do(ctx, http.MethodGet, "/evaluations", nil, nil, &out)
	return out.Evaluations, err
}

// Evaluation returns one report (GET /evaluations/{id}).
func (c *Client) Evaluation(ctx context.Context, id string) (*api.Report, error) {
	var out api.Report
	if err := c.do(ctx, http.MethodGet, "/evaluations/"+seg(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// OnlineQuery filters the online report: from and to are days
// (YYYY-MM-DD, UTC, inclusive; empty: the server's default span) and model
// a model name (empty: every model).
type OnlineQuery struct {
	From, To, Model string
}

// Online returns impressions, attributed events, CTR and conversion per
// model and day (GET /admin/online; the admin key).
func (c *Client) Online(ctx context.Context, o OnlineQuery) (api.OnlineReportOut, error) {
	q := url.Values{}
	for k, v := range map[string]string{"from": o.From, "to": o.To, "model": o.Model} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var out api.OnlineReportOut
	err := c.do(ctx, http.MethodGet, "/admin/online", q, nil, &out)
	return out, err
}

// StartExperiment starts an A/B experiment (POST /admin/experiments; the
// admin key).
func (c *Client) StartExperiment(ctx context.Context, in api.ExperimentIn) (api.ExperimentOut, error) {
	var out api.ExperimentOut
	err := c.do(ctx, http.MethodPost, "/admin/experiments", nil, in, &out)
	return out, err
}

// Experiments lists the experiments, running and stopped
// (GET /admin/experiments).
func (c *Client) Experiments(ctx context.Context) (api.ExperimentsOut, error) {
	var out api.ExperimentsOut
	err := c.do(ctx, http.MethodGet, "/admin/experiments", nil, nil, &out)
	return out, err
}

// Experiment returns an experiment with its per-arm counts, intervals and
// test (GET /admin/experiments/{id}).
func (c *Client) Experiment(ctx context.Context, id string) (api.ExperimentOut, error) {
	var out api.ExperimentOut
	err := c.do(ctx, http.MethodGet, "/admin/experiments/"+seg(id), nil, nil, &out)
	return out, err
}

// StopExperiment stops an experiment (POST /admin/experiments/{id}/stop).
func (c *Client) StopExperiment(ctx context.Context, id string) (api.ExperimentOut, error) {
	var out api.ExperimentOut
	err := c.do(ctx, http.MethodPost, "/admin/experiments/"+seg(id)+"/stop", nil, nil, &out)
	return out, err
}

// Rules lists the business rules (GET /admin/rules; the admin key).
func (c *Client) Rules(ctx context.Context) (api.RulesOut, error) {
	var out api.RulesOut
	err := c.do(ctx, http.MethodGet, "/admin/rules", nil, nil, &out)
	return out, err
}

// Rule returns one rule (GET /admin/rules/{name}).
func (c *Client) Rule(ctx context.Context, name string) (api.RuleOut, error) {
	var out api.RuleOut
	err := c.do(ctx, http.MethodGet, "/admin/rules/"+seg(name), nil, nil, &out)
	return out, err
}

// CreateRule stores a new rule (POST /admin/rules).
func (c *Client) CreateRule(ctx context.Context, in api.RuleIn) (api.RuleOut, error) {
	var out api.RuleOut
	err := c.do(ctx, http.MethodPost, "/admin/rules", nil, in, &out)
	return out, err
}

// ReplaceRule replaces a stored rule (PUT /admin/rules/{name}).
func (c *Client) ReplaceRule(ctx context.Context, name string, in api.RuleIn) (api.RuleOut, error) {
	var out api.RuleOut
	err := c.do(ctx, http.MethodPut, "/admin/rules/"+seg(name), nil, in, &out)
	return out, err
}

// DeleteRule deletes a rule (DELETE /admin/rules/{name}).
func (c *Client) DeleteRule(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/admin/rules/"+seg(name), nil, nil, nil)
}

// Placements lists the placements (GET /admin/placements; the admin key).
func (c *Client) Placements(ctx context.Context) (api.PlacementsOut, error) {
	var out api.PlacementsOut
	err := c.do(ctx, http.MethodGet, "/admin/placements", nil, nil, &out)
	return out, err
}

// Placement returns one placement (GET /admin/placements/{name}).
func (c *Client) Placement(ctx context.Context, name string) (api.PlacementOut, error) {
	var out api.PlacementOut
	err := c.do(ctx, http.MethodGet, "/admin/placements/"+seg(name), nil, nil, &out)
	return out, err
}

// PutPlacement creates or replaces a placement (PUT
// /admin/placements/{name}).
func (c *Client) PutPlacement(ctx context.Context, name string, in api.PlacementIn) (api.PlacementOut, error) {
	var out api.PlacementOut
	err := c.do(ctx, http.MethodPut, "/admin/placements/"+seg(name), nil, in, &out)
	return out, err
}

// DeletePlacement deletes a placement (DELETE /admin/placements/{name}).
func (c *Client) DeletePlacement(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/admin/placements/"+seg(name), nil, nil, nil)
}
