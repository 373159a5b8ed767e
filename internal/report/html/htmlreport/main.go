// Command htmlreport writes the HTML report of result files, until the
// report command's format registry calls the html package itself:
//
//	go run ./internal/report/html/htmlreport -o report.html FILE...
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/pgscale/pgscale/internal/report/html"
	"github.com/pgscale/pgscale/internal/result"
)

func main() {
	out := flag.String("o", "", "write the page to this file (default: standard output)")
	flag.Parse()
	if err := run(*out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "htmlreport:", err)
		os.Exit(2)
	}
}

func run(out string, paths []string) error {
	if len(paths) == 0 {
		return fmt.Errorf("no result files (usage: htmlreport [-o report.html] FILE...)")
	}
	var doc html.Doc
	for _, p := range paths {
		f, err := result.Read(p)
		if err != nil {
			return err
		}
		doc.Files = append(doc.Files, html.NamedFile{Name: p, File: f})
	}
	var buf bytes.Buffer
	if err := html.Write(&buf, doc); err != nil {
		return err
	}
	if out == "" {
		_, err := os.Stdout.Write(buf.Bytes())
		return err
	}
	return result.WriteFileAtomic(out, buf.Bytes())
}
