//! Transforms and rotation interpolation shared by the CPU mirror of every stage.
//!
//! Conventions are glam's: column vectors (`v' = M v`), Hamilton quaternions, `a * b` applies `b`
//! first. A local joint pose is SQT, `P = T(t) · R(q) · S(s)`, mapping the joint's space to its
//! parent's. Affine matrices on the GPU are 3×4, stored as three rows ([`Affine`]).

use crate::layout::wgsl::wgsl_struct;
use glam::{Mat4, Quat, Vec3, Vec4};

/// A cubic rotation spline whose squared length is not above this (its tangents cancel its keys)
/// has no direction to normalize to: the sampler takes the two keys' own interpolation
/// ([`fast_slerp`]) there instead, on the GPU and the CPU alike. WGSL
/// `CUBIC_ROTATION_MIN_LENGTH2`.
pub const CUBIC_ROTATION_MIN_LENGTH2: f32 = 1e-12;

/// A local joint transform: scale, then rotate, then translate (SQT).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// Translation in the parent's space.
    pub translation: Vec3,
    /// Rotation, a unit quaternion.
    pub rotation: Quat,
    /// Non-uniform scale along the joint's own axes.
    pub scale: Vec3,
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    /// No translation, no rotation, unit scale.
    pub const IDENTITY: Self = Self {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    /// A transform from its three parts.
    #[must_use]
    pub const fn new(translation: Vec3, rotation: Quat, scale: Vec3) -> Self {
        Self {
            translation,
            rotation,
            scale,
        }
    }

    /// A pure translation.
    #[must_use]
    pub const fn from_translation(translation: Vec3) -> Self {
        Self::new(translation, Quat::IDENTITY, Vec3::ONE)
    }

    /// `parent_from_joint` as a 4×4 matrix.
    #[must_use]
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// True when every component is finite.
    #[must_use]
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite() && self.scale.is_finite()
    }
}

wgsl_struct! {
    /// An affine matrix as the GPU stores it: three rows of `[m_i0, m_i1, m_i2, t_i]`; the fourth
    /// row is implicitly `[0, 0, 0, 1]`. WGSL `Affine`, whose declaration is made from this one
    /// ([`crate::layout::generated`]).
    #[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct Affine as "Affine" {
        /// First row.
        pub x: Vec4,
        /// Second row.
        pub y: Vec4,
        /// Third row.
        pub z: Vec4,
    }
}
const _: () = assert!(std::mem::size_of::<Affine>() == 48);

impl Affine {
    /// The identity matrix.
    pub const IDENTITY: Self = Self {
        x: Vec4::X,
        y: Vec4::Y,
        z: Vec4::Z,
    };

    /// The 3×4 part of an affine 4×4 matrix (its last row is dropped).
    #[must_use]
    pub fn from_mat4(m: &Mat4) -> Self {
        Self {
            x: m.row(0),
            y: m.row(1),
            z: m.row(2),
        }
    }

