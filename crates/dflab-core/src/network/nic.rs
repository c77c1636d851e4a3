//! The NICs: each node's source queue and its injection link into its router. A NIC sends the
//! packet at the head of its source queue when its link is free and the router's input buffer
//! has credits for the whole packet; a packet's latency counts from its generation (source
//! queueing included), its network latency from this send.

use std::collections::VecDeque;

use rand::SeedableRng;

use crate::engine::core::Core;
use crate::engine::event::Event;
use crate::engine::stream_seed;
use crate::network::{CreditLedger, Packet, PacketId};
use crate::routing::Rng;
use crate::units::Time;

/// One node: its NIC's state, its random stream and two words of the workload's own (the
/// synthetic generator's schedule), in one cache line: generating a packet and sending it from
/// an idle NIC read no other line of the node.
#[derive(Debug, Clone)]
#[repr(align(64))]
pub struct NodeState {
    /// The node's random stream (seeded from the experiment seed and the node id).
    pub rng: Rng,
    /// The link is busy sending until then.
    pub busy: Time,
    /// The workload's per-node words.
    pub work: [u64; 2],
    /// Packets in the source queue (`queue[node].len()`).
    pub queued: u32,
    /// A NicWake event is pending.
    pub wake: bool,
    /// The NIC waits for credits and no return is on its way: the next return must wake it.
    pub blocked: bool,
    /// The workload waits for room in this source queue: the next packet that leaves it is
    /// reported to the workload ([`crate::workload::Workload::on_source_space`]).
    pub notify: bool,
}

// One line: the xoshiro state (32 bytes), three words, the queue length and the flags.
const _: () = assert!(std::mem::size_of::<NodeState>() == 64);

pub struct Nics {
    pub queue: Vec<VecDeque<PacketId>>,
    /// Free credits of each injection link (the router's host-port input buffer), per
    /// injection VC (`node · vcs + vc`).
    pub credits: CreditLedger,
    /// Injection VCs: 1 (every packet enters VC 0), or the router's VCs with BookSim timing
    /// (see [`Nics::per_vc`]).
    pub vcs: usize,
    pub node: Vec<NodeState>,
}

impl Nics {
    /// The NICs of `nodes` nodes whose routers' input buffers hold `in_cap` flits; node `i`'s
    /// stream is seeded from `seed` and `i`.
    pub fn new(nodes: usize, in_cap: u32, seed: u64) -> Nics {
        Nics {
            queue: vec![VecDeque::new(); nodes],
            credits: CreditLedger::new(nodes, in_cap),
            vcs: 1,
            node: (0..nodes)
                .map(|i| NodeState {
                    rng: Rng::seed_from_u64(stream_seed(seed, 2, i as u64)),
                    busy: 0,
                    work: [0; 2],
                    queued: 0,
                    wake: false,
                    blocked: false,
                    notify: false,
                })
                .collect(),
        }
    }

    /// Credits per injection VC, for NICs that inject on `vcs` VCs (BookSim timing).
    pub fn per_vc(&mut self, vcs: usize, in_cap: u32) {
        self.vcs = vcs;
        self.credits = CreditLedger::new(self.queue.len() * vcs, in_cap);
    }
}

impl Core {
    /// A new packet `pkt` of node `src` enters its NIC now: an idle NIC with credits sends it at
    /// once (what `nic_try_send` does with a queue of one), otherwise it joins the source
    /// queue. Returns whether the workload asked to hear of room in this source queue and a
    /// packet just left it (the caller tells the workload).
    #[inline(always)]
    pub fn nic_submit(&mut self, src: u32, pkt: Packet) -> bool {
        if self.t.sst {
            self.nic_submit_sst(src, pkt);
            return false;
        }
        if self.t.booksim {
            return self.nic_submit_booksim(src, pkt);
        }
        let n = src as usize;
        let now = self.now;
        let flits = pkt.flits as u32;
        let st = &mut self.nic.node[n];
        let send = st.queued == 0 && st.busy <= now && self.nic.credits.covers(n, now, flits);
        if send {
            let resume = std::mem::take(&mut st.notify);
            st.busy = now + self.t.ser_of(0, flits);
            let id = self.pkts.alloc(pkt, now, now);
            self.nic_departs(src, id);
            resume
        } else {
            let id = self.pkts.alloc(pkt, now, 0);
            self.acct.in_source += 1;
            st.queued += 1;
            self.nic.queue[n].push_back(id);
            self.nic_try_send(src)
        }
    }

