//! Hot region (`hot`, Benito et al. JPDC'19 §5.2): each packet goes with probability 25 % to a
//! node drawn uniformly among the first 12.5 % of the nodes (the "hot region"), otherwise to a
//! node drawn uniformly over the whole network, hot region included. It is the only classic
//! synthetic pattern with endpoint congestion. `hot:<traffic%>:<nodes%>` changes both shares.

use rand::Rng;

use super::uniform_below;

#[derive(Debug, Clone)]
pub struct HotRegion {
    nodes: u32,
    /// Size of the hot region (its nodes are `0..hot`).
    hot: u32,
    /// Probability that a packet targets the hot region.
    traffic: f64,
    allow_self: bool,
}

impl HotRegion {
    /// `traffic` and `share` are fractions in (0, 1]; the region holds `round(share · nodes)`
    /// nodes, at least one.
    pub fn new(nodes: u32, traffic: f64, share: f64, allow_self: bool) -> HotRegion {
        let hot = ((share * nodes as f64).round() as u32).clamp(1, nodes);
        HotRegion { nodes, hot, traffic, allow_self }
    }

    pub fn hot_nodes(&self) -> u32 {
        self.hot
    }

    #[inline]
    pub fn destination<R: Rng + ?Sized>(&self, src: u32, rng: &mut R) -> u32 {
        // A lone hot node cannot send to the region without sending to itself: it sends uniformly.
        let region_is_only_me = self.hot == 1 && src == 0 && !self.allow_self;
        if !region_is_only_me && rng.gen::<f64>() < self.traffic {
            uniform_below(self.hot, src, self.allow_self, rng)
        } else {
            uniform_below(self.nodes, src, self.allow_self, rng)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn a_quarter_of_the_traffic_goes_to_the_first_eighth_of_the_nodes() {
        // 1056 nodes: hot region 132 nodes. A packet lands in it with probability
        // p = 0.25 + 0.75 · 132/1055 (self excluded) ≈ 0.3438.
        let hot = HotRegion::new(1056, 0.25, 0.125, false);
        assert_eq!(hot.hot_nodes(), 132);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let n = 200_000;
        let mut in_region = 0;
        let mut per_node = vec![0u32; 1056];
        for i in 0..n {
            let src = (i * 7 % 1056) as u32;
            let d = hot.destination(src, &mut rng);
            assert_ne!(d, src);
            in_region += (d < 132) as u32;
            per_node[d as usize] += 1;
        }
        // (An eighth of the sources are in the region and cannot pick themselves.)
        let p = 0.25 + 0.75 * (132.0 - 0.125) / 1055.0;
        let sd = (p * (1.0 - p) / n as f64).sqrt();
        let got = in_region as f64 / n as f64;
        // 5 standard deviations (sd ≈ 0.001): a correct sampler fails this about never.
        assert!((got - p).abs() < 5.0 * sd, "{got} vs {p}");
        // Inside and outside the region the destinations are uniform: compare the two means.
        let hot_mean = per_node[..132].iter().sum::<u32>() as f64 / 132.0;
        let cold_mean = per_node[132..].iter().sum::<u32>() as f64 / 924.0;
        let ratio = hot_mean / cold_mean;
        let want = (0.25 / 132.0 + 0.75 / 1055.0) / (0.75 / 1055.0);
        assert!((ratio / want - 1.0).abs() < 0.03, "{ratio} vs {want}");
    }

    #[test]
    fn custom_shares_and_tiny_regions() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
        let all_hot = HotRegion::new(64, 1.0, 0.25, false);
        assert_eq!(all_hot.hot_nodes(), 16);
        for src in 0..64 {
            let d = all_hot.destination(src, &mut rng);
            assert!(d < 16 && d != src);
        }
        // A one-node region: its own node sends uniformly, the others always hit node 0.
        let one = HotRegion::new(10, 1.0, 0.01, false);
        assert_eq!(one.hot_nodes(), 1);
        assert!((0..50).all(|_| one.destination(3, &mut rng) == 0));
        assert!((0..50).all(|_| one.destination(0, &mut rng) != 0));
    }
}
