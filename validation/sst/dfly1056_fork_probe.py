# dflab validation: SST/Merlin model of dflab's `qadaptive-1056` preset, for the
# Q-adaptive fork (SPEAR-IIT/sst-elements b9c0ae29 + SPEAR-IIT/sst-core 9ee02c53).
# Written for dflab (not copied from any repository); uses the public pymerlin API.
#
# Zero-load probe. Usage: sst --stop-at=20us dfly1056_fork_probe.py -- --routing MIN --single SRC DST
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


# Zero-load probe: only the nodes SRC and DST have an endpoint (a 2-node TrafficGen job; a
# 1-node job when SRC == DST, i.e. the node sends to itself = same-router path through its own
# host port). SRC sends one 128 B packet to DST every 2000 ns (merlin "HotSpot" with target
# probability 1, see below). DST is built with packets_to_send = 0, so it only receives (an
# earlier version let DST send to itself; its credit return re-armed DST's ejection-port timer
# and shortened the local-path latency by 10.6 ns: the timer effect of sst-port-timing.md 1.1).
assert args.single is not None
s, d = args.single
nodes = [s] if s == d else [s, d]
System.addAllocationFunction("explicit_%d_%d" % (s, d),
    lambda avail, num: (list(nodes), [x for x in avail if x not in nodes]))
class ProbeJob(TrafficGenJob):
    def build(self, nID, extraKeys):
        self.packets_to_send = args.packets if nID == s else 0
        return TrafficGenJob.build(self, nID, extraKeys)

ep = ProbeJob(0, len(nodes))
ep.packets_to_send = args.packets
ep.packet_size = "128B"
ep.delay_between_packets = "2000ns"
ep.message_rate = "1GHz"
if len(nodes) == 1:
    ep.extargs["PacketDest:pattern"] = "Uniform"          # 1 peer: always itself
else:
    # HotSpot with probability 1. SST core 9ee02c53's SSTDiscreteDistribution returns the index
    # one past the drawn one (it compares the prefix sum *before* each entry), so target 0 with
    # probability 1 yields logical node 1 = DST. (Verified from the trace: every dest == DST.)
    ep.extargs["PacketDest:pattern"] = "HotSpot"
    ep.extargs["PacketDest:HotSpot:target"] = 0
    ep.extargs["PacketDest:HotSpot:targetProbability"] = 1.0
system.allocateNodes(ep, "explicit_%d_%d" % (s, d))
system.build()
print("DFLAB_VALIDATION probe routing=%s src=%d dst=%d" % (args.routing, s, d))