    /// The 4×4 matrix with the implicit last row `[0, 0, 0, 1]`.
    #[must_use]
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_cols_array_2d(&[
            self.x.to_array(),
            self.y.to_array(),
            self.z.to_array(),
            [0.0, 0.0, 0.0, 1.0],
        ])
        .transpose()
    }

    /// `T(t) · R(q) · S(s)` — the same operations, in the same order, as WGSL `affine_from_sqt`.
    #[must_use]
    pub fn from_sqt(translation: Vec3, q: Quat, scale: Vec3) -> Self {
        let (x, y, z, w) = (q.x, q.y, q.z, q.w);
        let (x2, y2, z2) = (x + x, y + y, z + z);
        let (xx, yy, zz) = (x * x2, y * y2, z * z2);
        let (xy, xz, yz) = (x * y2, x * z2, y * z2);
        let (wx, wy, wz) = (w * x2, w * y2, w * z2);
        Self {
            x: Vec4::new(
                (1.0 - (yy + zz)) * scale.x,
                (xy - wz) * scale.y,
                (xz + wy) * scale.z,
                translation.x,
            ),
            y: Vec4::new(
                (xy + wz) * scale.x,
                (1.0 - (xx + zz)) * scale.y,
                (yz - wx) * scale.z,
                translation.y,
            ),
            z: Vec4::new(
                (xz - wy) * scale.x,
                (yz + wx) * scale.y,
                (1.0 - (xx + yy)) * scale.z,
                translation.z,
            ),
        }
    }

    /// `self * rhs` — the same operations, in the same order, as WGSL `affine_mul`.
    #[must_use]
    pub fn mul(&self, rhs: &Affine) -> Affine {
        let row = |a: Vec4| -> Vec4 { rhs.x * a.x + rhs.y * a.y + rhs.z * a.z + Vec4::new(0.0, 0.0, 0.0, a.w) };
        Affine {
            x: row(self.x),
            y: row(self.y),
            z: row(self.z),
        }
    }

    /// Transforms a point (w = 1).
    #[must_use]
    pub fn transform_point3(&self, p: Vec3) -> Vec3 {
        let p = p.extend(1.0);
        Vec3::new(self.x.dot(p), self.y.dot(p), self.z.dot(p))
    }

    /// Transforms a direction (w = 0).
    #[must_use]
    pub fn transform_vector3(&self, v: Vec3) -> Vec3 {
        let v = v.extend(0.0);
        Vec3::new(self.x.dot(v), self.y.dot(v), self.z.dot(v))
    }

    /// Largest absolute difference of any element.
    #[must_use]
    pub fn max_abs_diff(&self, other: &Affine) -> f32 {
        let d = [
            (self.x - other.x).abs(),
            (self.y - other.y).abs(),
            (self.z - other.z).abs(),
        ];
        d.iter().map(|v| v.max_element()).fold(0.0, f32::max)
    }
}

/// `v` rotated by the unit quaternion `q` (x, y, z, w): `v + 2w (u × v) + 2 u × (u × v)`. WGSL
/// `quat_rotate`.
#[must_use]
pub fn quat_rotate(q: Vec4, v: Vec3) -> Vec3 {
    let u = q.truncate().cross(v) * 2.0;
    v + u * q.w + q.truncate().cross(u)
}

/// [`fast_slerp`]'s `acos(d) / √(1 − d)` on [0, 1], coefficients of d⁰ to d⁶: least squares,
/// within 1e-7 rad of acos (its constant term is π/2, acos(0)).
pub const ACOS_P: [f32; 7] = [
    std::f32::consts::FRAC_PI_2,
    -0.214_590_04,
    0.088_821_92,
    -0.049_130_39,
    0.027_619_276,
    -0.011_862_981,
    0.002_560_671,
];

/// `sin(x) / x` for 0 ≤ x ≤ π/2, by its Taylor series to x¹⁰ (within 4e-8). WGSL `sin_over_x`.
#[must_use]
pub fn sin_over_x(x: f32) -> f32 {
    let y = x * x;
    1.0 + y * (-1.0 / 6.0 + y * (1.0 / 120.0 + y * (-1.0 / 5040.0 + y * (1.0 / 362_880.0 - y * (1.0 / 39_916_800.0)))))
}

/// [`sin_over_x`] of four values at once, with the same operations in the same order.
#[must_use]
pub fn sin_over_x4(x: Vec4) -> Vec4 {
    let y = x * x;
    let c = |v: f32| Vec4::splat(v);
    c(1.0)
        + y * (c(-1.0 / 6.0)
            + y * (c(1.0 / 120.0) + y * (c(-1.0 / 5040.0) + y * (c(1.0 / 362_880.0) - y * c(1.0 / 39_916_800.0)))))
}

/// [`fast_slerp`]'s first half: `b` on `a`'s side of the sphere, and the angle between them.
#[must_use]
pub fn fast_slerp_angle(a: Vec4, b: Vec4) -> (Vec4, f32) {
    let d = a.dot(b);
    let b = if d < 0.0 { -b } else { b };
    let x = d.abs().min(1.0);
    let p = ACOS_P.iter().rev().fold(0.0, |acc, &c| c + x * acc);
    (b, (1.0 - x).sqrt() * p)
}

