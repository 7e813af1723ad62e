//! CPU mirror of `shaders/shared/ik_solve.wgsl`: ozz-animation's two-bone and aim IK solvers,
//! the same operations in the same order.
#![expect(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "`!(x > 0.0)` also rejects NaN, exactly as the shader does"
)]

use crate::ik::{AimJob, TwoBoneJob};
use crate::math::{Affine, quat_mul, quat_rotate};
use glam::{Vec3, Vec4};

const IDENTITY_QUAT: Vec4 = Vec4::new(0.0, 0.0, 0.0, 1.0);
const F32_BIG: f32 = 3.4e38;

/// Corrections of a two-bone chain's start and mid joints (unit quaternions, x y z w, in each
/// joint's frame), and whether the target was reached. WGSL `TwoBoneCorrection`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoBoneCorrection {
    /// The start joint's correction.
    pub start: Vec4,
    /// The mid joint's correction.
    pub mid: Vec4,
    /// The end is on the target (within the chain's reach, not softened, weight 1).
    pub reached: bool,
}

/// An aim correction, and whether the target could be aimed at (not between the joint and the
/// offset). WGSL `AimCorrection`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AimCorrection {
    /// The joint's correction.
    pub rotation: Vec4,
    /// Whether the target could be aimed at.
    pub reached: bool,
}

fn translation(m: &Affine) -> Vec3 {
    Vec3::new(m.x.w, m.y.w, m.z.w)
}

fn finite3(v: Vec3) -> bool {
    v.abs().cmple(Vec3::splat(F32_BIG)).all()
}

fn finite_quat(q: Vec4) -> bool {
    q.abs().cmple(Vec4::splat(F32_BIG)).all()
}

/// The inverse of an affine matrix, or all zeros where it has none. WGSL `affine_inverse`.
#[must_use]
pub fn affine_inverse(m: &Affine) -> Affine {
    let zero = Affine {
        x: Vec4::ZERO,
        y: Vec4::ZERO,
        z: Vec4::ZERO,
    };
    let (r0, r1, r2) = (m.x.truncate(), m.y.truncate(), m.z.truncate());
    let (c0, c1, c2) = (r1.cross(r2), r2.cross(r0), r0.cross(r1));
    let det = r0.dot(c0);
    if !(det.abs() > 0.0) || !(det.abs() <= F32_BIG) {
        return zero;
    }
    let k = 1.0 / det;
    let i0 = Vec3::new(c0.x, c1.x, c2.x) * k;
    let i1 = Vec3::new(c0.y, c1.y, c2.y) * k;
    let i2 = Vec3::new(c0.z, c1.z, c2.z) * k;
    let t = translation(m);
    let inv = Affine {
        x: i0.extend(-i0.dot(t)),
        y: i1.extend(-i1.dot(t)),
        z: i2.extend(-i2.dot(t)),
    };
    if !finite3(inv.x.truncate())
        || !finite3(inv.y.truncate())
        || !finite3(inv.z.truncate())
        || !finite3(translation(&inv))
    {
        return zero;
    }
    inv
}

/// The shorter rotation taking direction `from_dir` onto `to_dir`. WGSL `quat_from_vectors`.
#[must_use]
pub fn quat_from_vectors(from_dir: Vec3, to_dir: Vec3) -> Vec4 {
    let norms = (from_dir.dot(from_dir) * to_dir.dot(to_dir)).sqrt();
    if !(norms > 0.0) || !(norms <= F32_BIG) {
        return IDENTITY_QUAT;
    }
    let real = norms + from_dir.dot(to_dir);
    if real < 1e-6 * norms {
        let mut axis = Vec3::new(0.0, -from_dir.z, from_dir.y);
        if from_dir.x.abs() > from_dir.z.abs() {
            axis = Vec3::new(-from_dir.y, from_dir.x, 0.0);
        }
        return axis.extend(0.0).normalize();
    }
    from_dir.cross(to_dir).extend(real).normalize()
}

