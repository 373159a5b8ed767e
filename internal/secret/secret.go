// Package secret keeps passwords out of everything pgscale prints or stores:
// messages, result files, reports and stores. It knows the places a
// PostgreSQL connection string holds one: a URI's user information, a
// password= URI parameter and a password= keyword, quoted or not.
package secret

import "regexp"

// Mask is what a redacted password reads as.
const Mask = "xxxxx"

var (
	// uriPassword: postgres://user:PASSWORD@host
	uriPassword = regexp.MustCompile(`(?i)(postgres(?:ql)?://[^:@/\s]*:)([^@\s]*)(@)`)
	// urlParam: ...?password=PASSWORD&...
	urlParam = regexp.MustCompile(`(?i)([?&]password=)([^&\s]*)`)
	// kvPassword: password=PASSWORD or password = 'PASS WORD' (libpq's
	// keyword form; a quoted value may hold spaces and escaped quotes).
	kvPassword = regexp.MustCompile(`(?i)((?:^|[\s"'])password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]+)`)
)

var patterns = []*regexp.Regexp{uriPassword, urlParam, kvPassword}

// Redact replaces every password in s with Mask.
func Redact(s string) string {
	s = uriPassword.ReplaceAllString(s, "${1}"+Mask+"${3}")
	s = urlParam.ReplaceAllString(s, "${1}"+Mask)
	s = kvPassword.ReplaceAllString(s, "${1}"+Mask)
	return s
}

// RedactAll returns a copy of args with every password redacted: a command
// line, for result files.
func RedactAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = Redact(a)
	}
	return out
}

// Leaks reports whether s holds a password that is not redacted. An empty
// password (password=, password=”) is not a leak.
func Leaks(s string) bool {
	for _, re := range patterns {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			switch m[2] {
			case Mask, "", "''":
			default:
				return true
			}
		}
	}
	return false
}
