//! The claims model and its fixed generator (pricing model section 5).
//!
//! Every person has a stable stream key; plan year `y` draws one uniform
//! `u = U(key, y)` with SplitMix64, and claims come by inversion through
//! Wichura's AS241 (PPND16). All transcendental functions come from `libm`
//! so results are identical on every platform.

use sha2::{Digest, Sha256};

use crate::money::to_f64;
use crate::rate_card::ClaimsParams;

/// Stream key of a person: the first 8 bytes, big-endian, of SHA-256 over
/// `{card version}|{household key}|{place}`.
#[must_use]
pub fn stream_key(card_version: &str, household_key: &str, place: &str) -> u64 {
    let mut h = Sha256::new();
    h.update(card_version.as_bytes());
    h.update(b"|");
    h.update(household_key.as_bytes());
    h.update(b"|");
    h.update(place.as_bytes());
    let digest = h.finalize();
    let mut first = [0u8; 8];
    for (dst, src) in first.iter_mut().zip(digest.iter()) {
        *dst = *src;
    }
    u64::from_be_bytes(first)
}

/// The uniform of stream `key` in plan year `year`: SplitMix64 of
/// `key + (year + 1)·0x9E3779B97F4A7C15`, then `((z >> 11) + 0.5) / 2^53`.
#[must_use]
pub fn uniform(key: u64, year: u32) -> f64 {
    let mut z = key.wrapping_add(
        u64::from(year)
            .wrapping_add(1)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15),
    );
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (u53_to_f64(z >> 11) + 0.5) / 9_007_199_254_740_992.0
}

fn u53_to_f64(x: u64) -> f64 {
    #[expect(
        clippy::as_conversions,
        reason = "x < 2^53 after the shift, so the conversion is exact"
    )]
    let f = x as f64;
    f
}

/// Lognormal location `μ = ln(E[X] / (1 − p0)) − σ²/2` for a person whose
/// mean annual claims (zeros included) are `mean_cents`.
#[must_use]
pub fn mu_for_mean(mean_cents: f64, p: &ClaimsParams) -> f64 {
    libm::log(mean_cents / (1.0 - p.zero_probability)) - p.sigma * p.sigma / 2.0
}

/// Mean annual claims of a person: benchmark annual premium × target loss
/// ratio ÷ platinum actuarial value.
#[must_use]
pub fn mean_claims(benchmark_annual_cents: i64, p: &ClaimsParams) -> f64 {
    to_f64(benchmark_annual_cents) * p.target_loss_ratio / p.platinum_actuarial_value
}

/// Claims in cents for uniform `u`: zero when `u ≤ p0`, else
/// `exp(μ + σ·Φ⁻¹((u − p0)/(1 − p0)))`.
#[must_use]
pub fn claims_for_uniform(u: f64, mu: f64, sigma: f64, p0: f64) -> f64 {
    if u <= p0 {
        0.0
    } else {
        libm::exp(mu + sigma * ppnd16((u - p0) / (1.0 - p0)))
    }
}

/// One person's claims in plan year `year`.
#[must_use]
pub fn draw(key: u64, year: u32, mu: f64, sigma: f64, p0: f64) -> f64 {
    claims_for_uniform(uniform(key, year), mu, sigma, p0)
}

/// Member cost sharing before any cap: `min(X, D) + (pct/100)·max(X − D, 0)`.
#[must_use]
pub fn gross_cost_sharing(x: f64, deductible: f64, coinsurance_pct: f64) -> f64 {
    x.min(deductible) + (coinsurance_pct / 100.0) * (x - deductible).max(0.0)
}

