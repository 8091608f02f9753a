package api

// MergePatch applies a JSON merge patch to target, both in the generic
// JSON data model (map[string]any for objects, []any, string, float64,
// bool, nil), RFC 7396 §2: an object patch merges member by member,
// recursively, and a null member deletes; anything else, an array
// included, replaces the target. target's maps may be modified.
func MergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for name, v := range p {
		if v == nil {
			delete(t, name)
		} else {
			t[name] = MergePatch(t[name], v)
		}
	}
	return t
}
