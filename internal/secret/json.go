package secret

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// FindInJSON looks through every string of a JSON document, keys and
// values, for a password that Leaks, and returns where the first one is,
// as a path such as "target.settings.primary_conninfo"
// ("workload.defines.(a key)" for a key); "" when there is none. The path
// never holds the password.
func FindInJSON(data []byte) (string, error) {
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
		if Leaks(v) {
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
			if Leaks(k) {
				return join("(a key)") // the key itself is not shown
			}
			if p := findPassword(v[k], join(k)); p != "" {
				return p
			}
		}
	}
	return ""
}

// RedactJSON returns the JSON document with every password in its strings
// (keys and values) redacted, re-encoded with indent; for the rare
// document FindInJSON finds one in, so that what holds it is still written,
// without it.
func RedactJSON(data []byte, indent string) ([]byte, error) {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	return json.MarshalIndent(redactValue(doc), "", indent)
}

func redactValue(v any) any {
	switch v := v.(type) {
	case string:
		return Redact(v)
	case []any:
		for i, e := range v {
			v[i] = redactValue(e)
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[Redact(k)] = redactValue(e)
		}
		return out
	}
	return v
}