    /// Send the head of the source queue of `node` if the NIC is free and has credits, or make
    /// sure it wakes when it can. Returns what [`Core::nic_submit`] returns.
    pub fn nic_try_send(&mut self, node: u32) -> bool {
        if self.t.sst {
            return self.nic_timer_sst(node);
        }
        if self.t.booksim {
            return self.nic_try_send_booksim(node);
        }
        let n = node as usize;
        let now = self.now;
        let (busy, wake) = (self.nic.node[n].busy, self.nic.node[n].wake);
        if busy > now {
            if !wake && !self.nic.queue[n].is_empty() {
                self.nic.node[n].wake = true;
                // Arbitrary delay: goes to the timer wheel, not to a lane.
                self.q.at(busy, Event::NicWake { node });
            }
            return false;
        }
        let Some(&id) = self.nic.queue[n].front() else {
            return false;
        };
        let flits = self.flits_of(id);
        if !self.nic.credits.covers(n, now, flits) {
            match self.nic.credits.next_return(n) {
                Some(t) if !wake => {
                    self.nic.node[n].wake = true;
                    self.q.at(t, Event::NicWake { node });
                }
                Some(_) => {}
                None => self.nic.node[n].blocked = true,
            }
            return false;
        }
        let queue = &mut self.nic.queue[n];
        queue.pop_front();
        let more = !queue.is_empty();
        self.nic.node[n].queued -= 1;
        self.acct.in_source -= 1;
        self.pkts.set_injected(id, now);
        self.send_from_nic(node, id, more)
    }

    /// The NIC of `node`, idle with credits for it, sends packet `id` (taken from its source
    /// queue, which holds more packets if `more`).
    #[inline(always)]
    fn send_from_nic(&mut self, node: u32, id: PacketId, more: bool) -> bool {
        let ser = match self.t.uniform_flits {
            Some(_) => self.t.ser[0],
            None => self.t.ser_of(0, self.flits_of(id)),
        };
        let st = &mut self.nic.node[node as usize];
        let resume = std::mem::take(&mut st.notify);
        st.busy = self.now + ser;
        // The queue's next packet waits for the link: wake the NIC when it is free.
        let wake = more && !st.wake;
        st.wake |= wake;
        self.nic_departs(node, id);
        if wake {
            match self.t.uniform_flits {
                // One packet-time later: the fixed-delay lane.
                Some(_) => self.q.push(self.lanes.nic_wake, Event::NicWake { node }),
                None => self.q.at(self.now + ser, Event::NicWake { node }),
            }
        }
        resume
    }

    /// Packet `id` leaves the NIC of `node` for its router (the NIC's own state is updated by
    /// the caller).
    #[inline(always)]
    pub(crate) fn nic_departs(&mut self, node: u32, id: PacketId) {
        let n = node as usize;
        let flits = self.flits_of(id);
        self.nic.credits.take(n, flits);
        self.acct.in_network += 1;
        if self.check.on {
            self.check.nic_inflight_flits[n] += flits;
        }
        let router = self.topo.router_of_node(node);
        let port = self.topo.host_port_of_node(node);
        let pi = router * self.topo.radix as u32 + port as u32;
        self.q.push(self.lanes.nic_arrive, Event::Arrive { router, port, vc: 0, pkt: id, pi });
    }

    /// `flits` credits of the injection link of `node` start back to its NIC now; a NIC
    /// blocked on credits is woken when they arrive.
    #[inline(always)]
    pub fn nic_credit_return(&mut self, node: usize, flits: u32) {
        let at = self.now + self.t.credit_lat[0];
        self.nic.credits.give_back(node, self.now, at, flits);
        let st = &mut self.nic.node[node];
        if st.blocked && !st.wake {
            st.blocked = false;
            st.wake = true;
            self.q.push(self.lanes.nic_credit, Event::NicWake { node: node as u32 });
        }
    }
}
