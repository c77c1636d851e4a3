#!/usr/bin/env bash
# Build the reference simulators of validation/README.md in a scratch folder outside this
# repository: SST core + elements (merlin only) of the SPEAR-IIT Q-adaptive fork and of upstream
# v16.0.0, and BookSim2 master and the hanskasan DGB fork, each at the commit its results were
# produced with. Not part of CI (about an hour on 2 cores). Nothing of the simulators is copied
# into dflab: sources, builds and installs stay under $REFSIM.
#
#   validation/build_references.sh [all|sst-fork|sst-upstream|booksim|booksim-piggyback]
#                                                                         (default: all)
#
# Environment:
#   REFSIM   scratch folder (default: $HOME/dflab-refsim); src/, install/ and logs/ go there.
#   MIRROR   a folder of git mirrors named owner+name/repo (as the dflab tools' `fetch` leaves
#            them), used instead of cloning from GitHub when set.
#   PY38     python3.8-config of a CPython 3.8 with a shared libpython, for the fork's SST core
#            (default: /root/.pyenv/versions/3.8.18/bin/python3.8-config). Python 3.11 makes
#            PyFrameObject opaque and the fork's element_python.cc fails to compile with it.
#
# Toolchain the results were built with: Debian 12, gcc 12.2.0, autoconf 2.71, automake 1.16.5,
# libtool 2.4.7, flex 2.6.4, bison 3.8.2 (apt: build-essential autoconf automake libtool flex
# bison python3-dev). Each step logs to $REFSIM/logs/<step>.log.
set -euo pipefail

REFSIM=${REFSIM:-$HOME/dflab-refsim}
PY38=${PY38:-/root/.pyenv/versions/3.8.18/bin/python3.8-config}
JOBS=${JOBS:-2}
mkdir -p "$REFSIM/src" "$REFSIM/install" "$REFSIM/logs"
log() { echo "[$(date -u +%T)] $*"; }

