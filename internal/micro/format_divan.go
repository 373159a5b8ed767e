package micro

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// divanFormat is divan's text table (cargo bench with divan): a tree of
// benchmarks, each row "NAME fastest │ slowest │ median │ mean │ samples │
// iters". A benchmark is named by its path in the tree
// ("example/fibonacci/10"); its median is ns/op, its mean mean-ns/op.
// No Go library reads it.
var divanFormat = Format{
	Name:  "divan",
	Usage: "divan's text table (cargo bench with divan)",
	Parse: parseDivan,
}

// divanUnits are the time units divan prints, in nanoseconds.
var divanUnits = map[string]float64{"ps": 1e-3, "ns": 1, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}

func parseDivan(out []byte) ([]Sample, error) {
	var samples []Sample
	var path []string
	var seps []int // the rune columns of the header's │, where a row's columns split too
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := []rune(strings.TrimRight(sc.Text(), "\r "))
		if head := strings.Split(string(line), "│"); len(head) >= 6 && strings.Contains(head[0], "fastest") && strings.Contains(head[2], "median") {
			path = []string{strings.Fields(head[0])[0]} // a table: its binary's name
			seps = seps[:0]
			for i, r := range line {
				if r == '│' {
					seps = append(seps, i)
				}
			}
			continue
		}
		cols := divanColumns(line, seps)
		if path == nil || len(cols) < 6 {
			continue // build output, "Timer precision: 41 ns" (also inside a table)
		}
		// The tree: "├─ ", "╰─ " and "│  " take three columns a level.
		depth, rest := 0, cols[0]
		for {
			r, size := utf8.DecodeRuneInString(rest)
			if r != '├' && r != '╰' && r != '│' && r != '─' && r != ' ' {
				break
			}
			rest, depth = rest[size:], depth+1
		}
		level, fields := depth/3, strings.Fields(rest)
		median, isTime := divanTime(cols[2])
		switch {
		case len(fields) == 0 || level < 1 || level > len(path):
			continue // a counter's or an allocation's row under its benchmark
		case isTime != nil && strings.TrimSpace(cols[2]) == "" && !strings.HasSuffix(rest, ":"):
			path = append(path[:level], strings.Join(fields, " ")) // a group: its benchmarks follow
			continue
		case isTime != nil || len(fields) < 3:
			continue // "36.76 Kitem/s", "max alloc:", "480 KB"
		}
		mean, err := divanTime(cols[3])
		if err != nil {
			return nil, fmt.Errorf("divan table: %s: mean: %v", strings.Join(fields[:len(fields)-2], " "), err)
		}
		path = append(path[:level], strings.Join(fields[:len(fields)-2], " "))
		iters, _ := strconv.Atoi(strings.TrimSpace(cols[5]))
		samples = append(samples, Sample{Name: strings.Join(path, "/"), Iters: iters,
			Values: []Value{{Unit: "ns/op", Value: median}, {Unit: "mean-ns/op", Value: mean}}})
	}
	return samples, sc.Err()
}

// divanColumns splits a row at the header's separators (the tree's own
// │ come before the first); nil when the row has no separators there.
func divanColumns(line []rune, seps []int) []string {
	var cols []string
	from := 0
	for _, at := range seps {
		if at >= len(line) || line[at] != '│' {
			return nil
		}
		cols = append(cols, string(line[from:at]))
		from = at + 1
	}
	if from <= len(line) {
		cols = append(cols, string(line[from:]))
	}
	return cols
}

// divanTime reads "197.5 ns" in nanoseconds.
func divanTime(s string) (float64, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, fmt.Errorf("want a time such as 197.5 ns, got %q", strings.TrimSpace(s))
	}
	scale, ok := divanUnits[f[1]]
	v, err := strconv.ParseFloat(f[0], 64)
	if !ok || err != nil {
		return 0, fmt.Errorf("want a time such as 197.5 ns, got %q", strings.TrimSpace(s))
	}
	return v * scale, nil
}
