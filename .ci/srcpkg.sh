# Shared by .ci/pg-source and .ci/pgbouncer-source (sourced, not run).

# srcpkg_orig PACKAGE DIR GLOB prints the path of PACKAGE's .orig tarball in
# DIR, downloading Debian's source package there first when no file matches
# GLOB. It adds a deb-src entry for bookworm main when apt has none (only
# bookworm main carries the versions the fixtures are made from; the
# security suite's newer ones are not on the archive as source). The
# archive's address is the one apt already uses for bookworm's binaries.
srcpkg_orig() {
	local pkg=$1 dir=$2 glob=$3 f
	mkdir -p "$dir"
	f=$(find "$dir" -maxdepth 1 -name "$glob" | sort -V | tail -n 1)
	if [ -n "$f" ]; then
		echo "$f"
		return
	fi
	if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		local uri
		uri=$(srcpkg_archive)
		if [ -z "$uri" ]; then
			echo "srcpkg: no apt source for bookworm's binaries to add a deb-src entry beside" >&2
			return 1
		fi
		cat >/etc/apt/sources.list.d/debian-src.sources <<SRC
Types: deb-src
URIs: $uri
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
		apt-get update -qq >&2
	elif ! apt-cache showsrc "$pkg" 2>/dev/null | grep -q '^Package:'; then
		apt-get update -qq >&2
	fi
	(cd "$dir" && apt-get source -qq --download-only "$pkg" >&2)
	f=$(find "$dir" -maxdepth 1 -name "$glob" | sort -V | tail -n 1)
	if [ -z "$f" ]; then
		echo "srcpkg: apt-get source $pkg left no $glob in $dir" >&2
		return 1
	fi
	echo "$f"
}

# srcpkg_archive prints the address of the archive apt reads bookworm's
# binary packages from (a deb822 stanza with Suites: bookworm, or a
# one-line "deb URI bookworm ..." entry), empty when there is none.
srcpkg_archive() {
	awk '
		/^Types:/ { deb = ($0 ~ /(^|[ \t])deb([ \t]|$)/) }
		/^URIs:/ { uri = $2 }
		/^Suites:/ { if (deb && $0 ~ /[ \t]bookworm([ \t]|$)/ && uri != "") { print uri; exit } }
		/^deb[ \t]/ { if ($3 == "bookworm") { print $2; exit } }
	' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -n 1
}
