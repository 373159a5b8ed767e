# Shared by .ci/pg-source and .ci/pgbouncer-source (sourced, not run).

# srcpkg_orig PACKAGE DIR GLOB prints the path of PACKAGE's .orig tarball in
# DIR, downloading Debian's source package there first when no file matches
# GLOB. It adds a deb-src entry for bookworm main when apt has none (only
# bookworm main carries the versions the fixtures are made from; the
# security suite's newer ones are not on deb.debian.org as source).
srcpkg_orig() {
	local pkg=$1 dir=$2 glob=$3 f
	mkdir -p "$dir"
	f=$(find "$dir" -maxdepth 1 -name "$glob" | sort -V | tail -n 1)
	if [ -n "$f" ]; then
		echo "$f"
		return
	fi
	if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		cat >/etc/apt/sources.list.d/debian-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
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
