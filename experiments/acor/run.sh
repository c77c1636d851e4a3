#!/usr/bin/env bash
# The JPDC'19 study (Benito et al., ACOR; docs/acor-results.md): Figs. 4-16, each a campaign of
# docs/studies.md (`dflab reproduce`, which draws the figure and checks the paper's numbers) and
# Figs. 8-10 from experiments/acor/transients.py. Every step is resumable (the result stores and
# transients.py's run files keep finished points): rerun after an interruption.
#   bash experiments/acor/run.sh                         # quick size (acor-1056), about 30 min
#   SIZE=--full bash experiments/acor/run.sh             # the paper's acor-5256: many hours
#   STEPS="fig4 fig5" bash experiments/acor/run.sh       # some figures only
# A campaign exits 1 when a check fails (its checks.md says which); the other steps still run.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-results/acor}
SIZE=${SIZE:-}
STEPS=${STEPS:-"fig4 fig5 fig7 fig11 fig12 fig13 fig14 fig15 fig16 transients"}
JOBS=${JOBS:-2}
DFLAB=${DFLAB:-.venv/bin/dflab}
suffix=${SIZE:+-full}

for step in $STEPS; do
    case $step in
        fig4|fig5|fig7|fig11|fig12|fig13|fig14|fig15|fig16)
            # (acor-fig7 holds Figs. 6 and 7)
            "$DFLAB" reproduce "acor-$step" $SIZE --jobs "$JOBS" --out "$OUT/acor-$step$suffix" || true ;;
        transients)  # Figs. 8-10
            preset=acor-1056
            [ -n "$SIZE" ] && preset=acor-5256
            .venv/bin/python experiments/acor/transients.py --preset "$preset" --out "$OUT" \
                --hi 100,250,500,1000,2000 ;;
        *) echo "unknown step: $step (fig4 fig5 fig7 fig11-fig16, transients)" >&2; exit 2 ;;
    esac
done
