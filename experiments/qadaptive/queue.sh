#!/usr/bin/env bash
# Runs the reduced study of docs/qadaptive-results.md on 2 cores: one single-job sweep per line,
# two lines at a time, in priority order (after fig5_q.toml). Resumable (each sweep resumes).
set -u
cd "$(dirname "$0")/../.."
printf '%s\n' fig5x_ur fig5_long fig5x_adv fig7_conv fig8_step fig6_base fig5_ur09 \
    fig9_base_ur fig9_q_ur fig9_base_app fig9_q_app fig9_base_adv fig9_q_adv \
    fig8_ur_step fig5_1000 fig9_q_long |
    xargs -P 2 -I{} sh -c 'start=$(date +%s); .venv/bin/dflab sweep experiments/qadaptive/{}.toml --jobs 1 --out results/qadaptive/{} > results/qadaptive/{}.log 2>&1; echo "{} rc=$? wall=$(( $(date +%s) - start ))s end=$(date -u +%T)"'
