package api

import (
	"context"
	"time"
	"unicode"
	"unicode/utf8"
)

// Interaction is one implicit-feedback event (docs/design.md#data).
type Interaction struct {
	UserID    string
	ItemID    string
	Type      string
	Value     float64
	HasValue  bool
	Timestamp time.Time
}

// Item is a catalogue entry. Features is a name → number map; a vector given
// as a JSON array is stored under the names "0", "1", ...
type Item struct {
	ID         string
	Features   map[string]float64
	Categories []string
	Labels     map[string]string
	Hidden     bool
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// Positives is the number of users with a positive interaction: the
	// item's popularity.
	Positives int64
}

// User summarises what the store holds about one user.
type User struct {
	ID        string
	CreatedAt time.Time
	LastSeen  time.Time
	Items     int64 // distinct items interacted with
	Positives int64 // of which relevant
	Events    int64 // events posted, repeats included
}

// HistoryEntry is the state of one (user, item) pair.
type HistoryEntry struct {
	ItemID    string
	LastType  string
	Count     int64
	Value     float64 // the last event's value
	HasValue  bool
	FirstSeen time.Time
	LastSeen  time.Time
	Positive  bool // counts as relevant (X(u,i) = 1)
	Negative  bool // excluded by a negative event (dislike, hide)
}

// Counts are the store's counters.
type Counts struct {
	Users        int64 `json:"users"`
	Items        int64 `json:"items"`
	Interactions int64 `json:"interactions"` // distinct (user, item) pairs
	Positives    int64 `json:"positives"`    // pairs that are relevant
	Events       int64 `json:"events"`       // events accepted, repeats included
}

// Page asks for one page of a listing.
type Page struct {
	Cursor string
	Limit  int
}

// Snapshot is a consistent copy of the training data, read in one read
// transaction: the positive pairs of X and the item side information.
// Dense indices are the store's; an empty id marks a deleted index.
type Snapshot struct {
	TakenAt      time.Time
	Events       int64 // the event counter when the snapshot was taken
	UserIDs      []string
	ItemIDs      []string
	Users, Items []uint32 // positive pair k is (Users[k], Items[k])
	// Days holds the day number (whole UTC days since 1970-01-01) of pair
	// k's first event, the day the user met the item, which the
	// time-aware models read.
	Days         []int32
	Hidden       []bool
	Categories   [][]string
	FeatureNames []string
	Features     [][]float64 // per item, nil when it has none
}

// Profile is what serving needs of a user at request time: the live
// positive history and every item to leave out, both as dense item indices.
type Profile struct {
	Known    bool
	Positive []uint32 // sorted
	// PositiveDays holds the day number of each Positive item's first
	// event (as Snapshot.Days), for the models that decay past events.
	PositiveDays []int32
	Consumed     []uint32 // sorted: every item with any event, negatives included
	Negative     []uint32 // sorted
}

// Interaction, user and item services, implemented by storage.

// InteractionService stores and reads feedback.
type InteractionService interface {
	AddInteractions(ctx context.Context, evs []Interaction) (int, error)
	DeleteInteraction(ctx context.Context, userID, itemID string) error
	History(ctx context.Context, userID string, p Page) ([]HistoryEntry, string, error)
}

// UserService reads, lists and deletes users.
type UserService interface {
	User(ctx context.Context, id string) (User, error)
	// Users lists users in the natural order of their ids (2 before 10),
	// a page at a time; the cursor returned is "" after the last page.
	Users(ctx context.Context, p Page) ([]User, string, error)
	DeleteUser(ctx context.Context, id string) error
}

// ItemService manages the catalogue.
type ItemService interface {
	PutItems(ctx context.Context, items []Item) error
	// UpdateItem applies change to the stored item atomically (PATCH).
	UpdateItem(ctx context.Context, id string, change func(Item) (Item, error)) (Item, error)
	Item(ctx context.Context, id string) (Item, error)
	Items(ctx context.Context, p Page) ([]Item, string, error)
	DeleteItem(ctx context.Context, id string) error
}

// DayCount is the number of events of one UTC day (YYYY-MM-DD).
type DayCount struct {
	Day    string `json:"day"`
	Events int64  `json:"events"`
}

// StatsService reports counters.
type StatsService interface {
	Counts(ctx context.Context) (Counts, error)
	Activity(ctx context.Context, days int) ([]DayCount, error)
}