/// Wichura's AS241 PPND16: the standard normal quantile of `p` in (0, 1),
/// accurate to about 1e-16.
#[must_use]
#[expect(
    clippy::excessive_precision,
    reason = "the coefficients are written exactly as published in AS241"
)]
pub fn ppnd16(p: f64) -> f64 {
    const SPLIT1: f64 = 0.425;
    const SPLIT2: f64 = 5.0;
    const CONST1: f64 = 0.180_625;
    const CONST2: f64 = 1.6;
    const A: [f64; 8] = [
        3.387_132_872_796_366_608,
        1.331_416_678_917_843_774_5e2,
        1.971_590_950_306_551_442_7e3,
        1.373_169_376_550_946_112_5e4,
        4.592_195_393_154_987_145_7e4,
        6.726_577_092_700_870_085_3e4,
        3.343_057_558_358_812_810_5e4,
        2.509_080_928_730_122_672_7e3,
    ];
    const B: [f64; 8] = [
        1.0,
        4.231_333_070_160_091_125_2e1,
        6.871_870_074_920_579_083e2,
        5.394_196_021_424_751_107_7e3,
        2.121_379_430_158_659_586_7e4,
        3.930_789_580_009_271_061e4,
        2.872_908_573_572_194_267_4e4,
        5.226_495_278_852_854_561e3,
    ];
    const C: [f64; 8] = [
        1.423_437_110_749_683_577_34,
        4.630_337_846_156_545_295_9,
        5.769_497_221_460_691_405_5,
        3.647_848_324_763_204_605_04,
        1.270_458_252_452_368_382_58,
        2.417_807_251_774_506_117_7e-1,
        2.272_384_498_926_918_458_33e-2,
        7.745_450_142_783_414_076_4e-4,
    ];
    const D: [f64; 8] = [
        1.0,
        2.053_191_626_637_758_821_87,
        1.676_384_830_183_803_849_4,
        6.897_673_349_851_000_045_5e-1,
        1.481_039_764_274_800_745_9e-1,
        1.519_866_656_361_645_719_66e-2,
        5.475_938_084_995_344_946e-4,
        1.050_750_071_644_416_843_24e-9,
    ];
    const E: [f64; 8] = [
        6.657_904_643_501_103_777_2,
        5.463_784_911_164_114_369_9,
        1.784_826_539_917_291_335_8,
        2.965_605_718_285_048_912_3e-1,
        2.653_218_952_657_612_309_3e-2,
        1.242_660_947_388_078_438_6e-3,
        2.711_555_568_743_487_578_15e-5,
        2.010_334_399_292_288_132_65e-7,
    ];
    const F: [f64; 8] = [
        1.0,
        5.998_322_065_558_879_376_9e-1,
        1.369_298_809_227_358_053_1e-1,
        1.487_536_129_085_061_485_25e-2,
        7.868_691_311_456_132_591e-4,
        1.846_318_317_510_054_681_8e-5,
        1.421_511_758_316_445_888_7e-7,
        2.044_263_103_389_939_785_64e-15,
    ];
    fn poly(c: &[f64; 8], x: f64) -> f64 {
        c.iter().rev().fold(0.0, |acc, &k| acc * x + k)
    }
    let q = p - 0.5;
    if q.abs() <= SPLIT1 {
        let r = CONST1 - q * q;
        return q * poly(&A, r) / poly(&B, r);
    }
    let r = if q < 0.0 { p } else { 1.0 - p };
    let r = libm::sqrt(-libm::log(r));
    let val = if r <= SPLIT2 {
        let r = r - CONST2;
        poly(&C, r) / poly(&D, r)
    } else {
        let r = r - SPLIT2;
        poly(&E, r) / poly(&F, r)
    };
    if q < 0.0 { -val } else { val }
}

/// Standard normal CDF, `Φ(x) = erfc(−x/√2)/2`.
#[must_use]
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
}

/// Closed-form moments of the two-part claims distribution.
#[derive(Debug, Clone, Copy)]
pub struct ClaimsDistribution {
    /// Lognormal μ.
    pub mu: f64,
    /// Lognormal σ.
    pub sigma: f64,
    /// Probability of zero claims.
    pub p0: f64,
}

impl ClaimsDistribution {
    /// `E[(X − t)^+]`, the stop-loss transform, for `t ≥ 0`.
    #[must_use]
    pub fn stop_loss(&self, t: f64) -> f64 {
        let m = libm::exp(self.mu + self.sigma * self.sigma / 2.0);
        if t <= 0.0 {
            return (1.0 - self.p0) * m;
        }
        let d2 = (self.mu - libm::log(t)) / self.sigma;
        let d1 = d2 + self.sigma;
        (1.0 - self.p0) * (m * normal_cdf(d1) - t * normal_cdf(d2))
    }

    /// `E[(g(X) − a)^+]` for the cost-sharing function `g` with deductible
    /// `d` and coinsurance `c` (a fraction).
    #[must_use]
    pub fn excess_cost_sharing(&self, a: f64, d: f64, c: f64) -> f64 {
        // x_a solves g(x_a) = a.
        let xa = if a <= d { a } else { d + (a - d) / c };
        let knee = xa.max(d);
        (self.stop_loss(xa) - self.stop_loss(knee)) + c * self.stop_loss(knee)
    }

