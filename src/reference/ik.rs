//! The f64 oracle of the IK solvers and of a rig applied to a pose: ozz-animation's two-bone and
//! aim semantics, computed with glam's f64 types rather than the shader's operations.
#![expect(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "`!(x > 0.0)` also rejects NaN, as the shader does"
)]

use crate::ik::{AimJob, IkKind, TwoBoneJob};
use crate::math::Affine;
use crate::skeleton::Skeleton;
use glam::{DMat4, DQuat, DVec3, DVec4};

fn mat(a: &Affine) -> DMat4 {
    a.to_mat4().as_dmat4()
}

fn v(p: glam::Vec3) -> DVec3 {
    p.as_dvec3()
}

/// `m⁻¹`, or `None` when `m` has no inverse.
fn inverse(m: DMat4) -> Option<DMat4> {
    let det = m.determinant();
    (det != 0.0 && det.is_finite()).then(|| m.inverse())
}

/// The shorter rotation from `a` to `b`; a half turn about an axis perpendicular to `a` (the one
/// the shader picks) when they are opposite.
fn from_to(a: DVec3, b: DVec3) -> DQuat {
    let (a, b) = (a.normalize_or_zero(), b.normalize_or_zero());
    if a == DVec3::ZERO || b == DVec3::ZERO {
        return DQuat::IDENTITY;
    }
    if a.dot(b) < -1.0 + 1e-12 {
        let axis = if a.x.abs() > a.z.abs() {
            DVec3::new(-a.y, a.x, 0.0)
        } else {
            DVec3::new(0.0, -a.z, a.y)
        };
        return DQuat::from_axis_angle(axis.normalize(), std::f64::consts::PI);
    }
    DQuat::from_rotation_arc(a, b)
}

/// The signed angle from `a` to `b` about `axis` (all perpendicular to `axis`).
fn signed_angle(a: DVec3, b: DVec3, axis: DVec3) -> f64 {
    a.cross(b).dot(axis).atan2(a.dot(b))
}

fn weighted(q: DQuat, weight: f64) -> DQuat {
    if !(weight > 0.0) {
        return DQuat::IDENTITY;
    }
    let q = if q.w < 0.0 { -q } else { q };
    if weight < 1.0 {
        return DQuat::from_vec4(DVec4::W * (1.0 - weight) + DVec4::from(q) * weight).normalize();
    }
    q
}

/// Two-bone IK in f64: the start and mid corrections and whether the target is reached
/// (`None` for the corrections where the shader gives the identity: weight 0, a joint with no
/// inverse, a bone of zero length).
#[must_use]
pub fn two_bone_ik(job: &TwoBoneJob) -> (DQuat, DQuat, bool) {
    let none = (DQuat::IDENTITY, DQuat::IDENTITY, false);
    let weight = f64::from(job.weight);
    if !(weight > 0.0) {
        return none;
    }
    let (start, mid, end) = (mat(&job.start), mat(&job.mid), mat(&job.end));
    let (Some(inv_start), Some(inv_mid)) = (inverse(start), inverse(mid)) else {
        return none;
    };
    let mid_ss = inv_start.transform_point3(mid.w_axis.truncate());
    let end_ss = inv_start.transform_point3(end.w_axis.truncate());
    let (a, b) = (mid_ss.length(), (end_ss - mid_ss).length());
    if a == 0.0 || b == 0.0 {
        return none;
    }
    let mut target = inv_start.transform_point3(v(job.target));
    let len = target.length();
    let da = (a + b) * f64::from(job.soften).clamp(0.0, 1.0);
    let ds = a + b - da;
    let reached = !(len > da) && len > (a - b).abs() && weight >= 1.0;
    if len > da && len > 0.0 && ds > 0.0 {
        let alpha = (len - da) / ds;
        target *= (da + ds * (1.0 - (3.0 / (alpha + 3.0)).powi(4))) / len;
    }
    // The mid joint: the interior angle the law of cosines asks for, against the one it has
    // (negative when bent against the axis), about the axis in mid's frame.
    let axis = v(job.mid_axis);
    let start_ms = inv_mid.transform_point3(start.w_axis.truncate());
    let end_ms = inv_mid.transform_point3(end.w_axis.truncate());
    let interior = |c2: f64| ((a * a + b * b - c2) / (2.0 * a * b)).clamp(-1.0, 1.0).acos();
    let mut initial = interior(end_ss.length_squared());
    if (-start_ms).cross(axis).dot(end_ms) < 0.0 {
        initial = -initial;
    }
    let q_mid = DQuat::from_axis_angle(axis, interior(target.length_squared()) - initial);
    // The start joint: the bent chain's end onto the target, then the plane to the pole.
    let mid_end = inv_start.transform_vector3(mid.transform_vector3(q_mid * end_ms));
    let to_target = from_to(mid_ss + mid_end, target);
    let mut q_start = to_target;
    if target.length_squared() > 0.0 {
        let line = target.normalize();
        let pole = inv_start.transform_vector3(v(job.pole));
        // The chain's plane normal (the mid axis) turned about the line onto the pole's plane
        // normal, by the angle between the two normals (ozz's rotate_plane; the mid axis need
        // not be perpendicular to the line), the way the pole is.
        let joint = to_target * inv_start.transform_vector3(mid.transform_vector3(axis));
        let reference = target.cross(pole);
        let mut turn = DQuat::IDENTITY;
        if reference.length_squared() > 0.0 && joint.length_squared() > 0.0 {
            let angle = reference.normalize().dot(joint.normalize()).clamp(-1.0, 1.0).acos();
            let sign = if joint.dot(pole) < 0.0 { -1.0 } else { 1.0 };
            turn = DQuat::from_axis_angle(line * sign, angle);
        }
        q_start = DQuat::from_axis_angle(line, f64::from(job.twist)) * turn * to_target;
    }
    let (q_start, q_mid) = (weighted(q_start, weight), weighted(q_mid, weight));
    if !q_start.is_finite() || !q_mid.is_finite() {
        return none;
    }
    (q_start, q_mid, reached)
}

