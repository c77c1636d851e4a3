#!/usr/bin/env bash
# The real-machine study (docs/real-machines.md): six routings under uniform and ADV+1 traffic on
# the Slingshot-class presets, and an application pair on the full Frontier-class machine. Every
# step is resumable (the result stores and pairs.py's CSV keep finished points): rerun after an
# interruption.
#   bash experiments/real/run.sh                       # every step: about 5 hours on 2 cores
#   STEPS="small balanced" bash experiments/real/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-results/real}
STEPS=${STEPS:-"small balanced aurora-small qlong imb frontier qfull qinit qinitfull mix"}
JOBS=${JOBS:-2}
DFLAB=${DFLAB:-.venv/bin/dflab}
ROUTINGS=MIN,UGALn,PAR,Q-adaptive,UGAL-LE,IMB

for step in $STEPS; do
    case $step in
        small)  # frontier-class-small: 5 + 5 us, loads 0.1-0.8
            "$DFLAB" sweep --preset frontier-class-small --routings $ROUTINGS --traffics ur,adv+1 \
                --loads 0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8 --seeds 1 --set run.warmup_us=5 \
                --set run.measure_us=5 --jobs "$JOBS" --out "$OUT/small" ;;
        balanced)  # the same switches wired as the papers' balanced dfly(4,8,4,33), 1 NIC per node
            "$DFLAB" sweep --preset frontier-class-small --routings $ROUTINGS --traffics ur,adv+1 \
                --loads 0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8 --seeds 1 --set run.warmup_us=5 \
                --set run.measure_us=5 --set topology.g=33 --set topology.links_per_pair=1 \
                --set topology.global_port_order=by-router --set topology.nics_per_node=1 \
                --jobs "$JOBS" --out "$OUT/balanced" ;;
        aurora-small)  # aurora-class-small, as `small`
            "$DFLAB" sweep --preset aurora-class-small --routings $ROUTINGS --traffics ur,adv+1 \
                --loads 0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8 --seeds 1 --set run.warmup_us=5 \
                --set run.measure_us=5 --jobs "$JOBS" --out "$OUT/aurora-small" ;;
        qlong)  # Q-adaptive after 200 us of learning, source queues of 16 packets, small presets
            for net in frontier-class-small aurora-class-small balanced; do
                extra=()
                preset=$net
                if [ "$net" = balanced ]; then
                    preset=frontier-class-small
                    extra=(--set topology.g=33 --set topology.links_per_pair=1
                           --set topology.global_port_order=by-router --set topology.nics_per_node=1)
                fi
                "$DFLAB" sweep --preset "$preset" --routings Q-adaptive --traffics ur,adv+1 \
                    --loads 0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8 --seeds 1 --set run.warmup_us=200 \
                    --set run.measure_us=20 --set traffic.source_queue_packets=16 "${extra[@]}" \
                    --jobs "$JOBS" --out "$OUT/qlong-$net"
            done ;;
        imb)  # IMB's bias schedule on frontier-class-small ([0, 1, 2] is the default)
            "$DFLAB" sweep --preset frontier-class-small --routings IMB --traffics ur,adv+1 \
                --loads 0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8 --seeds 1 --set run.warmup_us=5 \
                --set run.measure_us=5 \
                --axis 'routing.bias_schedule=[[0,0,0],[-1,1,2],[0,1,2],[0,2,4],[2,4,6],[4,8,16]]' \
                --jobs "$JOBS" --out "$OUT/imb-schedule" ;;
        frontier)  # the full frontier-class (37,888 NICs): 10 + 5 us, three loads per pattern
            for spec in "ur 0.2,0.4,0.6" "adv+1 0.1,0.2,0.3"; do
                set -- $spec
                "$DFLAB" sweep --preset frontier-class --routings $ROUTINGS --traffics "$1" \
                    --loads "$2" --seeds 1 --set run.warmup_us=10 --set run.measure_us=5 \
                    --jobs 1 --out "$OUT/frontier-10us"
            done ;;
        qfull)  # Q-adaptive on the full frontier-class after 200 us of learning (10-60 min a point)
            for spec in "ur 0.2" "ur 0.4" "ur 0.6" "adv+1 0.2"; do
                set -- $spec
                "$DFLAB" sweep --preset frontier-class --routings Q-adaptive --traffics "$1" \
                    --loads "$2" --seeds 1 --set run.warmup_us=200 --set run.measure_us=10 \
                    --set traffic.source_queue_packets=16 --jobs 1 --out "$OUT/qlong-frontier"
            done
            # ADV+1 learned at 0.02 for 100 us, then 0.2 (the store's `load` is the first phase's)
            "$DFLAB" sweep --preset frontier-class --routings Q-adaptive --traffics adv+1 \
                --loads 0.02 --seeds 1 --set run.warmup_us=200 --set run.measure_us=10 \
                --set traffic.source_queue_packets=16 \
                --set 'traffic.phases=[{start_us=100.0, load=0.2}]' --jobs 1 \
                --out "$OUT/qlong-frontier-ramp" ;;
        qinit)  # Q-adaptive's initial values scaled (routing.q_init_scale) on frontier-class-half
            for spec in "ur 0.4,0.6" "adv+1 0.2"; do
                set -- $spec
                "$DFLAB" sweep --preset frontier-class-half --routings Q-adaptive --traffics "$1" \
                    --loads "$2" --seeds 1 --axis 'routing.q_init_scale=[1,2,4,8]' \
                    --set run.warmup_us=200 --set run.measure_us=10 \
                    --set traffic.source_queue_packets=16 --jobs "$JOBS" --out "$OUT/qinit-half"
            done
            # MIN in the same window, for reference
            "$DFLAB" sweep --preset frontier-class-half --routings MIN --traffics ur \
                --loads 0.4,0.6 --seeds 1 --set run.warmup_us=200 --set run.measure_us=10 \
                --set traffic.source_queue_packets=16 --jobs "$JOBS" --out "$OUT/qinit-half-min" ;;
        qinitfull)  # the same on the full frontier-class, UR 0.4 with q_init_scale 4 (~30 min)
            "$DFLAB" sweep --preset frontier-class --routings Q-adaptive --traffics ur --loads 0.4 \
                --seeds 1 --axis 'routing.q_init_scale=[4]' --set run.warmup_us=200 \
                --set run.measure_us=10 --set traffic.source_queue_packets=16 --jobs 1 \
                --out "$OUT/qinit-frontier" ;;
        mix)  # FFT3D alone and beside Halo3D, 528 ranks each, on frontier-class (~25 min a routing)
            .venv/bin/python experiments/sc22/pairs.py --preset frontier-class \
                --routings $ROUTINGS --out experiments/real/results/pairs-frontier.csv ;;
        *) echo "unknown step: $step (small balanced aurora-small qlong imb frontier qfull qinit qinitfull mix)" >&2; exit 2 ;;
    esac
done
