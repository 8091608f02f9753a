package jobs

import "recsys/recsys"

// TrainableNames lists what a training job can fit: every registered
// kind (recsys.Kinds), the recommenders first.
func TrainableNames() []string { return recsys.Kinds() }

// Trainable reports whether a training job can fit name.
func Trainable(name string) bool {
	_, err := recsys.KindOf(name)
	return err == nil
}

// Recommender reports whether name is a recommender (recsys.Recommends):
// a model that ranks items for a user, which evaluations, activation and
// ?model= accept. The content metric is not one.
func Recommender(name string) bool { return recsys.Recommends(name) }