// RecommendRequest asks for the top n items for a user, or for an
// anonymous history.
type RecommendRequest struct {
	UserID string
	// History, when not nil, stands for the user: a live history of item
	// ids, all taken as positive (POST /recommendations); UserID is then
	// not read. Ids not in the catalogue are left out and reported.
	History []string
	N       int
	// Offset skips the first Offset items of the list of Offset+N, so
	// that pages are slices of one ranking.
	Offset int
	Model  string // empty: the active model
	// Categories keeps the items in any of them; empty keeps every item.
	Categories      []string
	Exclude         []string // item ids never to answer; unknown ones are ignored
	ExcludeConsumed bool
	Explain         bool // attach the reasons of each item
	Diversity       Diversity
	Steer           Steering
}

// RerankRequest asks for given items ordered by a model's scores for a
// user (POST /users/{id}/rerank).
type RerankRequest struct {
	UserID    string
	Items     []string
	Model     string // empty: the active model
	Diversity Diversity
	Steer     Steering
	Explain   bool // name the rules that changed each item
}

// MaxRequestItems bounds the item lists of one request: a history, the
// candidates of a rerank, an exclude list.
const MaxRequestItems = 10000

// ScoredItem is one ranked item.
type ScoredItem struct {
	ItemID  string   `json:"item_id"`
	Score   float64  `json:"score"`
	Reasons []Reason `json:"reasons,omitempty"`
	// Cold marks a recommended item with no events yet, let in on content
	// alone; its Score is then its content similarity, not a model score.
	Cold bool `json:"cold,omitempty"`
	// Rules names the rules that moved or rescored the item (explain).
	Rules []string `json:"rules,omitempty"`
}

// Reason is one of the largest terms of a recommended item's score: a
// consumed item or a neighbour user, with its share of the score.
type Reason struct {
	Kind   string  `json:"kind"` // "item" or "user"
	ID     string  `json:"id"`
	Weight float64 `json:"weight"`
}

// Recommendations answers a RecommendRequest.
type Recommendations struct {
	UserID       string
	Model        string
	ModelVersion string
	Items        []ScoredItem
	Fallback     string // "popular" when no trained model answered
	// UnknownItems are the ids of a history or of rerank candidates that
	// are not in the catalogue; HiddenItems the hidden rerank candidates.
	// Both were left out of Items.
	UnknownItems []string
	HiddenItems  []string
	// FilteredItems are the rerank candidates that a filter expression
	// or an exclude rule left out.
	FilteredItems []string
}

// SimilarRequest asks for the items most similar to one item.
type SimilarRequest struct {
	ItemID    string
	N         int
	By        string   // collaborative, content or hybrid
	Exclude   []string // item ids never to answer; unknown ones are ignored
	Diversity Diversity
	Steer     Steering
	Explain   bool // name the rules that changed each item
}

// SimilarItems answers a SimilarRequest.
type SimilarItems struct {
	ItemID       string
	By           string
	Model        string
	ModelVersion string
	Items        []ScoredItem
}

// Recommender serves recommendations and similar items.
type Recommender interface {
	Recommend(ctx context.Context, req RecommendRequest) (*Recommendations, error)
	Similar(ctx context.Context, req SimilarRequest) (*SimilarItems, error)
	// SearchSimilar ranks the catalogue for an unseen feature vector.
	SearchSimilar(ctx context.Context, features map[string]float64, n int) (*SimilarItems, error)
	// Rerank orders given items by a model's scores for a user.
	Rerank(ctx context.Context, req RerankRequest) (*Recommendations, error)
}

// MaxIDBytes is the longest id accepted (docs/design.md#data).
const MaxIDBytes = 256

// ValidateID reports why s is not a valid user or item id: 1–256 bytes of
// UTF-8 without control characters.
func ValidateID(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case len(s) > MaxIDBytes:
		return "must be at most 256 bytes"
	case !utf8.ValidString(s):
		return "must be valid UTF-8"
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return "must not contain control characters"
		}
	}
	return ""
}

// Catalogue is the serving view of the items: dense index → id, hidden
// flags, categories and popularity. It is cheap to rebuild and is cached by
// the recommender between catalogue writes.
type Catalogue struct {
	ItemIDs    []string // "" at deleted indices
	Index      map[string]uint32
	Hidden     []bool
	Categories [][]string
	Popularity []int64
}

// ItemAttributes are what filter expressions read of the items besides
// the Catalogue, by dense index (docs/rules.md): labels, features, and
// when each item entered the catalogue (Unix ns: its first PUT, or the
// arrival of its first event; 0 when unknown). Indices past the end of a
// slice have none.
type ItemAttributes struct {
	Labels   []map[string]string
	Features []map[string]float64
	Created  []int64
}
