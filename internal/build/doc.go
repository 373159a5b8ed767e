// Package build turns source trees at a revision, with patches, into
// installed builds kept in a cache addressed by their content: PostgreSQL
// (autoconf or meson, contrib modules, PGXS extensions built against it) and
// any other program by its own build command (a pooler, a proxy). It knows
// nothing of running what it builds.
//
// A build's key hashes what decides its bytes: the source tree's content
// (git's tree hash for a commit; the same hash computed over the files for a
// working tree or a plain directory), the patches' bytes, the configure
// arguments or build command, the C compiler's identity and the cache schema.
// A build is made from an export of the tree in a scratch directory, never in
// the user's checkout, and moved into the cache only when complete.
package build
