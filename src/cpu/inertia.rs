//! Mirror of `shaders/shared/inertia.wgsl`: inertialized transitions' per-joint math. Bollo
//! (GDC 2018, "Inertialization: High-Performance Animation Transitions in Gears of War"): the
//! offset from the target to the source decays to zero along a quintic. Holden ("Dead Blending",
//! 2023): the source, extrapolated with its velocity decaying, cross-fades to the target. The f64
//! oracle is [`crate::reference::inertia`].
//!
//! A [`PoseDelta`] holds per channel an xyz vector: translation, rotation, scale. A rotation
//! difference `a·b⁻¹` is kept as the vector part of that quaternion on its shorter arc
//! (sin(θ/2) times the axis): a chart of the rotations without trigonometry (which WGSL lets a
//! device compute to 2⁻¹¹ only), monotonic in the angle, so a decay to zero never turns past it.
#![expect(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "`!(x > 0.0)` also rejects NaN, exactly as the shader does"
)]

use crate::layout::LocalPose;
use crate::math::quat_mul;
use glam::{Vec3, Vec4};

/// A pose difference or velocity: per channel an xyz vector. WGSL `PoseDelta`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PoseDelta {
    /// Translation.
    pub t: Vec3,
    /// Rotation: the vector part of a shorter-arc quaternion.
    pub r: Vec3,
    /// Scale.
    pub s: Vec3,
}

impl PoseDelta {
    /// Every channel times `k`. WGSL `delta_scaled`.
    #[must_use]
    pub fn scaled(self, k: f32) -> Self {
        Self {
            t: self.t * k,
            r: self.r * k,
            s: self.s * k,
        }
    }

    /// The delta kept in a local pose buffer slot (w components 0). WGSL `delta_from_slot`.
    #[must_use]
    pub fn from_slot(p: &LocalPose) -> Self {
        Self {
            t: p.translation.truncate(),
            r: p.rotation.truncate(),
            s: p.scale.truncate(),
        }
    }

    /// The slot that keeps it. WGSL `delta_to_slot`.
    #[must_use]
    pub fn to_slot(self) -> LocalPose {
        LocalPose {
            translation: self.t.extend(0.0),
            rotation: self.r.extend(0.0),
            scale: self.s.extend(0.0),
        }
    }
}

fn conjugate(q: Vec4) -> Vec4 {
    Vec4::new(-q.x, -q.y, -q.z, q.w)
}

/// The rotation of chart vector `v` (|v| at most 1; a longer one is a half turn along it). WGSL
/// `chart_rotation`.
#[must_use]
pub fn chart_rotation(v: Vec3) -> Vec4 {
    let n2 = v.dot(v);
    if n2 > 1.0 {
        return (v * (1.0 / n2.sqrt())).extend(0.0);
    }
    v.extend((1.0 - n2).sqrt())
}

/// The chart vector of unit quaternion `q`, on the shorter arc. WGSL `rotation_chart`.
#[must_use]
pub fn rotation_chart(q: Vec4) -> Vec3 {
    if q.w < 0.0 { -q.truncate() } else { q.truncate() }
}

/// `a ⊖ b`: what takes pose `b` to pose `a`. WGSL `pose_sub`.
#[must_use]
pub fn pose_sub(a: &LocalPose, b: &LocalPose) -> PoseDelta {
    PoseDelta {
        t: a.translation.truncate() - b.translation.truncate(),
        r: rotation_chart(quat_mul(a.rotation, conjugate(b.rotation))),
        s: a.scale.truncate() - b.scale.truncate(),
    }
}

/// `b ⊕ d`: pose `b` moved by `d`. WGSL `pose_add`.
#[must_use]
pub fn pose_add(b: &LocalPose, d: &PoseDelta) -> LocalPose {
    LocalPose {
        translation: (b.translation.truncate() + d.t).extend(0.0),
        rotation: quat_mul(chart_rotation(d.r), b.rotation).normalize(),
        scale: (b.scale.truncate() + d.s).extend(0.0),
    }
}

/// Bollo's quintic (`x(t)` from `x0 ≥ 0` with velocity `v0` to 0 at `t1`, x′ and x″ 0 there;
/// where `v0` heads to 0 so fast that the curve would pass it, `t1` shortens to `−5 x0 / v0`; the
/// starting acceleration `a0 = (−8 v0 t1 − 20 x0) / t1²` is kept at 0 or above) divided by `x0`,
/// at `s = t / t1` (1 past the end), with `r = v0 t1 / x0`: factored as `(1 − s)³ q(s)`. WGSL
/// `bollo_unit`.
#[must_use]
pub fn bollo_unit(r: f32, s: f32) -> f32 {
    if !(s < 1.0) {
        return 0.0;
    }
    let u = 1.0 - s;
    let a = (-8.0 * r - 20.0).max(0.0);
    u * u * u * (1.0 + s * (r + 3.0 + s * 0.5 * (a + 6.0 * r + 12.0)))
}

