package micro

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// libtestFormat is the one-line-per-benchmark format of Rust's libtest
// (cargo bench), which criterion writes with --output-format bencher:
// "test NAME ... bench:   31,912 ns/iter (+/- 215)", optionally followed by
// "= 1024 MB/s". No Go library reads it; it is one regular expression.
var libtestFormat = Format{
	Name:  "libtest",
	Usage: "Rust's libtest bench lines (cargo bench; criterion's --output-format bencher)",
	Parse: parseLibtest,
}

var libtestLine = regexp.MustCompile(`^test (.+?)\s+\.\.\. bench:\s+([\d,]+(?:\.\d+)?) ns/iter \(\+/- ([\d,]+(?:\.\d+)?)\)(?:\s*=\s*([\d,]+(?:\.\d+)?) MB/s)?\s*$`)

func parseLibtest(out []byte) ([]Sample, error) {
	var samples []Sample
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if !strings.HasPrefix(line, "test ") || !strings.Contains(line, " bench:") {
			continue // build output, "running N tests", "test x ... ignored"
		}
		m := libtestLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("libtest bench line %d: want \"test NAME ... bench: N ns/iter (+/- N)\", got %q", n, line)
		}
		ns, _ := strconv.ParseFloat(strings.ReplaceAll(m[2], ",", ""), 64)
		s := Sample{Name: m[1], Values: []Value{{Unit: "ns/op", Value: ns}}}
		if m[4] != "" {
			mb, _ := strconv.ParseFloat(strings.ReplaceAll(m[4], ",", ""), 64)
			s.Values = append(s.Values, Value{Unit: "MB/s", Value: mb, Higher: true})
		}
		samples = append(samples, s)
	}
	return samples, sc.Err()
}
