// Math shared by the stages. Rust mirrors: src/math.rs (same names, same order of operations).

#define_import_path wgpu_anim::math

#import wgpu_anim::types::{Affine, DualQuat, POLAR_FLAT_DET, POLAR_ITERATIONS, POLAR_MIN_COFACTOR, POLAR_TOLERANCE, WORKGROUP_SIZE}

// T(t) * R(q) * S(s) as a 3x4 affine matrix. Rust: Affine::from_sqt.
fn affine_from_sqt(t: vec3<f32>, q: vec4<f32>, s: vec3<f32>) -> Affine {
    let x2 = q.x + q.x;
    let y2 = q.y + q.y;
    let z2 = q.z + q.z;
    let xx = q.x * x2;
    let yy = q.y * y2;
    let zz = q.z * z2;
    let xy = q.x * y2;
    let xz = q.x * z2;
    let yz = q.y * z2;
    let wx = q.w * x2;
    let wy = q.w * y2;
    let wz = q.w * z2;
    return Affine(
        vec4<f32>((1.0 - (yy + zz)) * s.x, (xy - wz) * s.y, (xz + wy) * s.z, t.x),
        vec4<f32>((xy + wz) * s.x, (1.0 - (xx + zz)) * s.y, (yz - wx) * s.z, t.y),
        vec4<f32>((xz - wy) * s.x, (yz + wx) * s.y, (1.0 - (xx + yy)) * s.z, t.z),
    );
}

fn affine_mul_row(b: Affine, a: vec4<f32>) -> vec4<f32> {
    return b.x * a.x + b.y * a.y + b.z * a.z + vec4<f32>(0.0, 0.0, 0.0, a.w);
}

// a * b. Rust: Affine::mul.
fn affine_mul(a: Affine, b: Affine) -> Affine {
    return Affine(affine_mul_row(b, a.x), affine_mul_row(b, a.y), affine_mul_row(b, a.z));
}

// Slerp along the shorter arc without trigonometry (a rotation track's value between two keys,
// raw linear and packed): the angle θ = acos(d), d = |a · b|, as √(1 − d) P(d) with P of degree 6
// fitted by least squares (within 1e-7 rad), and the weights sin(uθ) / sin θ = u S(uθ) / S(θ), where
// S(x) = sin(x) / x by its Taylor series to x¹⁰ (within 4e-8 for x ≤ π/2); the common 1 / S(θ)
// goes in the normalization, so nothing divides by 0 as θ → 0. Within 3e-7 rad of exact
// slerp for any two unit quaternions, in a score of multiplies: an acos and two sines cost more
// than the rest of a track's sampling on a GPU without fast transcendentals (lavapipe).
// Rust: math::fast_slerp.
fn fast_slerp(a: vec4<f32>, b_in: vec4<f32>, t: f32) -> vec4<f32> {
    let d = dot(a, b_in);
    let b = select(b_in, -b_in, d < 0.0);
    let x = min(abs(d), 1.0);
    let p = ACOS_P[0] + x * (ACOS_P[1] + x * (ACOS_P[2] + x * (ACOS_P[3] + x * (ACOS_P[4] + x * (ACOS_P[5] + x * ACOS_P[6])))));
    let theta = sqrt(1.0 - x) * p;
    return normalize(a * ((1.0 - t) * sin_over_x((1.0 - t) * theta)) + b * (t * sin_over_x(t * theta)));
}

// sin(x) / x for 0 ≤ x ≤ π/2, by its Taylor series to x¹⁰. Rust: math::sin_over_x.
fn sin_over_x(x: f32) -> f32 {
    let y = x * x;
    return 1.0 + y * (-1.0 / 6.0 + y * (1.0 / 120.0 + y * (-1.0 / 5040.0 + y * (1.0 / 362880.0 - y * (1.0 / 39916800.0)))));
}

// fast_slerp's acos(d) / √(1 − d), coefficients of d⁰ to d⁶ (Rust: math::ACOS_P).
const ACOS_P: array<f32, 7> = array<f32, 7>(1.5707964, -0.21459004, 0.08882192, -0.04913039, 0.027619276, -0.011862981, 0.002560671);

// Cubic Hermite basis: weights of (p0, m0, p1, m1). Rust: math::hermite_basis.
fn hermite_basis(u: f32) -> vec4<f32> {
    let u2 = u * u;
    let u3 = u2 * u;
    return vec4<f32>(2.0 * u3 - 3.0 * u2 + 1.0, u3 - 2.0 * u2 + u, -2.0 * u3 + 3.0 * u2, u3 - u2);
}

