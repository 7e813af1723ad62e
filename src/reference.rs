//! The accuracy oracle: sampling, hierarchy propagation, palette and skinning in f64, computed from
//! the *authoring* data ([`Skeleton`], [`Clip`], [`SkinnedMesh`]) rather than the packed library,
//! with exact slerp and no shortcuts. Slow and simple on purpose; tests compare the f32 CPU mirror
//! and the GPU against it.

use crate::clip::{Clip, Interpolation, Track};
use crate::mesh::SkinnedMesh;
use crate::morph::MorphTargets;
use crate::skeleton::Skeleton;
use glam::{DMat3, DMat4, DQuat, DVec3, DVec4, Quat, Vec3};

mod ik;
pub mod inertia;
pub use ik::{aim_ik, apply_chain, apply_correction, two_bone_ik};

/// A local joint pose in f64.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransformF64 {
    /// Translation.
    pub translation: DVec3,
    /// Rotation (unit).
    pub rotation: DQuat,
    /// Scale.
    pub scale: DVec3,
}

impl TransformF64 {
    /// `t` in f64, its rotation normalized.
    #[must_use]
    pub fn from_transform(t: &crate::math::Transform) -> Self {
        Self {
            translation: t.translation.as_dvec3(),
            rotation: t.rotation.as_dquat().normalize(),
            scale: t.scale.as_dvec3(),
        }
    }

    /// `parent_from_joint`.
    #[must_use]
    pub fn to_mat4(&self) -> DMat4 {
        DMat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }
}

/// Finds the key interval around `t` (clamped to the keys): `(k0, k1, u, dt)`.
fn locate(times: &[f32], t: f64) -> (usize, usize, f64, f64) {
    let n = times.len();
    if n == 1 || t <= f64::from(times[0]) {
        return (0, 0, 0.0, 0.0);
    }
    if t >= f64::from(times[n - 1]) {
        return (n - 1, n - 1, 0.0, 0.0);
    }
    let k = times.partition_point(|&x| f64::from(x) <= t) - 1;
    let (t0, t1) = (f64::from(times[k]), f64::from(times[k + 1]));
    (k, k + 1, (t - t0) / (t1 - t0), t1 - t0)
}

fn hermite(p0: DVec4, m0: DVec4, p1: DVec4, m1: DVec4, u: f64) -> DVec4 {
    let (u2, u3) = (u * u, u * u * u);
    p0 * (2.0 * u3 - 3.0 * u2 + 1.0) + m0 * (u3 - 2.0 * u2 + u) + p1 * (-2.0 * u3 + 3.0 * u2) + m1 * (u3 - u2)
}

fn sample_vec4(
    interp: Interpolation,
    times: &[f32],
    values: &[DVec4],
    t: f64,
    lerp: impl Fn(DVec4, DVec4, f64) -> DVec4,
) -> DVec4 {
    let (k0, k1, u, dt) = locate(times, t);
    match interp {
        Interpolation::Step => values[k0],
        Interpolation::Linear => {
            if k0 == k1 {
                values[k0]
            } else {
                lerp(values[k0], values[k1], u)
            }
        }
        Interpolation::CubicSpline => {
            if k0 == k1 {
                values[3 * k0 + 1]
            } else {
                hermite(
                    values[3 * k0 + 1],
                    values[3 * k0 + 2] * dt,
                    values[3 * k1 + 1],
                    values[3 * k1] * dt,
                    u,
                )
            }
        }
    }
}

/// A translation or scale track at time `t` (seconds, clamped to the keys).
#[must_use]
pub fn sample_vec3(track: &Track<Vec3>, t: f64) -> DVec3 {
    let values: Vec<DVec4> = track.values.iter().map(|v| v.as_dvec3().extend(0.0)).collect();
    sample_vec4(track.interpolation, &track.times, &values, t, |a, b, u| a.lerp(b, u)).truncate()
}

/// A float curve's (or a morph weight's) track at time `t` (seconds, clamped to the keys).
#[must_use]
pub fn sample_scalar(track: &Track<f32>, t: f64) -> f64 {
    let values: Vec<DVec4> = track
        .values
        .iter()
        .map(|&v| DVec4::new(v.into(), 0.0, 0.0, 0.0))
        .collect();
    sample_vec4(track.interpolation, &track.times, &values, t, |a, b, u| a.lerp(b, u)).x
}