fn quat_from_axis_angle(axis: Vec3, angle: f32) -> Vec4 {
    let h = 0.5 * angle;
    (axis * h.sin()).extend(h.cos())
}

/// Rotation about `axis` by the angle between the unit vectors `a` and `b`. WGSL `quat_turning`.
fn quat_turning(axis: Vec3, a: Vec3, b: Vec3) -> Vec4 {
    quat_from_axis_angle(axis, a.cross(b).length().atan2(a.dot(b)))
}

fn weighted_correction(q: Vec4, weight: f32) -> Vec4 {
    if !(weight > 0.0) {
        return IDENTITY_QUAT;
    }
    let f = if q.w < 0.0 { -q } else { q };
    if weight < 1.0 {
        return (IDENTITY_QUAT * (1.0 - weight) + f * weight).normalize();
    }
    f
}

fn mid_rotation(
    job: &TwoBoneJob,
    (start_mid_ms, mid_end_ms): (Vec3, Vec3),
    (a2, b2): (f32, f32),
    (mid_ss, mid_end_ss): (Vec3, Vec3),
    target_len2: f32,
) -> Vec4 {
    let half_rlen = 0.5 / (a2.sqrt() * b2.sqrt());
    let cos_corrected = ((a2 + b2 - target_len2) * half_rlen).clamp(-1.0, 1.0);
    let corrected = cos_corrected.acos();
    let mut initial = (-mid_ss).cross(mid_end_ss).length().atan2((-mid_ss).dot(mid_end_ss));
    if start_mid_ms.cross(job.mid_axis).dot(mid_end_ms) < 0.0 {
        initial = -initial;
    }
    quat_from_axis_angle(job.mid_axis, corrected - initial)
}

/// Two-bone IK: ozz-animation's `IKTwoBoneJob`. WGSL `two_bone_ik`.
#[must_use]
pub fn two_bone_ik(job: &TwoBoneJob) -> TwoBoneCorrection {
    let none = TwoBoneCorrection {
        start: IDENTITY_QUAT,
        mid: IDENTITY_QUAT,
        reached: false,
    };
    if !(job.weight > 0.0) {
        return none;
    }
    let inv_start = affine_inverse(&job.start);
    let inv_mid = affine_inverse(&job.mid);
    let start_ms = inv_mid.transform_point3(translation(&job.start));
    let end_ms = inv_mid.transform_point3(translation(&job.end));
    let mid_ss = inv_start.transform_point3(translation(&job.mid));
    let end_ss = inv_start.transform_point3(translation(&job.end));
    let start_mid_ms = -start_ms;
    let mid_end_ms = end_ms;
    let mid_end_ss = end_ss - mid_ss;
    let a2 = mid_ss.dot(mid_ss);
    let b2 = mid_end_ss.dot(mid_end_ss);
    if !(a2 > 0.0) || !(b2 > 0.0) || !(a2 <= F32_BIG) || !(b2 <= F32_BIG) || !(start_mid_ms.dot(start_mid_ms) > 0.0) {
        return none;
    }

    let target_original = inv_start.transform_point3(job.target);
    let target_original_len2 = target_original.dot(target_original);
    let (a, b) = (a2.sqrt(), b2.sqrt());
    let target_original_len = target_original_len2.sqrt();
    let chain = a + b;
    let da = chain * job.soften.clamp(0.0, 1.0);
    let ds = chain - da;
    let mut target_ss = target_original;
    let mut target_len2 = target_original_len2;
    if target_original_len > da && target_original_len > 0.0 && ds > 0.0 {
        let alpha = (target_original_len - da) / ds;
        let op = alpha + 3.0;
        let op2 = op * op;
        let ratio = 81.0 / (op2 * op2);
        let len = da + ds - ds * ratio;
        target_len2 = len * len;
        target_ss = target_original * (len / target_original_len);
    }
    let reached = !(target_original_len > da) && target_original_len > (a - b).abs() && job.weight >= 1.0;

    let mid_rot = mid_rotation(
        job,
        (start_mid_ms, mid_end_ms),
        (a2, b2),
        (mid_ss, mid_end_ss),
        target_len2,
    );

    let pole_ss = inv_start.transform_vector3(job.pole);
    let mid_end_final = inv_start.transform_vector3(job.mid.transform_vector3(quat_rotate(mid_rot, mid_end_ms)));
    let end_to_target = quat_from_vectors(mid_ss + mid_end_final, target_ss);
    let mut start_rot = end_to_target;
    if target_len2 > 0.0 {
        let axis = target_ss * (1.0 / target_len2.sqrt());
        let ref_normal = target_ss.cross(pole_ss);
        let ref_len2 = ref_normal.dot(ref_normal);
        let mid_axis_ss = inv_start.transform_vector3(job.mid.transform_vector3(job.mid_axis));
        let joint_normal = quat_rotate(end_to_target, mid_axis_ss);
        let joint_len2 = joint_normal.dot(joint_normal);
        let mut rotate_plane = IDENTITY_QUAT;
        if ref_len2 > 0.0 && joint_len2 > 0.0 {
            let plane_axis = if joint_normal.dot(pole_ss) < 0.0 { -axis } else { axis };
            rotate_plane = quat_turning(
                plane_axis,
                ref_normal * (1.0 / ref_len2.sqrt()),
                joint_normal * (1.0 / joint_len2.sqrt()),
            );
        }
        start_rot = quat_mul(rotate_plane, end_to_target);
        if job.twist != 0.0 {
            start_rot = quat_mul(quat_from_axis_angle(axis, job.twist), start_rot);
        }
    }

    let out = TwoBoneCorrection {
        start: weighted_correction(start_rot, job.weight),
        mid: weighted_correction(mid_rot, job.weight),
        reached,
    };
    if !finite_quat(out.start) || !finite_quat(out.mid) {
        return none;
    }
    out
}

