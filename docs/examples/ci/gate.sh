#!/usr/bin/env bash
# cryptobench's regression gate for a library's pull request (docs/gate.md, "CI"): the simulator measures the
# library at the request's base and at its head, `cryptobench gate` compares the two runs, its
# Markdown is posted on the request, and the head run is exported for the dashboards.
# github-actions.yml and gitlab-ci.yml both call this one script, so it runs the same way on a laptop.
#
# Exit status: the gate's (0 pass, 1 regression, 2 usage error, 4 refused: the runs' conditions
# differ), or that of a run that measured nothing or the first other failing command's. A run
# whose cells partly failed (its exit 1) is still gated: a cell failing in the head is a regression.
#
# Only a complete comment is posted: the gate writes gate.md.part, which becomes gate.md only when the
# gate exited 0, 1 or 4 and the file ends with the renderer's last line (MD_END); otherwise (a usage
# error, a crash, a gate killed half-way) gate.md is a fixed notice that holds nothing the gate wrote.
# Tokens are read from the environment by the tools that use them (gh: GH_TOKEN; curl: the header on
# a pipe, from a builtin): never on a command line, never in a file, never printed (no `set -x`).
#
# Settings (environment):
#   GATE_LIBRARY_DIR  the library's git checkout (default: the current folder)
#   GATE_RECIPE       the library's cryptobench recipe (required)
#   GATE_OPS          operations to measure, space-separated (default: sha256)
#   GATE_TARGET       default sim:cortex-m4          GATE_DEVICE   default stm32f407
#   GATE_RUN_ARGS     more `cryptobench run` options, space-separated (e.g. "--param bytes=64,1024")
#   GATE_GATE_ARGS    more `cryptobench gate` options (e.g. "--max-cycles 0.5%")
#   GATE_OUT          folder for gate.sqlite, gate.md and the exports (default: gate-out)
#   GATE_BASE_SHA / GATE_HEAD_SHA  the commits; else from the CI's variables:
#     GitLab: CI_MERGE_REQUEST_DIFF_BASE_SHA, CI_COMMIT_SHA
#     GitHub: GITHUB_BASE_REF (merge base with the checked-out head), the checkout's HEAD
#   GATE_POST         1: post gate.md on the request (default), 0: do not
#   GitHub: GATE_PR_NUMBER (else from GITHUB_REF refs/pull/N/merge) and GH_TOKEN, read by gh
#   GitLab: CI_MERGE_REQUEST_IID, CI_API_V4_URL, CI_PROJECT_ID and GATE_GITLAB_TOKEN (a project
#           access token with the api scope, as a masked variable: CI_JOB_TOKEN may not write notes)
set -euo pipefail

CRYPTOBENCH=${CRYPTOBENCH:-cryptobench}
lib=${GATE_LIBRARY_DIR:-$PWD}
out=${GATE_OUT:-gate-out}
db="$out/gate.sqlite"

say() { printf 'gate.sh: %s\n' "$*" >&2; }
die() { say "$1"; exit "${2:-2}"; }
# a signal ends the script through `exit`, so the EXIT trap (set once there is something to clean) runs
trap 'exit 129' HUP; trap 'exit 130' INT; trap 'exit 143' TERM
MD_END='<!-- cryptobench gate: end of comment -->'      # report/gate_render.py writes it last

[ -n "${GATE_RECIPE:-}" ] || die "GATE_RECIPE is not set: the library's recipe (docs/own-library.md)"
git -C "$lib" rev-parse --git-dir >/dev/null 2>&1 || die "GATE_LIBRARY_DIR $lib is not a git checkout"

commit() {      # a ref as a full commit hash, or a one-line error naming what was asked
    git -C "$lib" rev-parse --verify --quiet "$1^{commit}" || die "$2 '$1' is not a commit of $lib"
}

base=${GATE_BASE_SHA:-${CI_MERGE_REQUEST_DIFF_BASE_SHA:-}}
if [ -z "$base" ] && [ -n "${GITHUB_BASE_REF:-}" ]; then
    ref="origin/$GITHUB_BASE_REF"
    git -C "$lib" rev-parse --verify --quiet "$ref^{commit}" >/dev/null || ref=$GITHUB_BASE_REF
    base=$(git -C "$lib" merge-base "$(commit "$ref" GITHUB_BASE_REF)" HEAD) \
        || die "no merge base of $ref and HEAD in $lib (fetch the history: fetch-depth 0 / GIT_DEPTH 0)"
fi
[ -n "$base" ] || die "no base commit: set GATE_BASE_SHA (or run on a merge request / pull request)"
head=${GATE_HEAD_SHA:-${CI_COMMIT_SHA:-HEAD}}
base=$(commit "$base" "base")
head=$(commit "$head" "head")
say "base $base, head $head"

mkdir -p "$out"
rm -f "$db" "$out/gate.md" "$out/gate.md.part" "$out/gate.err" "$out/bencher.json" "$out/github-action-benchmark.json"

