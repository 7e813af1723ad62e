//! Mirror of `shaders/shared/ticks.wgsl`: the clock's fixed-point time ([`Ticks`]) from seconds,
//! ratios and periods, and its wrapping.

use crate::layout::{TICK_BITS, TICK_LIMIT, Ticks};

/// `|v| = m · 2^e` with `m` an integer below 2²⁴; `m` is 0 for zero and for what is not finite.
/// WGSL `f32_parts`.
#[must_use]
pub fn f32_parts(v: f32) -> (u32, i32) {
    let bits = v.to_bits();
    let exponent = (bits >> 23) & 0xff;
    let mantissa = bits & 0x7f_ffff;
    match exponent {
        255 => (0, 0),
        0 => (mantissa, -149),
        _ => (mantissa | 0x80_0000, exponent as i32 - 150),
    }
}

/// `x · 2^s` rounded to the nearest integer (ties up), saturated at [`TICK_LIMIT`].
/// WGSL `shift_round`.
#[must_use]
pub fn shift_round(x: u64, s: i32) -> u64 {
    let limit = TICK_LIMIT as u64;
    if x == 0 {
        0
    } else if s >= 0 {
        if s >= 62 || x > limit >> s { limit } else { x << s }
    } else if s <= -64 {
        0
    } else {
        let r = (-s) as u32;
        (x >> r) + ((x >> (r - 1)) & 1)
    }
}

/// The nearest tick count to `seconds` (ties away from zero), saturated at ±[`TICK_LIMIT`];
/// what is not finite gives 0. WGSL `ticks_from_f32`.
#[must_use]
pub fn ticks_from_f32(seconds: f32) -> i64 {
    let (m, e) = f32_parts(seconds);
    let t = shift_round(u64::from(m), e + TICK_BITS as i32) as i64;
    if seconds < 0.0 { -t } else { t }
}

impl Ticks {
    /// The nearest tick count to `seconds` (ties away from zero), saturated at
    /// ±[`TICK_LIMIT`]; not finite gives 0. WGSL `ticks_from_f32`.
    #[must_use]
    pub fn from_f32(seconds: f32) -> Self {
        Self::new(ticks_from_f32(seconds))
    }
}

/// `rate · dt / per` in ticks, from the exact product `rate · dt` and a quotient of at least 46
/// significant bits (for normal numbers), rounded once; saturated at ±[`TICK_LIMIT`]. 0 when any
/// of them is zero or not finite. Integer arithmetic only. WGSL `ratio_ticks`.
#[must_use]
pub fn ratio_ticks(rate: f32, dt: f32, per: f32) -> i64 {
    let (mr, er) = f32_parts(rate);
    let (md, ed) = f32_parts(dt);
    let (mut mp, mut ep) = f32_parts(per);
    if mr == 0 || md == 0 || mp == 0 {
        return 0;
    }
    // Normalize the divisor to 24 bits so that the quotient has 46 or more bits.
    let shift = mp.leading_zeros() - 8;
    mp <<= shift;
    ep -= shift as i32;
    let product = u64::from(mr) * u64::from(md);
    // The shader divides byte by byte (long division); the quotient is the same integer.
    let quotient = ((u128::from(product) << 24) / u128::from(mp)) as u64;
    let t = shift_round(quotient, er + ed - ep - 24 + TICK_BITS as i32) as i64;
    if (rate < 0.0) != (dt < 0.0) { -t } else { t }
}

/// Splits `x` into whole periods and the rest: `(q, r)` with `x = q · period + r`,
/// `0 ≤ r < period`, after clamping `|x|` to `2³⁰` periods. The shader estimates `q` in f32
/// twice and corrects it by whole periods; the result is the same. WGSL `wrap_ticks`.
#[must_use]
pub fn wrap_ticks(x: i64, period: i64) -> (i64, i64) {
    let period = period.max(1);
    let mut x = x;
    if (x.unsigned_abs() >> 30) > period as u64 {
        x = x.signum() * (period << 30);
    }
    (x.div_euclid(period), x.rem_euclid(period))
}

/// A clock's period in ticks for a state of `duration` (seconds for a clip, 1 cycle for a
/// tree), at least one tick. WGSL `period_ticks`.
#[must_use]
pub fn period_ticks(duration: f32) -> i64 {
    ticks_from_f32(duration).max(1)
}

/// `floor(x / period)` for `|x| ≤ 2 period` (beyond, ±2). WGSL `floor_small`.
pub(crate) fn floor_small(x: i64, period: i64) -> i32 {
    if x < 0 {
        return if x < period.wrapping_neg() { -2 } else { -1 };
    }
    if x < period {
        0
    } else if x < period.wrapping_add(period) {
        1
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_exact_where_f32_is() {
        for v in [0.0f32, 1.0, -1.0, 0.5, 1.0 / 60.0, 37.6, -0.71, 3.0e-5, 1.0e6] {
            let t = ticks_from_f32(v);
            assert_eq!(t as f64 / (1u64 << TICK_BITS) as f64, f64::from(v), "{v}");
            assert_eq!(Ticks::new(t).get(), t);
            assert_eq!(Ticks::new(t).to_f32(), v, "{v}");
        }
        assert_eq!(ticks_from_f32(f32::NAN), 0);
        assert_eq!(ticks_from_f32(f32::INFINITY), 0);
        assert_eq!(ticks_from_f32(f32::MAX), TICK_LIMIT);
        assert_eq!(ticks_from_f32(-f32::MAX), -TICK_LIMIT);
        assert_eq!(ticks_from_f32(1.0e-30), 0, "below a tick");
        assert_eq!(ticks_from_f32(3.0e-7), 329_854, "rounded to the nearest tick");
    }

    #[test]
    fn ratio_ticks_is_the_exact_ratio_rounded_once() {
        let mut rng = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng >> 40) as f32 / (1u64 << 24) as f32
        };
        for _ in 0..10_000 {
            let rate = (next() - 0.3) * 7.0;
            let dt = next() * 0.1;
            let per = 0.05 + next() * 40.0;
            let exact = f64::from(rate) * f64::from(dt) / f64::from(per) * (1u64 << TICK_BITS) as f64;
            let got = ratio_ticks(rate, dt, per) as f64;
            // Rounding to a tick plus a quotient of 46 bits or more.
            assert!(
                (got - exact).abs() <= 0.5 + exact.abs() * 2f64.powi(-45),
                "{rate} · {dt} / {per}: {got} vs {exact}"
            );
        }
        assert_eq!(ratio_ticks(1.0, 1.0, 1.0), 1 << TICK_BITS);
        assert_eq!(ratio_ticks(-2.0, 0.25, 1.0), -(1 << (TICK_BITS - 1)));
        assert_eq!(ratio_ticks(f32::MAX, f32::MAX, 1.0e-30), TICK_LIMIT);
        assert_eq!(ratio_ticks(1.0, f32::NAN, 1.0), 0);
        assert_eq!(ratio_ticks(1.0, 1.0, 0.0), 0);
    }

    #[test]
    fn wrapping_matches_floor_division() {
        let p = period_ticks(0.71);
        for x in [0, 1, -1, p - 1, p, -p, 5 * p + 3, -7 * p - 2, TICK_LIMIT, -TICK_LIMIT] {
            let (q, r) = wrap_ticks(x, p);
            assert!((0..p).contains(&r), "{x}");
            assert_eq!(q * p + r, x, "{x}");
        }
        // More than 2^30 periods in one step is clamped there.
        let (q, r) = wrap_ticks(TICK_LIMIT, 1000);
        assert_eq!((q, r), (1 << 30, 0));
    }
}
