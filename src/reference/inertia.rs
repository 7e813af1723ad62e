//! Inertialized transitions in f64, from the poses a transition starts from and goes to: the
//! oracle of `cpu::inertia` and of the sample stage's inertialized frames. Bollo's quintic is
//! written here as his slides give it, as a polynomial in `t` with coefficients divided by powers
//! of `t1`, rather than in normalized time as the shader evaluates it.

use super::TransformF64;
use glam::{DQuat, DVec3};

/// A pose difference or velocity: per channel a vector (translation, the vector part of the
/// shorter-arc rotation difference, scale).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DeltaF64 {
    /// Translation.
    pub t: DVec3,
    /// Rotation: the vector part of a shorter-arc quaternion, `sin(θ/2)` times the axis.
    pub r: DVec3,
    /// Scale.
    pub s: DVec3,
}

impl DeltaF64 {
    fn map(self, other: Self, f: impl Fn(DVec3, DVec3) -> DVec3) -> Self {
        Self {
            t: f(self.t, other.t),
            r: f(self.r, other.r),
            s: f(self.s, other.s),
        }
    }

    /// Every channel times `k`.
    #[must_use]
    pub fn scaled(self, k: f64) -> Self {
        self.map(self, |a, _| a * k)
    }
}

/// `a ⊖ b`: what takes pose `b` to pose `a`.
#[must_use]
pub fn sub(a: &TransformF64, b: &TransformF64) -> DeltaF64 {
    let d = a.rotation * b.rotation.conjugate();
    let r = DVec3::new(d.x, d.y, d.z);
    DeltaF64 {
        t: a.translation - b.translation,
        r: if d.w < 0.0 { -r } else { r },
        s: a.scale - b.scale,
    }
}

/// `b ⊕ d`: pose `b` moved by `d` (a rotation vector longer than 1 is a half turn along it).
#[must_use]
pub fn add(b: &TransformF64, d: &DeltaF64) -> TransformF64 {
    let n2 = d.r.length_squared();
    let q = if n2 > 1.0 {
        let v = d.r / n2.sqrt();
        DQuat::from_xyzw(v.x, v.y, v.z, 0.0)
    } else {
        DQuat::from_xyzw(d.r.x, d.r.y, d.r.z, (1.0 - n2).sqrt())
    };
    TransformF64 {
        translation: b.translation + d.t,
        rotation: (q * b.rotation).normalize(),
        scale: b.scale + d.s,
    }
}

/// The velocity from `before` to `now` over `dt` seconds.
#[must_use]
pub fn velocity(now: &TransformF64, before: &TransformF64, dt: f64) -> DeltaF64 {
    sub(now, before).scaled(1.0 / dt)
}

/// Bollo's quintic from `x0 ≥ 0` with velocity `v0`, reaching 0 with zero slope and curvature at
/// `t1`, shortened to `−5 x0 / v0` where `v0` would carry it past 0, with `a0 ≥ 0`.
#[must_use]
pub fn bollo_quintic(x0: f64, v0: f64, t: f64, t1: f64) -> f64 {
    let mut t1 = t1;
    if v0 < 0.0 {
        t1 = t1.min(-5.0 * x0 / v0);
    }
    if x0 <= 0.0 || t >= t1 {
        return 0.0;
    }
    let a0 = ((-8.0 * v0 * t1 - 20.0 * x0) / (t1 * t1)).max(0.0);
    let a = -(a0 * t1 * t1 + 6.0 * v0 * t1 + 12.0 * x0) / (2.0 * t1.powi(5));
    let b = (3.0 * a0 * t1 * t1 + 16.0 * v0 * t1 + 30.0 * x0) / (2.0 * t1.powi(4));
    let c = -(3.0 * a0 * t1 * t1 + 12.0 * v0 * t1 + 20.0 * x0) / (2.0 * t1.powi(3));
    let t = t.max(0.0);
    a * t.powi(5) + b * t.powi(4) + c * t.powi(3) + 0.5 * a0 * t * t + v0 * t + x0
}

/// An offset vector's decay: Bollo's quintic along `x0` with `v0`'s part along it, and `v0`'s
/// part across it as `t (1 − t/t1)⁴`; an offset within [`crate::layout::DECAY_NEGLIGIBLE`]
/// `(1 + |v0| t1)` counts as none.
#[must_use]
pub fn decay(x0: DVec3, v0: DVec3, t: f64, t1: f64) -> DVec3 {
    if t >= t1 {
        return DVec3::ZERO;
    }
    let len = x0.length();
    let negligible = f64::from(crate::layout::DECAY_NEGLIGIBLE) * (1.0 + v0.length() * t1);
    let dir = if len > negligible { x0 / len } else { DVec3::ZERO };
    let along = v0.dot(dir);
    let t = t.max(0.0);
    dir * bollo_quintic(len, along, t, t1) + (v0 - dir * along) * (t * (1.0 - t / t1).powi(4))
}

/// The offset of every channel `t` seconds into a decay of `t1`.
#[must_use]
pub fn decay_offset(x0: &DeltaF64, v0: &DeltaF64, t: f64, t1: f64) -> DeltaF64 {
    x0.map(*v0, |x, v| decay(x, v, t, t1))
}

/// The offset and its velocity an inertialization starts with: from the source's last shown
/// pose and its velocity, and the target's poses at that frame (`target_before`) and `dt`
/// seconds later (`target_at_switch`): the offset at the source's last frame, and its change over
/// the first frame (the source moved on by its velocity).
#[must_use]
pub fn start_offset(
    source: &TransformF64,
    source_velocity: &DeltaF64,
    target_before: &TransformF64,
    target_at_switch: &TransformF64,
    dt: f64,
) -> (DeltaF64, DeltaF64) {
    let x0 = sub(source, target_before);
    let x1 = sub(&add(source, &source_velocity.scaled(dt)), target_at_switch);
    (x0, x1.map(x0, |a, b| (a - b) / dt))
}

/// Dead blending `t` seconds in: the source moved by its velocity halving every `halflife`,
/// mixed by smoothstep(t / duration) into `target`.
#[must_use]
pub fn dead_blend(
    source: &TransformF64,
    source_velocity: &DeltaF64,
    target: &TransformF64,
    t: f64,
    duration: f64,
    halflife: f64,
) -> TransformF64 {
    let u = (t / duration).clamp(0.0, 1.0);
    let w = u * u * (3.0 - 2.0 * u);
    let by = if halflife > 0.0 {
        let k = std::f64::consts::LN_2 / halflife;
        (1.0 - (-k * t.max(0.0)).exp()) / k
    } else {
        0.0
    };
    let e = add(source, &source_velocity.scaled(by));
    let qb = if e.rotation.dot(target.rotation) < 0.0 {
        -target.rotation
    } else {
        target.rotation
    };
    TransformF64 {
        translation: e.translation.lerp(target.translation, w),
        rotation: e.rotation.lerp(qb, w).normalize(),
        scale: e.scale.lerp(target.scale, w),
    }
}
