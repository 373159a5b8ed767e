// Package report renders result files and comparisons: terminal tables,
// markdown, HTML with charts, Go benchmark format and Bencher Metric Format.
// It reads results and statistics; it never touches a server.
package report
