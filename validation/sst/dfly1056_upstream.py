# dflab validation: SST/Merlin model of dflab's `qadaptive-1056` preset for upstream SST
# (sstsimulator/sst-core + sst-elements v16.0.0_Final). Written for dflab, public pymerlin API.
#
# Usage: sst --stop-at=<T>us dfly1056_upstream.py -- --routing R --load L --warmup W --measure M
#   R: upstream merlin dragonfly algorithm: minimal | valiant | ugal | adaptive-local | min-a
#   L: offered load (fraction of 4 GB/s); period = round(32 ns / L) whole ns
#   --single SRC DST: zero-load probe (only SRC sends, one packet to DST every 2000 ns)
# Differences from the fork config, forced by upstream:
# * pymerlin's topoDragonFly has one `link_latency` for local and global links: routers are
#   wrapped so that addLink() on a global port (port >= p + a - 1) gets 300 ns instead of 30 ns.
# * upstream merlin.trafficgen reads delay_between_packets in whole seconds (it rounds the
#   UnitAlgebra value, so 64ns -> 0), and its Uniform generator ignores RangeMin (returns
#   0..max-min), so the period is set through its PacketDelay "Normal" generator with sigma 0
#   (constant D); its per-cycle countdown gives a period of D + 1 cycles of the 1 GHz clock.
# * its generators share one seed (PacketDest.Seed, default 1010101) on every node: each node
#   gets its own seed here (id + 1). It never sends to itself (redraws).
# * it writes no per-packet trace: latency comes from LinkControl's `packet_latency` statistic
#   (histogram, 8 ns bins), collected for packets *received* in [warmup, warmup + measure).
import sys, argparse
import sst
from sst.merlin.base import *
from sst.merlin.endpoint import *
from sst.merlin.topology import *
from sst.merlin.interface import *
from sst.merlin.router import *

ap = argparse.ArgumentParser()
ap.add_argument('--routing', default='minimal')
ap.add_argument('--pattern', default='ur')
ap.add_argument('--load', type=float, default=0.5)
ap.add_argument('--warmup', type=float, default=20.0)
ap.add_argument('--measure', type=float, default=50.0)
ap.add_argument('--single', nargs=2, type=int, default=None)
args = ap.parse_args(sys.argv[1:])
assert args.pattern == 'ur'

P, A, H, G = 4, 8, 4, 33
FIRST_GLOBAL_PORT = P + A - 1
plat = PlatformDefinition("dflab_qadaptive_1056_up")
PlatformDefinition.registerPlatformDefinition(plat)
plat.addParamSet("topology", {
    "hosts_per_router": P, "routers_per_group": A, "intergroup_links": 1, "num_groups": G,
    "algorithm": args.routing, "adaptive_threshold": 2.0,
    "link_latency": "30ns", "host_link_latency": "10ns",
})
# topology class: DflabDragonFly below (set with System.setTopology, so no platform class type)
plat.addParamSet("router", {
    "link_bw": "4GB/s", "xbar_bw": "40GB/s", "flit_size": "128B",
    "input_buf_size": "2560B", "output_buf_size": "2560B",
    "input_latency": "10ns", "output_latency": "10ns",
    "num_vns": 1, "xbar_arb": "merlin.xbar_arb_lru",
})
plat.addClassType("router", "sst.merlin.base.hr_router")
plat.addParamSet("network_interface", {
    "link_bw": "4GB/s", "input_buf_size": "2560B", "output_buf_size": "2560B"})
plat.addClassType("network_interface", "sst.merlin.interface.LinkControl")
PlatformDefinition.setCurrentPlatform("dflab_qadaptive_1056_up")


