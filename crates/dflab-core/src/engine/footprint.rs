//! The memory a simulation allocates when it is built, estimated before anything is allocated,
//! and the guard that refuses a network that would not fit (newcomer #3: "infinite" buffers of
//! 10^6 flits on `qadaptive-1056` asked for 63 GB and aborted the process).
//!
//! The estimate counts the structures whose size follows from the configuration: per output VC
//! the credit ledger's ring of pending returns (one entry per flit of the downstream buffer:
//! the term that grows with buffer depth), its state, both buffers' list heads, the arbiter's
//! request slots and LRU stamp; per port its line; per node its NIC state and ledger; the
//! packet arena's first reservation. Routing tables and the packets of a saturated network
//! grow later and are not in it. The limit is `DFLAB_MEMORY_LIMIT_GB` when set, else 80 % of
//! the machine's memory (Linux `/proc/meminfo`), else 64 GB.

use crate::error::{Error, Result};
use crate::topology::Topology;

/// Bytes per output VC besides the ring: ledger state (32), input and output list heads
/// (16 + 16), two request slots (8), LRU stamp (4), rounded up for the checks' counters.
const PER_QUEUE: u64 = 80;
/// Bytes per ring entry (a packed time and flit count).
const PER_RING_ENTRY: u64 = 8;
/// Bytes per port (one cache line).
const PER_PORT: u64 = 64;
/// Bytes per node: its state line, its source queue's header, its ledger state, and the arena's
/// first reservation of 16 packets of 64 + 16 + 8 bytes.
const PER_NODE: u64 = 64 + 32 + 32 + 16 * 88;

/// What building the network allocates, and which part dominates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Footprint {
    /// The credit ledgers' rings (grows with `network.input_buffer_flits`).
    pub buffers: u64,
    /// Everything else (grows with the topology).
    pub structure: u64,
}

impl Footprint {
    pub fn of(topo: &Topology, vcs: usize, in_cap: u32) -> Footprint {
        let ports = (topo.routers() * topo.radix) as u64;
        let queues = ports * vcs as u64;
        let nodes = topo.nodes() as u64;
        let ring_entries = (queues + nodes) * in_cap as u64;
        Footprint {
            buffers: ring_entries.saturating_mul(PER_RING_ENTRY),
            structure: queues * PER_QUEUE + ports * PER_PORT + nodes * PER_NODE,
        }
    }

    pub fn total(&self) -> u64 {
        self.buffers.saturating_add(self.structure)
    }

    /// Refuse when the total passes `limit` bytes, naming the field that dominates.
    pub fn check(&self, limit: u64, what: &str) -> Result<()> {
        if self.total() <= limit {
            return Ok(());
        }
        let field = if self.buffers > self.structure { "network.input_buffer_flits" } else { "topology" };
        Err(Error::config(
            field,
            format!(
                "{what} needs about {} of memory to build ({} for the buffers' credit state), more than the \
                 limit of {}; allowed: a smaller network or shallower buffers, or a higher limit \
                 (DFLAB_MEMORY_LIMIT_GB)",
                gb(self.total()),
                gb(self.buffers),
                gb(limit)
            ),
        ))
    }
}

fn gb(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// The memory limit: `DFLAB_MEMORY_LIMIT_GB`, else 80 % of the machine's memory, else 64 GB.
pub fn limit() -> Result<u64> {
    if let Ok(v) = std::env::var("DFLAB_MEMORY_LIMIT_GB") {
        return match v.trim().parse::<f64>() {
            Ok(gb) if gb > 0.0 && gb.is_finite() => Ok((gb * 1e9) as u64),
            _ => Err(Error::config("DFLAB_MEMORY_LIMIT_GB", format!("'{v}' is not allowed; allowed: a number > 0"))),
        };
    }
    Ok(machine_memory().map_or(64_000_000_000, |m| m / 5 * 4))
}

/// Total memory of the machine (Linux), in bytes.
fn machine_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;

    #[test]
    fn deep_buffers_are_refused_naming_the_buffer_field() {
        // qadaptive-1056 with MIN's 2 VCs: (264 routers x 15 ports x 2 VCs + 1056 NICs) rings of
        // 10^6 entries of 8 bytes (the fabric's share alone is the 63.4 GB of the report).
        let topo = Topology::new(&TopologyConfig::default()).unwrap();
        let fp = Footprint::of(&topo, 2, 1_000_000);
        assert_eq!(fp.buffers, (264 * 15 * 2 + 1056) * 1_000_000 * 8);
        let err = fp.check(16_000_000_000, "this network").unwrap_err().to_string();
        assert!(err.starts_with("network.input_buffer_flits: this network needs about 71.8 GB"), "{err}");
        assert!(err.contains("limit of 16.0 GB"), "{err}");
        // The default buffers fit easily.
        assert!(Footprint::of(&topo, 2, 20).total() < 10_000_000);
    }

    #[test]
    fn huge_topologies_are_refused_naming_the_topology() {
        let cfg = TopologyConfig { p: 64, a: 64, h: 64, g: Some(4097), ..TopologyConfig::default() };
        let topo = Topology::new(&cfg).unwrap();
        let err = Footprint::of(&topo, 2, 20).check(16_000_000_000, "x").unwrap_err().to_string();
        assert!(err.starts_with("topology: "), "{err}");
    }
}
