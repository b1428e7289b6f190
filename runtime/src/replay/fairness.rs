//! Queue fairness measures. The core does not expose the proportion plugin's `deserved`, so the
//! replay computes its own, the way proportion does in spirit:
//!
//! * **deserved**: weight-proportional water-filling of the cluster total over the queues that
//!   ask for something. Each round, every queue not yet satisfied gets `remaining × weight /
//!   Σ weights of unsatisfied queues`, capped per resource at its demand (the requests of its
//!   running and pending pods); a queue whose every resource is capped is satisfied; what the
//!   caps leave over is shared again, until nothing is left or everyone is satisfied.
//! * **share**: a queue's dominant share, `max over cpu, memory, GPU of used / total`; its
//!   deserved share is the same of its deserved vector.
//! * **Jain's index** over the queues with demand, of `x = share / deserved share`:
//!   `(Σx)² / (n·Σx²)`, 1 when every queue holds the same fraction of what it deserves; `None`
//!   when no queue holds anything.

use super::record::{Dims, NDIMS};

/// Rounds of water-filling at most (each round satisfies at least one queue or exhausts the
/// total, so the number of queues + 1 is always enough).
const MAX_ROUNDS: usize = 256;

/// Deserved vector of each queue, per resource, in the units of `total`.
pub fn deserved(total: &Dims, weights: &[i32], demand: &[Dims]) -> Vec<[f64; NDIMS]> {
    let n = weights.len().min(demand.len());
    let mut out = vec![[0.0f64; NDIMS]; n];
    let mut met: Vec<bool> = (0..n).map(|q| demand[q].iter().all(|&v| v <= 0) || weights[q] <= 0).collect();
    let mut remaining: [f64; NDIMS] = total.map(|v| v.max(0) as f64);
    for _ in 0..MAX_ROUNDS.min(n + 2) {
        let tw: f64 = (0..n).filter(|&q| !met[q]).map(|q| weights[q] as f64).sum();
        if tw <= 0.0 || remaining.iter().all(|&r| r <= 0.0) {
            break;
        }
        let open: Vec<usize> = (0..n).filter(|&q| !met[q]).collect();
        for q in open {
            let f = weights[q] as f64 / tw;
            let mut all_capped = true;
            for d in 0..NDIMS {
                let want = demand[q][d].max(0) as f64;
                out[q][d] = (out[q][d] + remaining[d] * f).min(want);
                all_capped &= out[q][d] >= want;
            }
            met[q] = all_capped;
        }
        for d in 0..NDIMS {
            let given: f64 = out.iter().map(|x| x[d]).sum();
            remaining[d] = (total[d].max(0) as f64 - given).max(0.0);
            // Floating leftovers below a millionth of the total are nothing.
            if remaining[d] <= total[d] as f64 * 1e-9 {
                remaining[d] = 0.0;
            }
        }
    }
    out
}

/// Dominant share of `v` in `total` (0 when `total` is all zero).
pub fn dominant_share(v: &[f64; NDIMS], total: &Dims) -> f64 {
    (0..NDIMS).filter(|&d| total[d] > 0).map(|d| v[d] / total[d] as f64).fold(0.0, f64::max)
}

/// `Dims` as floats.
pub fn as_f64(v: &Dims) -> [f64; NDIMS] {
    v.map(|x| x as f64)
}

/// Jain's index of `x`; `None` for an empty list or all zeros.
pub fn jain(x: &[f64]) -> Option<f64> {
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    if x.is_empty() || sq <= 0.0 {
        return None;
    }
    Some(sum * sum / (x.len() as f64 * sq))
}

/// Queue fairness at one instant.
#[derive(Clone, Debug, PartialEq)]
pub struct Fairness {
    /// Per queue: (dominant share held, deserved dominant share), fractions 0–1.
    pub shares: Vec<(f64, f64)>,
    /// Jain's index over the queues with demand.
    pub jain: Option<f64>,
}

/// Queue shares against deserved shares at one instant, and Jain's index over the queues with
/// demand.
pub fn instant(total: &Dims, weights: &[i32], used: &[Dims], demand: &[Dims]) -> Fairness {
    let des = deserved(total, weights, demand);
    let shares: Vec<(f64, f64)> =
        des.iter().enumerate().map(|(q, d)| (dominant_share(&as_f64(&used[q]), total), dominant_share(d, total))).collect();
    let x: Vec<f64> = shares.iter().filter(|(_, d)| *d > 0.0).map(|(s, d)| s / d).collect();
    Fairness { jain: jain(&x), shares }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn water_filling_shares_leftovers() {
        let total = [100, 100, 0];
        // Weights 3:1; queue 1 wants only 10 cpu: queue 0 gets the rest.
        let d = deserved(&total, &[3, 1], &[[1000, 1000, 0], [10, 10, 0]]);
        assert!((d[1][0] - 10.0).abs() < 1e-6, "{d:?}");
        assert!((d[0][0] - 90.0).abs() < 1e-6, "{d:?}");
        // Both hungry: 75 / 25.
        let d = deserved(&total, &[3, 1], &[[1000, 1000, 0], [1000, 1000, 0]]);
        assert!((d[0][0] - 75.0).abs() < 1e-6 && (d[1][0] - 25.0).abs() < 1e-6, "{d:?}");
        // No demand, nothing deserved.
        assert_eq!(deserved(&total, &[1], &[[0, 0, 0]]), vec![[0.0; 3]]);
    }

    #[test]
    fn jain_bounds() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), Some(1.0));
        assert_eq!(jain(&[1.0, 0.0]), Some(0.5));
        assert_eq!(jain(&[0.0, 0.0]), None);
        let f = instant(&[100, 100, 0], &[1, 1], &[[50, 0, 0], [50, 0, 0]], &[[100, 0, 0], [100, 0, 0]]);
        assert_eq!(f.shares, vec![(0.5, 0.5), (0.5, 0.5)]);
        assert_eq!(f.jain, Some(1.0));
    }
}
