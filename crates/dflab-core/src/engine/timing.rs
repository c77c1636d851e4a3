//! The fixed times of an experiment, derived once from its network parameters, and the event
//! queue's lanes: one FIFO per distinct fixed delay (see `queue.rs`).

use super::queue::{EventQueue, MAX_TIME};
use crate::config::{Experiment, PortTiming};
use crate::error::{Error, Result};
use crate::units::{ns_to_ps, ps_to_us, transfer_ps, us_to_ps, Time};

/// Link class index: 0 host, 1 local, 2 global. Per-class arrays have a fourth, unused entry, so
/// that an index masked with 3 needs no bounds check.
pub type ClassTimes = [Time; 4];

/// Every time of the model that is a constant of the experiment.
#[derive(Debug, Clone)]
pub struct Timing {
    pub packet_flits: u16,
    /// `Some(packet_flits)` when every packet of the run has `packet_flits` flits (the
    /// workload says so; synthetic traffic does): the router then checks buffer space and
    /// credits without reading the packet. `None` for workloads with packets of several sizes
    /// (the last packet of a message), whose sizes are read from the packets.
    pub uniform_flits: Option<u16>,
    pub flit_bytes: u64,
    /// Bytes of a packet (`flit_bytes · packet_flits`).
    pub packet_bytes: u64,
    /// Serialisation time of one packet per link class (with SST timing: the time from a
    /// send to the port's next wake-up).
    pub ser: ClassTimes,
    /// Serialisation time of one flit per link class (with SST timing: the delay from arming
    /// an idle port's timer to its wake-up).
    pub flit_ser: ClassTimes,
    /// `network.timing = "sst"` (see `network/sst.rs`).
    pub sst: bool,
    /// `network.timing = "booksim"` (see `network/booksim.rs`): the crossbar clock's ticks are
    /// BookSim's cycles (`tick`), each running `booksim_steps` internal steps.
    pub booksim: bool,
    /// BookSim timing: the internal speedup as `num / den` (see [`Timing::booksim_steps`]).
    pub speedup: (u64, u64),
    /// BookSim timing: `router_pipeline = "single-cycle"`.
    pub single_cycle: bool,
    /// With SST timing: the crossbar clock's period (one flit at crossbar bandwidth); its
    /// ticks are the multiples of it.
    pub tick: Time,
    /// SST timing: the delay from an ejection to the NIC's credit for it at the ejection port,
    /// when it is worked out as the next packet enters that port instead of by an event
    /// (`network/sst.rs`): packets of one size and a delay below two packet-times, so that only
    /// the port's last departure's credit can find it waiting. None: an event per ejection.
    pub eject_arm_lazy: Option<Time>,
    /// Crossbar transfer time of one packet.
    pub xfer: Time,
    /// Output stage + host link: from the start of an ejection to delivery (plus serialisation).
    pub eject_lat: Time,
    /// Credit (and control message) latency per link class: output + link + input latency
    /// (the NIC's: link + input).
    pub credit_lat: ClassTimes,
    /// From the start of a packet on a link to its availability downstream, per class:
    /// serialisation + output + link + input latency (the NIC's: no output stage). With SST
    /// timing a packet is whole downstream `output + link + input` after its send: no
    /// serialisation term (the port's timer charged it before the send); with
    /// `network.cut_through`, one flit's serialisation.
    pub link: ClassTimes,
    /// Buffer capacities in flits: the input VC buffers of each link class (host, local,
    /// global; `network.*_buffer_flits`), their largest, and the output VC buffers.
    pub in_caps: [u32; 3],
    pub in_cap: u32,
    pub out_cap: u32,
    /// `network.output_queue = "shared"`: `out_cap` holds for each output port, all its VCs
    /// together, and a packet enters it only with its VC's credits (`CreditLedger::admit_shared`).
    pub shared_out: bool,
    /// `network.transit_priority`: requests whose input is below this (a node port, as packed
    /// in a waiting entry's low 32 bits, `in_port << VC_BITS`) are served after all others;
    /// 0 without the priority (see `order_requests`).
    pub injection_below: u32,
    /// Start and end of the measurement window.
    pub warm: Time,
    pub end: Time,
    pub watchdog: Time,
    /// `run.whole_ns_latency`: latency stamps truncated to whole ns.
    pub whole_ns: bool,
}

impl Timing {
    /// Serialisation time of a packet of `flits` flits on a link of `class`: the packet time
    /// when every packet has `network.packet_flits` flits, else its flits' times (a message's
    /// shorter last packet holds the link for its own flits only).
    #[inline(always)]
    pub fn ser_of(&self, class: usize, flits: u32) -> Time {
        match self.uniform_flits {
            Some(_) => self.ser[class],
            None => flits as Time * self.flit_ser[class],
        }
    }