pub use crate::layout::DECAY_NEGLIGIBLE;

/// A channel's decay, set up once (WGSL `DecayChannel`): `along` = (x0, r), `across` = (v0's part
/// across x0, 1 / t1).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DecayChannel {
    /// The offset x0 and `r = v0 t1 / |x0|` of its part along x0.
    pub along: Vec4,
    /// v0's part across x0, and `1 / t1`.
    pub across: Vec4,
}

/// A channel's decay from offset `x0` with velocity `v0` over `duration`: Bollo's quintic along
/// `x0`'s direction with `v0`'s part along it, and `v0`'s part across it leaving and returning
/// along `t (1 − t/duration)⁴` (value, slope and curvature 0 at the end, no crossing), so that
/// the offset's velocity starts at `v0` whole. An offset within [`DECAY_NEGLIGIBLE`]
/// `(1 + |v0| duration)` has no direction rounding would keep (a pose equal to the target's up
/// to the last bits): it counts as 0, and all of `v0` leaves and returns. WGSL `decay_setup`.
#[must_use]
pub fn decay_setup(x0: Vec3, v0: Vec3, duration: f32) -> DecayChannel {
    let len = x0.length();
    if !(len > DECAY_NEGLIGIBLE * (1.0 + v0.length() * duration)) || !(duration > 0.0) {
        return DecayChannel {
            along: Vec4::ZERO,
            across: v0.extend(0.0),
        };
    }
    let dir = x0 / len;
    let along = v0.dot(dir);
    let mut t1 = duration;
    if along < 0.0 {
        t1 = t1.min(-5.0 * len / along);
    }
    DecayChannel {
        along: x0.extend(along * t1 / len),
        across: (v0 - dir * along).extend(1.0 / t1),
    }
}

/// A channel's offset `t` seconds in (`shape`: `t (1 − t/duration)⁴`). WGSL `decay_channel`.
#[must_use]
pub fn decay_channel(c: &DecayChannel, t: f32, shape: f32) -> Vec3 {
    c.along.truncate() * bollo_unit(c.along.w, t.max(0.0) * c.across.w) + c.across.truncate() * shape
}

/// A joint's decay, a channel each for translation, rotation and scale. WGSL `Decay`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Decay {
    /// Translation.
    pub t: DecayChannel,
    /// Rotation.
    pub r: DecayChannel,
    /// Scale.
    pub s: DecayChannel,
}

impl Decay {
    /// The decay of offset `x0` with velocity `v0` over `duration`. WGSL `decay_start`.
    #[must_use]
    pub fn start(x0: &PoseDelta, v0: &PoseDelta, duration: f32) -> Self {
        Self {
            t: decay_setup(x0.t, v0.t, duration),
            r: decay_setup(x0.r, v0.r, duration),
            s: decay_setup(x0.s, v0.s, duration),
        }
    }

    /// The decay kept in two local pose buffer slots. WGSL `decay_from_slots`.
    #[must_use]
    pub fn from_slots(a: &LocalPose, b: &LocalPose) -> Self {
        let c = |along, across| DecayChannel { along, across };
        Self {
            t: c(a.translation, b.translation),
            r: c(a.rotation, b.rotation),
            s: c(a.scale, b.scale),
        }
    }

    /// The slots that keep it: `(x0, r)` of each channel, then `(across, 1 / t1)`. WGSL
    /// `decay_to_slots`.
    #[must_use]
    pub fn to_slots(&self) -> [LocalPose; 2] {
        [
            LocalPose {
                translation: self.t.along,
                rotation: self.r.along,
                scale: self.s.along,
            },
            LocalPose {
                translation: self.t.across,
                rotation: self.r.across,
                scale: self.s.across,
            },
        ]
    }

    /// The offset `t` seconds into a decay of `duration`: 0 from the end on. WGSL
    /// `decay_offset`.
    #[must_use]
    pub fn offset(&self, t: f32, duration: f32) -> PoseDelta {
        if !(t < duration) {
            return PoseDelta::default();
        }
        let u = 1.0 - t.max(0.0) / duration;
        let u2 = u * u;
        let shape = t.max(0.0) * u2 * u2;
        PoseDelta {
            t: decay_channel(&self.t, t, shape),
            r: decay_channel(&self.r, t, shape),
            s: decay_channel(&self.s, t, shape),
        }
    }
}