/// Aim IK: ozz-animation's `IKAimJob`. WGSL `aim_ik`.
#[must_use]
pub fn aim_ik(job: &AimJob) -> AimCorrection {
    let inv = affine_inverse(&job.joint);
    let to_target = inv.transform_point3(job.target);
    let to_target_len2 = to_target.dot(to_target);
    let ao = job.forward.dot(job.offset);
    let ac2 = job.offset.dot(job.offset) - ao * ao;
    let reached = !(ac2 > to_target_len2);
    if !reached || !(to_target_len2 > 0.0) || !(to_target_len2 <= F32_BIG) {
        return AimCorrection {
            rotation: IDENTITY_QUAT,
            reached,
        };
    }
    let ai = (to_target_len2 - ac2).sqrt();
    let offset_forward = job.offset + job.forward * (ai - ao);
    let to_target_rot = quat_from_vectors(offset_forward, to_target);

    let corrected_up = quat_rotate(to_target_rot, job.up);
    let pole_js = inv.transform_vector3(job.pole);
    let ref_normal = pole_js.cross(to_target);
    let joint_normal = corrected_up.cross(to_target);
    let ref_len2 = ref_normal.dot(ref_normal);
    let joint_len2 = joint_normal.dot(joint_normal);
    let axis = to_target * (1.0 / to_target_len2.sqrt());
    let mut rotate_plane = IDENTITY_QUAT;
    if ref_len2 > 0.0 && joint_len2 > 0.0 {
        let plane_axis = if ref_normal.dot(corrected_up) < 0.0 {
            -axis
        } else {
            axis
        };
        rotate_plane = quat_turning(
            plane_axis,
            joint_normal * (1.0 / joint_len2.sqrt()),
            ref_normal * (1.0 / ref_len2.sqrt()),
        );
    }
    let mut q = quat_mul(rotate_plane, to_target_rot);
    if job.twist != 0.0 {
        q = quat_mul(quat_from_axis_angle(axis, job.twist), q);
    }
    let out = weighted_correction(q, job.weight);
    if !finite_quat(out) {
        return AimCorrection {
            rotation: IDENTITY_QUAT,
            reached: false,
        };
    }
    AimCorrection { rotation: out, reached }
}