    /// Exact expected layer of a one-person household: the cost sharing
    /// between the version maximum `vi` and the base maximum `bi`.
    #[must_use]
    pub fn expected_single_layer(&self, d: f64, c: f64, bi: f64, vi: f64) -> f64 {
        self.excess_cost_sharing(vi, d, c) - self.excess_cost_sharing(bi, d, c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ppnd16_matches_reference_quantiles() {
        let cases = [
            (0.5, 0.0),
            (0.975, 1.959_963_984_540_054),
            (0.025, -1.959_963_984_540_054),
            (0.999, 3.090_232_306_167_813_5),
            (0.8, 0.841_621_233_572_914_2),
            (1e-10, -6.361_340_902_404_056),
        ];
        for (p, z) in cases {
            let got = ppnd16(p);
            assert!(
                (got - z).abs() <= 1e-12 * z.abs().max(1.0),
                "ppnd16({p}) = {got}, want {z}"
            );
        }
        // Deep in the tails the generator can reach (q ≥ ~1e-16), the
        // quantile inverts the CDF to a relative 1e-12.
        for p in [1e-16, 1e-12, 1e-8, 1e-5, 0.01] {
            let back = normal_cdf(ppnd16(p));
            assert!((back - p).abs() <= 1e-12 * p, "p = {p}: Φ(Φ⁻¹(p)) = {back}");
        }
        // Inverse of the CDF across the range.
        for i in 1..200 {
            let p = f64::from(i) / 200.0;
            assert!((normal_cdf(ppnd16(p)) - p).abs() < 1e-14, "p = {p}");
        }
    }

    #[test]
    fn uniform_is_splitmix64_in_the_open_unit_interval() {
        // SplitMix64 of 0 + 1·γ, the first output of the reference generator
        // seeded with 0, is 0xE220A8397B1DCDAF.
        let u = uniform(0, 0);
        let expect = (u53_to_f64(0xE220_A839_7B1D_CDAF >> 11) + 0.5) / 9_007_199_254_740_992.0;
        assert_eq!(u.to_bits(), expect.to_bits());
        for y in 0..1000 {
            let u = uniform(u64::MAX - 7, y);
            assert!(u > 0.0 && u < 1.0);
        }
    }

    #[test]
    fn stream_keys_are_sha256_prefixes() {
        // SHA-256("2026.1|E-001#0|e") computed independently.
        let key = stream_key("2026.1", "E-001#0", "e");
        let digest = Sha256::digest(b"2026.1|E-001#0|e");
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        assert_eq!(key, u64::from_be_bytes(first));
        assert_ne!(key, stream_key("2026.1", "E-001#0", "s"));
    }

    #[test]
    fn claims_are_zero_below_p0_and_grow_with_mu() {
        assert_eq!(claims_for_uniform(0.1, 10.0, 1.67, 0.15), 0.0);
        assert_eq!(claims_for_uniform(0.15, 10.0, 1.67, 0.15), 0.0);
        let low = claims_for_uniform(0.6, 10.0, 1.67, 0.15);
        let high = claims_for_uniform(0.6, 10.5, 1.67, 0.15);
        assert!(high > low && low > 0.0);
    }

    #[test]
    fn the_mean_including_zeros_is_the_target() {
        let p = ClaimsParams {
            zero_probability: 0.15,
            sigma: 1.67,
            target_loss_ratio: 0.85,
            platinum_actuarial_value: 0.9,
        };
        let mean = mean_claims(1_200_000, &p);
        let dist = ClaimsDistribution {
            mu: mu_for_mean(mean, &p),
            sigma: p.sigma,
            p0: p.zero_probability,
        };
        assert!((dist.stop_loss(0.0) - mean).abs() < 1e-6 * mean);
    }

    #[test]
    fn cost_sharing_is_deductible_then_coinsurance() {
        assert_eq!(gross_cost_sharing(1000.0, 3400.0, 20.0), 1000.0);
        assert_eq!(gross_cost_sharing(13_400.0, 3400.0, 20.0), 5400.0);
    }

    #[test]
    fn closed_form_layer_matches_numeric_integration() {
        let dist = ClaimsDistribution {
            mu: 12.0,
            sigma: 1.67,
            p0: 0.15,
        };
        let (d, c, bi, vi) = (340_000.0, 0.2, 750_000.0, 170_000.0);
        let closed = dist.expected_single_layer(d, c, bi, vi);
        // Midpoint rule over the quantiles of the positive part.
        let n = 400_000;
        let mut sum = 0.0;
        for i in 0..n {
            let q = (f64::from(i) + 0.5) / f64::from(n);
            let x = libm::exp(dist.mu + dist.sigma * ppnd16(q));
            let g = gross_cost_sharing(x, d, c * 100.0);
            sum += g.min(bi) - g.min(vi);
        }
        let numeric = (1.0 - dist.p0) * sum / f64::from(n);
        assert!(
            (closed - numeric).abs() < 1e-4 * closed,
            "{closed} vs {numeric}"
        );
    }
}