/// Offset vector `x0` with velocity `v0`, `t` seconds into a decay of `duration`:
/// [`decay_setup`] then [`decay_channel`] (the shader sets up once and evaluates every frame).
#[must_use]
pub fn decay_vector(x0: Vec3, v0: Vec3, t: f32, duration: f32) -> Vec3 {
    let c = decay_setup(x0, v0, duration);
    let zero = PoseDelta::default();
    let d = Decay {
        t: c,
        r: decay_setup(zero.r, zero.r, duration),
        s: decay_setup(zero.s, zero.s, duration),
    };
    d.offset(t, duration).t
}

/// Pose `p` moved on by velocity `v` for `by` seconds. WGSL `pose_advance`.
#[must_use]
pub fn pose_advance(p: &LocalPose, v: &PoseDelta, by: f32) -> LocalPose {
    pose_add(p, &v.scaled(by))
}

/// The shortest frame, seconds, a velocity is measured over ([`pose_velocity`], and the offset's
/// at the switch): a shorter one gives none rather than a division toward infinity. WGSL
/// `VELOCITY_MIN_DT`.
pub const VELOCITY_MIN_DT: f32 = 1e-4;

/// The velocity from pose `prev` to pose `now` over `dt` seconds (0 when `dt` is below
/// [`VELOCITY_MIN_DT`]). WGSL `pose_velocity`.
#[must_use]
pub fn pose_velocity(now: &LocalPose, prev: &LocalPose, dt: f32) -> PoseDelta {
    if !(dt >= VELOCITY_MIN_DT) {
        return PoseDelta::default();
    }
    pose_sub(now, prev).scaled(1.0 / dt)
}

/// Dead blending's source `t` seconds on: moved by its velocity, which halves every `halflife`
/// seconds (none without a half-life). WGSL `dead_extrapolate`.
#[must_use]
pub fn dead_extrapolate(source: &LocalPose, v: &PoseDelta, t: f32, halflife: f32) -> LocalPose {
    let mut by = 0.0;
    if halflife > 0.0 {
        let k = std::f32::consts::LN_2 / halflife;
        by = (1.0 - (-k * t.max(0.0)).exp()) / k;
    }
    pose_advance(source, v, by)
}

/// Dead blending's weight of the target `t` seconds into `duration`: smoothstep, whose slope is 0
/// at both ends. WGSL `dead_weight`.
#[must_use]
pub fn dead_weight(t: f32, duration: f32) -> f32 {
    if !(duration > 0.0) {
        return 1.0;
    }
    let u = (t / duration).clamp(0.0, 1.0);
    u * u * (3.0 - 2.0 * u)
}

/// A morph weight under an inertialized transition (`bits`, the blend list's
/// [`crate::layout::inertia`] bits) `t` seconds in: mixed from `kept`, the weight shown when the
/// transition started, into the target's `w` as dead blending mixes (smoothstep over
/// `duration`), with no velocity; `w` otherwise. WGSL `inertia_morph_weight`.
#[must_use]
pub fn inertia_morph_weight(bits: u32, t: f32, duration: f32, kept: f32, w: f32) -> f32 {
    use crate::layout::inertia::{DEAD_BLEND, OFFSET};
    if bits & (OFFSET | DEAD_BLEND) == 0 || !(t < duration) {
        return w;
    }
    // WGSL's mix: a (1 − s) + b s.
    let s = dead_weight(t, duration);
    kept * (1.0 - s) + w * s
}

/// `a` and `b` mixed by `w` (1: `b`), the rotation along the shorter arc, normalized. WGSL
/// `pose_mix`.
#[must_use]
pub fn pose_mix(a: &LocalPose, b: &LocalPose, w: f32) -> LocalPose {
    let mut qb = b.rotation;
    if a.rotation.dot(qb) < 0.0 {
        qb = -qb;
    }
    // WGSL's mix: a (1 − w) + b w.
    let mix = |a: Vec4, b: Vec4| a * (1.0 - w) + b * w;
    LocalPose {
        translation: mix(a.translation, b.translation),
        rotation: mix(a.rotation, qb).normalize(),
        scale: mix(a.scale, b.scale),
    }
}

/// Dead blending's output `t` seconds in: the extrapolated source mixed into `target`. WGSL
/// `dead_blend`.
#[must_use]
pub fn dead_blend(
    source: &LocalPose,
    v: &PoseDelta,
    target: &LocalPose,
    t: f32,
    duration: f32,
    halflife: f32,
) -> LocalPose {
    let w = dead_weight(t, duration);
    if w >= 1.0 {
        return *target;
    }
    pose_mix(&dead_extrapolate(source, v, t, halflife), target, w)
}