/// Aim IK in f64: the correction and whether the target could be aimed at.
#[must_use]
pub fn aim_ik(job: &AimJob) -> (DQuat, bool) {
    // A joint with no inverse sees every target at its origin, as the shader's zero inverse.
    let inv = inverse(mat(&job.joint)).unwrap_or(DMat4::ZERO);
    let to_target = inv.transform_point3(v(job.target));
    let (forward, offset) = (v(job.forward), v(job.offset));
    // The point of the forward ray from the offset at the target's distance from the joint.
    let along = forward.dot(offset);
    let across2 = offset.length_squared() - along * along;
    let r2 = to_target.length_squared();
    let reached = !(across2 > r2);
    if !reached || !(r2 > 0.0) || !r2.is_finite() {
        return (DQuat::IDENTITY, reached);
    }
    let aimed = offset + forward * ((r2 - across2).sqrt() - along);
    let to_target_rot = from_to(aimed, to_target);
    let line = to_target.normalize();
    let up = to_target_rot * v(job.up);
    let pole = inv.transform_vector3(v(job.pole));
    let (reference, joint) = (pole - line * pole.dot(line), up - line * up.dot(line));
    let mut turn = DQuat::IDENTITY;
    if reference.length_squared() > 0.0 && joint.length_squared() > 0.0 {
        turn = DQuat::from_axis_angle(line, signed_angle(joint, reference, line));
    }
    let q = DQuat::from_axis_angle(line, f64::from(job.twist)) * turn * to_target_rot;
    let q = weighted(q, f64::from(job.weight));
    if !q.is_finite() {
        return (DQuat::IDENTITY, false);
    }
    (q, true)
}

/// `model[k] · R(c) · model[k]⁻¹` applied to every joint from `k` down: a correction `c` of joint
/// `k`'s rotation in its own frame, carried by its descendants. Nothing changes where `model[k]`
/// has no inverse.
pub fn apply_correction(skeleton: &Skeleton, model: &mut [DMat4], k: usize, c: DQuat) {
    let Some(inv) = inverse(model[k]) else {
        return;
    };
    let pivot = model[k] * DMat4::from_quat(c) * inv;
    for (j, m) in model.iter_mut().enumerate().skip(k) {
        if skeleton.is_descendant(j, k) {
            *m = pivot * *m;
        }
    }
}

/// Solves and applies chain `chain` of `skeleton` toward `target` (model space) with `weight`,
/// in f64: a two-bone chain's mid then start correction; an aim chain's joints from the aiming
/// one up, each aiming the forward, offset and up the ones before it turned (brought into its
/// frame, the forward normalized), the last at full weight (ozz's look-at). A ground goal's
/// pelvis is not lowered here.
pub fn apply_chain(skeleton: &Skeleton, model: &mut [DMat4], chain: usize, target: DVec3, weight: f64) {
    let to_affine = |m: &DMat4| Affine::from_mat4(&m.as_mat4());
    match &skeleton.ik_chains()[chain].kind {
        IkKind::TwoBone(c) => {
            let job = TwoBoneJob {
                start: to_affine(&model[c.start]),
                mid: to_affine(&model[c.mid]),
                end: to_affine(&model[c.end]),
                target: target.as_vec3(),
                pole: c.pole,
                mid_axis: c.mid_axis,
                twist: c.twist,
                soften: c.soften,
                weight: weight as f32,
            };
            let (q_start, q_mid, _) = two_bone_ik(&job);
            apply_correction(skeleton, model, c.mid, q_mid);
            apply_correction(skeleton, model, c.start, q_start);
        }
        IkKind::Aim(c) => {
            let n = c.joints.len();
            let (mut forward, mut offset, mut up) = (c.forward.as_dvec3(), c.offset.as_dvec3(), c.up.as_dvec3());
            let mut corrections = Vec::with_capacity(n);
            for (i, &j) in c.joints.iter().enumerate() {
                if i > 0 {
                    let prev = c.joints[i - 1];
                    let q: DQuat = corrections[i - 1];
                    let f_ms = model[prev].transform_vector3(q * forward);
                    let o_ms = model[prev].transform_point3(q * offset);
                    let u_ms = model[prev].transform_vector3(q * up);
                    let Some(inv) = inverse(model[j]) else {
                        corrections.push(DQuat::IDENTITY);
                        continue;
                    };
                    forward = inv.transform_vector3(f_ms).normalize_or_zero();
                    offset = inv.transform_point3(o_ms);
                    up = inv.transform_vector3(u_ms);
                }
                let share = if i == n - 1 { 1.0 } else { f64::from(c.joint_weight) };
                let job = AimJob {
                    joint: to_affine(&model[j]),
                    target: target.as_vec3(),
                    forward: forward.as_vec3(),
                    offset: offset.as_vec3(),
                    up: up.as_vec3(),
                    pole: c.pole,
                    twist: c.twist,
                    weight: (weight * share) as f32,
                };
                corrections.push(aim_ik(&job).0);
            }
            for (&j, &q) in c.joints.iter().zip(&corrections) {
                apply_correction(skeleton, model, j, q);
            }
        }
    }
}
