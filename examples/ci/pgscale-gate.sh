#!/usr/bin/env bash
# pgscale-gate.sh: the performance gate of a pull request (docs/ci.md), the
# same on GitHub Actions and GitLab CI. It measures the pull request's head
# against the commit it goes into, counted under Valgrind, writes the
# comment (with a hidden marker, so that later pushes update that comment
# rather than add one) and the HTML report, records both sides in the
# history store, and exits as pgscale did:
#   0 passed (or nothing bounded)   1 a regression   4 undecided
#   2 bad usage or input            3 the run could not complete
#
#   pgscale-gate.sh pooler      a pooler's repository: the pooler-ci preset
#                               on the two builds (pgscale suite)
#   pgscale-gate.sh extension   a PostgreSQL extension's repository: one
#                               query, counted at one client (pgscale ab)
#
# Environment (the CI files set it):
#   BASE_DIR, HEAD_DIR  checkouts of the base commit and of the pull
#                       request's head, submodules included (pgscale builds
#                       each working tree as it is)
#   BASE_SHA, HEAD_SHA  their commits, recorded in the history store
#   PR                  the pull (merge) request's number, its history label
#   ON_INCONCLUSIVE     what an undecided verdict exits with: pass (0),
#                       fail (1) or keep (4, for the CI to show as a
#                       warning); default keep
#   OUT                 where everything is written (default pgscale-out)
#   HISTORY             the history store kept between runs (default
#                       .pgscale/history.db)
#   RUN_URL             the CI run's page, linked from the comment for the
#                       HTML report and the result files kept there
#   TRANSACTIONS        transactions per client in a step (default 300)
#   MARKER              the hidden marker of the comment (default
#                       <!-- pgscale-gate:MODE -->)
#   PGSCALE_ARGS        more arguments to the gate's pgscale suite or ab,
#                       split at spaces (--rounds 4, --matrix
#                       workload=select-only, --bound ...)
#   extension:  SETUP and QUERY, SQL files of the head's checkout (default
#               bench/setup.sql, bench/query.sql); ROUNDS (default 4); BOUND,
#               the bound on the instructions per transaction (default +1%)
set -uo pipefail

mode=${1:?usage: pgscale-gate.sh pooler|extension}
: "${BASE_DIR:?the checkout of the base commit}" "${HEAD_DIR:?the checkout of the head of the pull request}"
: "${BASE_SHA:?the base commit}" "${HEAD_SHA:?the head commit of the pull request}"
out=${OUT:-pgscale-out}
history=${HISTORY:-.pgscale/history.db}
transactions=${TRANSACTIONS:-300}
marker=${MARKER:-<!-- pgscale-gate:$mode -->}
label="pr-${PR:-head}"
case "${ON_INCONCLUSIVE:-keep}" in
pass | fail) inconclusive=$ON_INCONCLUSIVE ;;
keep) inconclusive=inconclusive ;;
*)
	echo "pgscale-gate: ON_INCONCLUSIVE is pass, fail or keep, not ${ON_INCONCLUSIVE}" >&2
	exit 2
	;;
esac
read -r -a more <<<"${PGSCALE_ARGS:-}"
mkdir -p "$out" "$(dirname "$history")"
rm -f "$out/comment.md" "$out/comment-body.md" "$out/exit-code"

# finish writes the comment's body, with the marker first, and the exit
# code, whatever happened: the CI posts the one and maps the other.
code=0
# shellcheck disable=SC2317 # run by the trap
finish() {
	local status=$?
	if [ "$code" = 0 ]; then code=$status; fi
	{
		echo "$marker"
		if [ -s "$out/comment.md" ]; then
			cat "$out/comment.md"
		else
			echo "### pgscale: no verdict (exit $code)"
			echo
			echo "pgscale wrote no verdict (exit 2: bad usage or input; 3: a build failed, or the run could not complete). The log of the CI job says why."
		fi
		if [ -n "${RUN_URL:-}" ]; then
			echo
			echo "The HTML report (flame graphs, every step's evidence) and the result files: [the CI run]($RUN_URL) keeps them."
		fi
	} >"$out/comment-body.md"
	echo "$code" >"$out/exit-code"
}
trap finish EXIT
trap 'code=130; exit 130' INT
trap 'code=143; exit 143' TERM

case "$mode" in
pooler)
	# pgbouncer built from each checkout at its commit (pgbouncer:src=,
	# docs/targets.md): the recipe read from the tree, what it needs named
	# before building, submodules at the commits the tree records; the
	# preset derives each one's balancing twin. The builds first (found in
	# the build cache when a run made them before), so that one that fails
	# says so on its own (exit 2: a program it needs is missing; 3: it
	# failed).
	pgscale build base=pgbouncer:src="$BASE_DIR@$BASE_SHA" cand=pgbouncer:src="$HEAD_DIR@$HEAD_SHA" || {
		code=$?
		exit "$code"
	}
	rm -rf "$out/bundle"
	pgscale suite --preset pooler-ci --quick --count instructions -t "$transactions" \
		--param base=pgbouncer:src="$BASE_DIR@$BASE_SHA" --param cand=pgbouncer:src="$HEAD_DIR@$HEAD_SHA" \
		--out "$out/bundle" --comment "$out/comment.md" --verdict "$out/verdict.json" --inconclusive "$inconclusive" \
		--store "$history" --label base=main --label cand="$label" --commit base="$BASE_SHA" --commit cand="$HEAD_SHA" \
		${more[@]+"${more[@]}"} || code=$?
	results=$out/bundle
	;;
extension)
	rm -rf "$out/ab"
	pgscale ab --target base=settings:,ext="$BASE_DIR" --target cand=settings:,ext="$HEAD_DIR" \
		--setup "$HEAD_DIR/${SETUP:-bench/setup.sql}" -f "$HEAD_DIR/${QUERY:-bench/query.sql}" \
		-c 1 -t "$transactions" --rounds "${ROUNDS:-4}" --count instructions --bound instr/txn="${BOUND:-+1%}" \
		--out "$out/ab" --comment "$out/comment.md" --verdict "$out/verdict.json" --inconclusive "$inconclusive" \
		--store "$history" --label base=main --label cand="$label" --commit base="$BASE_SHA" --commit cand="$HEAD_SHA" \
		${more[@]+"${more[@]}"} || code=$?
	results=$out/ab
	;;
*)
	echo "pgscale-gate: pooler or extension, not $mode" >&2
	code=2
	exit "$code"
	;;
esac

# The HTML report of the same result files, kept with them by the CI (the
# comment, written without it, links to no page: a link relative to the
# comment would lead nowhere in a pull request).
if [ -d "$results" ]; then
	pgscale report "$results" --format html -o "$out/report.html" || true
fi

exit "$code"