/// A rotation track's values in f64, key values normalized (cubic tangents as they are).
fn quat_keys(track: &Track<Quat>) -> Vec<DVec4> {
    let cubic = track.interpolation == Interpolation::CubicSpline;
    track
        .values
        .iter()
        .enumerate()
        .map(|(k, q)| {
            let v = DVec4::new(q.x.into(), q.y.into(), q.z.into(), q.w.into());
            if !cubic || k % 3 == 1 { v.normalize() } else { v }
        })
        .collect()
}

/// A rotation track at time `t`: keys normalized, exact slerp along the shorter arc for linear,
/// Hermite then normalize for cubic splines.
#[must_use]
pub fn sample_quat(track: &Track<Quat>, t: f64) -> DQuat {
    rotation_at(track.interpolation, &track.times, &quat_keys(track), t)
}

/// A rotation channel (keys normalized) at time `t`, normalized. Where a cubic spline's tangents
/// cancel its keys and it passes through zero (squared length not above
/// [`CUBIC_ROTATION_MIN_LENGTH2`](crate::math::CUBIC_ROTATION_MIN_LENGTH2)), it has no direction:
/// the two keys' own slerp stands in, as on the GPU and in the CPU mirror.
fn rotation_at(interp: Interpolation, times: &[f32], values: &[DVec4], t: f64) -> DQuat {
    let v = sample_vec4(interp, times, values, t, slerp);
    let length2 = v.length_squared();
    if interp == Interpolation::CubicSpline
        && (length2.is_nan() || length2 <= f64::from(crate::math::CUBIC_ROTATION_MIN_LENGTH2))
    {
        let (k0, k1, u, _) = locate(times, t);
        return DQuat::from_vec4(slerp(values[3 * k0 + 1], values[3 * k1 + 1], u).normalize());
    }
    DQuat::from_vec4(v.normalize())
}

/// The local pose of every skeleton joint at clip time `t`; joints or channels without a track
/// hold the rest pose. Tracks naming joints the skeleton lacks are ignored.
#[must_use]
pub fn sample(skeleton: &Skeleton, clip: &Clip, t: f64) -> Vec<TransformF64> {
    ClipSampler::new(skeleton, clip).sample(t)
}

/// One channel of a [`ClipSampler`]: its joint, which channel, and its keys in f64.
struct PreparedChannel<'a> {
    joint: usize,
    channel: u8,
    interpolation: Interpolation,
    times: &'a [f32],
    values: Vec<DVec4>,
}

/// A clip prepared for sampling at many times: its keys converted to f64 (rotation keys
/// normalized) once. Samples exactly as [`sample`].
pub struct ClipSampler<'a> {
    rest: Vec<TransformF64>,
    channels: Vec<PreparedChannel<'a>>,
}

impl<'a> ClipSampler<'a> {
    /// Prepares `clip` for `skeleton`.
    #[must_use]
    pub fn new(skeleton: &Skeleton, clip: &'a Clip) -> Self {
        let rest = skeleton.rest_pose().iter().map(TransformF64::from_transform).collect();
        let mut channels = Vec::new();
        let vec3 = |joint, channel, t: &'a Track<Vec3>| PreparedChannel {
            joint,
            channel,
            interpolation: t.interpolation,
            times: &t.times,
            values: t.values.iter().map(|v| v.as_dvec3().extend(0.0)).collect(),
        };
        for track in &clip.tracks {
            let Some(j) = skeleton.joint_index(&track.joint) else {
                continue;
            };
            if let Some(tr) = &track.translation {
                channels.push(vec3(j, 0, tr));
            }
            if let Some(r) = &track.rotation {
                channels.push(PreparedChannel {
                    joint: j,
                    channel: 1,
                    interpolation: r.interpolation,
                    times: &r.times,
                    values: quat_keys(r),
                });
            }
            if let Some(s) = &track.scale {
                channels.push(vec3(j, 2, s));
            }
        }
        Self { rest, channels }
    }

    /// The local pose of every joint at clip time `t`.
    #[must_use]
    pub fn sample(&self, t: f64) -> Vec<TransformF64> {
        let mut pose = self.rest.clone();
        for c in &self.channels {
            let p = &mut pose[c.joint];
            match c.channel {
                0 => p.translation = sample_vec4(c.interpolation, c.times, &c.values, t, DVec4::lerp).truncate(),
                1 => p.rotation = rotation_at(c.interpolation, c.times, &c.values, t),
                _ => p.scale = sample_vec4(c.interpolation, c.times, &c.values, t, DVec4::lerp).truncate(),
            }
        }
        pose
    }
}

