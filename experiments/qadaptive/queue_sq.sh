#!/usr/bin/env bash
# Bounded-source-queue study of docs/qadaptive-results.md (traffic.source_queue_packets = 20, as
# SST's TrafficGen). Runs the sweeps one after another, one point at a time (--jobs 1), in
# priority order; resumable (each sweep skips the points its store already holds). Per-sweep
# wall times go to results/qadaptive-sq/queue.log.
#
#   experiments/qadaptive/queue_sq.sh            # everything, about 2 h on one core
#   experiments/qadaptive/queue_sq.sh fig5       # only the sweeps whose store name contains fig5
set -u
cd "$(dirname "$0")/../.."
out=results/qadaptive-sq
mkdir -p "$out"
# store  experiment file  [extra dflab sweep arguments]
while read -r store file extra; do
    [ -z "$store" ] && continue
    case "$store" in *"${1:-}"*) ;; *) continue ;; esac
    start=$(date +%s)
    # shellcheck disable=SC2086
    .venv/bin/dflab sweep "experiments/qadaptive/$file.toml" --jobs 1 --out "$out/$store" $extra \
        >"$out/$store.log" 2>&1
    rc=$?
    echo "$store rc=$rc wall=$(($(date +%s) - start))s end=$(date -u +%T)" | tee -a "$out/queue.log"
done <<'LIST'
fig5_q_adv      sq_fig5_q_adv
fig5_q_adv_long sq_fig5_q_adv_long
fig5_q_ur       sq_fig5_q_ur
fig5_q_ur_hi    sq_fig5_q_ur_hi
fig5_base       sq_fig5_base
fig5_par        sq_fig5_par
fig5_q_adv_s2   sq_fig5_q_adv    --seeds 2 --loads 0.1,0.3,0.45
fig5_q_ur_s2    sq_fig5_q_ur     --seeds 2 --loads 0.5
fig5_q_ur_hi_s2 sq_fig5_q_ur_hi  --seeds 2 --loads 0.8
fig6_base       sq_fig6_base
fig6_base_ur    sq_fig6_base     --traffics ur --loads 0.8
fig5_base_long  sq_fig5_base_long
fig5_base_long  sq_fig5_base_long --traffics ur --loads 0.9 --routings UGALg,UGALn,PAR
fig9_base_ur    sq_fig9_base_ur
fig9_base_adv   sq_fig9_base_adv
fig9_base_adv_long sq_fig9_base_adv_long
fig9_base_app   sq_fig9_base_app
fig8_ur_step    sq_fig8_ur_step
fig8_adv4_step  sq_fig8_adv4_step
fig9_q_ur       sq_fig9_q_ur
fig9_q_adv      sq_fig9_q_adv
fig9_q_adv_long sq_fig9_q_adv_long
fig9_q_stencil  sq_fig9_q_stencil
LIST
