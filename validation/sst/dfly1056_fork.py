# dflab validation: SST/Merlin model of dflab's `qadaptive-1056` preset, for the
# Q-adaptive fork (SPEAR-IIT/sst-elements b9c0ae29 + SPEAR-IIT/sst-core 9ee02c53).
# Written for dflab (not copied from any repository); uses the public pymerlin API.
#
# Usage:  sst --stop-at=<T>us dfly1056_fork.py -- --routing R --pattern P --load L [--seed-shift S]
#   R: MIN | VALn | UGALg | UGALn | PAR | Q-adaptive   (fork names: minimal VALn ugal-g ugal-n par q-adaptive)
#   P: ur (merlin "Uniform", self allowed) | adv1 (merlin "Tornado", shift 1 group)
#   L: offered load, fraction of the 4 GB/s injection link; delay = round(32 ns / L) whole ns
#   --single SRC DST : zero-load probe, only node SRC sends, one packet to DST every 2000 ns
# Every delivered packet is appended by the fork's LinkControl to
# ./link_control_data/linkcontrol_job0_<nid>_ (jobid,msgid,src,dest,hops,lat,send,recv).
import sys, argparse
import sst
from sst.merlin.base import *
from sst.merlin.endpoint import *
from sst.merlin.topology import *
from sst.merlin.interface import *
from sst.merlin.router import *

ap = argparse.ArgumentParser()
ap.add_argument('--routing', default='MIN')
ap.add_argument('--pattern', default='ur')
ap.add_argument('--load', type=float, default=0.5)
ap.add_argument('--packets', type=int, default=10**9)   # rounds per node; runs are ended by --stop-at
ap.add_argument('--single', nargs=2, type=int, default=None)
args = ap.parse_args(sys.argv[1:])

ALGO = {'MIN': 'minimal', 'VALN': 'VALn', 'UGALG': 'ugal-g', 'UGALN': 'ugal-n',
        'PAR': 'par', 'Q-ADAPTIVE': 'q-adaptive'}[args.routing.upper()]

P, A, H, G = 4, 8, 4, 33
plat = PlatformDefinition("dflab_qadaptive_1056")
PlatformDefinition.registerPlatformDefinition(plat)
plat.addParamSet("topology", {
    "hosts_per_router": P, "routers_per_group": A, "intergroup_links": 1, "num_groups": G,
    "algorithm": ALGO,
    "link_lat_host": "10ns", "link_lat_local": "30ns", "link_lat_global": "300ns",
    "adaptive_threshold": 2.0,
    # Q-adaptive: HPDC'21 values; row type / mode / max_hops left at the fork's code defaults
    # (destG_srcN, src_mid_group_q = true, max_hops = 1)
    "learning_rate": 0.2, "learning_rate2": 0.04, "epsilon": 0.001,
    "q_threshold1": 0.2, "q_threshold2": 0.35,
})
plat.addClassType("topology", "sst.merlin.topology.topoDragonFly")
plat.addParamSet("router", {
    "link_bw": "4GB/s", "link_bw:host": "4GB/s", "xbar_bw": "40GB/s", "flit_size": "128B",
    "input_buf_size": "2560B", "output_buf_size": "2560B",
    "input_buf_size:host": "2560B", "output_buf_size:host": "2560B",
    "input_latency": "10ns", "output_latency": "10ns",
    "num_vns": 1, "xbar_arb": "merlin.xbar_arb_lru",
})
plat.addClassType("router", "sst.merlin.base.hr_router")
plat.addParamSet("network_interface", {
    "link_bw": "4GB/s", "input_buf_size": "2560B", "output_buf_size": "2560B"})
plat.addClassType("network_interface", "sst.merlin.interface.LinkControl")
PlatformDefinition.setCurrentPlatform("dflab_qadaptive_1056")

system = System()
N = system.topology.getNumNodes()
assert N == 1056

delay_ns = int(round(32.0 / args.load))

def make_job(job_id, size, pattern, delay, packets):
    ep = TrafficGenJob(job_id, size)
    ep.packets_to_send = packets
    ep.packet_size = "128B"
    ep.delay_between_packets = "%dns" % delay
    ep.message_rate = "1GHz"
    ep.extargs["PacketDest:pattern"] = pattern
    ep.topology = "dragonfly"
    ep.extargs["dragonfly:hosts_per_router"] = P
    ep.extargs["dragonfly:routers_per_group"] = A
    ep.extargs["dragonfly:num_groups"] = G
    ep.extargs["Tornado:shift"] = 1
    return ep

if args.single is None:
    pat = {'ur': 'Uniform', 'adv1': 'Tornado'}[args.pattern.lower()]
    ep = make_job(0, N, pat, delay_ns, args.packets)
    system.allocateNodes(ep, "linear")
else:
    raise SystemExit("--single is handled by dfly1056_fork_probe.py")

system.build()
print("DFLAB_VALIDATION routing=%s(%s) pattern=%s load=%.4f delay_ns=%d offered=%.5f"
      % (args.routing, ALGO, args.pattern, args.load, delay_ns, 32.0 / delay_ns))
