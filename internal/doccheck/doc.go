// Package doccheck holds no code: its test checks that every pgscale command
// in README.md and docs/ still parses and, for all but a listed few, runs as
// written (with short durations) against a real server.
package doccheck
