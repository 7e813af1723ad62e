// Inverse kinematics solvers with ozz-animation's semantics (IKTwoBoneJob, IKAimJob): model-space
// matrices in, a rotation correction per joint out, in the joint's own frame. Every degenerate
// input (a joint with no inverse, a bone of zero length, a target on the joint, a pole along the
// target, anything not finite) gives a defined correction, the identity where nothing better is
// defined. Rust mirror: cpu::ik_solve (same names, same order of operations); f64 oracle:
// reference::two_bone_ik, reference::aim_ik.

#define_import_path wgpu_anim::ik_solve

#import wgpu_anim::types::Affine
#import wgpu_anim::math::{quat_mul, quat_rotate}

const IDENTITY_QUAT: vec4<f32> = vec4<f32>(0.0, 0.0, 0.0, 1.0);

// Rust: ik::TwoBoneJob.
struct TwoBoneJob {
    start: Affine,
    mid: Affine,
    end: Affine,
    aim_at: vec3<f32>,
    pole: vec3<f32>,
    mid_axis: vec3<f32>,
    twist: f32,
    soften: f32,
    weight: f32,
}

// Rust: ik::AimJob.
struct AimJob {
    joint: Affine,
    aim_at: vec3<f32>,
    forward: vec3<f32>,
    offset: vec3<f32>,
    up: vec3<f32>,
    pole: vec3<f32>,
    twist: f32,
    weight: f32,
}

// Corrections of a two-bone chain's start and mid joints, and whether the target was reached.
struct TwoBoneCorrection {
    start: vec4<f32>,
    mid: vec4<f32>,
    reached: bool,
}

// An aim correction, and whether the target could be aimed at.
struct AimCorrection {
    rotation: vec4<f32>,
    reached: bool,
}

fn affine_translation(m: Affine) -> vec3<f32> {
    return vec3<f32>(m.x.w, m.y.w, m.z.w);
}

fn transform_point(m: Affine, p: vec3<f32>) -> vec3<f32> {
    let h = vec4<f32>(p, 1.0);
    return vec3<f32>(dot(m.x, h), dot(m.y, h), dot(m.z, h));
}

fn transform_vector(m: Affine, v: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(dot(m.x.xyz, v), dot(m.y.xyz, v), dot(m.z.xyz, v));
}

// Whether every component is finite (false for NaN too).
fn finite3(v: vec3<f32>) -> bool {
    return all(abs(v) <= vec3<f32>(3.4e38));
}

