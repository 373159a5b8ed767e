package load_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/load"
)

// Every setting crosses the agents' wire: a value with each field set
// comes back from its JSON as it was.
func TestSettingsRoundTrip(t *testing.T) {
	var s load.Settings
	v := reflect.ValueOf(&s).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			if f.Type() == reflect.TypeOf(time.Duration(0)) {
				f.SetInt(int64(time.Duration(i+1) * time.Millisecond))
			} else {
				f.SetInt(int64(i + 1))
			}
		case reflect.Float64:
			f.SetFloat(float64(i) + 0.5)
		case reflect.String:
			f.SetString("raw")
		default:
			t.Fatalf("field %s: a %s the test does not fill", v.Type().Field(i).Name, f.Kind())
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back load.Settings
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back != s {
		t.Errorf("through JSON %s:\n got %+v\nwant %+v", b, back, s)
	}
}