/// Exact slerp of two unit quaternions (as vectors) along the shorter arc.
pub(crate) fn slerp(a: DVec4, b: DVec4, u: f64) -> DVec4 {
    let (qa, qb) = (DQuat::from_vec4(a), DQuat::from_vec4(b));
    let qb = if qa.dot(qb) < 0.0 { -qb } else { qb };
    let d = qa.dot(qb).min(1.0);
    let theta = d.acos();
    if theta < 1e-12 {
        return a;
    }
    let (wa, wb) = (((1.0 - u) * theta).sin() / theta.sin(), (u * theta).sin() / theta.sin());
    DVec4::from(qa) * wa + DVec4::from(qb) * wb
}

/// `model_from_joint` for every joint: `model[i] = model[parent[i]] * local[i]`.
#[must_use]
pub fn local_to_model(skeleton: &Skeleton, local: &[TransformF64]) -> Vec<DMat4> {
    let mut model: Vec<DMat4> = Vec::with_capacity(local.len());
    for (i, l) in local.iter().enumerate() {
        let m = l.to_mat4();
        model.push(match skeleton.parents()[i] {
            Some(p) => model[p as usize] * m,
            None => m,
        });
    }
    model
}

/// Skinning matrices: `model[j] * inverse_bind[j]`.
#[must_use]
pub fn palette(skeleton: &Skeleton, model: &[DMat4]) -> Vec<DMat4> {
    model
        .iter()
        .zip(skeleton.inverse_binds())
        .map(|(m, ib)| *m * ib.as_dmat4())
        .collect()
}

/// Linear blend skinning of every vertex position: `Σ w_i K[j_i] (p, 1)`.
#[must_use]
pub fn skin(mesh: &SkinnedMesh, palette: &[DMat4]) -> Vec<DVec3> {
    (0..mesh.positions.len())
        .map(|v| {
            let p = mesh.positions[v].as_dvec3();
            (0..4)
                .map(|k| {
                    let w = f64::from(mesh.weights[v][k]);
                    if w == 0.0 {
                        DVec3::ZERO
                    } else {
                        palette[mesh.joints[v][k] as usize].transform_point3(p) * w
                    }
                })
                .sum()
        })
        .collect()
}

/// A character's morph weights when it plays `clip` alone at time `t` (seconds): per target,
/// the clip's track where it has keys (clamped to its own first and last key), else the
/// character's own weight from `own` (glTF: the node's `weights`, else the mesh's), else 0.
/// `targets` weights in all.
#[must_use]
pub fn morph_weights(clip: &Clip, own: &[f32], targets: usize, t: f64) -> Vec<f64> {
    (0..targets)
        .map(|k| match clip.morph_weights.get(k) {
            Some(track) if !track.times.is_empty() => sample_scalar(track, t),
            _ => own.get(k).copied().map_or(0.0, f64::from),
        })
        .collect()
}

/// Morphed bind-pose positions: each vertex plus `Σ w_t δ_t` over the targets (weights past the
/// end of `weights` are 0), from the authoring deltas.
#[must_use]
pub fn morph(mesh: &SkinnedMesh, targets: &MorphTargets, weights: &[f64]) -> Vec<DVec3> {
    let mut out: Vec<DVec3> = mesh.positions.iter().map(|p| p.as_dvec3()).collect();
    for (target, &w) in targets.targets.iter().zip(weights) {
        for d in &target.deltas {
            out[d.vertex as usize] += d.position.as_dvec3() * w;
        }
    }
    out
}

/// Linear blend skinning of the morphed positions ([`morph`]): glTF's order, morph targets
/// first, then skinning.
#[must_use]
pub fn skin_morphed(mesh: &SkinnedMesh, targets: &MorphTargets, weights: &[f64], palette: &[DMat4]) -> Vec<DVec3> {
    let morphed = morph(mesh, targets, weights);
    (0..mesh.positions.len())
        .map(|v| {
            (0..4)
                .filter(|&k| mesh.weights[v][k] != 0.0)
                .map(|k| {
                    palette[mesh.joints[v][k] as usize].transform_point3(morphed[v]) * f64::from(mesh.weights[v][k])
                })
                .sum()
        })
        .collect()
}