// Threads per character in the passes that run a workgroup per character, threads over its
// joints (sample, ik, palette, fused): a workgroup of WORKGROUP_SIZE (64) for a GPU; with
// NARROW_THREADS, one SIMD group of a CPU adapter, which runs a workgroup's SIMD groups one
// after another, each through every step of the pass. Rust: gpu::CharacterThreads,
// layout::NARROW_THREADS.
#ifdef NARROW_THREADS
const CHARACTER_THREADS: u32 = 8u;
#else
const CHARACTER_THREADS: u32 = WORKGROUP_SIZE;
#endif

// With THREAD_PER_CHARACTER (and NARROW_THREADS; Rust: gpu::CharacterThreads::One) each thread of
// such a workgroup works on a character of its own, all of its joints in turn: a CPU adapter's
// SIMD lanes then run eight characters' same joint together, where they would run one
// character's eight joints, and no step of a character waits on a barrier for another thread.
// CHARACTERS_PER_WORKGROUP characters to a workgroup, a thread's joints JOINT_STRIDE apart from
// its first (first_joint). Rust: CharacterThreads::characters_per_workgroup.
#ifdef THREAD_PER_CHARACTER
const CHARACTERS_PER_WORKGROUP: u32 = 8u;
const_assert CHARACTERS_PER_WORKGROUP == CHARACTER_THREADS;
const JOINT_STRIDE: u32 = 1u;
#else
const CHARACTERS_PER_WORKGROUP: u32 = 1u;
const JOINT_STRIDE: u32 = CHARACTER_THREADS;
#endif

// The character (its place among those the pass works on) thread `lid` of a workgroup works on.
fn workgroup_character(wg: vec3<u32>, groups: vec3<u32>, lid: u32) -> u32 {
#ifdef THREAD_PER_CHARACTER
    return workgroup_linear(wg, groups) * CHARACTERS_PER_WORKGROUP + lid;
#else
    return workgroup_linear(wg, groups);
#endif
}

// Thread `lid`'s first joint of its character: every joint from the first, JOINT_STRIDE apart.
fn first_joint(lid: u32) -> u32 {
#ifdef THREAD_PER_CHARACTER
    return 0u;
#else
    return lid;
#endif
}

// Index of the instance a workgroup works on, for dispatches split over x and y.
fn workgroup_linear(wg: vec3<u32>, groups: vec3<u32>) -> u32 {
    return wg.y * groups.x + wg.x;
}

// Hamilton product a * b (b applied first). Rust: glam's Quat * Quat.
fn quat_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(
        a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
    );
}

// The inverse of a unit quaternion.
fn quat_conjugate(q: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(-q.xyz, q.w);
}

// v rotated by the unit quaternion q. Rust: math::quat_rotate.
fn quat_rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let u = cross(q.xyz, v) * 2.0;
    return v + u * q.w + cross(q.xyz, u);
}

// The 3x3 part of m as rows. Rust: math::affine_rows3.
fn affine_rows3(m: Affine) -> array<vec3<f32>, 3> {
    return array<vec3<f32>, 3>(m.x.xyz, m.y.xyz, m.z.xyz);
}

// The cofactor matrix of the 3x3 matrix with rows x (det x * x^-T), as rows.
fn cofactor_rows(x: array<vec3<f32>, 3>) -> array<vec3<f32>, 3> {
    return array<vec3<f32>, 3>(cross(x[1], x[2]), cross(x[2], x[0]), cross(x[0], x[1]));
}