read -r -a ops <<< "${GATE_OPS:-sha256}"
read -r -a run_args <<< "${GATE_RUN_ARGS:-}"
read -r -a gate_args <<< "${GATE_GATE_ARGS:-}"
op_args=()
for op in "${ops[@]}"; do op_args+=(--op "$op"); done
target=${GATE_TARGET:-sim:cortex-m4}
profile=()      # the simulator's per-function profile: the gate names a change in cycles by function
[[ "$target" == sim:* ]] && profile=(--profile)

measure() {     # $1: commit, $2: label; a fresh store, so base is run 1 and head is run 2
    "$CRYPTOBENCH" run --target "$target" --device "${GATE_DEVICE:-stm32f407}" \
        --recipe "$GATE_RECIPE" --library-source "$lib@$1" "${op_args[@]}" "${run_args[@]}" "${profile[@]}" \
        --label "$2 $1" --db "$db" --quiet
}
measured() {    # run's exit 1 means some cells failed: the run is stored and the gate reports them (a
    # cell ok in the base that fails in the head is a regression); any other failure stops here
    local rc=0
    measure "$1" "$2" || rc=$?
    if [ "$rc" = 1 ]; then
        say "the $2 run has failed cells (stored; the gate reports them)"
    elif [ "$rc" != 0 ]; then
        die "the $2 run failed (exit $rc)" "$rc"
    fi
}
measured "$base" base
measured "$head" head

# the head's figures for the dashboards (failed cells are left out and named on stderr)
"$CRYPTOBENCH" export 2 --format bencher --db "$db" --out "$out/bencher.json"
"$CRYPTOBENCH" export 2 --format github-action-benchmark --db "$db" --out "$out/github-action-benchmark.json"

part="$out/gate.md.part"
trap 'rm -f "$part"' EXIT
set +e
"$CRYPTOBENCH" gate 1 2 --db "$db" --format md "${gate_args[@]}" > "$part" 2> "$out/gate.err"
status=$?
set -e
cat "$out/gate.err" >&2
case $status in
    0|1|4) [ "$(tail -n 1 "$part")" = "$MD_END" ] && mv -f "$part" "$out/gate.md" ;;
esac
if [ ! -e "$out/gate.md" ]; then
    # no complete comment (a usage error, a crash, a gate killed half-way): a notice of our own
    # words, never what the gate left; its messages are in the job's log
    printf '### cryptobench gate: no result (exit %s)\n\nThe gate did not complete a comparison; %s\n' \
        "$status" "its messages are in the CI job's log." > "$out/gate.md"
fi
case $status in
    0) say "gate passed" ;;
    1) say "gate failed: a regression (gate.md says where)" ;;
    4) # cryptobench gate prints its refusal (each differing condition) in its output, gate.md
        why=$(head -n 1 "$out/gate.err")
        [ -n "$why" ] || why=$(grep -m 1 -o 'refused: .*' "$out/gate.md" || true)
        say "gate refused (the runs' conditions or figures): $why" ;;
    *) say "gate failed (exit $status): $(head -n 1 "$out/gate.err")" ;;
esac

post_github() {
    local pr=${GATE_PR_NUMBER:-}
    if [ -z "$pr" ] && [[ "${GITHUB_REF:-}" =~ ^refs/pull/([0-9]+)/ ]]; then pr=${BASH_REMATCH[1]}; fi
    [ -n "$pr" ] || { say "not posted: no pull request number (GATE_PR_NUMBER)"; return 0; }
    [ -n "${GH_TOKEN:-}" ] || { say "not posted: GH_TOKEN is not set"; return 0; }
    gh pr comment "$pr" --body-file "$out/gate.md" >/dev/null && say "posted gate.md on pull request #$pr"
}

post_gitlab() {
    local iid=${CI_MERGE_REQUEST_IID:-}
    [ -n "$iid" ] || { say "not posted: not a merge request pipeline (CI_MERGE_REQUEST_IID)"; return 0; }
    [ -n "${GATE_GITLAB_TOKEN:-}" ] || { say "not posted: GATE_GITLAB_TOKEN is not set"; return 0; }
    local rc=0
    # the header reaches curl on a pipe (`--header @FILE` of a process substitution), written by the
    # builtin printf: no command line holds the token, and no file does either, whatever ends the job
    curl --fail --silent --show-error --output /dev/null \
        --header @<(printf 'PRIVATE-TOKEN: %s\n' "$GATE_GITLAB_TOKEN") \
        --data-urlencode "body@$out/gate.md" \
        "$CI_API_V4_URL/projects/$CI_PROJECT_ID/merge_requests/$iid/notes" || rc=$?
    [ "$rc" = 0 ] && say "posted gate.md on merge request !$iid"
    return "$rc"
}

if [ "${GATE_POST:-1}" = 1 ]; then
    if [ "${GITHUB_ACTIONS:-}" = true ]; then
        post_github || say "posting the comment failed (the gate's result stands)"
    elif [ "${GITLAB_CI:-}" = true ]; then
        post_gitlab || say "posting the comment failed (the gate's result stands)"
    else
        say "not posted: not on GitHub Actions or GitLab CI (gate.md is in $out)"
    fi
fi
exit "$status"