/// The rotation `R` and the stretch `S = Rᵀ A` of `A = R S` (polar decomposition), in f64:
/// Newton's iteration `X ← ½ (X + X⁻ᵀ)` until it stops changing, from `A` scaled to a Frobenius
/// norm of 1 times the sign of its determinant (so `R` is a proper rotation also when `A`
/// mirrors), or for a flat `A` (determinant at most [`crate::math::POLAR_FLAT_DET`] once scaled)
/// from `A` plus its
/// normalized cofactor matrix, which makes the rotation the one closest to `A`. An `A` of rank
/// one or zero gives `R = I`, `S = A`.
#[must_use]
pub fn polar(a: DMat3) -> (DMat3, DMat3) {
    let norm = |m: DMat3| m.to_cols_array().iter().map(|v| v * v).sum::<f64>().sqrt();
    let f = norm(a);
    if f.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) || !f.is_finite() {
        return (DMat3::IDENTITY, a);
    }
    let x = a * (1.0 / f);
    let d = x.determinant();
    // The same bound as the f32 code (`math::POLAR_FLAT_DET`): below it the matrix is taken as
    // flat, a choice of decomposition, not of precision.
    let mut x = if d.abs() > f64::from(crate::math::POLAR_FLAT_DET) {
        x * d.signum()
    } else {
        // The cofactor of a flat matrix, without dividing by its determinant.
        let rows = [x.row(0), x.row(1), x.row(2)];
        let c = DMat3::from_cols(rows[1].cross(rows[2]), rows[2].cross(rows[0]), rows[0].cross(rows[1])).transpose();
        let nc = norm(c);
        if nc <= 1e-12 {
            return (DMat3::IDENTITY, a);
        }
        x + c * (1.0 / nc)
    };
    for _ in 0..200 {
        let next = (x + x.inverse().transpose()) * 0.5;
        let change = (next - x).to_cols_array().iter().fold(0.0f64, |m, v| m.max(v.abs()));
        x = next;
        if change < 1e-15 {
            break;
        }
    }
    (x, x.transpose() * a)
}

/// Dual-quaternion skinning of every vertex position in f64 (Kavan et al. 2008, with scale and
/// shear by the "two-phase" method): each skinning matrix `K = [A | t]` is split into the rigid
/// motion `(R, t)` and the stretch `S` of `A = R S` ([`polar`]); per vertex the rigid motions'
/// unit dual quaternions are summed by weight, each turned to the hemisphere of the heaviest
/// influence's, and normalized; the stretches are summed by weight; the vertex is stretched,
/// then moved rigidly. glam's quaternions throughout (not the crate's f32 code).
#[must_use]
pub fn skin_dual(mesh: &SkinnedMesh, palette: &[DMat4]) -> Vec<DVec3> {
    struct Joint {
        real: DQuat,
        dual: DQuat,
        stretch: DMat3,
    }
    let joints: Vec<Joint> = palette
        .iter()
        .map(|k| {
            let (r, stretch) = polar(DMat3::from_mat4(*k));
            let real = DQuat::from_mat3(&r).normalize();
            let t = k.w_axis.truncate();
            let dual = DQuat::from_xyzw(t.x, t.y, t.z, 0.0) * real * 0.5;
            Joint { real, dual, stretch }
        })
        .collect();
    (0..mesh.positions.len())
        .map(|v| {
            let p = mesh.positions[v].as_dvec3();
            let w = mesh.weights[v].map(f64::from);
            let heaviest = (0..4).fold(0, |best, k| if w[k] > w[best] { k } else { best });
            let pivot = &joints[mesh.joints[v][heaviest] as usize].real;
            let (mut real, mut dual, mut stretch) = (DVec4::ZERO, DVec4::ZERO, DMat3::ZERO);
            for k in 0..4 {
                if w[k] == 0.0 {
                    continue;
                }
                let j = &joints[mesh.joints[v][k] as usize];
                let sign = if j.real.dot(*pivot) < 0.0 { -1.0 } else { 1.0 };
                real += DVec4::from(j.real) * w[k] * sign;
                dual += DVec4::from(j.dual) * w[k] * sign;
                stretch += j.stretch * w[k];
            }
            let len = real.length();
            let (real, dual) = (DQuat::from_vec4(real / len), DQuat::from_vec4(dual / len));
            let t = (dual * real.conjugate() * 2.0).xyz();
            real * (stretch * p) + t
        })
        .collect()
}