/// Slerp along the shorter arc without trigonometry: the angle `acos(d)`, `d = |a · b|`, as
/// `√(1 − d) P(d)` ([`ACOS_P`]), and the weights `sin(uθ) / sin θ = u S(uθ) / S(θ)`
/// ([`sin_over_x`]), the common `1 / S(θ)` left to the normalization. Within 3e-7 rad of
/// exact slerp for any two unit quaternions. A rotation track's value between two keys (linear
/// and compressed tracks); the same operations as WGSL `fast_slerp`.
#[must_use]
pub fn fast_slerp(a: Vec4, b: Vec4, t: f32) -> Vec4 {
    let (b, theta) = fast_slerp_angle(a, b);
    let v = a * ((1.0 - t) * sin_over_x((1.0 - t) * theta)) + b * (t * sin_over_x(t * theta));
    // WGSL's normalize, as a multiplication by the reciprocal length (one division, not four).
    v * v.length_recip()
}

/// Cubic Hermite basis at `u` ∈ [0, 1]: weights of (p0, m0, p1, m1), glTF's CUBICSPLINE.
#[must_use]
pub fn hermite_basis(u: f32) -> Vec4 {
    let u2 = u * u;
    let u3 = u2 * u;
    Vec4::new(
        2.0 * u3 - 3.0 * u2 + 1.0,
        u3 - 2.0 * u2 + u,
        -2.0 * u3 + 3.0 * u2,
        u3 - u2,
    )
}

