//! Time and bandwidth units. Simulated time is an integer number of picoseconds so that event
//! order is exact and reproducible; configs speak in ns, µs and GB/s.

/// Simulated time in picoseconds.
pub type Time = u64;

pub const PS_PER_NS: f64 = 1_000.0;
pub const PS_PER_US: f64 = 1_000_000.0;

/// Nanoseconds (float) to picoseconds, rounded to the nearest picosecond.
pub fn ns_to_ps(ns: f64) -> Time {
    (ns * PS_PER_NS).round() as Time
}

/// Microseconds (float) to picoseconds.
pub fn us_to_ps(us: f64) -> Time {
    (us * PS_PER_US).round() as Time
}

pub fn ps_to_ns(ps: Time) -> f64 {
    ps as f64 / PS_PER_NS
}

pub fn ps_to_us(ps: Time) -> f64 {
    ps as f64 / PS_PER_US
}

/// Time to move `bytes` at `gbps` GB/s (10^9 bytes/s): bytes / gbps ns.
pub fn transfer_ps(bytes: u64, gbps: f64) -> Time {
    ((bytes as f64 / gbps) * PS_PER_NS).round() as Time
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flit_times_of_the_hpdc_setup() {
        // 128 B at 4 GB/s = 32 ns; crossbar at 40 GB/s = 3.2 ns; 512 B at 25 GB/s = 20.48 ns.
        assert_eq!(transfer_ps(128, 4.0), 32_000);
        assert_eq!(transfer_ps(128, 40.0), 3_200);
        assert_eq!(transfer_ps(512, 25.0), 20_480);
        assert_eq!(ns_to_ps(10.0), 10_000);
        assert_eq!(us_to_ps(1.5), 1_500_000);
    }
}