    pub fn derive(cfg: &Experiment) -> Result<Timing> {
        let n = &cfg.network;
        let flit_bytes = n.flit_bytes as u64;
        let warm = us_to_ps(cfg.run.warmup_us);
        let end = warm + us_to_ps(cfg.run.measure_us);
        if end > MAX_TIME {
            return Err(Error::config(
                "run",
                format!(
                    "warmup_us + measure_us is {:.0} us; allowed: at most {:.0} us",
                    ps_to_us(end),
                    ps_to_us(MAX_TIME)
                ),
            ));
        }
        let f = n.packet_flits as Time;
        let ser_flit = [
            transfer_ps(flit_bytes, n.host_bw_gbps),
            transfer_ps(flit_bytes, n.local_bw_gbps),
            transfer_ps(flit_bytes, n.global_bw_gbps),
        ];
        let link_lat = [ns_to_ps(n.host_latency_ns), ns_to_ps(n.local_latency_ns), ns_to_ps(n.global_latency_ns)];
        let (in_lat, out_lat) = (ns_to_ps(n.input_latency_ns), ns_to_ps(n.output_latency_ns));
        let ser = |c: usize| f * ser_flit[c];
        let sst = n.timing == PortTiming::Sst;
        let eject_credit = out_lat + link_lat[0] + crate::network::sst::NIC_CREDIT_DELAY + link_lat[0] + in_lat;
        let booksim = n.timing == PortTiming::Booksim;
        // With SST timing the serialisation is the port's timer, not part of the hop; cut
        // through, the head is downstream after one flit and the rest follows it.
        let ser_on_link = |c: usize| match (sst, n.cut_through) {
            (true, _) => 0,
            (false, true) => ser_flit[c],
            (false, false) => ser(c),
        };
        let mut t = Timing {
            packet_flits: n.packet_flits as u16,
            uniform_flits: Some(n.packet_flits as u16),
            flit_bytes,
            packet_bytes: flit_bytes * f,
            ser: [ser(0), ser(1), ser(2), 0],
            flit_ser: [ser_flit[0], ser_flit[1], ser_flit[2], 0],
            sst,
            booksim,
            speedup: n.booksim_speedup(),
            single_cycle: n.router_pipeline == crate::config::RouterPipeline::SingleCycle,
            tick: transfer_ps(flit_bytes, n.xbar_bw_gbps),
            eject_arm_lazy: (sst && eject_credit < 2 * ser(0)).then_some(eject_credit),
            xfer: f * transfer_ps(flit_bytes, n.xbar_bw_gbps),
            eject_lat: out_lat + link_lat[0],
            credit_lat: [link_lat[0] + in_lat, out_lat + link_lat[1] + in_lat, out_lat + link_lat[2] + in_lat, 0],
            link: [
                ser_on_link(0) + link_lat[0] + in_lat,
                ser_on_link(1) + out_lat + link_lat[1] + in_lat,
                ser_on_link(2) + out_lat + link_lat[2] + in_lat,
                0,
            ],
            in_caps: n.input_buffers(),
            in_cap: n.input_buffers().into_iter().max().unwrap_or(n.input_buffer_flits),
            out_cap: n.output_buffer_flits,
            shared_out: n.output_queue == crate::config::OutputQueue::Shared,
            injection_below: if n.transit_priority {
                (cfg.topology.p as u32) << crate::network::fabric::VC_BITS
            } else {
                0
            },
            warm,
            end,
            watchdog: us_to_ps(cfg.run.watchdog_us),
            whole_ns: cfg.run.whole_ns_latency,
        };
        if booksim {
            t.booksim_times(n.booksim_cycle(), link_lat, n.credit_delay_cycles as Time);
        }
        Ok(t)
    }

    /// The BookSim timing's fixed delays, in cycles of `c` ps (`network/booksim.rs`). A router
    /// runs its pass (the cycle's internal steps and its sends) on the tick of each cycle;
    /// what a BookSim channel of latency `L` delivers is read `L + 1` cycles after its send
    /// (the channel's `ReadInputs` takes a cycle), so an arrival lands half a cycle before the
    /// pass that reads it, after every other event of that pass's time. A credit is used
    /// `credit_delay` cycles after it is read; the NIC reads its credits and the ejected
    /// packets at the tick itself.
    fn booksim_times(&mut self, c: Time, link_lat: [Time; 3], credit_delay: Time) {
        let half = c / 2;
        let cycles = link_lat.map(|l| l / c);
        self.tick = c;
        self.xfer = c;
        self.ser = [c, c, c, 0];
        self.flit_ser = [c, c, c, 0];
        self.eject_lat = (cycles[0] + 1) * c;
        self.link = [(cycles[0] + 1) * c - half, (cycles[1] + 1) * c - half, (cycles[2] + 1) * c - half, 0];
        self.credit_lat = [
            (cycles[0] + 1) * c,
            (cycles[1] + 1 + credit_delay) * c - half,
            (cycles[2] + 1 + credit_delay) * c - half,
            0,
        ];
    }

