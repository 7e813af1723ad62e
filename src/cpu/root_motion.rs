//! Mirror of `shaders/shared/root_motion.wgsl`: rigid displacements, a clip's root motion between
//! two times, their blend over a frame, and the character's world moved by it.

use crate::layout::{GpuClip, GpuInstance, GpuOutput, NO_ROOT_MOTION};
use crate::library::AnimationLibrary;
use crate::math::{Affine, quat_rotate};
use glam::{Quat, Vec3, Vec4};

/// A rigid displacement: rotation `q` (a unit quaternion, x y z w), then translation `t`. WGSL
/// `Rigid`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rigid {
    /// Translation.
    pub t: Vec3,
    /// Rotation.
    pub q: Vec4,
}

impl Rigid {
    /// No displacement.
    pub const IDENTITY: Rigid = Rigid {
        t: Vec3::ZERO,
        q: Vec4::W,
    };

    /// `self * b`: `b` in this displacement's frame. WGSL `rigid_mul`.
    #[must_use]
    pub fn mul(&self, b: &Rigid) -> Rigid {
        Rigid {
            t: self.t + quat_rotate(self.q, b.t),
            q: super::sample::quat_mul(self.q, b.q),
        }
    }

    /// The inverse. WGSL `rigid_inverse`.
    #[must_use]
    pub fn inverse(&self) -> Rigid {
        let q = Vec4::new(-self.q.x, -self.q.y, -self.q.z, self.q.w);
        Rigid {
            t: -quat_rotate(q, self.t),
            q,
        }
    }

    /// `self^k` for any `k`, by squaring. WGSL `rigid_pow`.
    #[must_use]
    pub fn pow(&self, k: i32) -> Rigid {
        let mut base = if k < 0 { self.inverse() } else { *self };
        let mut n = k.unsigned_abs();
        let mut result = Rigid::IDENTITY;
        while n != 0 {
            if n & 1 != 0 {
                result = result.mul(&base);
            }
            n >>= 1;
            if n != 0 {
                base = base.mul(&base);
            }
        }
        result.q = result.q.normalize();
        result
    }
}

/// Clip `info`'s root motion at `t` seconds (its root relative to where it stood at 0). WGSL
/// `root_at`.
fn root_at(lib: &AnimationLibrary, info: &GpuClip, t: f32) -> Rigid {
    let tracks = lib.tracks();
    let translation =
        super::sample::sample_track(lib.times(), lib.values(), &tracks[info.root_track as usize], t, false);
    let rotation = super::sample::sample_track(
        lib.times(),
        lib.values(),
        &tracks[info.root_track as usize + 1],
        t,
        true,
    );
    Rigid {
        t: translation.truncate(),
        q: rotation,
    }
}

/// The displacement of clip `info` played from `t0` seconds in loop `loops0` to `t1` in `loops1`,
/// in the character's frame at `t0`: `G(t0)⁻¹ G(T)^(loops1 − loops0) G(t1)`. WGSL
/// `root_displacement`.
#[must_use]
pub fn root_displacement(lib: &AnimationLibrary, info: &GpuClip, t0: f32, loops0: u32, t1: f32, loops1: u32) -> Rigid {
    let dl = loops1.wrapping_sub(loops0) as i32;
    let mut d = root_at(lib, info, t0).inverse();
    if dl != 0 {
        d = d.mul(&root_at(lib, info, info.duration).pow(dl));
    }
    d.mul(&root_at(lib, info, t1))
}

/// The weighted sum of a frame's displacements. WGSL `RootBlend`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RootBlend {
    pub(crate) t: Vec3,
    pub(crate) q: Vec4,
}

/// WGSL `add_root`.
#[expect(clippy::too_many_arguments, reason = "keeps the signature of the shader function")]
pub(crate) fn add_root(
    lib: &AnimationLibrary,
    blend: &mut RootBlend,
    clip: u32,
    t0: f32,
    loops0: u32,
    t1: f32,
    loops1: u32,
    w: f32,
) {
    let info = &lib.clips()[clip as usize];
    let d = if info.root_track == NO_ROOT_MOTION {
        Rigid::IDENTITY
    } else {
        root_displacement(lib, info, t0, loops0, t1, loops1)
    };
    let q = if d.q.w < 0.0 { -d.q } else { d.q };
    blend.t += d.t * w;
    blend.q += q * w;
}

/// Moves a character's root by the frame's blended displacement, then by its turn for `dt`: the
/// world taken from the instance's when its `world_seq` is new, then moved; returns the new world.
/// A character played through a retarget moves by the displacement times its height ratio,
/// `ratio` (1 for one that plays its own clips). WGSL `move_root`.
pub(crate) fn move_root(r: &mut GpuOutput, inst: &GpuInstance, blend: &RootBlend, ratio: f32, dt: f32) -> Affine {
    if r.world_seq != inst.world_seq {
        r.world = inst.world;
        r.world_seq = inst.world_seq;
    }
    let len = blend.q.length();
    let q = if len > 0.0 { blend.q / len } else { Vec4::W };
    let half_turn = 0.5 * inst.root_turn * dt;
    let q = super::sample::quat_mul(q, Vec4::new(0.0, half_turn.sin(), 0.0, half_turn.cos()));
    let t = blend.t * ratio;
    r.world = r.world.mul(&Affine::from_sqt(t, Quat::from_vec4(q), Vec3::ONE));
    r.delta_translation = t.extend(0.0);
    r.delta_rotation = q;
    r.world
}