# checkout DIR OWNER/NAME COMMIT: the source tree at exactly that commit.
checkout() {
    local dir=$REFSIM/src/$1 repo=$2 commit=$3
    if [ ! -d "$dir/.git" ]; then
        local url=https://github.com/$repo.git
        if [ -n "${MIRROR:-}" ]; then url=$MIRROR/${repo/\//+}/repo; fi
        git clone -q "$url" "$dir"
    fi
    git -C "$dir" checkout -q "$commit"
    test "$(git -C "$dir" rev-parse HEAD)" = "$commit"
}

# sst_core SRC PREFIX PYTHON_CONFIG: autogen, configure (no MPI), make, install. The installed
# sstsimulator.conf gets "CXXFLAGS=0 ..." from the configure line's flags; element builds then
# fail ("g++: error: 0: linker input file not found"), so the stray 0 is put back to -O2.
sst_core() {
    local src=$REFSIM/src/$1 prefix=$REFSIM/install/$2 py=$3 name=$1
    (cd "$src" && ./autogen.sh) >"$REFSIM/logs/$name-autogen.log" 2>&1
    rm -rf "$src/build" && mkdir -p "$src/build"
    (cd "$src/build" && ../configure --prefix="$prefix" --disable-mpi --without-mpi \
        --with-python="$py" CXXFLAGS="-O2 -g0") >"$REFSIM/logs/$name-configure.log" 2>&1
    (cd "$src/build" && nice -n 19 make -j"$JOBS") >"$REFSIM/logs/$name-make.log" 2>&1
    (cd "$src/build" && make install) >"$REFSIM/logs/$name-install.log" 2>&1
    sed -i "s/^CXXFLAGS=0 /CXXFLAGS=-O2 /; s/^ELEMENT_CXXFLAGS=0 /ELEMENT_CXXFLAGS=-O2 /" \
        "$prefix/etc/sst/sstsimulator.conf"
}

# sst_merlin SRC PREFIX CORE_PREFIX: only merlin (every other element skipped with the element
# tree's own .ignore files).
sst_merlin() {
    local src=$REFSIM/src/$1 prefix=$REFSIM/install/$2 core=$REFSIM/install/$3 name=$1
    for d in "$src"/src/sst/elements/*/; do
        [ "$(basename "$d")" = merlin ] || touch "$d/.ignore"
    done
    (cd "$src" && ./autogen.sh) >"$REFSIM/logs/$name-autogen.log" 2>&1
    rm -rf "$src/build" && mkdir -p "$src/build"
    (cd "$src/build" && ../configure --prefix="$prefix" --with-sst-core="$core" CXXFLAGS="-O2 -g0") \
        >"$REFSIM/logs/$name-configure.log" 2>&1
    (cd "$src/build" && nice -n 19 make -j"$JOBS") >"$REFSIM/logs/$name-make.log" 2>&1
    (cd "$src/build" && make install) >"$REFSIM/logs/$name-install.log" 2>&1
}

sst_fork() {
    test -x "$PY38" || { echo "PY38=$PY38 is not a python3.8-config (see the header)" >&2; exit 2; }
    log "SST fork: SPEAR-IIT/sst-core 9ee02c53, SPEAR-IIT/sst-elements b9c0ae29"
    checkout spear-sst-core SPEAR-IIT/sst-core 9ee02c53834a6fad0d44b4a9a21aa4c69925ed18
    checkout spear-sst-elements SPEAR-IIT/sst-elements b9c0ae2926ffc6c2743530040327efda80330b69
    sst_core spear-sst-core spear-core "$PY38"
    sst_merlin spear-sst-elements spear-elements spear-core
    log "SST fork: $REFSIM/install/spear-core/bin/sst (elements in install/spear-elements)"
}

sst_upstream() {
    log "SST upstream v16.0.0_Final: sst-core ffd71527, sst-elements 242b48a5"
    checkout up-sst-core sstsimulator/sst-core ffd71527bc26a1f2a4fb685fdeb2ca0799997d78
    checkout up-sst-elements sstsimulator/sst-elements 242b48a510ead00ac775a6d80c8c5d9bb708aa8d
    sst_core up-sst-core up-core "$(command -v python3-config)"
    sst_merlin up-sst-elements up-elements up-core
    log "SST upstream: $REFSIM/install/up-core/bin/sst"
}

booksim() {
    log "BookSim2: booksim/booksim2 28f43299, hanskasan/booksim2 8d00456e (branch sst-macro)"
    checkout booksim2 booksim/booksim2 28f43299f1706a3160ffac721ca461d74eb6e618
    checkout hk-booksim2 hanskasan/booksim2 8d00456e51d1318356304ef043443f6a2043dd46
    # Each with its own Makefile, unchanged (the fork's defines DGB_ON and SINGLE_CYCLE).
    nice -n 19 make -C "$REFSIM/src/booksim2/src" -j"$JOBS" >"$REFSIM/logs/booksim-master-make.log" 2>&1
    nice -n 19 make -C "$REFSIM/src/hk-booksim2/src" -j"$JOBS" >"$REFSIM/logs/booksim-hk-make.log" 2>&1
    log "BookSim2: $REFSIM/src/booksim2/src/booksim, $REFSIM/src/hk-booksim2/src/booksim"
}

# The DGB fork with its DGB_PIGGYBACK feedback transport (the `feedback = "piggyback"` rows of
# docs/validation.md). At 8d00456e that mode does not build or run as it stands; four edits make
# it run and are all that differs from the fork's own code:
#  1. dgb.hpp: DGB_PIGGYBACK defined instead of DGB_IDEAL;
#  2. flit.hpp/flit.cpp: the flit fields the mode uses, declared at 5b50b56f of the same fork and
#     gone since, declared again and reset with the others;
#  3. dragonfly.cpp: a flit routed twice at one router carries only the newest global queues
#     (it accumulated both, and the receiver asserts exactly one set);
#  4. iq_router.cpp: the receiver registers the global queues whenever the flit carries them
#     (its test by input-port number fails on dragonflynew, whose input numbering differs from
#     the outputs', and its assertion aborts the run).
booksim_piggyback() {
    log "BookSim2: hanskasan/booksim2 8d00456e with DGB_PIGGYBACK (four edits, above)"
    checkout hk-booksim2-pb hanskasan/booksim2 8d00456e51d1318356304ef043443f6a2043dd46
    local src=$REFSIM/src/hk-booksim2-pb/src
    git -C "$src" checkout -q -- .
    sed -i 's|^#define DGB_IDEAL|//#define DGB_IDEAL|; s|^//#define DGB_PIGGYBACK|#define DGB_PIGGYBACK|' \
        "$src/learning/dgb.hpp"
    sed -i '/mutable Flit\* tail_flit;/a\  mutable learnset* l_intm; mutable learnset* l_dest; mutable bool carry_learnset_intm; mutable bool carry_learnset_dest; mutable queue<pair<int, int> > globalq; mutable queue<pair<int, int> > globalq_net; mutable bool carry_qlobalq;' \
        "$src/flit.hpp"
    sed -i '/^  wire_total *= 0;/a\  carry_learnset_intm = false; carry_learnset_dest = false; carry_qlobalq = false; l_intm = NULL; l_dest = NULL; while (!globalq.empty()) globalq.pop(); while (!globalq_net.empty()) globalq_net.pop();' \
        "$src/flit.cpp"
    sed -i '/f->carry_qlobalq = true;/a\    while (!f->globalq.empty()) f->globalq.pop(); while (!f->globalq_net.empty()) f->globalq_net.pop();' \
        "$src/networks/dragonfly.cpp"
    sed -i 's|if ((input >= gC) \&\& (input < (3 \* gK - 1)) \&\& (gIsDragonfly))|if (f->carry_qlobalq \&\& gIsDragonfly)|; /assert(f->carry_qlobalq);/d' \
        "$src/routers/iq_router.cpp"
    test "$(git -C "$src" diff --numstat | wc -l)" = 5
    nice -n 19 make -C "$src" -j"$JOBS" >"$REFSIM/logs/booksim-hk-piggyback-make.log" 2>&1
    log "BookSim2: $src/booksim"
}

case "${1:-all}" in
    all) sst_fork && sst_upstream && booksim && booksim_piggyback ;;
    sst-fork) sst_fork ;;
    sst-upstream) sst_upstream ;;
    booksim) booksim ;;
    booksim-piggyback) booksim_piggyback ;;
    *) echo "usage: $0 [all|sst-fork|sst-upstream|booksim|booksim-piggyback]" >&2; exit 2 ;;
esac