/// Largest absolute difference between two matrices' elements.
#[must_use]
pub fn mat4_max_abs_diff(a: &Mat4, b: &Mat4) -> f32 {
    a.to_cols_array()
        .iter()
        .zip(b.to_cols_array().iter())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Most iterations of [`polar_rotation`]; a rigid matrix takes one, a joint scaled 1:1000 about
/// eight. WGSL `POLAR_ITERATIONS`.
pub const POLAR_ITERATIONS: u32 = 16;
/// [`polar_rotation`] stops when no element changed by more than this. WGSL `POLAR_TOLERANCE`.
pub const POLAR_TOLERANCE: f32 = 1e-6;
/// At or below this determinant of the matrix scaled to a Frobenius norm of 1, [`polar_rotation`]
/// takes the matrix as flat (a joint scaled to zero along one axis, or nearly): the sign of a
/// determinant so small is rounding noise. WGSL `POLAR_FLAT_DET`.
pub const POLAR_FLAT_DET: f32 = 1e-4;
/// At or below this norm of the cofactor matrix of the matrix scaled to a Frobenius norm of 1,
/// [`polar_rotation`] takes the matrix as of rank one or zero, with no rotation to find. WGSL
/// `POLAR_MIN_COFACTOR`.
pub const POLAR_MIN_COFACTOR: f32 = 1e-6;

/// The 3×3 part of `m` as rows.
#[must_use]
pub fn affine_rows3(m: &Affine) -> [Vec3; 3] {
    [m.x.truncate(), m.y.truncate(), m.z.truncate()]
}

/// The cofactor matrix of the 3×3 matrix with rows `x` (`det x · x⁻ᵀ`), as rows.
fn cofactor_rows(x: &[Vec3; 3]) -> [Vec3; 3] {
    [x[1].cross(x[2]), x[2].cross(x[0]), x[0].cross(x[1])]
}

/// The rotation of the polar decomposition `A = R S` of the 3×3 matrix with rows `a` (S
/// symmetric), as rows: Higham's Newton iteration `X ← ½ (γ X + X⁻ᵀ / γ)` with Frobenius scaling
/// `γ`. It starts from `A` scaled to a Frobenius norm of 1 (any scale, from denormals to 1e38,
/// gives the same rotation without overflow), times the sign of its determinant, so that `R` is
/// a proper rotation also when `A` mirrors (then `S` has a negative determinant). A flat `A`
/// (determinant at most [`POLAR_FLAT_DET`] once scaled) starts from `A` plus its normalized
/// cofactor matrix instead, which fills the flat direction so that the determinant is positive
/// whatever the rounding: `R` is then the rotation closest to `A`, and `Rᵀ A` still gives `A` back.
/// An `A` of rank one or zero, or with an element beyond 1e38 (infinite, say), gives the identity
/// (a pose within [`crate::reach`] has none, nor NaN). The same operations, in the same order, as
/// WGSL `polar_rotation`.
#[must_use]
pub fn polar_rotation(a: [Vec3; 3]) -> [Vec3; 3] {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let identity = [Vec3::X, Vec3::Y, Vec3::Z];
    let m = a[0].abs().max(a[1].abs()).max(a[2].abs()).max_element();
    // Only a non-zero matrix whose largest element is at most 1e38 (finite, with room) goes on.
    if m.partial_cmp(&0.0) != Some(Greater) || !matches!(m.partial_cmp(&1e38), Some(Less | Equal)) {
        return identity;
    }
    let s = [a[0] / m, a[1] / m, a[2] / m];
    let f = (s[0].dot(s[0]) + s[1].dot(s[1]) + s[2].dot(s[2])).sqrt();
    let mut x = [s[0] / f, s[1] / f, s[2] / f];
    let c = cofactor_rows(&x);
    let d = x[0].dot(c[0]);
    if d.abs() > POLAR_FLAT_DET {
        let sign = if d < 0.0 { -1.0 } else { 1.0 };
        x = [x[0] * sign, x[1] * sign, x[2] * sign];
    } else {
        let nc = (c[0].dot(c[0]) + c[1].dot(c[1]) + c[2].dot(c[2])).sqrt();
        if nc <= POLAR_MIN_COFACTOR {
            return identity;
        }
        x = [x[0] + c[0] / nc, x[1] + c[1] / nc, x[2] + c[2] / nc];
    }
    for _ in 0..POLAR_ITERATIONS {
        // X⁻ᵀ = cofactor(X) / det X.
        let c = cofactor_rows(&x);
        let det = x[0].dot(c[0]);
        let nx = (x[0].dot(x[0]) + x[1].dot(x[1]) + x[2].dot(x[2])).sqrt();
        let nc = (c[0].dot(c[0]) + c[1].dot(c[1]) + c[2].dot(c[2])).sqrt();
        let g = (nc / (det * nx)).sqrt();
        let (ka, kb) = (0.5 * g, 0.5 / (g * det));
        let y = [x[0] * ka + c[0] * kb, x[1] * ka + c[1] * kb, x[2] * ka + c[2] * kb];
        let change = (y[0] - x[0])
            .abs()
            .max((y[1] - x[1]).abs())
            .max((y[2] - x[2]).abs())
            .max_element();
        x = y;
        if change.partial_cmp(&POLAR_TOLERANCE) != Some(Greater) {
            break;
        }
    }
    x
}

/// The unit quaternion (x, y, z, w) of the rotation matrix with rows `r` (Shepperd's method: the
/// largest of `w`, `x`, `y`, `z` is found from the diagonal first), normalized. The same
/// operations, in the same order, as WGSL `quat_from_rotation`.
#[must_use]
pub fn quat_from_rotation(r: [Vec3; 3]) -> Vec4 {
    let (m00, m11, m22) = (r[0].x, r[1].y, r[2].z);
    let trace = m00 + m11 + m22;
    let q = if trace > 0.0 {
        let s = (trace + 1.0).sqrt() * 2.0;
        Vec4::new(
            (r[2].y - r[1].z) / s,
            (r[0].z - r[2].x) / s,
            (r[1].x - r[0].y) / s,
            0.25 * s,
        )
    } else if m00 > m11 && m00 > m22 {
        let s = (1.0 + m00 - m11 - m22).sqrt() * 2.0;
        Vec4::new(
            0.25 * s,
            (r[0].y + r[1].x) / s,
            (r[0].z + r[2].x) / s,
            (r[2].y - r[1].z) / s,
        )
    } else if m11 > m22 {
        let s = (1.0 + m11 - m00 - m22).sqrt() * 2.0;
        Vec4::new(
            (r[0].y + r[1].x) / s,
            0.25 * s,
            (r[1].z + r[2].y) / s,
            (r[0].z - r[2].x) / s,
        )
    } else {
        let s = (1.0 + m22 - m00 - m11).sqrt() * 2.0;
        Vec4::new(
            (r[0].z + r[2].x) / s,
            (r[1].z + r[2].y) / s,
            0.25 * s,
            (r[1].x - r[0].y) / s,
        )
    };
    q.normalize()
}

/// Hamilton product `a * b` on (x, y, z, w) vectors: `b` applied first. WGSL `quat_mul`.
#[must_use]
pub fn quat_mul(a: Vec4, b: Vec4) -> Vec4 {
    Vec4::new(
        a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
    )
}

wgsl_struct! {
    /// A skinning matrix as dual-quaternion skinning reads it (Kavan et al. 2008, with the
    /// "two-phase" handling of scale): `K = [R S | t]` becomes the unit dual quaternion of the rigid
    /// motion `(R, t)` and the symmetric stretch `S` (scale and shear, in bind space), so that
    /// `K p = R (S p) + t`. 64 bytes; the palette stage writes one per joint of each instance that
    /// skins with dual quaternions ([`crate::gpu::Skinning`]). WGSL `DualQuat`, whose declaration is
    /// made from this one ([`crate::layout::generated`]; the skinning module's own copy:
    /// `wgpu_anim_DualQuat`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct DualQuat as "DualQuat" {
        /// The rotation `R`, a unit quaternion (x, y, z, w).
        pub real: Vec4,
        /// `½ (t, 0) · real`: the translation.
        pub dual: Vec4,
        /// `S`'s diagonal (xx, yy, zz; w 0).
        pub stretch_diagonal: Vec4,
        /// `S`'s other elements (xy, xz, yz; w 0); `S` is symmetric.
        pub stretch_off: Vec4,
    }
}
const _: () = assert!(std::mem::size_of::<DualQuat>() == 64);