    /// BookSim timing: the internal steps of cycle `k` (`Router::Evaluate` adds the speedup to
    /// a fraction each cycle and runs a step per whole unit), exact for a speedup in 1/1000s.
    #[inline]
    pub fn booksim_steps(&self, k: u64) -> u32 {
        let (num, den) = self.speedup;
        ((k + 1) * num / den - k * num / den) as u32
    }
}

/// The FIFO lanes of the fixed delays of the model. Registration order fixes which lane comes
/// first among events at the same time (see `queue.rs`), so it is part of the model's order.
pub struct Lanes {
    pub xbar: usize,
    pub nic_credit: usize,
    pub nic_arrive: usize,
    pub nic_wake: usize,
    /// The workload's own fixed delays, in the order it declared them (None: no lane was left,
    /// its wake-ups go to the timer wheel).
    pub workload: Vec<Option<usize>>,
    /// Credit latency per link class, as wake-ups of a sender blocked on credits, and control
    /// messages over a link.
    pub credit: [usize; 4],
    pub arrive: [usize; 4],
    pub port_wake: [usize; 4],
    /// Crossbar transfer plus link: the fast path straight through an idle output port
    /// (link-busy timing only).
    pub arrive_through: [usize; 4],
    /// SST timing: one flit-time, from arming an idle port's timer to its wake-up.
    pub arm: [usize; 4],
    /// SST timing: the NIC's credit for an ejected packet, back at the router's host port.
    pub eject_arm: usize,
    /// The lanes of events over global links (their own with `cross` on).
    global: Vec<usize>,
}

impl Lanes {
    /// The lanes of the engine and of the workload's `workload_delays`, in a fixed order. With
    /// `cross` on, the events over global links get lanes of their own, which the barriers put
    /// in canonical order (see `partition.rs`).
    pub fn register(q: &mut EventQueue, t: &Timing, workload_delays: &[Time], cross: bool) -> Lanes {
        // With SST timing the crossbar has no transfer time: its lane is the clock's calendar of
        // passes (`clock.rs`), registered first so that a tick comes before the other events of
        // its time.
        let xbar = if t.sst || t.booksim { q.clock_channel(t.tick) } else { q.channel(t.xfer) };
        let nic_credit = q.channel(t.credit_lat[0]);
        let nic_arrive = q.channel(t.link[0]);
        let nic_wake = q.channel(t.ser[0]);
        let workload = workload_delays.iter().map(|&d| q.try_channel(d)).collect();
        let global = |q: &mut EventQueue, d: Time| if cross { q.own_channel(d) } else { q.channel(d) };
        let credit = [0, q.channel(t.credit_lat[1]), global(q, t.credit_lat[2]), 0];
        let arrive = [0, q.channel(t.link[1]), global(q, t.link[2]), 0];
        let port_wake = [q.channel(t.ser[0]), q.channel(t.ser[1]), q.channel(t.ser[2]), 0];
        // SST timing's lanes are registered after the others: the link-busy order is unchanged.
        // Its credit returns arm their sender's timer on the credit lanes.
        let (arrive_through, arm, eject_arm, global) = if t.booksim {
            // BookSim timing: no crossbar fast path and no timers.
            ([0; 4], [0; 4], 0, vec![arrive[2], credit[2]])
        } else if t.sst {
            let f = &t.flit_ser;
            let arm = [q.channel(f[0]), q.channel(f[1]), q.channel(f[2]), 0];
            let eject_arm = q.channel(t.eject_lat + crate::network::sst::NIC_CREDIT_DELAY + t.credit_lat[0]);
            ([0; 4], arm, eject_arm, vec![arrive[2], credit[2]])
        } else {
            let arrive_through = [0, q.channel(t.xfer + t.link[1]), global(q, t.xfer + t.link[2]), 0];
            (arrive_through, [0; 4], 0, vec![arrive[2], arrive_through[2], credit[2]])
        };
        Lanes {
            xbar,
            nic_credit,
            nic_arrive,
            nic_wake,
            workload,
            credit,
            arrive,
            port_wake,
            arrive_through,
            arm,
            eject_arm,
            global,
        }
    }

    /// The lanes of events over global links (their own with `cross` on).
    pub fn global(&self) -> &[usize] {
        &self.global
    }
}