// The rotation of the polar decomposition A = R S (rows), by Higham's scaled Newton iteration
// from A scaled to a Frobenius norm of 1 times the sign of its determinant, or, for a flat A,
// from A plus its normalized cofactor matrix; the identity for an A of rank one or zero. Rust:
// math::polar_rotation.
fn polar_rotation(a: array<vec3<f32>, 3>) -> array<vec3<f32>, 3> {
    let identity = array<vec3<f32>, 3>(vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(0.0, 1.0, 0.0), vec3<f32>(0.0, 0.0, 1.0));
    let am = max(max(abs(a[0]), abs(a[1])), abs(a[2]));
    let m = max(max(am.x, am.y), am.z);
    // Only a non-zero matrix whose largest element is at most 1e38 (finite, with room) goes on.
    if (!(m > 0.0) || !(m <= 1e38)) {
        return identity;
    }
    let s = array<vec3<f32>, 3>(a[0] / m, a[1] / m, a[2] / m);
    let f = sqrt(dot(s[0], s[0]) + dot(s[1], s[1]) + dot(s[2], s[2]));
    var x = array<vec3<f32>, 3>(s[0] / f, s[1] / f, s[2] / f);
    let c0 = cofactor_rows(x);
    let d = dot(x[0], c0[0]);
    if (abs(d) > POLAR_FLAT_DET) {
        let sign = select(1.0, -1.0, d < 0.0);
        x = array<vec3<f32>, 3>(x[0] * sign, x[1] * sign, x[2] * sign);
    } else {
        let nc0 = sqrt(dot(c0[0], c0[0]) + dot(c0[1], c0[1]) + dot(c0[2], c0[2]));
        if (nc0 <= POLAR_MIN_COFACTOR) {
            return identity;
        }
        x = array<vec3<f32>, 3>(x[0] + c0[0] / nc0, x[1] + c0[1] / nc0, x[2] + c0[2] / nc0);
    }
    for (var k = 0u; k < POLAR_ITERATIONS; k += 1u) {
        let c = cofactor_rows(x);
        let det = dot(x[0], c[0]);
        let nx = sqrt(dot(x[0], x[0]) + dot(x[1], x[1]) + dot(x[2], x[2]));
        let nc = sqrt(dot(c[0], c[0]) + dot(c[1], c[1]) + dot(c[2], c[2]));
        let g = sqrt(nc / (det * nx));
        let ka = 0.5 * g;
        let kb = 0.5 / (g * det);
        let y = array<vec3<f32>, 3>(x[0] * ka + c[0] * kb, x[1] * ka + c[1] * kb, x[2] * ka + c[2] * kb);
        let dv = max(max(abs(y[0] - x[0]), abs(y[1] - x[1])), abs(y[2] - x[2]));
        let change = max(max(dv.x, dv.y), dv.z);
        x = y;
        if (!(change > POLAR_TOLERANCE)) {
            break;
        }
    }
    return x;
}

// The unit quaternion of the rotation matrix with rows r (Shepperd's method). Rust:
// math::quat_from_rotation.
fn quat_from_rotation(r: array<vec3<f32>, 3>) -> vec4<f32> {
    let m00 = r[0].x;
    let m11 = r[1].y;
    let m22 = r[2].z;
    let trace = m00 + m11 + m22;
    var q: vec4<f32>;
    if (trace > 0.0) {
        let s = sqrt(trace + 1.0) * 2.0;
        q = vec4<f32>((r[2].y - r[1].z) / s, (r[0].z - r[2].x) / s, (r[1].x - r[0].y) / s, 0.25 * s);
    } else if (m00 > m11 && m00 > m22) {
        let s = sqrt(1.0 + m00 - m11 - m22) * 2.0;
        q = vec4<f32>(0.25 * s, (r[0].y + r[1].x) / s, (r[0].z + r[2].x) / s, (r[2].y - r[1].z) / s);
    } else if (m11 > m22) {
        let s = sqrt(1.0 + m11 - m00 - m22) * 2.0;
        q = vec4<f32>((r[0].y + r[1].x) / s, 0.25 * s, (r[1].z + r[2].y) / s, (r[0].z - r[2].x) / s);
    } else {
        let s = sqrt(1.0 + m22 - m00 - m11) * 2.0;
        q = vec4<f32>((r[0].z + r[2].x) / s, (r[1].z + r[2].y) / s, 0.25 * s, (r[1].x - r[0].y) / s);
    }
    return normalize(q);
}

// K as a dual quaternion and a symmetric stretch S = R^T A. Rust: math::DualQuat::from_affine.
fn dual_quat_from_affine(k: Affine) -> DualQuat {
    let a = affine_rows3(k);
    let q = quat_from_rotation(polar_rotation(a));
    let r = affine_rows3(affine_from_sqt(vec3<f32>(0.0), q, vec3<f32>(1.0)));
    let s00 = r[0].x * a[0].x + r[1].x * a[1].x + r[2].x * a[2].x;
    let s11 = r[0].y * a[0].y + r[1].y * a[1].y + r[2].y * a[2].y;
    let s22 = r[0].z * a[0].z + r[1].z * a[1].z + r[2].z * a[2].z;
    let s01 = r[0].x * a[0].y + r[1].x * a[1].y + r[2].x * a[2].y;
    let s10 = r[0].y * a[0].x + r[1].y * a[1].x + r[2].y * a[2].x;
    let s02 = r[0].x * a[0].z + r[1].x * a[1].z + r[2].x * a[2].z;
    let s20 = r[0].z * a[0].x + r[1].z * a[1].x + r[2].z * a[2].x;
    let s12 = r[0].y * a[0].z + r[1].y * a[1].z + r[2].y * a[2].z;
    let s21 = r[0].z * a[0].y + r[1].z * a[1].y + r[2].z * a[2].y;
    let t = vec4<f32>(k.x.w, k.y.w, k.z.w, 0.0);
    return DualQuat(
        q,
        quat_mul(t, q) * 0.5,
        vec4<f32>(s00, s11, s22, 0.0),
        vec4<f32>(0.5 * (s01 + s10), 0.5 * (s02 + s20), 0.5 * (s12 + s21), 0.0),
    );
}