impl DualQuat {
    /// The dual quaternion of the identity.
    pub const IDENTITY: Self = Self {
        real: Vec4::W,
        dual: Vec4::ZERO,
        stretch_diagonal: Vec4::new(1.0, 1.0, 1.0, 0.0),
        stretch_off: Vec4::ZERO,
    };

    /// `K` as a dual quaternion and a stretch: the rotation of `K`'s polar decomposition
    /// ([`polar_rotation`], [`quat_from_rotation`]), the translation, and `S = Rᵀ A` (from the
    /// quaternion's own matrix, so that `R S` gives back `A`) made exactly symmetric. The same
    /// operations, in the same order, as WGSL `dual_quat_from_affine`.
    #[must_use]
    pub fn from_affine(k: &Affine) -> Self {
        let a = affine_rows3(k);
        let q = quat_from_rotation(polar_rotation(a));
        let r = affine_rows3(&Affine::from_sqt(Vec3::ZERO, Quat::from_vec4(q), Vec3::ONE));
        // S = Rᵀ A = Σ_k outer(r_k, a_k).
        let s = |i: usize, j: usize| r[0][i] * a[0][j] + r[1][i] * a[1][j] + r[2][i] * a[2][j];
        let t = Vec4::new(k.x.w, k.y.w, k.z.w, 0.0);
        Self {
            real: q,
            dual: quat_mul(t, q) * 0.5,
            stretch_diagonal: Vec4::new(s(0, 0), s(1, 1), s(2, 2), 0.0),
            stretch_off: Vec4::new(
                0.5 * (s(0, 1) + s(1, 0)),
                0.5 * (s(0, 2) + s(2, 0)),
                0.5 * (s(1, 2) + s(2, 1)),
                0.0,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Skinning matrices of every kind a skeleton makes: rigid, uniformly and non-uniformly
    /// scaled, sheared (a non-uniform parent scale under a rotated child), mirrored, nearly
    /// flat. The polar rotation is a proper rotation, `R S` gives back `A` with `S` symmetric,
    /// and it agrees with the f64 reference's (Newton without scaling, run to convergence).
    #[test]
    fn polar_rotation_splits_every_kind_of_skinning_matrix() {
        let mut seed = 0x2545_f491_u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            (seed as f32 / u32::MAX as f32) * 2.0 - 1.0
        };
        for k in 0..400 {
            let q = Quat::from_euler(glam::EulerRot::XYZ, 3.0 * next(), 3.0 * next(), 3.0 * next());
            let s = match k % 5 {
                0 => Vec3::ONE,
                1 => Vec3::splat(0.2 + 2.0 * next().abs()),
                2 => Vec3::new(0.3, 1.0, 2.5) * (1.0 + 0.5 * next()),
                3 => Vec3::new(-1.0, 1.0 + 0.3 * next(), 1.0),
                _ => Vec3::new(1.0, 1e-3, 1.0 + next().abs()),
            };
            let parent = Mat4::from_scale_rotation_translation(
                Vec3::new(1.0 + next().abs(), 0.5, 1.0),
                Quat::from_rotation_z(next()),
                Vec3::ZERO,
            );
            let m = parent * Mat4::from_scale_rotation_translation(s, q, Vec3::new(next(), next(), next()));
            let a = affine_rows3(&Affine::from_mat4(&m));
            let r = polar_rotation(a);
            let rm = glam::Mat3::from_cols(r[0], r[1], r[2]).transpose();
            assert!(
                (rm * rm.transpose()).abs_diff_eq(glam::Mat3::IDENTITY, 2e-5),
                "case {k}: not orthonormal {rm:?}"
            );
            assert!(
                (rm.determinant() - 1.0).abs() < 2e-5,
                "case {k}: det {}",
                rm.determinant()
            );
            let am = glam::Mat3::from_cols(a[0], a[1], a[2]).transpose();
            let stretch = rm.transpose() * am;
            let scale = am.to_cols_array().iter().fold(0.0f32, |m, v| m.max(v.abs()));
            assert!(
                stretch.abs_diff_eq(stretch.transpose(), 2e-5 * scale),
                "case {k}: S not symmetric {stretch:?}"
            );
            let (expected, _) = crate::reference::polar(am.as_dmat3());
            assert!(
                rm.as_dmat3().abs_diff_eq(expected, 1e-4),
                "case {k}: {rm:?} against the reference {expected:?}"
            );
            // And the dual quaternion gives back the matrix.
            let k3 = Affine::from_mat4(&m);
            let d = DualQuat::from_affine(&k3);
            let p = Vec3::new(0.4, -0.7, 0.2);
            let st = glam::Mat3::from_cols(
                Vec3::new(d.stretch_diagonal.x, d.stretch_off.x, d.stretch_off.y),
                Vec3::new(d.stretch_off.x, d.stretch_diagonal.y, d.stretch_off.z),
                Vec3::new(d.stretch_off.y, d.stretch_off.z, d.stretch_diagonal.z),
            );
            let t = quat_mul(d.dual, Vec4::new(-d.real.x, -d.real.y, -d.real.z, d.real.w)) * 2.0;
            let back = quat_rotate(d.real, st * p) + t.truncate();
            assert!(
                (back - k3.transform_point3(p)).abs().max_element() < 1e-4 * (1.0 + scale),
                "case {k}: {back} against {}",
                k3.transform_point3(p)
            );
        }
        // Flat (a joint scaled to zero along one axis, or nearly, either sign): the rotation, and
        // `R Rᵀ A` is `A` again.
        for y in [0.0, 1e-8, -1e-8, 1e-6, -1e-6] {
            let rot = glam::Mat3::from_rotation_z(0.5) * glam::Mat3::from_rotation_x(0.3);
            let a = rot * glam::Mat3::from_diagonal(Vec3::new(1.0, y, 2.0));
            let rows = [a.row(0), a.row(1), a.row(2)];
            let r = polar_rotation(rows);
            let rm = glam::Mat3::from_cols(r[0], r[1], r[2]).transpose();
            assert!(rm.abs_diff_eq(rot, 2e-5), "y {y}: {rm:?} against {rot:?}");
            let (expected, _) = crate::reference::polar(a.as_dmat3());
            assert!(
                rm.as_dmat3().abs_diff_eq(expected, 1e-4),
                "y {y}: the reference {expected:?}"
            );
        }
        // Any scale, tiny or huge: the same rotation, no NaN.
        let rot = glam::Mat3::from_rotation_y(1.0);
        for scale in [1e-30, 1e-20, 1.0, 1e20, 1e30] {
            let a = rot * scale;
            let r = polar_rotation([a.row(0), a.row(1), a.row(2)]);
            let rm = glam::Mat3::from_cols(r[0], r[1], r[2]).transpose();
            assert!(rm.abs_diff_eq(rot, 1e-5), "scale {scale}: {rm:?}");
        }
        // Rank one or zero, or infinite: the identity.
        let identity = [Vec3::X, Vec3::Y, Vec3::Z];
        assert_eq!(polar_rotation([Vec3::X, Vec3::ZERO, Vec3::Z]), identity);
        assert_eq!(polar_rotation([Vec3::X, Vec3::ZERO, Vec3::ZERO]), identity);
        assert_eq!(polar_rotation([Vec3::ZERO; 3]), identity);
        assert_eq!(polar_rotation([Vec3::INFINITY, Vec3::Y, Vec3::Z]), identity);
    }

    #[test]
    fn affine_from_sqt_matches_glam() {
        let t = Transform::new(
            Vec3::new(1.0, -2.0, 3.0),
            Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0),
            Vec3::new(1.0, 2.0, 0.5),
        );
        let a = Affine::from_sqt(t.translation, t.rotation, t.scale);
        assert!(mat4_max_abs_diff(&a.to_mat4(), &t.to_mat4()) < 1e-6);
    }

    #[test]
    fn affine_mul_matches_glam() {
        let a = Transform::new(Vec3::new(1.0, 0.0, 2.0), Quat::from_rotation_y(0.7), Vec3::splat(1.5));
        let b = Transform::new(
            Vec3::new(0.0, 3.0, 0.0),
            Quat::from_rotation_x(-0.4),
            Vec3::new(1.0, 2.0, 3.0),
        );
        let p = Affine::from_mat4(&a.to_mat4()).mul(&Affine::from_mat4(&b.to_mat4()));
        assert!(mat4_max_abs_diff(&p.to_mat4(), &(a.to_mat4() * b.to_mat4())) < 1e-5);
    }

    #[test]
    fn fast_slerp_stays_within_3e_7_rad_of_slerp_for_any_turn() {
        // Pairs from equal to opposite (d from 1 down to 0, either sign), at every fraction.
        let mut worst = 0.0f64;
        for i in 0..=400 {
            let angle = std::f64::consts::PI * f64::from(i) / 400.0;
            let axis = glam::DVec3::new(0.3, -0.8, 0.5).normalize();
            let a = glam::DQuat::from_axis_angle(glam::DVec3::new(0.6, 0.0, 0.8), 0.4 + f64::from(i) * 0.01);
            let mut b = a * glam::DQuat::from_axis_angle(axis, angle);
            if i % 2 == 1 {
                b = -b;
            }
            for k in 0..=20 {
                let t = f64::from(k) / 20.0;
                let exact = a.slerp(if a.dot(b) < 0.0 { -b } else { b }, t);
                let fast = fast_slerp(a.as_quat().into(), b.as_quat().into(), t as f32);
                let q = glam::DQuat::from_vec4(fast.as_dvec4());
                // The angle of the rotation between them (well conditioned near 0, unlike acos).
                let r = q * exact.conjugate();
                let e = 2.0 * r.xyz().length().atan2(r.w.abs());
                worst = worst.max(e);
            }
        }
        eprintln!("fast_slerp against slerp: worst {worst:e} rad");
        assert!(worst < 3e-7, "{worst:e}");
        // And a wrong interpolation fails the bound: plain nlerp strays by far more.
        let (a, b) = (Quat::IDENTITY, Quat::from_rotation_x(2.0));
        let nlerp = (Vec4::from(a) * 0.75 + Vec4::from(b) * 0.25).normalize();
        assert!(Quat::from_vec4(nlerp).angle_between(a.slerp(b, 0.25)) > 1e-2);
    }

    #[test]
    fn slerp_takes_the_shorter_arc_with_opposite_sign_keys() {
        let a = Quat::from_rotation_z(0.2);
        let b = Quat::from_rotation_z(1.0);
        let neg_b = Vec4::from(-b);
        let mid = Quat::from_vec4(fast_slerp(Vec4::from(a), neg_b, 0.5));
        // Half-way along the shorter arc is a rotation of 0.6 rad about z (up to sign).
        assert!(mid.angle_between(Quat::from_rotation_z(0.6)) < 1e-5, "{mid:?}");
    }

    #[test]
    fn slerp_is_constant_speed() {
        let a = Quat::IDENTITY;
        let b = Quat::from_rotation_y(2.0);
        let q = Quat::from_vec4(fast_slerp(Vec4::from(a), Vec4::from(b), 0.25));
        assert!(q.angle_between(Quat::from_rotation_y(0.5)) < 1e-5);
    }

    #[test]
    fn hermite_basis_interpolates_end_points() {
        assert_eq!(hermite_basis(0.0), Vec4::new(1.0, 0.0, 0.0, 0.0));
        assert_eq!(hermite_basis(1.0), Vec4::new(0.0, 0.0, 1.0, 0.0));
    }
}