class _GlobalLatencyRouter:
    """Forwards everything to the router component; global ports get the global latency."""
    def __init__(self, comp):
        self.__dict__['_comp'] = comp
    def addLink(self, link, port, lat=None):
        n = int(port.replace('port', ''))
        if lat is not None and n >= FIRST_GLOBAL_PORT:
            lat = "300ns"
        return self._comp.addLink(link, port) if lat is None else self._comp.addLink(link, port, lat)
    def __getattr__(self, name):
        return getattr(self._comp, name)


class DflabDragonFly(topoDragonFly):
    def _instanceRouter(self, radix, rtr_id):
        return _GlobalLatencyRouter(topoDragonFly._instanceRouter(self, radix, rtr_id))


class TrafficGenJobUp(Job):
    def __init__(self, job_id, size, delay_cycles, senders=None, target=None):
        Job.__init__(self, job_id, size)
        self._declareClassVariables(["delay_cycles", "senders", "target"])
        self.delay_cycles, self.senders, self.target = delay_cycles, senders, target

    def build(self, nID, extraKeys, link=None):
        nic = sst.Component("tg_%d" % nID, "merlin.trafficgen")
        lid = self._nid_map[nID]          # v16: dict physical -> logical id
        sends = self.senders is None or lid in self.senders
        nic.addParams({
            "id": lid, "num_peers": self.size,
            "packets_to_send": 10**9 if sends else 0,
            "packet_size": "128B", "message_rate": "1GHz",
            "PacketDest.pattern": "Uniform" if self.target is None else "HotSpot",
            "PacketDest.RangeMin": 0, "PacketDest.RangeMax": self.size,
            "PacketDest.Seed": lid + 1,
            # constant delay D: a Normal generator with sigma 0 and mean D + 0.5 (truncated to D)
            "PacketDelay.pattern": "Normal",
            "PacketDelay.Normal.Mean": self.delay_cycles + 0.5, "PacketDelay.Normal.Sigma": 0.0,
            "PacketDelay.RangeMin": 0, "PacketDelay.RangeMax": 10**6,
            "PacketDelay.Seed": lid + 1,
        })
        if self.target is not None:
            nic.addParams({"PacketDest.HotSpot.target": self.target,
                           "PacketDest.HotSpot.targetProbability": 1.0})
        nic.addParams(extraKeys)
        return NetworkInterface._instanceNetworkInterfaceBackCompat(
            self.network_interface, nic, "networkIF", 0, self.job_id, self.size, lid, True, link)


topo = DflabDragonFly()
system = System()
system.setTopology(topo)
N = topo.getNumNodes()
assert N == 1056

if args.single is None:
    period = int(round(32.0 / args.load))
    ep = TrafficGenJobUp(0, N, period - 1)
    system.allocateNodes(ep, "linear")
    info = "routing=%s pattern=ur load=%.4f delay_ns=%d offered=%.5f" % (
        args.routing, args.load, period, 32.0 / period)
else:
    s, d = args.single
    nodes = [s, d]
    System.addAllocationFunction("explicit", lambda avail, num: (list(nodes), [x for x in avail if x not in nodes]))
    # HotSpot target 0 with probability 1 yields logical node 1 (= DST): SST core's
    # SSTDiscreteDistribution (v16 too) returns the index one past the drawn one.
    ep = TrafficGenJobUp(0, 2, 2000 - 1, senders=[0], target=0)
    system.allocateNodes(ep, "explicit")
    info = "probe routing=%s src=%d dst=%d" % (args.routing, s, d)

system.build()

sst.setStatisticLoadLevel(1)
sst.setStatisticOutput("sst.statOutputCSV", {"filepath": "stats.csv", "separator": ","})
sst.enableStatisticForComponentType("merlin.linkcontrol", "packet_latency", {
    "type": "sst.HistogramStatistic", "minvalue": "0", "binwidth": "8", "numbins": "4000",
    "IncludeOutOfBounds": "1",
    "startat": "%gus" % (0 if args.single else args.warmup),
    "stopat": "%gus" % (1e6 if args.single else args.warmup + args.measure)}, True)
print("DFLAB_VALIDATION " + info)