// The inverse of an affine matrix, or all zeros where it has none (a determinant of 0 or not
// finite, or a result that is not finite). Rust: cpu::affine_inverse.
fn affine_inverse(m: Affine) -> Affine {
    let zero = Affine(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    let r0 = m.x.xyz;
    let r1 = m.y.xyz;
    let r2 = m.z.xyz;
    let c0 = cross(r1, r2);
    let c1 = cross(r2, r0);
    let c2 = cross(r0, r1);
    let det = dot(r0, c0);
    if (!(abs(det) > 0.0) || !(abs(det) <= 3.4e38)) {
        return zero;
    }
    let k = 1.0 / det;
    let i0 = vec3<f32>(c0.x, c1.x, c2.x) * k;
    let i1 = vec3<f32>(c0.y, c1.y, c2.y) * k;
    let i2 = vec3<f32>(c0.z, c1.z, c2.z) * k;
    let t = affine_translation(m);
    let inv = Affine(vec4<f32>(i0, -dot(i0, t)), vec4<f32>(i1, -dot(i1, t)), vec4<f32>(i2, -dot(i2, t)));
    if (!finite3(inv.x.xyz) || !finite3(inv.y.xyz) || !finite3(inv.z.xyz) || !finite3(vec3<f32>(inv.x.w, inv.y.w, inv.z.w))) {
        return zero;
    }
    return inv;
}

// The shorter rotation taking direction `from_dir` onto direction `to_dir` (neither need be unit): a half
// turn about an axis perpendicular to `from_dir` when they are opposite, the identity when either is
// zero. Rust: cpu::quat_from_vectors.
fn quat_from_vectors(from_dir: vec3<f32>, to_dir: vec3<f32>) -> vec4<f32> {
    let norms = sqrt(dot(from_dir, from_dir) * dot(to_dir, to_dir));
    if (!(norms > 0.0) || !(norms <= 3.4e38)) {
        return IDENTITY_QUAT;
    }
    let real = norms + dot(from_dir, to_dir);
    if (real < 1e-6 * norms) {
        var axis = vec3<f32>(0.0, -from_dir.z, from_dir.y);
        if (abs(from_dir.x) > abs(from_dir.z)) {
            axis = vec3<f32>(-from_dir.y, from_dir.x, 0.0);
        }
        return normalize(vec4<f32>(axis, 0.0));
    }
    return normalize(vec4<f32>(cross(from_dir, to_dir), real));
}

// Rotation by `angle` radians about the unit `axis`.
fn quat_from_axis_angle(axis: vec3<f32>, angle: f32) -> vec4<f32> {
    let h = 0.5 * angle;
    return vec4<f32>(axis * sin(h), cos(h));
}

// Rotation about the unit `axis` by the angle between the unit vectors `a` and `b` (ozz's acos of
// their dot product, taken as atan2 of the sine and the cosine: acos would turn a last-bit
// difference of two nearly equal normals into a turn of 1e-4 rad and more).
fn quat_turning(axis: vec3<f32>, a: vec3<f32>, b: vec3<f32>) -> vec4<f32> {
    return quat_from_axis_angle(axis, atan2(length(cross(a, b)), dot(a, b)));
}

// A correction with w >= 0, nlerped from the identity by `weight` when it is below 1; the
// identity for a weight of 0 or less, or NaN.
fn weighted_correction(q: vec4<f32>, weight: f32) -> vec4<f32> {
    if (!(weight > 0.0)) {
        return IDENTITY_QUAT;
    }
    var f = q;
    if (f.w < 0.0) {
        f = -f;
    }
    if (weight < 1.0) {
        return normalize(mix(IDENTITY_QUAT, f, weight));
    }
    return f;
}

fn finite_quat(q: vec4<f32>) -> bool {
    return all(abs(q) <= vec4<f32>(3.4e38));
}

// The rotation about `mid_axis` that bends the chain to the start-to-target length `target_len2`
// (squared), from the bones (a2, b2, squared, and the bones themselves, mid_ss and mid_end_ss, in
// start space). Rust: cpu::ik_solve::mid_rotation.
fn mid_rotation(job: TwoBoneJob, start_mid_ms: vec3<f32>, mid_end_ms: vec3<f32>, a2: f32, b2: f32, mid_ss: vec3<f32>, mid_end_ss: vec3<f32>, target_len2: f32) -> vec4<f32> {
    let half_rlen = 0.5 / (sqrt(a2) * sqrt(b2));
    let cos_corrected = clamp((a2 + b2 - target_len2) * half_rlen, -1.0, 1.0);
    let corrected = acos(cos_corrected);
    // The angle the chain has, from its bones rather than by the law of cosines, whose acos
    // turns a last-bit difference into a large one at a straight knee.
    var initial = atan2(length(cross(-mid_ss, mid_end_ss)), dot(-mid_ss, mid_end_ss));
    // Bent backward (against mid_axis): the initial angle counts as negative.
    if (dot(cross(start_mid_ms, job.mid_axis), mid_end_ms) < 0.0) {
        initial = -initial;
    }
    return quat_from_axis_angle(job.mid_axis, corrected - initial);
}

// Two-bone IK: ozz's IKTwoBoneJob. Rust: cpu::two_bone_ik.
fn two_bone_ik(job: TwoBoneJob) -> TwoBoneCorrection {
    let none = TwoBoneCorrection(IDENTITY_QUAT, IDENTITY_QUAT, false);
    if (!(job.weight > 0.0)) {
        return none;
    }
    let inv_start = affine_inverse(job.start);
    let inv_mid = affine_inverse(job.mid);
    // Positions in the mid joint's space (_ms) and the start joint's (_ss).
    let start_ms = transform_point(inv_mid, affine_translation(job.start));
    let end_ms = transform_point(inv_mid, affine_translation(job.end));
    let mid_ss = transform_point(inv_start, affine_translation(job.mid));
    let end_ss = transform_point(inv_start, affine_translation(job.end));
    let start_mid_ms = -start_ms;
    let mid_end_ms = end_ms;
    let mid_end_ss = end_ss - mid_ss;
    let a2 = dot(mid_ss, mid_ss);
    let b2 = dot(mid_end_ss, mid_end_ss);
    // A joint with no inverse or a bone of zero length: no chain to bend.
    if (!(a2 > 0.0) || !(b2 > 0.0) || !(a2 <= 3.4e38) || !(b2 <= 3.4e38) || !(dot(start_mid_ms, start_mid_ms) > 0.0)) {
        return none;
    }

    // Softens the target past `soften` of the chain's length: 1 - 3^4 / (alpha + 3)^4 of the
    // rest, whose slope at 0 is 1 and which never reaches 1.
    let target_original = transform_point(inv_start, job.aim_at);
    let target_original_len2 = dot(target_original, target_original);
    let a = sqrt(a2);
    let b = sqrt(b2);
    let target_original_len = sqrt(target_original_len2);
    let chain = a + b;
    let da = chain * clamp(job.soften, 0.0, 1.0);
    let ds = chain - da;
    var target_ss = target_original;
    var target_len2 = target_original_len2;
    if (target_original_len > da && target_original_len > 0.0 && ds > 0.0) {
        let alpha = (target_original_len - da) / ds;
        let op = alpha + 3.0;
        let op2 = op * op;
        let ratio = 81.0 / (op2 * op2);
        let len = da + ds - ds * ratio;
        target_len2 = len * len;
        target_ss = target_original * (len / target_original_len);
    }
    let reached = !(target_original_len > da) && target_original_len > abs(a - b) && job.weight >= 1.0;

    let mid_rot = mid_rotation(job, start_mid_ms, mid_end_ms, a2, b2, mid_ss, mid_end_ss, target_len2);

    // The start joint turns the bent chain's end onto the target, then turns the chain's plane
    // about the start-to-target line to face the pole.
    let pole_ss = transform_vector(inv_start, job.pole);
    let mid_end_final = transform_vector(inv_start, transform_vector(job.mid, quat_rotate(mid_rot, mid_end_ms)));
    let end_to_target = quat_from_vectors(mid_ss + mid_end_final, target_ss);
    var start_rot = end_to_target;
    if (target_len2 > 0.0) {
        let axis = target_ss * inverseSqrt(target_len2);
        let ref_normal = cross(target_ss, pole_ss);
        let ref_len2 = dot(ref_normal, ref_normal);
        let mid_axis_ss = transform_vector(inv_start, transform_vector(job.mid, job.mid_axis));
        let joint_normal = quat_rotate(end_to_target, mid_axis_ss);
        let joint_len2 = dot(joint_normal, joint_normal);
        // A pole along the target leaves the plane where the animation has it.
        var rotate_plane = IDENTITY_QUAT;
        if (ref_len2 > 0.0 && joint_len2 > 0.0) {
            var plane_axis = axis;
            if (dot(joint_normal, pole_ss) < 0.0) {
                plane_axis = -axis;
            }
            rotate_plane = quat_turning(plane_axis, ref_normal * inverseSqrt(ref_len2), joint_normal * inverseSqrt(joint_len2));
        }
        start_rot = quat_mul(rotate_plane, end_to_target);
        if (job.twist != 0.0) {
            start_rot = quat_mul(quat_from_axis_angle(axis, job.twist), start_rot);
        }
    }

    let out = TwoBoneCorrection(weighted_correction(start_rot, job.weight), weighted_correction(mid_rot, job.weight), reached);
    if (!finite_quat(out.start) || !finite_quat(out.mid)) {
        return none;
    }
    return out;
}

// Aim IK: ozz's IKAimJob. Rust: cpu::aim_ik.
fn aim_ik(job: AimJob) -> AimCorrection {
    let inv = affine_inverse(job.joint);
    let to_target = transform_point(inv, job.aim_at);
    let to_target_len2 = dot(to_target, to_target);
    // The forward ray from the offset meets the sphere of the target's distance (none when the
    // offset is farther from the joint than the target).
    let ao = dot(job.forward, job.offset);
    let ac2 = dot(job.offset, job.offset) - ao * ao;
    let reached = !(ac2 > to_target_len2);
    if (!reached || !(to_target_len2 > 0.0) || !(to_target_len2 <= 3.4e38)) {
        return AimCorrection(IDENTITY_QUAT, reached);
    }
    let ai = sqrt(to_target_len2 - ac2);
    let offset_forward = job.offset + job.forward * (ai - ao);
    let to_target_rot = quat_from_vectors(offset_forward, to_target);

    // Then turns about the aim line so that up faces the pole.
    let corrected_up = quat_rotate(to_target_rot, job.up);
    let pole_js = transform_vector(inv, job.pole);
    let ref_normal = cross(pole_js, to_target);
    let joint_normal = cross(corrected_up, to_target);
    let ref_len2 = dot(ref_normal, ref_normal);
    let joint_len2 = dot(joint_normal, joint_normal);
    let axis = to_target * inverseSqrt(to_target_len2);
    var rotate_plane = IDENTITY_QUAT;
    if (ref_len2 > 0.0 && joint_len2 > 0.0) {
        var plane_axis = axis;
        if (dot(ref_normal, corrected_up) < 0.0) {
            plane_axis = -axis;
        }
        rotate_plane = quat_turning(plane_axis, joint_normal * inverseSqrt(joint_len2), ref_normal * inverseSqrt(ref_len2));
    }
    var q = quat_mul(rotate_plane, to_target_rot);
    if (job.twist != 0.0) {
        q = quat_mul(quat_from_axis_angle(axis, job.twist), q);
    }
    let out = weighted_correction(q, job.weight);
    if (!finite_quat(out)) {
        return AimCorrection(IDENTITY_QUAT, false);
    }
    return AimCorrection(out, reached);
}
