#!/usr/bin/env bash
# The ICS'24 study (Chaulagain & Yuan; docs/ugal-le-results.md): the saturation table of
# Figs. 6-16, the latency curves of Figs. 5, 6 and 14, and the Fig. 17 transient. Every step is
# resumable (the result stores keep finished points): rerun after an interruption. Full size
# takes hours on 2 cores; STEPS selects parts:
#   STEPS="shift fig17" bash experiments/ics24/run.sh      # the headline rows and Fig. 17
#   bash experiments/ics24/run.sh                           # everything
# The saturation figures are the campaigns of docs/studies.md (`dflab reproduce`), one per pattern
# family, with the criterion of docs/ugal-le-results.md: the highest load on a 0.01 grid with
# accepted >= 0.98 x offered and mean latency <= 120 ns (3x the 40-cycle zero-load latency;
# 1 cycle = 1 ns). Each exits 1 when a check fails (its table says which); the other steps still run.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-results/ics24}
STEPS=${STEPS:-"shift curves perm mix fig17"}
JOBS=${JOBS:-2}
DFLAB=${DFLAB:-.venv/bin/dflab}

campaign() {  # campaign STUDY OUTDIR
    "$DFLAB" reproduce "$1" --full --jobs "$JOBS" --out "$OUT/$2" || true
}

for step in $STEPS; do
    case $step in
        shift)  # Figs. 6 and 14
            campaign ics24-shift shift ;;
        curves)  # Figs. 5, 6 and 14 as latency-load curves on a grid of loads
            campaign ics24-curves curves ;;
        perm)   # Figs. 7 and 16
            campaign ics24-perm ics24-perm ;;
        mix)    # Figs. 8-10 (router-level shift mix), 11-13 and 15 (node-level mixes)
            campaign ics24-router-mix ics24-router-mix
            campaign ics24-node-mix ics24-node-mix ;;
        fig17)
            "$DFLAB" sweep experiments/ics24/fig17_transient.toml --out "$OUT/fig17" --jobs "$JOBS"
            "$DFLAB" sweep experiments/ics24/fig17_transient_dgb.toml --out "$OUT/fig17-dgb" --jobs "$JOBS"
            .venv/bin/python experiments/ics24/fig17.py "$OUT/fig17" "$OUT/fig17-dgb" --out "$OUT/fig17.png"
            # EDGB without exploration (docs/ugal-le-results.md): its own store and table
            "$DFLAB" sweep experiments/ics24/fig17_transient_edgb_noexplore.toml --out "$OUT/fig17-edgb-noexplore" --jobs "$JOBS"
            .venv/bin/python experiments/ics24/fig17.py "$OUT/fig17-edgb-noexplore" --routings EDGB \
                --out "$OUT/fig17-edgb-noexplore.png" ;;
        *) echo "unknown step: $step (shift, curves, perm, mix, fig17)" >&2; exit 2 ;;
    esac
done
# Every campaign's saturation loads beside the paper's, and its latency-load curves (the
# campaigns run so far).
.venv/bin/python experiments/ics24/saturation_bars.py "$OUT" --out "$OUT/saturation.png" || true
.venv/bin/python experiments/ics24/curves.py "$OUT" --out "$OUT/curves.png" || true
