//! What `network.timing = "booksim"` requires of the network (`network/booksim.rs`): BookSim
//! counts time in cycles of one flit on every channel, so every link has the same bandwidth,
//! every latency is a whole number of cycles and packets are single flits; its router has no
//! input or output stage latency (its pipeline is `router_pipeline`). The keys of the BookSim
//! timing are refused with the other timings, where they would be silently ignored.

use super::{NetworkConfig, OutputQueue, PortTiming, RouterPipeline};
use crate::error::{Error, Result};
use crate::units::{ns_to_ps, transfer_ps, Time};

impl NetworkConfig {
    /// The input VC buffer of each link class (host, local, global), in flits.
    pub fn input_buffers(&self) -> [u32; 3] {
        let or = |c: Option<u32>| c.unwrap_or(self.input_buffer_flits);
        [or(self.host_buffer_flits), or(self.local_buffer_flits), or(self.global_buffer_flits)]
    }

    /// BookSim's cycle: one flit on a link (all links have the same bandwidth when valid).
    pub fn booksim_cycle(&self) -> Time {
        transfer_ps(self.flit_bytes as u64, self.host_bw_gbps)
    }

    pub(super) fn check_booksim(&self) -> Result<()> {
        if self.cut_through && self.timing != PortTiming::LinkBusy {
            return Err(Error::config(
                "network.cut_through",
                "applies only with timing = \"link-busy\" (sst and booksim time a packet's flits their own way); \
                 allowed: false",
            ));
        }
        if self.timing != PortTiming::LinkBusy {
            if self.output_queue != OutputQueue::PerVc {
                return Err(Error::config(
                    "network.output_queue",
                    "applies only with timing = \"link-busy\" (sst and booksim have their own output stages); \
                     allowed: \"per-vc\"",
                ));
            }
            if self.transit_priority {
                return Err(Error::config(
                    "network.transit_priority",
                    "applies only with timing = \"link-busy\" (sst and booksim have their own arbiters); allowed: \
                     false",
                ));
            }
        }
        if self.timing != PortTiming::Booksim {
            if self.router_pipeline != RouterPipeline::Standard {
                return Err(only_booksim("network.router_pipeline"));
            }
            if self.credit_delay_cycles != 2 {
                return Err(only_booksim("network.credit_delay_cycles"));
            }
            return Ok(());
        }
        if self.packet_flits != 1 {
            return Err(Error::config(
                "network.packet_flits",
                format!(
                    "{} is not supported with timing = \"booksim\", which allocates the switch flit by flit; allowed: 1",
                    self.packet_flits
                ),
            ));
        }
        for (field, bw) in
            [("network.local_bw_gbps", self.local_bw_gbps), ("network.global_bw_gbps", self.global_bw_gbps)]
        {
            if bw != self.host_bw_gbps {
                return Err(Error::config(
                    field,
                    format!(
                        "{bw} differs from host_bw_gbps ({}); with timing = \"booksim\" every channel moves one flit \
                         per cycle; allowed: {}",
                        self.host_bw_gbps, self.host_bw_gbps
                    ),
                ));
            }
        }
        let cycle = self.booksim_cycle();
        if cycle < 2 {
            return Err(Error::config(
                "network.host_bw_gbps",
                format!("{} makes a cycle (one flit) shorter than 2 ps with timing = \"booksim\"", self.host_bw_gbps),
            ));
        }
        if self.xbar_bw_gbps < self.host_bw_gbps {
            return Err(Error::config(
                "network.xbar_bw_gbps",
                format!(
                    "{} is below the link bandwidth; with timing = \"booksim\" it sets the internal speedup \
                     (xbar / link); allowed: >= {}",
                    self.xbar_bw_gbps, self.host_bw_gbps
                ),
            ));
        }
        for (field, ns) in [
            ("network.host_latency_ns", self.host_latency_ns),
            ("network.local_latency_ns", self.local_latency_ns),
            ("network.global_latency_ns", self.global_latency_ns),
        ] {
            let ps = ns_to_ps(ns);
            if ps == 0 || !ps.is_multiple_of(cycle) {
                return Err(Error::config(
                    field,
                    format!(
                        "{ns} is not a positive whole number of cycles ({} ns each) with timing = \"booksim\" \
                         (a BookSim channel's latency)",
                        cycle as f64 / 1000.0
                    ),
                ));
            }
        }
        for (field, ns) in
            [("network.input_latency_ns", self.input_latency_ns), ("network.output_latency_ns", self.output_latency_ns)]
        {
            if ns != 0.0 {
                return Err(Error::config(
                    field,
                    format!(
                        "{ns} is not supported with timing = \"booksim\", whose router stages are set by \
                         router_pipeline; allowed: 0"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The internal speedup as `num / den` (crossbar over link bandwidth, to 1/1000): BookSim
    /// runs `floor((k + 1) · s) − floor(k · s)` internal steps in cycle `k`.
    pub fn booksim_speedup(&self) -> (u64, u64) {
        let den = 1000;
        ((self.xbar_bw_gbps / self.host_bw_gbps * den as f64).round() as u64, den)
    }
}

fn only_booksim(field: &str) -> Error {
    Error::config(field, "applies only with timing = \"booksim\"; remove it or set network.timing = \"booksim\"")
}

#[cfg(test)]
mod tests {
    use crate::config::{Experiment, PortTiming};

    /// A valid BookSim network: 1 flit = 1 ns on every link, speedup 2, whole-cycle latencies.
    fn booksim() -> Experiment {
        let mut c = Experiment::default();
        let n = &mut c.network;
        n.timing = PortTiming::Booksim;
        (n.flit_bytes, n.host_bw_gbps, n.local_bw_gbps, n.global_bw_gbps, n.xbar_bw_gbps) =
            (64, 64.0, 64.0, 64.0, 128.0);
        (n.host_latency_ns, n.local_latency_ns, n.global_latency_ns) = (1.0, 10.0, 100.0);
        (n.input_latency_ns, n.output_latency_ns) = (0.0, 0.0);
        c
    }

    #[test]
    fn a_booksim_network_is_valid_and_its_speedup_is_exact() {
        let c = booksim();
        c.validate().unwrap();
        assert_eq!(c.network.booksim_cycle(), 1000);
        assert_eq!(c.network.booksim_speedup(), (2000, 1000));
    }

    /// Every requirement is refused with its field and what is allowed.
    #[test]
    fn booksim_requirements_name_their_field() {
        type Case = (fn(&mut Experiment), &'static str);
        let cases: [Case; 8] = [
            (|c| c.network.packet_flits = 4, "network.packet_flits: 4 is not supported"),
            (|c| c.network.global_bw_gbps = 32.0, "network.global_bw_gbps: 32 differs from host_bw_gbps (64)"),
            (|c| c.network.xbar_bw_gbps = 32.0, "network.xbar_bw_gbps: 32 is below the link bandwidth"),
            (|c| c.network.local_latency_ns = 10.5, "network.local_latency_ns: 10.5 is not a positive whole number"),
            (|c| c.network.host_latency_ns = 0.0, "network.host_latency_ns: 0 is not a positive whole number"),
            (|c| c.network.input_latency_ns = 1.0, "network.input_latency_ns: 1 is not supported"),
            (|c| c.network.output_latency_ns = 0.5, "network.output_latency_ns: 0.5 is not supported"),
            (
                |c| {
                    c.network.flit_bytes = 1;
                    (c.network.host_bw_gbps, c.network.local_bw_gbps, c.network.global_bw_gbps) = (1e3, 1e3, 1e3);
                    c.network.xbar_bw_gbps = 2e3;
                    (c.network.input_buffer_flits, c.network.output_buffer_flits) = (256, 256);
                },
                "network.host_bw_gbps: 1000 makes a cycle (one flit) shorter than 2 ps",
            ),
        ];
        for (change, want) in cases {
            let mut c = booksim();
            change(&mut c);
            let msg = c.validate().unwrap_err().to_string();
            assert!(msg.starts_with(want), "{msg}");
        }
    }

    #[test]
    fn booksim_keys_are_refused_with_other_timings() {
        let mut c = Experiment::default();
        c.network.credit_delay_cycles = 1;
        let msg = c.validate().unwrap_err().to_string();
        assert!(msg.starts_with("network.credit_delay_cycles: applies only with timing = \"booksim\""), "{msg}");
        let mut c = Experiment::default();
        c.network.router_pipeline = crate::config::RouterPipeline::SingleCycle;
        assert!(c.validate().unwrap_err().to_string().starts_with("network.router_pipeline: applies only"));
    }
}
