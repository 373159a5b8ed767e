package result

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// FindPassword looks through every string of a result file's JSON, keys
// and values, for an unredacted password (a postgres:// URL with one, or
// password=...) and returns where the first one is, as a path such as
// "target.settings.primary_conninfo" ("workload.defines.(a key)" for a key);
// "" when there is none. The path never holds the password. Validate checks
// the command line and the A/B target specs; this checks everything, for
// stores that must never keep a password.
func FindPassword(data []byte) (string, error) {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return "", fmt.Errorf("not JSON: %w", err)
	}
	return findPassword(doc, ""), nil
}

func findPassword(v any, path string) string {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch v := v.(type) {
	case string:
		if leaksPassword(v) {
			return path
		}
	case []any:
		for i, e := range v {
			if p := findPassword(e, path+"["+strconv.Itoa(i)+"]"); p != "" {
				return p
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if leaksPassword(k) {
				return join("(a key)") // the key itself is not shown
			}
			if p := findPassword(v[k], join(k)); p != "" {
				return p
			}
		}
	}
	return ""
}