/// Crossings of a clip event in f64, frame by frame: the oracle of the clock stage's event
/// detection. A clip of `duration` seconds played from `start` at `rate` for frames of `dts`
/// seconds moves along an unwrapped time line, `x = start + rate · Σ dt`, clamped to
/// `[0, n · duration]` when it plays `loops = Some(n)` loops (`Some(1)`: once) and free when it
/// loops forever (`None`). The event at `time` stands at `time + k · duration` for every loop `k`
/// that plays. A frame crosses the points in `(x_before, x_after]` moving forward and in
/// `[x_after, x_before)` moving backward; the first frame includes its start. Returns the
/// count per frame.
#[must_use]
pub fn event_crossings(start: f64, rate: f64, dts: &[f64], duration: f64, loops: Option<u32>, time: f64) -> Vec<u64> {
    let end = loops.map(|n| f64::from(n.max(1)) * duration);
    let clamp = |x: f64| end.map_or(x, |end| x.clamp(0.0, end));
    // Loops k whose point time + k·duration lies in [lo, hi] (strict at an open end).
    let count = |lo: f64, lo_open: bool, hi: f64, hi_open: bool| -> u64 {
        let mut first = ((lo - time) / duration).ceil();
        if lo_open && first * duration + time <= lo {
            first += 1.0;
        }
        let mut last = ((hi - time) / duration).floor();
        if hi_open && last * duration + time >= hi {
            last -= 1.0;
        }
        if let Some(n) = loops {
            first = first.max(0.0);
            last = last.min(f64::from(n.max(1)) - 1.0);
        }
        if last >= first { (last - first + 1.0) as u64 } else { 0 }
    };
    let mut x = clamp(start);
    let mut out = Vec::with_capacity(dts.len());
    for (f, &dt) in dts.iter().enumerate() {
        let delta = rate * dt;
        let next = clamp(x + delta);
        let first = f == 0;
        out.push(if delta > 0.0 {
            count(x, !first, next, false)
        } else if delta < 0.0 {
            count(next, false, x, !first)
        } else {
            0
        });
        x = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_holds_the_earlier_key_and_times_clamp() {
        let tr = Track {
            interpolation: Interpolation::Step,
            times: vec![1.0, 2.0],
            values: vec![Vec3::X, Vec3::Y],
        };
        assert_eq!(sample_vec3(&tr, 0.0), DVec3::X);
        assert_eq!(sample_vec3(&tr, 1.99), DVec3::X);
        assert_eq!(sample_vec3(&tr, 2.0), DVec3::Y);
        assert_eq!(sample_vec3(&tr, 9.0), DVec3::Y);
    }

    #[test]
    fn cubic_spline_with_zero_tangents_is_smoothstep() {
        let tr = Track {
            interpolation: Interpolation::CubicSpline,
            times: vec![0.0, 2.0],
            values: vec![Vec3::ZERO, Vec3::ZERO, Vec3::ZERO, Vec3::ZERO, Vec3::ONE, Vec3::ZERO],
        };
        assert!((sample_vec3(&tr, 1.0).x - 0.5).abs() < 1e-12);
        assert!((sample_vec3(&tr, 0.5).x - 0.15625).abs() < 1e-12);
    }

    #[test]
    fn a_cubic_rotation_through_zero_takes_the_keys_slerp_there() {
        // Keys 1 and -1 (the same rotation) with tangents that make the spline 1 - 2u: zero at
        // u = 0.5, where it has no direction.
        let q = Quat::IDENTITY;
        let tangent = Quat::from_xyzw(0.0, 0.0, 0.0, -2.0);
        let tr = Track {
            interpolation: Interpolation::CubicSpline,
            times: vec![0.0, 1.0],
            values: vec![tangent, q, tangent, tangent, -q, tangent],
        };
        let r = sample_quat(&tr, 0.5);
        assert!(r.is_finite(), "{r:?}");
        // The keys' slerp along the shorter arc: the identity.
        assert!(r.dot(DQuat::IDENTITY).abs() > 1.0 - 1e-12, "{r:?}");
        // Away from the zero the spline itself, normalized: the identity or its negative.
        assert!(sample_quat(&tr, 0.25).dot(DQuat::IDENTITY).abs() > 1.0 - 1e-12);
    }
}
