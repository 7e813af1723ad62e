//! [`LodBudget`]: update-rate LOD driven by a GPU time budget — the thresholds scaled, frame by
//! frame, so that the animation passes take about the time asked.

use super::Animator;
use crate::error::{Error, Result};

/// A target GPU time per frame for the animation passes, met by scaling update-rate LOD's
/// thresholds ([`crate::gpu::Controller::set_update_rates`]) from the frames' measured times: when
/// the passes take longer than the target, the thresholds grow (more characters at lower rates),
/// when they take well under it, the thresholds shrink back toward `base`. Unreal's animation
/// budget allocator does this on the CPU; here the measured time is the GPU's, read from
/// timestamp queries ([`crate::gpu::PassTimer`], where the device has them: without them there
/// is nothing to steer by, and the thresholds stay `base`).
///
/// The measured time is smoothed (an exponential average over about 8 frames) and the scale moves
/// by at most a factor of 1.25 a frame, between `base` (scale 1) and 64 times it, so that a
/// frame's noise does not make the crowd's rates flicker. A frame's passes are read back a few
/// frames late on a real renderer; the budget only needs them to arrive.
#[derive(Clone, Debug, PartialEq)]
pub struct LodBudget {
    target_ms: f64,
    base: [f32; 3],
    scale: f64,
    smoothed_ms: Option<f64>,
}

/// Most the scale moves in a frame, each way.
const MAX_STEP: f64 = 1.25;
/// The largest scale of the thresholds.
const MAX_SCALE: f64 = 64.0;
/// Weight of a new measurement in the smoothed time.
const SMOOTHING: f64 = 0.25;
/// Under this share of the target the scale shrinks; between it and the target it stays.
const SLACK: f64 = 0.85;

impl LodBudget {
    /// A budget of `target_ms` milliseconds of GPU time per frame, scaling `base` thresholds
    /// (decreasing, as [`crate::gpu::Controller::set_update_rates`] takes them; for example
    /// [`crate::gpu::DEFAULT_UPDATE_RATES`]).
    ///
    /// Errors: a target that is not finite and positive, or thresholds that are not finite, not
    /// positive or not in decreasing order.
    pub fn new(target_ms: f64, base: [f32; 3]) -> Result<Self> {
        if !(target_ms.is_finite() && target_ms > 0.0) {
            return Err(Error::Limit {
                what: format!("LodBudget: a target of {target_ms} ms; it must be finite and above 0"),
            });
        }
        if !(base.iter().all(|t| t.is_finite() && *t > 0.0) && base[0] >= base[1] && base[1] >= base[2]) {
            return Err(Error::Limit {
                what: format!("LodBudget: thresholds {base:?} must be finite, above 0 and in decreasing order"),
            });
        }
        Ok(Self {
            target_ms,
            base,
            scale: 1.0,
            smoothed_ms: None,
        })
    }

    /// The target, ms.
    #[must_use]
    pub fn target_ms(&self) -> f64 {
        self.target_ms
    }

    /// How many times `base` the thresholds are now.
    #[must_use]
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The thresholds now: `base` times [`LodBudget::scale`].
    #[must_use]
    pub fn thresholds(&self) -> [f32; 3] {
        self.base.map(|t| (f64::from(t) * self.scale) as f32)
    }

    /// Takes a frame's measured GPU time of the animation passes (ms; a time that is not finite
    /// or not above 0 is ignored) and returns the thresholds the next frames should use.
    pub fn update(&mut self, measured_ms: f64) -> [f32; 3] {
        if measured_ms.is_finite() && measured_ms > 0.0 {
            let smoothed = self
                .smoothed_ms
                .map_or(measured_ms, |s| s + SMOOTHING * (measured_ms - s));
            self.smoothed_ms = Some(smoothed);
            let ratio = smoothed / self.target_ms;
            // Over the target: grow in proportion (bounded); well under it: shrink back.
            let step = if ratio > 1.0 {
                ratio.min(MAX_STEP)
            } else if ratio < SLACK {
                (ratio / SLACK).max(1.0 / MAX_STEP)
            } else {
                1.0
            };
            self.scale = (self.scale * step).clamp(1.0, MAX_SCALE);
        }
        self.thresholds()
    }

    /// [`LodBudget::update`] with the pass times of a frame of `animator` (what
    /// [`crate::gpu::PassTimer::read_ms`] returned for its passes, summed), then the thresholds
    /// given to it ([`crate::gpu::Controller::set_update_rates`]).
    ///
    /// Errors: as [`crate::gpu::Controller::set_update_rates`] (an animator that does not cull).
    pub fn apply(&mut self, animator: &mut Animator, pass_ms: &[f64]) -> Result<()> {
        let thresholds = self.update(pass_ms.iter().sum());
        animator.controller_mut().set_update_rates(Some(thresholds))
    }
}

#[cfg(test)]
mod tests {
    use super::LodBudget;

    /// A crowd whose frame costs `fixed` plus `per_rate` over the thresholds' scale (more
    /// characters at lower rates as the thresholds grow): the budget brings it within 15 % of the
    /// target and stays there, from over and from under it, and returns to the base when the
    /// crowd gets cheap.
    #[test]
    fn the_budget_settles_near_its_target() {
        let cost = |scale: f64, fixed: f64| fixed + 40.0 / scale.sqrt();
        for target in [8.0, 15.0, 30.0] {
            let mut b = LodBudget::new(target, crate::gpu::DEFAULT_UPDATE_RATES).unwrap();
            let mut last = Vec::new();
            for frame in 0..200 {
                let ms = cost(b.scale(), 4.0);
                b.update(ms);
                if frame >= 150 {
                    last.push(cost(b.scale(), 4.0));
                }
            }
            for ms in &last {
                assert!(*ms <= target * 1.15, "target {target}: {ms} ms after settling");
            }
            if target < 44.0 {
                assert!(
                    last.iter().any(|ms| *ms >= target * 0.6),
                    "target {target}: not far under it"
                );
            }
        }
        // Cheap again: back to the base thresholds.
        let mut b = LodBudget::new(8.0, crate::gpu::DEFAULT_UPDATE_RATES).unwrap();
        for _ in 0..100 {
            b.update(40.0);
        }
        assert!(b.scale() > 4.0);
        for _ in 0..200 {
            b.update(1.0);
        }
        assert_eq!(b.scale(), 1.0);
        assert_eq!(b.thresholds(), crate::gpu::DEFAULT_UPDATE_RATES);
        // Noise and nonsense are ignored or bounded.
        let before = b.scale();
        b.update(f64::NAN);
        b.update(-3.0);
        assert_eq!(b.scale(), before);
        assert!(LodBudget::new(0.0, crate::gpu::DEFAULT_UPDATE_RATES).is_err());
        assert!(LodBudget::new(f64::INFINITY, crate::gpu::DEFAULT_UPDATE_RATES).is_err());
        assert!(LodBudget::new(8.0, [0.01, 0.02, 0.03]).is_err());
        assert!(LodBudget::new(8.0, [0.1, 0.05, 0.0]).is_err());
    }
}
