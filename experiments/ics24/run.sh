#!/usr/bin/env bash
# The ICS'24 study (Chaulagain & Yuan; docs/ugal-le-results.md): the saturation table of
# Figs. 6-16 and the Fig. 17 transient. Every step is resumable (the result stores keep finished
# points): rerun after an interruption. Full size takes hours on 2 cores; STEPS selects parts:
#   STEPS="shift fig17" bash experiments/ics24/run.sh      # the headline rows and Fig. 17
#   bash experiments/ics24/run.sh                           # everything
# Saturation (docs/config.md, `dflab saturation`): the highest load on a 0.01 grid with accepted
# >= 0.99 x offered and mean latency <= 120 ns (3x the 40-cycle zero-load latency; 1 cycle = 1 ns).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-results/ics24}
STEPS=${STEPS:-"shift perm mix fig17"}
JOBS=${JOBS:-2}
DFLAB=${DFLAB:-.venv/bin/dflab}
# UGAL-G is the path-sum oracle (UGAL-G-path); DGB runs apart for its learning rate (0.1 in the
# paper; EDGB's 0.001 is its default). Intermediates outside the source and destination groups.
ROUTINGS="UGAL-L,UGAL-LE,PAR,UGAL-G-path,EDGB"

sat() {  # sat NET NAME TRAFFICS
    local net=$1 name=$2 traffics=$3
    local common=(--preset "$net" --traffics "$traffics" --range 0.2:0.9 --step 0.01 --accept 0.99
        --max-latency-ns 120 --jobs "$JOBS" --set routing.intermediate=outside)
    "$DFLAB" saturation "${common[@]}" --routings "$ROUTINGS" --out "$OUT/$net-$name"
    "$DFLAB" saturation "${common[@]}" --routings DGB --set routing.eta=0.1 --out "$OUT/$net-$name-dgb"
}

for step in $STEPS; do
    case $step in
        shift)  # Figs. 6 and 14: the campaign of docs/studies.md, criterion of docs/ugal-le-results.md
            # (exit 1 when a check fails: the table says which; the other steps still run)
            "$DFLAB" reproduce ics24-shift --full --jobs "$JOBS" --out "$OUT/shift" || true ;;
        perm)   # Figs. 7 and 16
            sat ugal-le-1056 perm perm
            sat ugal-le-288 perm perm ;;
        mix)    # Figs. 8-10, 12-13 and 15
            sat ugal-le-1056 router-mix "router-mix:adv+1:25,router-mix:adv+1:50,router-mix:adv+1:75"
            sat ugal-le-1056 node-mix "node-mix:perm:50,node-mix:perm:75"
            sat ugal-le-288 node-mix "node-mix:adv+1:50" ;;
        fig17)
            "$DFLAB" sweep experiments/ics24/fig17_transient.toml --out "$OUT/fig17" --jobs "$JOBS"
            "$DFLAB" sweep experiments/ics24/fig17_transient_dgb.toml --out "$OUT/fig17-dgb" --jobs "$JOBS"
            .venv/bin/python experiments/ics24/fig17.py "$OUT/fig17" "$OUT/fig17-dgb" --out "$OUT/fig17.png" ;;
        *) echo "unknown step: $step (shift, perm, mix, fig17)" >&2; exit 2 ;;
    esac
done
