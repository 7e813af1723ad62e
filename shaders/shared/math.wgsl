// Math shared by the stages. Rust mirrors: src/math.rs (same names, same order of operations).

#define_import_path wgpu_anim::math

#import wgpu_anim::types::{Affine, NLERP_THRESHOLD}

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

// Rotation interpolation along the shorter arc: slerp, or nlerp when the keys are nearly equal.
// Rust: math::quat_interp.
fn quat_interp(a: vec4<f32>, b_in: vec4<f32>, t: f32) -> vec4<f32> {
    var d = dot(a, b_in);
    var b = b_in;
    if (d < 0.0) {
        d = -d;
        b = -b;
    }
    if (d > NLERP_THRESHOLD) {
        return normalize(a + (b - a) * t);
    }
    let theta = acos(d);
    let inv_sin = 1.0 / sin(theta);
    let wa = sin((1.0 - t) * theta) * inv_sin;
    let wb = sin(t * theta) * inv_sin;
    return normalize(a * wa + b * wb);
}

// Cubic Hermite basis: weights of (p0, m0, p1, m1). Rust: math::hermite_basis.
fn hermite_basis(u: f32) -> vec4<f32> {
    let u2 = u * u;
    let u3 = u2 * u;
    return vec4<f32>(2.0 * u3 - 3.0 * u2 + 1.0, u3 - 2.0 * u2 + u, -2.0 * u3 + 3.0 * u2, u3 - u2);
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
